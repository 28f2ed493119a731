import PrismCore
import PrismFilters

/// Faces as one per-frame side input of the engine: the provider (detector or `--faces-in`) and the
/// `--faces-out` writer together, so wiring faces into a loop is three calls:
///
///     let faces = try FaceSideInput(options…)                      // before the first frame: bad model/sidecar fail here
///     frameContext.regions = try faces.regions(frameIndex: i, pts: pts, frameSize: size) { request in
///         try pictures.render(uploaded, request)                   // only the pictures the detector wants
///     }                                                            // per frame, on the GPU thread, after upload
///     try faces.finish()                                           // after the last frame: the sidecar is moved into place
///
/// Dropping it without `finish` (a failed run) leaves no sidecar.
package final class FaceSideInput: Sendable {
    package let provider: any FaceRegionProvider
    package let writer: FaceSidecarWriter?
    /// What the run says first about how faces are found (the fallback detector when no model is installed).
    package let note: String?
    /// A run with no face found at all fails at `finish` (`--require-faces`).
    package let requireFaces: Bool

    package init(provider: any FaceRegionProvider, writer: FaceSidecarWriter?, note: String? = nil, requireFaces: Bool = false) {
        self.provider = provider
        self.writer = writer
        self.note = note
        self.requireFaces = requireFaces
    }

    /// This frame's regions. Renders and submits the pictures the provider wants, then asks for the faces
    /// (files: waits for the scheduled detection; live: never waits), writes the sidecar line.
    package func regions(frameIndex: Int, pts: MediaTime, frameSize: Size,
                        render: (DetectionRequest) throws -> DetectionImage) throws -> [FrameContext.Region] {
        try faces(frameIndex: frameIndex, pts: pts, frameSize: frameSize, render: render).regions
    }

    /// `regions`, with the tracked faces themselves (ids, boxes, age: for a preview that outlines them).
    package func faces(frameIndex: Int, pts: MediaTime, frameSize: Size,
                      render: (DetectionRequest) throws -> DetectionImage) throws -> FaceFrame {
        let requests = provider.requests(frameIndex: frameIndex, pts: pts, frameSize: frameSize)
        if !requests.isEmpty {
            provider.submit(frameIndex: frameIndex, pts: pts, images: try requests.map(render))
        }
        let frame = try provider.regions(frameIndex: frameIndex, pts: pts, frameSize: frameSize)
        try writer?.write(frame)
        return frame
    }

    /// The run succeeded: moves the sidecar into place; with `requireFaces`, a run that found no face fails
    /// here instead (its outputs are not kept).
    package func finish() throws {
        if requireFaces, let none = provider.statistics.noFaceNote { throw FaceDetectorError(none + " (\(Setting.requireFaces))") }
        try writer?.commit()
    }

    package var statistics: FaceDetectorStatistics { provider.statistics }
}
