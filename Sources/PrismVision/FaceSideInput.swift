import PrismCore
import PrismFilters

/// Faces as one per-frame side input of the engine: the provider (detector or `--faces-in`) and the
/// `--faces-out` writer together, so wiring faces into a loop is three calls:
///
///     let faces = try FaceSideInput(options…)                      // before the first frame: bad model/sidecar fail here
///     frameContext.regions = try faces.regions(frameIndex: i, pts: pts, frameSize: size) {
///         try thumbnailer.render(uploaded)                         // only called on frames the detector wants
///     }                                                            // per frame, on the GPU thread, after upload
///     try faces.finish()                                           // after the last frame: the sidecar is moved into place
///
/// Dropping it without `finish` (a failed run) leaves no sidecar.
package final class FaceSideInput: Sendable {
    package let provider: any FaceRegionProvider
    package let writer: FaceSidecarWriter?

    package init(provider: any FaceRegionProvider, writer: FaceSidecarWriter?) {
        self.provider = provider
        self.writer = writer
    }

    /// This frame's regions. Renders and submits the luma thumbnail when the provider wants it, then asks
    /// for the faces (files: waits for the scheduled detection; live: never waits), writes the sidecar line.
    package func regions(frameIndex: Int, pts: MediaTime, frameSize: Size,
                        thumbnail: () throws -> LumaImage) throws -> [FrameContext.Region] {
        try faces(frameIndex: frameIndex, pts: pts, frameSize: frameSize, thumbnail: thumbnail).regions
    }

    /// `regions`, with the tracked faces themselves (ids, boxes, age: for a preview that outlines them).
    package func faces(frameIndex: Int, pts: MediaTime, frameSize: Size,
                      thumbnail: () throws -> LumaImage) throws -> FaceFrame {
        if provider.wantsLuma(frameIndex: frameIndex) {
            provider.submit(frameIndex: frameIndex, pts: pts, luma: try thumbnail())
        }
        let frame = try provider.regions(frameIndex: frameIndex, pts: pts, frameSize: frameSize)
        try writer?.write(frame)
        return frame
    }

    /// The run succeeded: moves the sidecar into place.
    package func finish() throws { try writer?.commit() }

    package var statistics: FaceDetectorStatistics { provider.statistics }
}
