import PrismCore
import PrismFilters
import PrismMedia
import PrismVision

/// How faces are found for a graph that draws them (`face-pixellate`, `face-blur`, `face-outline`…), and
/// whether they are written down: the detector model, how often it runs, or a sidecar that replaces it.
/// The defaults find faces 40 px and up with Debian's frontal-face Haar cascade on every frame of a file.
public struct FaceSettings: Sendable, Equatable {
    /// An OpenCV cascade (a path, or `haar`/`lbp`: Debian's), or a YuNet ONNX model; nil: the Haar cascade.
    public var model: String?
    /// Files and raw input detect on frames 0, N, 2N… and wait for each detection (nil: every frame);
    /// live sources never wait and ignore it.
    public var every: Int?
    /// Faces from a sidecar (JSON Lines, as `sidecarOut` writes it) instead of the detector.
    public var sidecarIn: String?
    /// Write each frame's faces here (JSON Lines; a temporary file until the run ends well).
    public var sidecarOut: String?
    /// The smallest face to find, in frame pixels (it sets the detection resolution); nil: 40.
    public var minSize: Int?
    /// Cover the whole frame while a lost face has not been found again.
    public var strict = false

    /// The defaults: the Haar cascade on every frame, faces from 40 px, no sidecars.
    public init() {}

    /// No setting given: the defaults.
    public var isEmpty: Bool { self == FaceSettings() }

    /// Faces are needed when the graph draws face masks or any setting is given (a sidecar to write,
    /// or a model or sidecar that must then be valid even if nothing draws faces).
    public func needsFaces(for graph: FilterGraph) -> Bool { graph.readsFaceRegions || !isEmpty }

    /// The provider these settings ask for: the sidecar, or the detector (loaded now, so a bad model fails
    /// before any frame). `live`: cameras (never wait); otherwise every `every`th frame, waited for.
    package func makeProvider(live: Bool) throws -> any FaceRegionProvider {
        if let sidecarIn { return try SidecarFaceProvider(path: sidecarIn) }
        let name = model ?? CascadeFaceDetector.defaultModel
        let detector: any FaceDetecting = YuNetFaceDetector.isModel(name) ? try YuNetFaceDetector(path: name) : try CascadeFaceDetector(model: name)
        return DetectingFaceProvider(detector: detector,
                                     mode: live ? .live : .everyNth(every ?? DetectingFaceProvider.defaultInterval),
                                     scale: FaceDetectionScale(minFaceSize: Double(minSize ?? Int(FaceDetectionScale.defaultMinFaceSize))),
                                     strict: strict)
    }

    /// The `sidecarOut` writer (a temporary file until `commit`), if asked for.
    package func makeWriter() throws -> FaceSidecarWriter? {
        try sidecarOut.map { path in
            let target = try OutputTarget(path: path)
            return try FaceSidecarWriter(path: target.path, temporaryPath: target.isStream ? nil : target.makeTemporaryPath())
        }
    }

    /// Provider and writer as the engine's per-frame side input; nil when `graph` needs no faces and no
    /// sidecar is asked for. Fails now on a bad model or sidecar, before any frame.
    package func makeSideInput(for graph: FilterGraph, live: Bool) throws -> FaceSideInput? {
        guard needsFaces(for: graph) else { return nil }
        return FaceSideInput(provider: try makeProvider(live: live), writer: try makeWriter())
    }
}
