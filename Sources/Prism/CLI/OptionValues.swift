import PrismCore
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline

/// A value an option takes that reads and checks itself from its text form (swift-argument-parser's
/// `ExpressibleByArgument` is the model). A command line and a manifest line hand the same text to the
/// same initialiser, so they accept the same values and refuse the others with the same message; only
/// `name`, the option as that source's user spells it (`--crf`, `"crf"`), differs.
protocol OptionValue: Sendable, Equatable {
    /// Reads `text`, given for the option spelt `name`; throws a one-line `UsageError` naming it.
    init(text: String, name: String) throws
    /// A text that reads back as this value (job fingerprints).
    var text: String { get }
}

/// The one check of whole numbers in a range (options declared with a range).
enum WholeNumber {
    static func parse(_ text: String, _ name: String, in range: ClosedRange<Int>) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) takes a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }
}

extension VideoEncoderSettings.Codec: OptionValue {
    init(text: String, name: String) throws {
        // "h265" is what many people call HEVC (x265's name for it).
        guard let codec = Self(rawValue: text.lowercased()) ?? (text.lowercased() == "h265" ? .hevc : nil) else {
            let all = Self.allCases.map(\.rawValue)
            throw UsageError("\(name) takes \(all.dropLast().joined(separator: ", ")) or \(all.last!), not '\(text)'"
                             + NearestName.suggestion(for: text, among: all))
        }
        self = codec
    }
    var text: String { rawValue }
}

/// An x264/x265 preset: the one list of them.
struct EncoderPreset: OptionValue {
    static let all = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    let text: String
    init(text: String, name: String) throws {
        guard Self.all.contains(text) else { throw UsageError("\(name) takes one of \(Self.all.joined(separator: ", ")), not '\(text)'") }
        self.text = text
    }
}

/// `4M`, `2500k`, `800000`: bits per second, up to 2 Gbit/s.
struct Bitrate: OptionValue {
    let value: Int
    var text: String { String(value) }
    init(text: String, name: String) throws {
        let lowered = text.lowercased()
        var multiplier = 1.0
        var digits = Substring(lowered)
        if lowered.hasSuffix("k") { multiplier = 1e3; digits = digits.dropLast() }
        else if lowered.hasSuffix("m") { multiplier = 1e6; digits = digits.dropLast() }
        guard let value = Double(digits), value * multiplier >= 1, value * multiplier <= 2e9 else {
            throw UsageError("\(name) takes bits per second like 4M or 2500k, not '\(text)'")
        }
        self.value = Int(value * multiplier)
    }
}

extension Size: OptionValue {
    init(text: String, name: String) throws {
        guard let size = Size(parsing: text) else { throw UsageError("\(name) takes WxH (e.g. 1280x720) or 720p, not '\(text)'") }
        self = size
    }
    var text: String { description }
}

/// A frame rate (`30`, `29.97`, `30000/1001`) from 1/1000 to 1000 frames per second: the one frame-rate
/// check (`prism dev` lowers the ceiling through `init(text:name:upTo:)`, with the same message).
struct FrameRate: OptionValue {
    static let range = Rational.frameRates
    let rate: Rational
    var text: String { "\(rate.num)/\(rate.den)" }

    init(text: String, name: String) throws { try self.init(text: text, name: name, upTo: Self.range.upperBound) }

    init(text: String, name: String, upTo ceiling: Double) throws {
        guard let rate = Rational(frameRate: text, upTo: ceiling) else {
            let top = ceiling == ceiling.rounded() ? String(Int(ceiling)) : String(ceiling)
            throw UsageError("\(name) takes a frame rate from 0.001 to \(top) like 30, 29.97 or 30000/1001, not '\(text)'")
        }
        self.rate = rate
    }
}

/// Seconds of input time, to the millisecond for the engine.
struct Seconds: OptionValue {
    static let range = 0.001...1e7
    let value: Double
    var text: String { String(value) }
    init(text: String, name: String) throws {
        guard let number = Double(text), Self.range.contains(number) else {
            throw UsageError("\(name) takes a number in \(Self.range.lowerBound)...\(Self.range.upperBound), not '\(text)'")
        }
        value = number
    }
    /// The engine's limit.
    var limit: MediaTime { Self.limit(value) }
    static func limit(_ seconds: Double) -> MediaTime { MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000) }
}

/// `500M`, `2G`, `1.5G`: a size on disk.
struct ByteSize: OptionValue {
    let bytes: Int64
    var text: String { String(bytes) }
    init(text: String, name: String) throws {
        guard let bytes = ByteCount.parse(text) else { throw UsageError("\(name) takes a size like 500M or 2G, not '\(text)'") }
        self.bytes = bytes
    }
}

/// `90s`, `10m`, `1h`, `1.5m`, or plain seconds: how long a take runs before the next one starts.
struct TakeLength: OptionValue {
    let seconds: Double
    var text: String { String(seconds) }
    init(text: String, name: String) throws {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text), scale = 1.0
        if let last = text.last, let unit = units[last] { number = text.dropLast(); scale = unit }
        guard let value = Double(number), value.isFinite, value > 0 else {
            throw UsageError("\(name) takes a duration like 90s, 10m or 1h, not '\(text)'")
        }
        seconds = value * scale
    }
}

/// A value out of a fixed list, spelt as its raw value. The parser, the placeholder in the usage (`a|b|c`),
/// the message for anything else, the completions and the manual page all read the one list, `allCases`.
protocol ChoiceValue: OptionValue, CaseIterable, RawRepresentable where RawValue == String {}

extension ChoiceValue {
    static var choices: [String] { allCases.map(\.rawValue) }
    /// The usage's placeholder: `auto|sdr|keep`.
    static var placeholder: String { choices.joined(separator: "|") }

    init(text: String, name: String) throws {
        guard let value = Self(rawValue: text) else {
            let all = Self.choices
            throw UsageError("\(name) takes \(all.dropLast().joined(separator: ", ")) or \(all.last!), not '\(text)'"
                             + NearestName.suggestion(for: text, among: all))
        }
        self = value
    }
    var text: String { rawValue }
}

extension ReadbackStrategy: ChoiceValue {}
extension DynamicRange: ChoiceValue {}
extension InputEndPolicy: ChoiceValue {}
extension PlaylistSettings.Kind: ChoiceValue {}
extension SegmentationSettings.Backend: ChoiceValue {}
extension BatchProgressStyle: ChoiceValue {}

/// `--tonemap`: one of the tone curves, or none (the signal written as it is).
struct ToneMapChoice: ChoiceValue {
    let curve: ColorConversion.Curve?
    static var allCases: [ToneMapChoice] { ColorConversion.Curve.allCases.map { Self(curve: $0) } + [Self(curve: nil)] }
    init(curve: ColorConversion.Curve?) { self.curve = curve }
    init?(rawValue: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = match
    }
    var rawValue: String { curve?.rawValue ?? "none" }
}

/// `--output-transfer`: the HDR transfers a kept HDR output can be converted to.
struct OutputTransferChoice: ChoiceValue {
    let transfer: TransferFunction
    static var allCases: [OutputTransferChoice] { [TransferFunction.pq, .hlg].map { Self(transfer: $0) } }
    init(transfer: TransferFunction) { self.transfer = transfer }
    init?(rawValue: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = match
    }
    var rawValue: String { transfer.rawValue }
}

/// HLS segments: MPEG-TS or fragmented MP4 (`--segment-type`).
enum SegmentType: String, ChoiceValue { case ts, fmp4 }

/// RTSP's media over TCP (interleaved) or UDP (`--rtsp-transport`).
enum RTSPTransport: String, ChoiceValue { case tcp, udp }

/// Filter graph text, no longer than one command-line argument may be (Linux's MAX_ARG_STRLEN), so a
/// manifest's graph is never larger than one `run --filter` could be given. Bound later, by the command.
struct FilterText: OptionValue {
    static let maximumBytes = 128 << 10
    let text: String
    init(text: String, name: String) throws {
        guard text.utf8.count <= Self.maximumBytes else {
            throw UsageError("\(name) is \(text.utf8.count) bytes of graph text, over the limit of \(Self.maximumBytes >> 10) KiB")
        }
        self.text = text
    }
}

// MARK: - Sources

/// Where option text comes from, by key (`fps`, `crf`): a command line (`--fps 30`) or a manifest line
/// (`"fps": 30`). Option groups read themselves from any source, so every source gets one parser and one
/// set of checks.
protocol OptionSource {
    /// The text given for `key`, nil when not given; reading it marks it used.
    mutating func text(for key: String) throws -> String?
    /// Whether the flag `key` was given.
    mutating func flag(for key: String) throws -> Bool
    /// `key` as this source's user writes it: `--fps` on a command line, `"fps"` in a manifest line.
    func spelling(for key: String) -> String
}

/// What a value key and a flag key share: the option's declaration.
protocol DeclaredOption {
    var spec: OptionSpec { get }
}

extension OptionKey: DeclaredOption {}
extension FlagKey: DeclaredOption {}

extension DeclaredOption {
    /// The option as a manifest line names it: its long spelling without the dashes (`crf` for `--crf`).
    var manifestKey: String {
        let long = spec.names.first { $0.hasPrefix("--") } ?? spec.name
        return String(long.drop { $0 == "-" })
    }
}

extension OptionSource {
    /// The value of `key` from this source, read by the key's type; nil when not given.
    mutating func value<Value>(_ key: OptionKey<Value>) throws -> Value? {
        guard let text = try text(for: key.manifestKey) else { return nil }
        return try key.read(text, spelling(for: key.manifestKey))
    }

    /// Whether the flag `key` was given.
    mutating func flag(_ key: FlagKey) throws -> Bool { try flag(for: key.manifestKey) }

    /// `key` as this source's user writes it (`--faces-in`, `"faces-in"`).
    func spelling(of key: some DeclaredOption) -> String { spelling(for: key.manifestKey) }
}

/// One key's text, spelt as the caller says (`JobSettings.set`).
struct SingleOption: OptionSource {
    let key: String
    let value: String
    let name: String
    mutating func text(for key: String) -> String? { key == self.key ? value : nil }
    mutating func flag(for key: String) -> Bool { false }
    func spelling(for key: String) -> String { key == self.key ? name : key }
}

extension OptionKey where Value == Int {
    /// `--gpu N`, an EGL device index, as every command that makes a GPU context takes it.
    static var gpu: OptionKey<Int> { OptionKey("--gpu", value: "N", in: 0...63, help: "the EGL device to use (prism devices lists them)") }
}

extension OptionSpec {
    /// The option as `batch` takes it: the default for jobs that do not set it.
    var asJobDefault: OptionSpec {
        var option = self
        option.help = help + ", for jobs that set none"
        return option
    }
}

// MARK: - Groups

extension VideoEncoderSettings.Codec {
    /// The file extension of the container an output of this codec gets when none is named (batch outputs,
    /// bench's runs of the user's clip).
    var defaultContainer: String {
        switch self {
        case .h264, .hevc, .av1: "mp4"
        case .ffv1: "mkv"
        case .prores: "mov"
        }
    }
}

/// The encoder options of `run`, `record`, `batch` and a manifest line.
struct EncoderChoice: Sendable, Equatable {
    var codec: VideoEncoderSettings.Codec?
    var preset: String?
    var crf: Int?
    var bitrate: Int?
    var threads: Int?
    var keyframes: Double?
    var bframes: Int?

    /// The options of this group, declared once: the table below, the command line and a manifest line read them.
    enum Key {
        static let codec = OptionKey<VideoEncoderSettings.Codec>("--codec", value: VideoEncoderSettings.Codec.allCases.map(\.rawValue).joined(separator: "|"), help: "the video encoder (default h264; hevc, av1, ffv1 and prores keep HDR and 10 bits)")
        static let preset = OptionKey<EncoderPreset>("--preset", value: "P", help: "x264/x265 preset: " + EncoderPreset.all.joined(separator: ", ") + " (default medium)")
        static let crf = OptionKey<Int>("--crf", value: "N", in: 0...51, help: "x264/x265 constant rate factor, 0-51 (lower is better)")
        static let bitrate = OptionKey<Bitrate>("--bitrate", value: "N[k|M]", help: "target bits per second instead of constant quality, e.g. 4M")
        static let threads = OptionKey<Int>("--threads", value: "N", in: 0...64, help: "encoder threads, 0-64; 0 (the default) lets the encoder choose")
        static let keyframes = OptionKey<Seconds>("--keyframes", value: "SECONDS", help: "a keyframe every SECONDS, fixed (streams and playlists: 2 by default)")
        static let bframes = OptionKey<Int>("--bframes", value: "N", in: 0...16, help: "B-frames between reference frames, 0-16 (streams and playlists: 0 by default)")
    }

    static let options: [OptionSpec] = [Key.codec.spec, Key.preset.spec, Key.crf.spec, Key.bitrate.spec, Key.threads.spec, Key.keyframes.spec, Key.bframes.spec]
    static let numericKeys: Set<String> = ["crf", "bitrate", "threads", "keyframes", "bframes"]

    init() {}

    init(from source: inout some OptionSource) throws {
        codec = try source.value(Key.codec)
        preset = try source.value(Key.preset)?.text
        crf = try source.value(Key.crf)
        bitrate = try source.value(Key.bitrate)?.value
        threads = try source.value(Key.threads)
        keyframes = try source.value(Key.keyframes)?.value
        bframes = try source.value(Key.bframes)
    }

    func over(_ defaults: EncoderChoice) -> EncoderChoice {
        var result = self
        result.codec = codec ?? defaults.codec
        result.preset = preset ?? defaults.preset
        result.crf = crf ?? defaults.crf
        result.bitrate = bitrate ?? defaults.bitrate
        result.threads = threads ?? defaults.threads
        result.keyframes = keyframes ?? defaults.keyframes
        result.bframes = bframes ?? defaults.bframes
        return result
    }

    /// What was chosen, over the encoder's defaults.
    func apply(to settings: inout VideoEncoderSettings) {
        if let codec { settings.codec = codec }
        if let preset { settings.preset = preset }
        if let crf { settings.crf = crf }
        if let bitrate { settings.bitrate = bitrate }
        if let threads { settings.threads = threads }
        if let keyframes { settings.keyframeSeconds = keyframes }
        if let bframes { settings.bFrames = bframes }
    }

    var arguments: [(key: String, value: String)] {
        var list: [(String, String)] = []
        if let codec { list.append(("codec", codec.rawValue)) }
        if let preset { list.append(("preset", preset)) }
        if let crf { list.append(("crf", String(crf))) }
        if let bitrate { list.append(("bitrate", String(bitrate))) }
        if let threads { list.append(("threads", String(threads))) }
        if let keyframes { list.append(("keyframes", String(keyframes))) }
        if let bframes { list.append(("bframes", String(bframes))) }
        return list
    }
}

/// What is taken of the input: its size and rate (the pattern's, asked of a camera, else converted to) and
/// how much input time.
struct InputChoice: Sendable, Equatable {
    var size: Size?
    var frameRate: Rational?
    var duration: Double?

    /// The options of this group, declared once: the table below, the command line and a manifest line read them.
    enum Key {
        static let size = OptionKey<Size>("--size", value: "WxH", help: "output size (or 720p…): the pattern's, asked of a camera, else a final scale")
        static let fps = OptionKey<FrameRate>("--fps", value: "RATE", help: "frame rate (30, 29.97, 30000/1001): the pattern's, asked of a camera, "
                 + "else a constant-rate conversion")
        static let duration = OptionKey<Seconds>("--duration", value: "SECONDS", help: "stop after this much input time")
    }

    static let options: [OptionSpec] = [Key.size.spec, Key.fps.spec, Key.duration.spec]
    static let numericKeys: Set<String> = ["fps", "duration"]

    init() {}

    init(from source: inout some OptionSource) throws {
        size = try source.value(Key.size)
        frameRate = try source.value(Key.fps)?.rate
        duration = try source.value(Key.duration)?.value
    }

    func over(_ defaults: InputChoice) -> InputChoice {
        InputChoice(size: size ?? defaults.size, frameRate: frameRate ?? defaults.frameRate, duration: duration ?? defaults.duration)
    }

    private init(size: Size?, frameRate: Rational?, duration: Double?) {
        self.size = size
        self.frameRate = frameRate
        self.duration = duration
    }

    var arguments: [(key: String, value: String)] {
        var list: [(String, String)] = []
        if let size { list.append(("size", size.description)) }
        if let frameRate { list.append(("fps", "\(frameRate.num)/\(frameRate.den)")) }
        if let duration { list.append(("duration", String(duration))) }
        return list
    }

    func apply(to options: inout Session.Options) {
        options.size = size
        options.frameRate = frameRate
        options.durationLimit = duration.map(Seconds.limit)
    }
}

/// Limits that end a recording cleanly.
extension RecordingLimits {
    /// The options of this group, declared once: the table below, the command line and a manifest line read them.
    enum Key {
        static let maxSize = OptionKey<ByteSize>("--max-size", value: "SIZE", help: "end the recording cleanly before the movie passes SIZE (500M, 2G)")
        static let minFree = OptionKey<ByteSize>("--min-free", value: "SIZE", help: "end the recording cleanly when the disk's free space falls to SIZE")
    }

    static let options: [OptionSpec] = [Key.maxSize.spec, Key.minFree.spec]

    init(from source: inout some OptionSource) throws {
        self.init(maxBytes: try source.value(Key.maxSize)?.bytes,
                  minFreeBytes: try source.value(Key.minFree)?.bytes)
    }
}
