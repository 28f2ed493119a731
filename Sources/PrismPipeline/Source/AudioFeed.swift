import PrismCore
import PrismFilters
import PrismMedia

/// Sound for audio-reactive filters (ISF `audio`/`audioFFT` inputs), built only for a graph that needs it
/// (or a run that asks, `EngineConfiguration.analyzesAudio`): a shader without audio inputs decodes nothing.
///
/// - From the microphone (`--audio`, with a camera or the pattern): the capture thread appends each
///   period to the ring at its capture time, and each frame takes the window ending at its own capture time
///   on the same clock (as the recorder aligns them), or the newest sound when that has not arrived yet — a
///   live run never waits.
/// - From the input's audio track: the source thread decodes the packets to float PCM as it reads them and
///   holds each video frame back until the sound up to its time is decoded, so a file gives the same
///   windows every run, whatever the interleaving.
final class AudioFeed: Sendable {
    let ring: AudioRing
    /// Fed by the microphone (windows: the newest sound); else by the input's track (windows end at the
    /// frame's time).
    let isLive: Bool
    private let decoder: ThreadOwned<AudioPCMDecoder?>

    private init(ring: AudioRing, isLive: Bool, decoder: AudioPCMDecoder?) {
        self.ring = ring
        self.isLive = isLive
        self.decoder = ThreadOwned(decoder)
    }

    /// The feed a run of `graph` needs; nil when it needs none or the run has no sound to give it (the engine
    /// then refuses a graph with audio inputs, saying `noTrackReason`).
    /// `analysisAudio`: a track the source offers for analysis only (a looping clip's).
    static func make(for graph: FilterGraph, source: SourceInfo, analysisAudio: AudioStreamInfo? = nil,
                     capture: AudioCaptureSource?, always: Bool) throws -> AudioFeed? {
        guard always || !graph.audioInputs.isEmpty else { return nil }
        if let capture {
            return AudioFeed(ring: AudioRing(sampleRate: capture.format.sampleRate, channels: capture.format.channels),
                             isLive: true, decoder: nil)
        }
        if let stream = source.audio ?? analysisAudio {
            let decoder = try AudioPCMDecoder(stream: stream, label: source.summary)
            return AudioFeed(ring: AudioRing(sampleRate: decoder.sampleRate, channels: decoder.channels), isLive: false,
                             decoder: decoder)
        }
        return nil
    }

    /// Why a run with no feed has no sound, for the refusal of a graph with audio inputs.
    static var noTrackReason: String { "the input has no audio track; give \(Setting.audio) PCM (with a camera or the pattern)" }

    /// A live frame's window: the sound ending at the frame's time on CLOCK_MONOTONIC (the audio origin plus
    /// its timestamp, as the recorder places it) when the ring holds it, else the newest sound.
    static func liveWindow(_ ring: AudioRing, for frame: TimedFrame, origin: AudioOrigin) -> AudioWindow {
        guard let zero = origin.value else { return ring.latestWindow() }
        let at = MediaTime(value: zero + frame.pts.ticks(in: Rational(1, 1_000_000)), timescale: 1_000_000)
        return ring.covers(at) ? ring.window(endingAt: at) : ring.latestWindow()
    }

    /// The source thread's side of a track feed (nil for the microphone).
    func trackTimeline() -> TrackSound? {
        guard !isLive, let decoder = decoder.value else { return nil }
        return TrackSound(decoder: decoder, ring: ring)
    }
}

/// Decodes a movie's sound into the ring and holds video frames until their windows are complete. Used by
/// the source thread only.
struct TrackSound {
    let decoder: AudioPCMDecoder
    let ring: AudioRing
    private var held: [TimedFrame] = []
    /// Frames wait for their sound at most this long (input time) or this many frames, so a track that
    /// stops early or is sparsely interleaved costs bounded memory; windows past what was decoded read
    /// as silence.
    static let holdLimit = MediaTime(value: 3, timescale: 2)
    static let holdFrames = 48

    init(decoder: AudioPCMDecoder, ring: AudioRing) {
        self.decoder = decoder
        self.ring = ring
    }

    var isHolding: Bool { !held.isEmpty }

    /// Takes frames to hold; returns those whose sound is complete, windows attached, in order.
    mutating func hold(_ frames: [TimedFrame]) -> [TimedFrame] {
        held += frames
        return release(all: false)
    }

    /// Decodes one packet of the track; returns the frames it completed.
    mutating func decode(_ packet: AudioPacket) throws -> [TimedFrame] {
        let ring = self.ring
        try decoder.decode(packet) { time, planes in ring.append(planes, at: time) }
        return release(all: false)
    }

    /// The end of the input: flushes the decoder and releases every frame.
    mutating func finish() throws -> [TimedFrame] {
        let ring = self.ring
        try decoder.decode(nil) { time, planes in ring.append(planes, at: time) }
        ring.end()
        return release(all: true)
    }

    private mutating func release(all: Bool) -> [TimedFrame] {
        var ready: [TimedFrame] = []
        while let first = held.first {
            let overdue = held.count > Self.holdFrames || held.last!.pts - first.pts > Self.holdLimit
            guard all || overdue || ring.covers(first.pts) else { break }
            var frame = held.removeFirst()
            frame.audio = ring.window(endingAt: frame.pts)
            ready.append(frame)
        }
        return ready
    }
}
