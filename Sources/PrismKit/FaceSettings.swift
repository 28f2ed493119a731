import PrismCore
import PrismFilters
import PrismMedia
import PrismVision

/// How faces are found for a graph that draws them (`face-pixellate`, `face-blur`, `face-outline`…), and
/// whether they are written down: the detector model, how often it runs, or a sidecar that replaces it.
/// The defaults find faces 40 px and up with CenterFace (the installed model) on every frame of a file; a
/// still is searched at its full resolution.
public struct FaceSettings: Sendable, Equatable {
    /// A face detection model: a CenterFace or YuNet ONNX file, an OpenCV cascade (a path, or `haar`/`lbp`:
    /// Debian's); nil: the installed CenterFace, or the Haar cascade when none is installed (said once).
    public var model: String?
    /// Files and raw input detect on frames 0, N, 2N… and wait for each detection (nil: every frame);
    /// live sources never wait and ignore it.
    public var every: Int?
    /// Faces from a sidecar (JSON Lines, as `sidecarOut` writes it) instead of the detector.
    public var sidecarIn: String?
    /// Write each frame's faces here (JSON Lines; a temporary file until the run ends well).
    public var sidecarOut: String?
    /// The smallest face to find, in frame pixels (it sets the detection resolution); nil: 40 (a still: the
    /// detector's own smallest face at full resolution).
    public var minSize: Int?
    /// Cover the whole frame while a lost face has not been found again.
    public var strict = false
    /// A run in which no face was found at all fails (its output is not kept).
    public var requireFaces = false

    /// The defaults: CenterFace on every frame, faces from 40 px, no sidecars.
    public init() {}

    /// No setting given: the defaults.
    public var isEmpty: Bool { self == FaceSettings() }

    /// Faces are needed when the graph draws face masks or any setting is given (a sidecar to write,
    /// or a model or sidecar that must then be valid even if nothing draws faces).
    public func needsFaces(for graph: FilterGraph) -> Bool { graph.requiredSideData.contains(.faceRegions) || !isEmpty }

    /// The detector `model` names (nil: the installed CenterFace, else the Haar cascade and a line saying so).
    /// - Parameter installed: where the default model is (ModelLibrary's search; a test passes nil).
    package static func detector(for model: String?, installed: String? = CenterFaceDetector.installed())
        throws -> (detector: any FaceDetecting, note: String?) {
        guard let model else {
            if let installed { return (try CenterFaceDetector(path: installed), nil) }
            let cascade = try CascadeFaceDetector(model: CascadeFaceDetector.defaultModel)
            return (cascade, "no face model installed (\(CenterFaceDetector.defaultFile) is in none of "
                    + "\(ModelLibrary.folders.joined(separator: ", "))): faces are found with \(cascade.input.name), which misses "
                    + "small and turned faces; scripts/install-models installs CenterFace")
        }
        if model.lowercased() == "centerface" {
            guard let installed else {
                throw FaceDetectorError("face model centerface: \(CenterFaceDetector.defaultFile) is not installed in any of "
                                        + "\(ModelLibrary.folders.joined(separator: ", ")) (scripts/install-models installs it)")
            }
            return (try CenterFaceDetector(path: installed), nil)
        }
        guard YuNetFaceDetector.isModel(model) else { return (try CascadeFaceDetector(model: model), nil) }
        // An ONNX file: CenterFace by its outputs, else YuNet by OpenCV's own check, else not a face model.
        do {
            return (try CenterFaceDetector(path: model), nil)
        } catch let centerFace as FaceDetectorError where centerFace.message.contains("not a CenterFace") {
            do {
                return (try YuNetFaceDetector(path: model), nil)
            } catch {
                throw FaceDetectorError("face model \(model): not a face model (neither CenterFace nor YuNet: "
                                        + "\(centerFace.message.replacingOccurrences(of: "face model \(model): not a CenterFace face detection model ", with: "")))")
            }
        }
    }

    /// The provider these settings ask for: the sidecar, or the detector (loaded now, so a bad model fails
    /// before any frame) and a line to say first when it is the fallback. `live`: cameras (never wait);
    /// otherwise every `every`th frame, waited for. `still`: one picture, searched at full resolution.
    package func makeProvider(live: Bool, still: Bool = false,
                              installed: String? = CenterFaceDetector.installed()) throws -> (provider: any FaceRegionProvider, note: String?) {
        if let sidecarIn { return (try SidecarFaceProvider(path: sidecarIn), nil) }
        let (detector, note) = try Self.detector(for: model, installed: installed)
        let smallest = detector.input.smallestFace
        let minFace = minSize.map(Double.init) ?? (still ? smallest : FaceDetectionScale.defaultMinFaceSize)
        let provider = DetectingFaceProvider(detector: detector,
                                             mode: live ? .live : .everyNth(every ?? DetectingFaceProvider.defaultInterval),
                                             scale: FaceDetectionScale(minFaceSize: max(minFace, smallest), detectorFace: smallest),
                                             strict: strict)
        return (provider, note)
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
    package func makeSideInput(for graph: FilterGraph, live: Bool, still: Bool = false) throws -> FaceSideInput? {
        guard needsFaces(for: graph) else { return nil }
        let (provider, note) = try makeProvider(live: live, still: still)
        return FaceSideInput(provider: provider, writer: try makeWriter(), note: note, requireFaces: requireFaces)
    }
}
