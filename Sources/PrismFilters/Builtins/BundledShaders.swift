import Foundation
import PrismCore

/// Built-in filters written as ISF files in `Shaders/` (the package's resources): loaded by the same
/// loader as users' shaders, so the built-ins and user shaders share one format and one runtime.
enum BundledShaders {
    /// The translated shader `Shaders/<file>.fs`. A missing or broken file is a packaging bug.
    static func load(_ file: String) -> UserShader {
        guard let path = ShaderResources.bundle.path(forResource: file, ofType: "fs", inDirectory: "Shaders") else {
            preconditionFailure("built-in shader Shaders/\(file).fs is missing from the PrismFilters bundle")
        }
        do { return try UserShader.load(path: path) } catch {
            preconditionFailure("built-in shader Shaders/\(file).fs: \(error)")
        }
    }

    /// A built-in filter whose parameters (names, ranges, defaults, the LABEL as summary) come from the file.
    /// `colorForm`: the shader's colour map as data when it has one (see `ColorForm`), for the parameters.
    static func definition(file: String, name: String, summary: String, maths: String, example: String,
                           colorForm: (@Sendable (ParameterValues) -> ColorForm?)? = nil,
                           nonzeroRegions: (@Sendable (ParameterValues, Int, Size) -> [PixelRect]?)? = nil) -> FilterDefinition {
        let shader = load(file)
        return FilterDefinition(name: name, summary: summary, maths: maths,
                                parameters: UserShaderKernel.parameterSpecs(for: shader),
                                inputs: shader.inputImage == nil ? [] : ["input"], example: example,
                                make: { values in
                                    let kernel = try UserShaderKernel(shader: shader, parameters: values, trusted: true)
                                    kernel.colorFormula = colorForm
                                    kernel.nonzeroRegionsFormula = nonzeroRegions
                                    return kernel
                                })
    }
}
