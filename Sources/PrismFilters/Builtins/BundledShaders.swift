import Foundation
import PrismCore

/// Built-in filters written as ISF files in `Shaders/` (the package's resources): loaded by the same
/// loader as users' shaders, so the built-ins and user shaders share one format and one runtime.
enum BundledShaders {
    /// The translated shader `Shaders/<file>.fs`. A missing or broken file is a packaging bug.
    static func load(_ file: String) -> UserShader {
        guard let path = Bundle.module.path(forResource: file, ofType: "fs", inDirectory: "Shaders") else {
            preconditionFailure("built-in shader Shaders/\(file).fs is missing from the PrismFilters bundle")
        }
        do { return try UserShader.load(path: path) } catch {
            preconditionFailure("built-in shader Shaders/\(file).fs: \(error)")
        }
    }

    /// A built-in filter whose parameters (names, ranges, defaults, the LABEL as summary) come from the file.
    static func definition(file: String, name: String, summary: String, maths: String, example: String) -> FilterDefinition {
        let shader = load(file)
        return FilterDefinition(name: name, summary: summary, maths: maths,
                                parameters: UserShaderKernel.parameterSpecs(for: shader),
                                inputs: shader.inputImage == nil ? [] : ["input"], example: example,
                                make: { values in try UserShaderKernel(shader: shader, parameters: values, trusted: true) })
    }
}
