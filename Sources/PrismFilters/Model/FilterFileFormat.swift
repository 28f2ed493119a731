import Foundation
import PrismCore
import PrismGPU

/// One kind of file a graph can name as a filter (`my.fs`, `look.cube`, `model.onnx`): which files it
/// can be, and how one is read. `FilterFileFormat.all` is the one list that the graph binder,
/// `prism filters FILE` and the dev reloader's file watcher consult, so they tell files apart alike.
package struct FilterFileFormat: Sendable {
    /// What the format is called.
    package let name: String
    /// The file name extensions (lower case, without the dot) a file of this format has.
    package let extensions: Set<String>
    /// Whether `prism filters FILE` describes a file of this format that does not exist (an ONNX model:
    /// the error says why it cannot be read) rather than looking FILE up as a built-in filter's name.
    package let describesMissingFiles: Bool
    /// Reads and parses the file at a path with one of the `extensions`, once; nil when its content
    /// shows it is another format's (a `.glsl` file without a `//!HOOK` line is not a hook file).
    package let read: @Sendable (_ path: String) throws -> FilterFile?

    package init(name: String, extensions: Set<String>, describesMissingFiles: Bool = false,
                 read: @escaping @Sendable (_ path: String) throws -> FilterFile?) {
        self.name = name
        self.extensions = extensions
        self.describesMissingFiles = describesMissingFiles
        self.read = read
    }

    /// True when `path`'s extension (case-insensitive) is one of this format's.
    package func matches(_ path: String) -> Bool {
        extensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// The formats in the order they are tried: a hook file before a user shader (both may be `.glsl`).
    package static let all: [FilterFileFormat] = [hook, network, userShader, lut]

    /// The file at `path` read by the first of `formats` that matches it and takes its content; nil
    /// when none has its extension.
    package static func read(_ path: String, formats: [FilterFileFormat] = all) throws -> FilterFile? {
        for format in formats where format.matches(path) {
            if let file = try format.read(path) { return file }
        }
        return nil
    }

    /// What `prism filters FILE` prints for `path`; nil when no format describes it (then FILE is
    /// a built-in filter's name).
    package static func describe(_ path: String, formats: [FilterFileFormat] = all) throws -> String? {
        for format in formats where format.matches(path) {
            guard format.describesMissingFiles || FileManager.default.fileExists(atPath: path) else { return nil }
            if let file = try format.read(path) { return try file.summary?() }
        }
        return nil
    }

    /// An mpv hook file (`.glsl` or `.hook` with a `//!HOOK` line). A `.glsl` file that cannot be read or
    /// has no such line is left to the user shaders; a `.hook` one is an error.
    package static let hook = FilterFileFormat(name: "mpv hook file", extensions: ["glsl", "hook"]) { path in
        let isHookExtension = (path as NSString).pathExtension.lowercased() == "hook"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            if isHookExtension { throw ShaderLoadError(file: path, message: "cannot read the hook file") }
            return nil
        }
        guard HookFile.isHookFile(text: text) else {
            if isHookExtension { throw ShaderLoadError(file: path, message: "no //!HOOK line: not an mpv hook file") }
            return nil
        }
        let hooks = try HookFile.parse(text: text, path: path)
        let specs = HookKernel.parameterSpecs(for: [hooks])
        return FilterFile(path: path, parameters: specs, watchedFiles: [path], summary: { hooks.summary }) { arguments, _ in
            let values = try ParameterValues(specs: specs, given: arguments)
            return (try HookKernel(files: [hooks], parameters: values), values)
        }
    }

    /// An ONNX model (`.onnx`): a `model(file=…)` node. The model is read when its kernel is made.
    package static let network = FilterFileFormat(name: "ONNX model", extensions: ["onnx"], describesMissingFiles: true) { path in
        let specs = NetworkFilter.modelParameters
        let summary = {
            let kernel = try NetworkKernel(path: path, parameters: ParameterValues(specs: specs, given: [:]))
            // Which layers store half is decided by a run on the GPU (a software one will do).
            if let context = try? GPUContext(options: GPUOptions()) { try context.perform { try kernel.calibrateForSummary() } }
            return kernel.summary
        }
        return FilterFile(path: path, parameters: specs, watchedFiles: [path], summary: summary) { arguments, _ in
            let values = try ParameterValues(specs: specs, given: arguments)
            return (try NetworkKernel(path: path, parameters: values), values)
        }
    }

    /// A user shader: ISF, ShaderToy or plain GLSL (`.fs`, `.frag`, `.glsl`, `.isf`), through
    /// `UserShader.load` and `UserShaderKernel`.
    package static let userShader = FilterFileFormat(name: "user shader", extensions: ["fs", "frag", "glsl", "isf"]) { path in
        let shader = try UserShader.load(path: path)
        let specs = UserShaderKernel.parameterSpecs(for: shader)
        return FilterFile(path: path, parameters: specs, watchedFiles: shader.watchedFiles, summary: { shader.summary }) { arguments, imageLoader in
            let values = try ParameterValues(specs: specs, given: arguments)
            return (try UserShaderKernel(shader: shader, parameters: values, imageLoader: imageLoader), values)
        }
    }

    /// A `.cube` LUT: the `lut` filter with `file=` the path. The table is read when its kernel is made;
    /// its arguments are typed by their own shape, and `prism filters` does not describe it.
    package static let lut = FilterFileFormat(name: "LUT", extensions: ["cube"]) { path in
        FilterFile(path: path, name: "lut", parameters: nil, watchedFiles: [path], summary: nil) { arguments, _ in
            var given = arguments
            given["file"] = .text(path)
            return try LUTFileFilter.definition.instantiate(given)
        }
    }
}

/// A filter file read by its `FilterFileFormat`: what its filter takes, and how to make the filter.
package struct FilterFile {
    /// The file as the graph names it.
    package let path: String
    /// The name of the filter's node (the file's name; `lut` for a LUT).
    package let name: String
    /// The parameters the filter takes, so that arguments are typed and checked (errors at the
    /// argument's column) before `make`; nil types them by the value's own shape. Positional
    /// arguments follow their order.
    package let parameters: [ParameterSpec]?
    /// The files whose change changes the filter: the file, and a shader's includes and images.
    package let watchedFiles: [String]
    /// What `prism filters FILE` prints; nil when the format is not described.
    package let summary: (() throws -> String)?
    /// The filter's kernel and parameter values for typed arguments; `imageLoader` reads the images
    /// a shader imports.
    package let make: (_ arguments: [String: ParameterValue], _ imageLoader: @escaping ShaderImageLoader) throws -> (kernel: FilterKernel, parameters: ParameterValues)

    package init(path: String, name: String? = nil, parameters: [ParameterSpec]?, watchedFiles: [String],
                 summary: (() throws -> String)?,
                 make: @escaping (_ arguments: [String: ParameterValue], _ imageLoader: @escaping ShaderImageLoader) throws -> (kernel: FilterKernel, parameters: ParameterValues)) {
        self.path = path
        self.name = name ?? (path as NSString).lastPathComponent
        self.parameters = parameters
        self.watchedFiles = watchedFiles
        self.summary = summary
        self.make = make
    }
}
