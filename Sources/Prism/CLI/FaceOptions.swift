import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismVision

/// The face flags of `run`, `dev` and `render`: which detector model, how often, and sidecars.
public struct FaceOptions: Sendable, Equatable {
    /// `--face-model PATH|haar|lbp|FILE.onnx`: an OpenCV cascade (default: Debian's frontal face Haar cascade) or YuNet.
    public var model: String?
    /// `--face-every N`: files and raw input detect on frames 0, N, 2N… (default 1); ignored live.
    public var every: Int?
    /// `--faces-in F.jsonl`: faces from a sidecar instead of the detector.
    public var sidecarIn: String?
    /// `--faces-out F.jsonl`: write each frame's faces.
    public var sidecarOut: String?
    /// `--face-min-size PX`: the smallest face to find, in frame pixels (sets the detection resolution).
    public var minSize: Int?
    /// `--faces-strict`: cover the whole frame while a lost face has not been found again.
    public var strict = false

    public init() {}

    /// The flags, declared once for every command that takes them.
    static let commandLine: [OptionSpec] = [
        .value("--face-model", value: "PATH|haar|lbp|FILE.onnx", help: "the OpenCV cascade that finds faces (default haar), or a YuNet ONNX model"),
        .value("--face-every", value: "N", help: "files: detect faces on every Nth frame, frames wait for it (default 1)"),
        .value("--faces-in", value: "F.jsonl", help: "faces from a sidecar instead of the detector"),
        .value("--faces-out", value: "F.jsonl", help: "write each frame's faces (pts, id, box, score)"),
        .value("--face-min-size", value: "PX", help: "smallest face to find, in frame pixels; sets the detection resolution (default 40)"),
        .flag("--faces-strict", help: "pixellate the whole frame while a lost face has not been found again"),
    ]

    /// The face options `source` gives (a command line's `--face-every 5`), each checked by its value type.
    static func parse(_ source: inout some OptionSource) throws -> FaceOptions {
        var options = FaceOptions()
        options.model = try source.text(for: "face-model")
        options.every = try source.value(for: "face-every", as: FaceInterval.self)?.value
        options.sidecarIn = try source.text(for: "faces-in")
        options.sidecarOut = try source.text(for: "faces-out")
        options.minSize = try source.value(for: "face-min-size", as: FaceMinimumSize.self)?.value
        options.strict = try source.flag(for: "faces-strict")
        if options.sidecarIn != nil, options.model != nil || options.every != nil || options.minSize != nil || options.strict {
            let detector = ["face-model", "face-every", "face-min-size"].map { source.spelling(for: $0) }.joined(separator: ", ")
            throw UsageError("\(source.spelling(for: "faces-in")) replaces the detector: drop \(detector) and \(source.spelling(for: "faces-strict"))")
        }
        return options
    }

    /// `--faces-out` checked as `-o` is, before any work: not the input, not `--faces-in`, not the main
    /// output, and a place a file can be written (not a folder; a FIFO is written in place).
    /// - Parameter reads: the files the command reads (its input, a shader).
    func checkSidecarOut(reads: [String?], output: String?) throws {
        guard let sidecarOut else { return }
        try OutputTarget.checkSideOutput(sidecarOut, flag: "--faces-out", reads: (reads + [sidecarIn]).compactMap { $0 },
                                     outputs: output.map { [("-o", $0)] } ?? [])
    }

    /// Any face flag given.
    public var isEmpty: Bool { self == FaceOptions() }

    /// Faces are needed when the graph draws face masks or any face flag is given (a sidecar to write,
    /// or a model or sidecar that must then be valid even if nothing draws faces).
    public func needsFaces(for graph: FilterGraph) -> Bool { graph.readsFaceRegions || !isEmpty }

    /// The provider these options ask for: the sidecar, or the cascade detector (loaded now, so a bad
    /// model fails before any frame). `live`: cameras (never wait); otherwise every `every`th frame, waited for.
    public func makeProvider(live: Bool) throws -> any FaceRegionProvider {
        if let sidecarIn { return try SidecarFaceProvider(path: sidecarIn) }
        let name = model ?? CascadeFaceDetector.defaultModel
        let detector: any FaceDetecting = YuNetFaceDetector.isModel(name) ? try YuNetFaceDetector(path: name) : try CascadeFaceDetector(model: name)
        return DetectingFaceProvider(detector: detector,
                                     mode: live ? .live : .everyNth(every ?? DetectingFaceProvider.defaultInterval),
                                     scale: FaceDetectionScale(minFaceSize: Double(minSize ?? Int(FaceDetectionScale.defaultMinFaceSize))),
                                     strict: strict)
    }

    /// The `--faces-out` writer (a temporary file until `commit`), if asked for.
    public func makeWriter() throws -> FaceSidecarWriter? {
        try sidecarOut.map { path in
            let target = try OutputTarget(path: path)
            return try FaceSidecarWriter(path: target.path, temporaryPath: target.isStream ? nil : target.makeTemporaryPath())
        }
    }

    /// Provider and writer as the engine's per-frame side input; nil when `graph` needs no faces and no
    /// sidecar is asked for. Fails now on a bad model or sidecar, before any frame.
    public func makeSideInput(for graph: FilterGraph, live: Bool) throws -> FaceSideInput? {
        guard needsFaces(for: graph) else { return nil }
        return FaceSideInput(provider: try makeProvider(live: live), writer: try makeWriter())
    }
}

/// Faces for one still image (`prism render`): its luma thumbnail on the GPU, one detection (or the
/// sidecar's line for pts 0), as frame 0 at pts 0.
enum StillFaces {
    static func detect(rgba: [UInt8], size: Size, on context: GPUContext, faces: FaceSideInput) throws -> FaceFrame {
        try faces.faces(frameIndex: 0, pts: .zero, frameSize: size) {
            try context.perform {
                let uploader = FrameUploader(ringSize: 1)
                let uploaded = try rgba.withUnsafeBytes { bytes in
                    try uploader.upload(CPUFramePlanes(format: .rgba, size: size,
                                                       colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                       planes: [(bytes.baseAddress!, size.width * 4)]))
                }
                return try LumaThumbnailer(maxWidth: faces.provider.lumaWidth(for: size)).render(uploaded)
            }
        }
    }
}
