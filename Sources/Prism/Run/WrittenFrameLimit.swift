import PrismCore
import PrismMedia
import PrismPipeline
import Synchronization

/// Set once the limit's last frame was written (read by the run after the engine has finished).
final class FrameLimitReached: Sendable {
    private let flag = Atomic<Bool>(false)
    var value: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// Passes the first `frames` frames the engine renders to `sink`, then stops the run: a live source's
/// `--frames N` counts frames written, not frames read (the live queue drops frames the GPU is late for,
/// so a limit on the source side would write fewer than N). Frames past the limit are not read back.
final class WrittenFrameLimit: FrameSink {
    private let sink: any FrameSink
    private let frames: Int
    private var written = 0
    let reached = FrameLimitReached()

    init(_ sink: any FrameSink, frames: Int) {
        self.sink = sink
        self.frames = frames
    }

    var pixelFormat: PixelFormat { sink.pixelFormat }
    var point: SinkPoint { sink.point }
    var delivery: SinkDelivery { sink.delivery }
    var bufferCount: Int { sink.bufferCount }
    var acceptsAudio: Bool { sink.acceptsAudio }
    /// Frame indices count the frames that reached the GPU, in order: the first `frames` of them.
    func wants(frameIndex: Int) -> Bool { frameIndex < frames && sink.wants(frameIndex: frameIndex) }

    func open(_ stream: SinkStream) throws { try sink.open(stream) }
    func write(_ frame: ProcessedFrame) throws -> Bool {
        guard written < frames else { return false }
        let more = try sink.write(frame)
        written += 1
        if written == frames { reached.set() }
        return more && written < frames
    }
    func write(audio packet: AudioPacket) throws { try sink.write(audio: packet) }
    func write(pcm chunk: AudioChunk, pts: MediaTime) throws { try sink.write(pcm: chunk, pts: pts) }
    func reopen(_ stream: SinkStream) throws -> Bool { try sink.reopen(stream) }
    func finish() throws { try sink.finish() }
    func abort() { sink.abort() }
}
