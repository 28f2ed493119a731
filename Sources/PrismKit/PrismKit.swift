// PrismKit: Prism's library API in one import, for programs built on the engine.
//
//     import PrismKit
//     try Session(input: .movie("in.mp4"), graph: "face-pixellate").write(to: "out.mp4")
//     for try await frame in try Session(input: .pattern, graph: "invert, mono").frames() { … }
//
// `Session` carries `prism run`'s policies (orientation, crops, faces, audio). Below it: `FrameEngine`
// with sources (`SourceSpec`), sinks (`MovieSink`, `CallbackSink`, …), graphs (`GraphBinder`, `FilterGraph`),
// taps and side inputs. What the modules share only among themselves is `package`, not part of this API.
@_exported import PrismCore
@_exported import PrismFilters
@_exported import PrismGPU
@_exported import PrismMedia
@_exported import PrismPipeline
@_exported import PrismVision
