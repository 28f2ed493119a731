// PrismKit: the engine's public API in one import, for programs built on Prism.
//
//     import PrismKit
//     let gpu = try GPUContext()
//     let engine = try FrameEngine(source: SourceSpec(input: .movie("in.mp4")),
//                                  graph: try GraphBinder().bind("invert, mono"),
//                                  sinks: [MovieSink(path: "out.mp4", settings: VideoEncoderSettings())], gpu: gpu)
//     let report = try engine.run()
//
// Frames as CPU memory: a `CallbackSink`; as GL textures on the engine's context: a `FrameTap`.
@_exported import PrismCore
@_exported import PrismFilters
@_exported import PrismGPU
@_exported import PrismMedia
@_exported import PrismPipeline
