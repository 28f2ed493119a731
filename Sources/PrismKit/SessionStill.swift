import PrismCore
import PrismGPU
import PrismMedia
import PrismPipeline

extension Session {
    /// A session over one still picture (`prism render`): decoded to RGBA, one frame with no rate (a shader's
    /// frame rate is 0, as for any rate-less input); faces are looked for as a photograph needs
    /// (`Options.stillImage`).
    public static func still(_ path: String, graph: FilterGraph, options: Options = Options(), gpu: GPUContext? = nil) throws -> Session {
        try RegularFile.check(path, what: "an image file")
        let image = try ImageFile.read(path: path)
        var options = options
        options.stillImage = true
        return try Session(input: .movie(path), opened: try FrameListSource(image: image), graph: graph, options: options, gpu: gpu)
    }
}
