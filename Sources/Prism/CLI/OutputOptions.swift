import PrismCore
import PrismKit
import PrismMedia

/// The options of one output besides its encoder: its container and, for HLS and DASH, how the playlist
/// is cut and kept.
struct OutputChoice: Sendable, Equatable {
    var format: String?
    var playlist: PlaylistSettings.Kind?
    var segmentSeconds: Double?
    var window: Int?
    var segmentType: String?

    /// The options of one output, declared once: the table below, the command line and a manifest line read them.
    enum Key {
        static let format = OptionKey<String>("--format", value: "NAME", help: "the container, where the output's name does not say it (pipe:1, an odd "
             + "name, a URL): mp4, matroska, mpegts, flv, nut, hls, dash…")
        static let playlist = OptionKey<PlaylistSettings.Kind>("--playlist", value: PlaylistSettings.Kind.placeholder, help: "HLS/DASH: a rolling window of segments (live, the default), "
             + "every segment kept (event), or a VOD playlist")
        static let segmentDuration = OptionKey<Seconds>("--segment-duration", value: "SECONDS", help: "HLS/DASH: segment length (default 2)")
        static let window = OptionKey<Int>("--window", value: "N", in: 1...10_000, help: "HLS/DASH: segments a live playlist lists (default 6); older ones are deleted")
        static let segmentType = OptionKey<SegmentType>("--segment-type", value: SegmentType.placeholder, help: "HLS: MPEG-TS segments (the default) or fragmented MP4")
    }

    static let options: [OptionSpec] = [Key.format.spec, Key.playlist.spec, Key.segmentDuration.spec, Key.window.spec, Key.segmentType.spec]

    init() {}

    init(from source: inout some OptionSource) throws {
        format = try source.value(Key.format)
        if let kind = try source.value(Key.playlist) { playlist = kind }
        segmentSeconds = try source.value(Key.segmentDuration)?.value
        window = try source.value(Key.window)
        if let type = try source.value(Key.segmentType) { segmentType = type.rawValue }
    }

    /// What this output sets, over what every output gets.
    func over(_ defaults: OutputChoice) -> OutputChoice {
        var result = self
        result.format = format ?? defaults.format
        result.playlist = playlist ?? defaults.playlist
        result.segmentSeconds = segmentSeconds ?? defaults.segmentSeconds
        result.window = window ?? defaults.window
        result.segmentType = segmentType ?? defaults.segmentType
        return result
    }

    var setsPlaylist: Bool { playlist != nil || segmentSeconds != nil || window != nil || segmentType != nil }

    var playlistSettings: PlaylistSettings {
        var settings = PlaylistSettings()
        if let playlist { settings.kind = playlist }
        if let segmentSeconds { settings.segmentSeconds = segmentSeconds }
        if let window { settings.window = window }
        settings.fragmentedMP4 = segmentType == "fmp4"
        return settings
    }
}

/// `-o` may repeat (`-o take.mp4 -o rtmp://… -o out.m3u8`). The options that belong to an output (its
/// encoder: `--codec`, `--bitrate`…; its container: `--format`, the playlist's) given before an `-o` are
/// that output's alone; given after the last `-o` they apply to every output that sets none of its own.
/// With one `-o` they may stand anywhere, as they always could.
struct OutputArguments {
    /// One `-o` and the options that were given for it alone.
    struct Output {
        let location: String
        let arguments: [String]
    }

    /// The options an `-o` takes for itself.
    static let scoped: [OptionSpec] = EncoderChoice.options + OutputChoice.options
    static let scopedSpec = CommandSpec(name: "run -o", arguments: "", summary: "", options: scoped)

    /// The arguments with every output and its own options taken out (nil outputs: fewer than two `-o`,
    /// and `arguments` is returned as it was).
    static func split(_ arguments: [String], command: CommandSpec) throws -> (rest: [String], outputs: [Output]?) {
        let outputNames = RunCommand.Key.output.spec.names
        var rest: [String] = [], outputs: [Output] = [], pending: [String] = []
        for token in ArgumentToken.read(arguments, takesValue: { command.option(named: $0)?.takesValue == true }) {
            switch token {
            case .operand(let word):
                rest.append(word)
            case .endOfOptions(let words):
                rest += ["--"] + words
            case .option(let name, let value, let words):
                if outputNames.contains(name) {
                    outputs.append(Output(location: value ?? "", arguments: pending))
                    pending = []
                } else if scopedSpec.option(named: name) != nil {
                    pending += words
                } else {
                    rest += words
                }
            }
        }
        guard outputs.count > 1 else { return (arguments, nil) }
        // After the last -o: every output's defaults.
        return (rest + pending, outputs)
    }
}
