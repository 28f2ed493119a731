import CFFmpeg
import Foundation
import PrismCore


/// Encodes video from pooled buffers (and audio from a source) into a movie file with libavcodec and
/// libavformat.
///
/// - The container follows the output's extension (`av_guess_format`): mp4, mov, mkv, or any other
///   libavformat muxes; mp4/mov get `movflags=+faststart` (index before the media data).
/// - Video buffers are laid out per `PackedFrameLayout` in `settings.pixelFormat`; they are wrapped as
///   `AVFrame` planes without a copy (`buf[0]` is an `AVBufferRef` over the pooled memory, so the buffer
///   returns to its pool when the encoder lets go of it).
/// - Timestamps are rebased so the first video frame is at 0; audio is shifted by the same amount, so
///   the A/V offset is kept. Audio packets are copied when the container takes their codec
///   (`avformat_query_codec`), otherwise decoded, resampled and encoded as AAC.
/// - Raw PCM (`pcm:` at init, `writeAudio(pcm:pts:)`, e.g. from `AudioCaptureSource`) is encoded as AAC
///   by the same transcoder. Chunks are timed on the video's time line; the first kept sample is placed
///   by its time stamp and later samples follow it without gaps, except that a chunk starting more than
///   50 ms after the previous one ended (samples lost to an overrun) is preceded by silence. PCM is held
///   back until the video has reached it, and `finish()` cuts it at the end of the last video frame, so
///   a recording has the video's length.
/// - The file is written to a hidden temporary name next to the target and renamed over it only by a
///   successful `finish()` of at least one frame. `abort()`, or dropping the writer unfinished, deletes
///   the temporary and leaves any existing target untouched. A symlink target is written through (the
///   link stays); a FIFO or character device is written in place, in a container that needs no seeking
///   (see `OutputTarget`).
///
/// Not thread-safe: use a writer from one thread at a time (e.g. a dedicated encoding thread).
///
/// A writer puts together a `VideoEncoder`, a `MovieMuxer` (the container and the output's lifecycle) and,
/// with audio, a `MovieAudioTrack`; it keeps the video's time line.
package final class MovieWriter {
    package enum AudioMode: Sendable, Equatable { case none, copy, transcode }

    /// The file (or URL) the movie ends up at.
    package let outputPath: String
    package var settings: VideoEncoderSettings { encoder.settings }
    package var video: VideoStreamConfig { encoder.video }
    /// What happens to the source's audio.
    package var audioMode: AudioMode { audio?.mode ?? .none }
    /// Where the movie goes (file, stream, network URL, playlist) and in which container.
    package var destination: MovieDestination { muxer.destination }
    /// The raw PCM that `writeAudio(pcm:pts:)` takes, when set up for it.
    package var pcmInput: PCMFormat? { audio?.pcm }
    /// Frames handed to the encoder.
    package private(set) var videoFramesWritten = 0
    /// Frames refused because their timestamp did not increase after rounding to the time base.
    package private(set) var videoFramesDropped = 0
    /// Recordings a killed earlier run left as temporaries of this output, recovered next to it.
    package var recoveredLeftovers: [OutputTarget.Recovered] { muxer.recoveredLeftovers }
    /// The most bytes the finished file may take (a size limit, or what the disk may still give under a
    /// free-space floor); nil: no limit. Checked before each packet is muxed, against `projectedBytes`:
    /// what the encoder still holds and the fragment the muxer is building count, because the check is
    /// made when their packets arrive, not when they reach the disk.
    package var byteBudget: Int64? {
        get { muxer.byteBudget }
        set { muxer.byteBudget = newValue }
    }
    /// A packet did not fit `byteBudget`: it and every packet after it (video and audio, the encoder's
    /// flushed lookahead included) are left out, so the file ends at or under the budget. Stop writing.
    package var budgetReached: Bool { muxer.budgetReached }
    /// Video packets in the file: fewer than `videoFramesWritten` once the budget was reached (the frames
    /// the encoder held then are not in it).
    package private(set) var videoPacketsMuxed = 0
    /// Bytes in the file so far (`avio_tell`); 0 for outputs without a file.
    package var bytesWritten: Int64 { muxer.bytesWritten }
    /// An upper estimate of the finished file's size if nothing more were muxed (see `MovieMuxer`).
    package var projectedBytes: Int64 { muxer.projectedBytes }
    /// Where the finished movie is (`outputPath`'s target, or for a new file only the name it got).
    package var writtenPath: String { muxer.finalPath }

    private let muxer: MovieMuxer
    private let encoder: VideoEncoder
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audio: MovieAudioTrack?
    private let packet = OwnedPacket()
    /// The first video frame's time: the movie's 0.
    private var start: MediaTime?
    private var lastTicks: Int64?
    private var lastDurationTicks: Int64 = 1
    /// End of the last video frame written, on the video's time line.
    private var videoEnd: MediaTime?

    /// Opens `path` for writing: picks the container, opens the encoders, creates the temporary file
    /// (`avio_open`) and writes the header (`avformat_write_header`). Every problem with the output
    /// (unknown extension, unwritable directory, codec not available or not allowed in the container)
    /// is thrown here, before any frame.
    /// - Parameters:
    ///   - audio: the source's audio stream whose packets will be passed to `writeAudio(_:)`.
    ///   - pcm: raw S16 interleaved PCM that will be passed to `writeAudio(pcm:pts:)`, encoded as AAC
    ///     (instead of `audio`; giving both is an error).
    ///   - fragmented: a live recording: MP4/MOV is written as fragments of about a second (no index at the
    ///     end to lose), Matroska with one-second clusters, so a killed process or a full disk still leaves
    ///     a playable file of everything up to the last fragment (see `salvage`).
    ///   - destination: the container and kind of output, when `--format` chose it (else from `path`).
    ///   - playlist: how an HLS or DASH destination is cut and kept.
    ///   - newFileOnly: a file that must not exist (a take whose name Prism chose): refused if anything is at
    ///     `path` now; finished beside whatever appeared there meanwhile (`NAME-2.EXT`…), never over it.
    package init(path: String, video: VideoStreamConfig, settings: VideoEncoderSettings = VideoEncoderSettings(),
                audio: AudioStreamInfo? = nil, pcm: PCMFormat? = nil, audioBitrate: Int = 128_000,
                fragmented: Bool = false, destination: MovieDestination? = nil,
                playlist: PlaylistSettings = PlaylistSettings(), newFileOnly: Bool = false) throws {
        outputPath = path
        if audio != nil && pcm != nil {
            throw InvalidRequest("\(path): a movie takes one audio input, not a source's stream and raw PCM")
        }
        if let pcm, pcm.sampleRate <= 0 || !(1...2).contains(pcm.channels) {
            throw InvalidRequest("\(path): raw PCM must be mono or stereo at a positive rate, not \(pcm)")
        }
        let layout = try VideoEncoder.layout(settings: settings, video: video, path: path)
        let muxer = try MovieMuxer(path: path, destination: destination, codec: settings.codec, playlist: playlist,
                                   newFileOnly: newFileOnly)
        self.muxer = muxer
        encoder = try VideoEncoder(settings: settings, video: video, layout: layout, globalHeader: muxer.wantsGlobalHeader,
                                   lowDelay: fragmented, label: path)
        videoStream = try muxer.addStream()
        try encoder.describe(videoStream, formatName: muxer.formatName)
        let audioSource = audio.map(AudioTranscoder.Input.stream) ?? pcm.map(AudioTranscoder.Input.pcm)
        self.audio = try audioSource.map { try MovieAudioTrack($0, bitrate: audioBitrate, muxer: muxer) }
        try muxer.open(fragmented: fragmented)
    }

    /// A writer for frames from `source`: its size, time base, rate, colour space and audio.
    package convenience init(path: String, source: SourceInfo, settings: VideoEncoderSettings = VideoEncoderSettings(),
                            includeAudio: Bool = true) throws {
        try self.init(path: path, video: VideoStreamConfig(source: source), settings: settings,
                      audio: includeAudio ? source.audio : nil)
    }

    /// What writing after the end is refused with.
    private func checkOpen() throws {
        guard muxer.state == .open else {
            throw InvalidRequest("\(outputPath): writer is already \(muxer.state == .finished ? "finished" : "aborted")")
        }
    }

    // MARK: video

    /// Encodes one frame from a pooled buffer without copying it (`avcodec_send_frame` on an `AVFrame`
    /// whose planes point into the buffer). The buffer stays out of its pool until the encoder is done.
    /// - Parameters:
    ///   - pts: presentation time on the source's time line (rebased so the first frame is at 0).
    ///   - duration: how long the frame shows; used for the last frame's length (defaults to the
    ///     previous interval, or one nominal frame).
    /// - Returns: false when the frame was dropped because its timestamp did not increase.
    @discardableResult
    package func writeVideo(_ buffer: PooledFrameBuffer, pts: MediaTime, duration: MediaTime? = nil) throws -> Bool {
        try checkOpen()
        let layout = encoder.layout
        guard buffer.layout == layout else {
            throw InvalidRequest("\(outputPath): buffer holds \(buffer.layout.format.rawValue) \(buffer.layout.size), "
                             + "encoder wants \(layout.format.rawValue) \(layout.size)")
        }
        if start == nil {
            start = pts
            try audio?.flushPendingPackets(start: pts)
        }
        let tb = video.timeBase
        let ticks = (pts - start!).ticks(in: tb)
        if let lastTicks, ticks <= lastTicks {
            videoFramesDropped += 1
            return false
        }
        if let lastTicks { lastDurationTicks = ticks - lastTicks }
        var durationTicks = duration.map { $0.ticks(in: tb) } ?? 0
        if durationTicks <= 0 {
            durationTicks = lastTicks != nil ? lastDurationTicks
                : (video.frameRate.map { MediaTime(value: Int64($0.den), timescale: $0.num).ticks(in: tb) } ?? 1)
        }
        lastTicks = ticks
        videoEnd = start! + MediaTime(value: ticks + max(1, durationTicks), timeBase: tb)
        try encoder.send(buffer, ticks: ticks, durationTicks: durationTicks)
        videoFramesWritten += 1
        try drainVideo()
        if let videoEnd, let audio, audio.holdsPCM { try audio.feedPCM(before: videoEnd, start: start) }
        return true
    }

    private func drainVideo() throws {
        try encoder.drain(into: packet.pointer, fallback: lastDurationTicks) { pkt in
            pkt.pointee.stream_index = videoStream.pointee.index
            av_packet_rescale_ts(pkt, encoder.timeBase, videoStream.pointee.time_base)
            if try muxer.write(pkt, what: "cannot write video") { videoPacketsMuxed += 1 }
        }
    }

    // MARK: audio

    /// Passes one audio packet of the stream given at init: copied into the container, or transcoded
    /// to AAC. Packets that end before the first video frame are dropped; until the first video frame
    /// arrives, packets are held.
    package func writeAudio(_ audioPacket: AudioPacket) throws {
        try checkOpen()
        guard let audio, let input = audio.input, audioPacket.stream === input else {
            throw InvalidRequest("\(outputPath): audio packet from a stream the writer was not set up for")
        }
        try audio.write(audioPacket, start: start)
    }

    /// Passes raw PCM (the format given as `pcm:` at init): `bytes` holds whole interleaved S16 frames
    /// whose first was captured at `pts`, on the video's time line (the time line of `writeVideo`'s pts).
    /// The samples are copied; they are encoded once the video has reached them (see the type's notes).
    package func writeAudio(pcm bytes: UnsafeRawBufferPointer, pts: MediaTime) throws {
        try checkOpen()
        guard let audio, let pcmInput = audio.pcm else {
            throw InvalidRequest("\(outputPath): raw audio passed to a writer not set up for it")
        }
        guard bytes.count % pcmInput.bytesPerFrame == 0 else {
            throw InvalidRequest("\(outputPath): raw audio of \(bytes.count) bytes is not whole \(pcmInput) frames")
        }
        guard !bytes.isEmpty else { return }
        audio.hold(pcm: bytes, pts: pts)
        if let videoEnd { try audio.feedPCM(before: videoEnd, start: start) }
    }

    // MARK: end

    /// Flushes the encoders (`avcodec_send_frame(NULL)`), writes the trailer (`av_write_trailer`), closes
    /// the file and renames it over the target. On error the temporary is deleted and the target untouched.
    package func finish() throws {
        try checkOpen()
        do {
            // An empty movie is a failure, not a result: the input gave nothing and any existing file stays.
            // (A frame written has set `start`.)
            guard videoFramesWritten > 0, let start else {
                throw AVError("no frames to write (the input had none); nothing was written", context: outputPath)
            }
            try audio?.flushPendingPackets(start: start)
            try audio?.finishPCM(start: start, videoEnd: videoEnd)
            try encoder.sendEnd()
            try drainVideo()
            try audio?.finishEncoding(start: start)
            guard videoPacketsMuxed > 0 else {
                throw InvalidRequest("\(outputPath): the size limit or free-space floor leaves no room for the first encoded "
                                 + "frame (\(byteBudget ?? 0) bytes); nothing was written")
            }
            try muxer.finish()
        } catch {
            abort()
            throw error
        }
    }

    /// After a failure mid-recording (a full disk, a camera that stopped): finishes what can still be
    /// finished and keeps the file when it plays — a live recording keeps what it recorded. A file that
    /// would not play without its trailer (a non-fragmented MP4 whose trailer failed) is deleted as by
    /// `abort`. Returns whether the file was kept at `outputPath`.
    @discardableResult
    package func salvage() -> Bool {
        guard muxer.state == .open else { return muxer.state == .finished }
        guard videoFramesWritten > 0, let start else { abort(); return false }
        // Flush what the encoders hold and write the trailer; any of it may fail again (the disk is full).
        _ = try? audio?.flushPendingPackets(start: start)
        if encoder.trySendEnd() { _ = try? drainVideo() }
        _ = try? audio?.finishEncoding(start: start)
        let kept = muxer.salvage()
        if !kept { audio?.discardPending() }
        return kept
    }

    /// Stops writing and deletes the temporary file; an existing target is left as it was.
    package func abort() {
        guard muxer.state == .open else { return }
        audio?.discardPending()
        muxer.abort()
    }
}
