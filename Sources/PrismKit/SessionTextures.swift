import Foundation
import PrismCore
import PrismGPU
import PrismMedia
import PrismPipeline

extension Session {
    /// Every frame after the graph as a GL texture on the session's GPU thread, in order: for a program
    /// that goes on with the frame on the GPU. A frame's texture is valid until the next frame is asked
    /// for, and only inside `GPUFrame.withTexture`; the engine waits for the consumer meanwhile (one frame
    /// in flight). Ending the iteration early stops the run, as with `frames()`.
    public func textures() throws -> TextureSequence {
        let channel = RunChannel<GPUFrame>(slots: 1)
        // The graph renders for its sinks: an RGBA one gives the texture (read back and dropped).
        let engine = try engine(sinks: [DiscardSink(format: .rgba)], taps: [TextureTap(channel: channel)])
        return TextureSequence(channel: channel, engine: engine) { $0.hold.release() }
    }
}

/// One frame of `Session.textures()`.
public struct GPUFrame: Sendable {
    /// Its position in the run (0 for the first).
    public let index: Int
    /// Its presentation time on the output's time line.
    public let pts: MediaTime
    /// The picture's size: the top-left `size` of the texture, which may be wider (rows are padded for readback).
    public let size: Size
    let hold: Hold

    /// Runs `body` on the GPU thread with the frame's RGBA8 texture (its GL name: `Texture.glName`), while
    /// the frame is current; throws once the next frame has been asked for.
    public func withTexture<Result: Sendable>(_ body: @escaping @Sendable (Texture) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let request: @Sendable (Texture) -> Void = { texture in continuation.resume(with: Swift.Result(catching: { try body(texture) })) }
            if !hold.requests.push(request) {
                continuation.resume(throwing: InvalidRequest("frame \(index)'s texture is gone: the next frame was asked for"))
            }
        }
    }

    /// The GPU thread's side of one frame: it runs the requests until the consumer lets the frame go.
    final class Hold: Sendable {
        let requests = BoundedQueue<@Sendable (Texture) -> Void>(capacity: 4)
        func release() { requests.close() }
    }
}

/// The frames of a running session as GL textures (see `Session.textures()`).
public typealias TextureSequence = RunSequence<GPUFrame>

/// On the GPU thread, in the engine's frame: hands the frame's texture to the consumer and serves its
/// requests until it asks for the next frame (or goes).
final class TextureTap: FrameTap {
    let channel: RunChannel<GPUFrame>
    init(channel: RunChannel<GPUFrame>) { self.channel = channel }

    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        guard let renderer = frame.renderer else { return }
        let texture = renderer.sinkTarget(0).texture
        let hold = GPUFrame.Hold()
        channel.onCancel { hold.release() }
        guard channel.send(GPUFrame(index: frame.index, pts: frame.pts, size: renderer.outputSize, hold: hold)) else {
            hold.release()
            return
        }
        while let request = hold.requests.pop() { request(texture) }
    }
}
