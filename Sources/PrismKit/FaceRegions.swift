import PrismCore
import PrismFilters
import PrismGPU
import PrismPipeline
import PrismVision

/// Faces as the engine's side input: on the GPU thread, after the upload, the detector's small luma image
/// is rendered from the uploaded frame (only for frames the detector wants) and each frame gets its
/// tracked regions (`FrameContext.regions`) before the graph runs; `--faces-out` is committed at the end.
package final class FaceRegions: SideInput {
    package let faces: FaceSideInput
    /// The detector (or sidecar) and the sidecar writer the regions come from.
    private var thumbnailer: LumaThumbnailer?

    /// Feeds the engine from `faces`; the luma thumbnailer is made on the GPU thread when first needed.
    package init(_ faces: FaceSideInput) { self.faces = faces }

    /// Always true: this input sets `FrameContext.regions`, so face filters may run.
    package var suppliesFaceRegions: Bool { true }

    /// Sets `context.regions` for the frame, rendering the detector's luma thumbnail when it wants one; on the GPU thread.
    package func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        context.regions = try faces.regions(frameIndex: index, pts: frame.pts, frameSize: uploaded.size) {
            // As wide as the smallest face asked for needs (a new one if the input's size changes).
            let width = self.faces.provider.lumaWidth(for: uploaded.size)
            let thumbnailer = self.thumbnailer.flatMap { $0.maxWidth == width ? $0 : nil } ?? LumaThumbnailer(maxWidth: width)
            self.thumbnailer = thumbnailer
            return try thumbnailer.render(uploaded)
        }
    }

    /// Commits the faces sidecar (`--faces-out`), if one is written.
    package func finish() throws { try faces.finish() }
}
