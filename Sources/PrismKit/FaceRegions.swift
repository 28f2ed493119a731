import Foundation
import PrismCore
import PrismMedia
import Synchronization
import PrismFilters
import PrismGPU
import PrismPipeline
import PrismVision

/// Faces as the engine's side input. The pictures the detector wants (the whole frame, closer looks around
/// missed faces; grey or colour as the detector reads) are made from each frame: a file's on the source
/// thread as it is read, ahead of the GPU (`FaceReader`, by swscale); a camera's on the GPU thread after the
/// upload, drawn from the uploaded frame. Each frame gets its tracked regions (`FrameContext.regions`) before
/// the graph runs; `--faces-out` is committed at the end.
package final class FaceRegions: SideInput {
    package let faces: FaceSideInput
    /// Made on the GPU thread when first needed.
    private var luma: LumaThumbnailer?
    private var rgb: RGBThumbnailer?
    private let reader: FaceReader

    /// Feeds the engine from `faces`.
    package init(_ faces: FaceSideInput) {
        self.faces = faces
        reader = FaceReader(faces)
    }

    /// Files read their pictures ahead of the GPU.
    package var lookAheadInput: (any LookAheadInput)? { faces.provider.lookAhead > 0 ? reader : nil }

    /// Always true: this input sets `FrameContext.regions`, so face filters may run.
    package var supplies: SideData { .faceRegions }

    /// Sets `context.regions` for the frame, rendering the detector's pictures when it wants them; on the GPU thread.
    package func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        context.regions = try faces.regions(frameIndex: index, pts: frame.pts, frameSize: uploaded.size) { request in
            try self.render(request, from: uploaded)
        }
    }

    /// One picture the detector asked for, drawn and read back.
    package func render(_ request: DetectionRequest, from frame: UploadedFrame) throws -> DetectionImage {
        let area = request.area.map { SIMD4($0.x, $0.y, $0.width, $0.height) }
        let pixels: [UInt8]
        switch request.channels {
        case .luma:
            let thumbnailer = luma ?? LumaThumbnailer()
            luma = thumbnailer
            pixels = try thumbnailer.render(frame, size: request.size, area: area).pixels
        case .rgba:
            let thumbnailer = rgb ?? RGBThumbnailer()
            rgb = thumbnailer
            pixels = try thumbnailer.render(frame, size: request.size, area: area).rgba
        }
        return DetectionImage(size: request.size, channels: request.channels, pixels: pixels, frameSize: frame.size,
                              area: request.area, track: request.track)
    }

    /// Commits the faces sidecar (`--faces-out`), if one is written.
    package func finish() throws { try faces.finish() }
}

/// A file's detection pictures, made on the source thread from each decoded frame the provider wants (its
/// whole picture and closer looks), ahead of the frames the GPU draws.
final class FaceReader: LookAheadInput {
    let faces: FaceSideInput
    /// Used on the source thread only; the mutex makes handing it there safe.
    private let pictures = Mutex(FramePictures())

    init(_ faces: FaceSideInput) { self.faces = faces }

    var lookAhead: Int { faces.provider.lookAhead }

    func read(_ frame: TimedFrame, index: Int) throws {
        let decoded = frame.frame
        let scene = FramePictures.greyGrid(of: decoded, columns: SceneSignature.columns, rows: SceneSignature.rows)
        try faces.provider.read(frameIndex: index, pts: frame.pts, frameSize: decoded.size, scene: scene) { request in
            let (pixels, area) = try pictures.withLock { pictures in
                try pictures.picture(of: decoded, size: request.size, area: request.area.map { ($0.x, $0.y, $0.width, $0.height) },
                                     grey: request.channels == .luma)
            }
            return DetectionImage(size: request.size, channels: request.channels, pixels: pixels, frameSize: decoded.size,
                                  area: FaceBox(x: Double(area.x), y: Double(area.y), width: Double(area.width), height: Double(area.height)),
                                  track: request.track)
        }
    }

    func inputEnded() { faces.provider.inputEnded() }
}
