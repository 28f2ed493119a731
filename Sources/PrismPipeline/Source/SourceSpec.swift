import Foundation
import PrismCore
import PrismMedia

/// Where frames come from.
public enum InputSpec: Sendable, Equatable {
    /// The built-in moving test pattern.
    case pattern
    /// Anything libavformat opens: a path or a URL.
    case movie(String)
    /// Raw frames on standard input (or any file descriptor), described by their format.
    case standardInput(RawVideoFormat)
    /// A V4L2 camera (`/dev/videoN`).
    case camera(String)
    /// Frames a program pushes (the C library, the GStreamer element, Python), described by the feed.
    case frames(FrameFeed)

    /// An INPUT argument naming a camera: a path under /dev/video, or `v4l2:` and a device path.
    public static func cameraPath(_ argument: String) -> String? {
        if argument.hasPrefix("v4l2:") { return String(argument.dropFirst(5)) }
        return argument.hasPrefix("/dev/video") ? argument : nil
    }

    /// Checks an INPUT that names a movie before anything opens it, so a typo is one clear line:
    /// a file (or FIFO, or /dev/stdin) that exists, a pipe (`pipe:0`, `pipe://0`: libavformat's pipe
    /// protocol, read like a file, with back-pressure), a URL, or an image pattern (`img%03d.png`,
    /// see `ImageSequence`) whose first image exists.
    public static func checkMovieArgument(_ path: String) throws {
        // A scheme FFmpeg cannot read (`rtps://`, `foo://`) is one line now, not an open that fails later.
        if path.contains("://") { try NetworkURL.checkScheme(path); return }
        if path.hasPrefix("pipe:") { return }
        if ImageSequence.isPattern(path) {
            guard ImageSequence.firstFile(path) != nil else {
                let tried = ImageSequence.firstNumbers.compactMap { ImageSequence.path(path, number: $0) }
                throw InvalidRequest("\(path): no image of the sequence exists (tried \(tried.first!) … \(tried.last!))")
            }
            return
        }
        guard FileManager.default.fileExists(atPath: path) else { throw InvalidRequest("\(path): no such file") }
    }

    /// Cameras (and the clock-paced pattern) run on the clock; files and pipes do not.
    public var isCamera: Bool { if case .camera = self { return true } else { return false } }

    /// A movie input that is a network URL (rtsp, srt, rtmp, udp, rtp, tcp, http(s)): opened by
    /// `NetworkSource`, with deadlines and reconnection.
    public var isNetwork: Bool { if case .movie(let url) = self { return NetworkURL.isNetwork(url) } else { return false } }
}

/// What to open and how: the one place every front end turns an input into a `MediaSource`.
public struct SourceSpec: Sendable {
    /// The kind of input and where it is.
    public var input: InputSpec
    /// The pattern's size, or the size asked of a camera (it takes its closest).
    public var size: Size?
    /// The pattern's rate, or the rate asked of a camera.
    public var frameRate: Rational?
    /// The pattern's length in frames (nil: endless).
    public var patternFrames: Int?
    /// Reopen a movie at its end with its timestamps continued (`prism dev` loops its clip).
    public var loop = false
    /// `--input-color`: what a movie's colour is taken for instead of its tags.
    public var colorOverride: ColorOverride?
    /// A network input's timeouts, reconnection and protocol options (`isNetwork` inputs only).
    public var network = NetworkInputOptions()
    /// `--strict-decode`: a damaged packet, or a file that cannot be read to its end, fails the run. By
    /// default they are skipped and counted, as FFmpeg's command line does (`DecodeDamage`).
    public var strictDecoding = false

    /// What to open; the nil options take the source's own size and rate (or the pattern's defaults).
    public init(input: InputSpec, size: Size? = nil, frameRate: Rational? = nil, patternFrames: Int? = nil,
                loop: Bool = false) {
        self.input = input
        self.size = size
        self.frameRate = frameRate
        self.patternFrames = patternFrames
        self.loop = loop
    }

    /// The pattern's size when none is asked for.
    public static let defaultSize = Size(width: 1280, height: 720)
    /// The pattern's rate when none is asked for: 30 fps.
    public static let defaultRate = Rational(30, 1)

    /// Opens the source. Fails with the source's own one-line error (no such file, no such camera…).
    package func open() throws -> MediaSource {
        // A network stream is not looped: it goes on by itself, and reconnects when it drops.
        if loop, case .movie = input, !input.isNetwork { return try LoopingSource(spec: self) }
        return try openOnce()
    }

    /// `damage`: where a movie counts what it skips (a loop's passes count together); nil: its own.
    fileprivate func openOnce(damage: DecodeDamage? = nil) throws -> MediaSource {
        switch input {
        case .pattern:
            return try TestPatternSource(size: size ?? Self.defaultSize, frameRate: frameRate ?? Self.defaultRate,
                                         frameCount: patternFrames)
        case .movie(let url) where input.isNetwork:
            return try NetworkSource(url: url, options: network, colorOverride: colorOverride, strictDecoding: strictDecoding)
        case .movie(let path):
            // An image sequence's frames are 1/rate apart (--fps, else the default rate).
            return try MovieSource(url: path, imageRate: frameRate ?? Self.defaultRate, colorOverride: colorOverride,
                                   damage: damage ?? DecodeDamage(input: path, strict: strictDecoding))
        case .standardInput(let format):
            return RawVideoSource(fileDescriptor: 0, format: format)
        case .camera(let path):
            return try CameraSource(path: path, configuration: .init(size: size, frameRate: frameRate))
        case .frames(let feed):
            return FrameFeedSource(feed: feed)
        }
    }
}

/// A movie reopened at its end, its timestamps continued one frame after the last, forever. Its audio
/// is not offered to sinks (a loop's audio would not line up in a recording), but its packets are
/// passed on, moved onto the loop's time line, for audio-reactive filters (`analysisAudio`). Used from
/// one thread.
final class LoopingSource: MediaSource {
    let info: SourceInfo
    /// The clip's audio stream, for analysis only (`info.audio` is nil so sinks do not copy it).
    let analysisAudio: AudioStreamInfo?
    /// Audio read before the pass's first frame fixed its offset, and events ready to go.
    private var pendingAudio: [AudioPacket] = []
    private var ready: [SourceEvent] = []
    private let spec: SourceSpec
    private var source: MediaSource
    /// Added to the current pass's timestamps.
    private var offset = MediaTime.zero
    private var passStart: MediaTime?
    private var lastPTS: MediaTime?
    private var lastDuration: MediaTime?
    private var framesThisPass = 0
    /// Every pass's skipped packets.
    private let damage: DecodeDamage
    var decodeDamage: DecodeDamage? { damage }

    init(spec: SourceSpec) throws {
        self.spec = spec
        var label = ""
        if case .movie(let path) = spec.input { label = path }
        damage = DecodeDamage(input: label, strict: spec.strictDecoding)
        source = try spec.openOnce(damage: damage)
        var info = source.info
        analysisAudio = info.audio
        info.audio = nil
        info.duration = nil
        info.estimatedFrameCount = nil
        self.info = info
    }

    func next() throws -> SourceEvent? {
        while true {
            if !ready.isEmpty { return ready.removeFirst() }
            guard let event = try source.next() else {
                guard framesThisPass > 0 else { throw InvalidRequest("\(info.summary): no video frames to loop") }
                // End of the file: continue the time line one frame after the last frame.
                let step = lastDuration ?? MediaTime(value: Int64((spec.frameRate ?? SourceSpec.defaultRate).den),
                                                     timescale: (spec.frameRate ?? SourceSpec.defaultRate).num)
                offset = (lastPTS ?? .zero) + step
                source = try spec.openOnce(damage: damage)
                framesThisPass = 0
                passStart = nil
                pendingAudio.removeAll()
                continue
            }
            let frame: VideoFrame
            switch event {
            case .audio(let packet):
                guard analysisAudio != nil else { continue }
                // On the pass's time line as its frames are: offset + (time - the pass's first frame's time).
                guard let passStart else { pendingAudio.append(packet); continue }
                return .audio(try packet.shifted(by: offset - passStart))
            case .video(let video):
                frame = video
            }
            let first = passStart ?? frame.pts
            if passStart == nil {
                ready = try pendingAudio.map { .audio(try $0.shifted(by: offset - first)) }
                pendingAudio.removeAll()
            }
            passStart = first
            let pts = offset + (frame.pts - first)
            if let lastPTS, pts <= lastPTS { continue }
            lastDuration = lastPTS.map { pts - $0 } ?? frame.duration
            lastPTS = pts
            framesThisPass += 1
            return .video(frame.retimed(pts: pts))
        }
    }
}
