import PrismCore
import PrismFilters

/// The faces to use for one frame: what the graph's face masks are drawn from, and what a sidecar line holds.
package struct FaceFrame: Sendable, Equatable {
    package var frameIndex: Int
    package var pts: MediaTime
    package var frameSize: Size
    /// Tracked faces, by id.
    package var faces: [TrackedFace]
    /// How many frames old the detection behind these faces is (0: detected on this very frame); nil
    /// when no detection has finished yet.
    package var age: Int?

    package init(frameIndex: Int, pts: MediaTime, frameSize: Size, faces: [TrackedFace], age: Int?) {
        self.frameIndex = frameIndex
        self.pts = pts
        self.frameSize = frameSize
        self.faces = faces
        self.age = age
    }

    /// The graph's side input: each face's centre (0...1 of width and height), half its box's width (as a
    /// fraction of the frame's width) and the box's height over its width: `face-mask` draws an ellipse
    /// through them.
    package var regions: [FrameContext.Region] {
        guard frameSize.width > 0, frameSize.height > 0 else { return [] }
        return faces.map { face in
            let centre = face.box.center
            return FrameContext.Region(center: SIMD2(centre.x / Double(frameSize.width), centre.y / Double(frameSize.height)),
                                       radius: face.box.width / 2 / Double(frameSize.width),
                                       aspect: face.box.height / max(face.box.width, 1e-9))
        }
    }
}
