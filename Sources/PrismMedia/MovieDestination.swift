import CFFmpeg
import Foundation
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// Where an encoded movie goes and in which container, decided before anything is opened:
/// - a **file**, its container from the extension (written to a temporary, renamed when finished);
/// - a **stream** written in place, front to back: a FIFO, a character device, `pipe:N` (`/dev/stdout`);
/// - a **network** URL, its container from the scheme (RTMP → FLV, SRT/UDP/TCP → MPEG-TS, RTP → RTP
///   MPEG-TS, RTSP → an RTSP publish);
/// - a **playlist**: `.m3u8` is HLS, `.mpd` DASH, segments named after the playlist beside it.
///
/// `--format NAME` (`formatName`) names the muxer where the location does not say it (a pipe, an odd name,
/// an HTTP URL); every refusal is one line that says what would work.
public struct MovieDestination: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A regular file (or a symlink to one, or a path that does not exist yet).
        case file
        /// Written in place without seeking: a FIFO, a character device, a `pipe:N`.
        case stream
        /// A network URL with this scheme (`rtmp`, `srt`, …).
        case network(scheme: String)
        /// An HLS or DASH playlist with its segments.
        case playlist(PlaylistFormat)
    }

    /// The path or URL as given (symlinks are followed by the writer, for files).
    public let location: String
    public let kind: Kind
    /// libavformat's muxer name (`mp4`, `flv`, `hls`, …).
    public let formatName: String

    /// Whether what is written is consumed while it is written (a network stream or a live playlist):
    /// such an output gets the live encoder defaults (keyframes every 2 s, no B-frames).
    public var isStreaming: Bool {
        switch kind {
        case .network, .playlist: return true
        case .file, .stream: return false
        }
    }

    /// A network URL: it may fail or fall behind while the run goes on (see `MovieSink`'s policy).
    public var isNetwork: Bool { if case .network = kind { return true } else { return false } }

    /// A network output that listens (`srt://:PORT?mode=listener`, `rtmp://…?listen=1`, `tcp://…?listen`): opening
    /// it waits for the peer that will read the stream to connect.
    public var waitsForPeer: Bool {
        guard isNetwork, let query = location.split(separator: "?", maxSplits: 1).dropFirst().first else { return false }
        return query.split(separator: "&").contains { $0 == "mode=listener" || $0 == "listen" || $0 == "listen=1" }
    }

    /// The URL schemes Prism streams to, with the container each gets unless `--format` says otherwise.
    public static let schemeFormats: [(scheme: String, format: String)] = [
        ("rtmp", "flv"), ("rtmps", "flv"), ("rtmpt", "flv"), ("rtmpts", "flv"),
        ("srt", "mpegts"), ("udp", "mpegts"), ("tcp", "mpegts"), ("rtp", "rtp_mpegts"),
        ("rtsp", "rtsp"), ("rtsps", "rtsp"),
    ]

    /// The containers named in messages: what an extension can pick.
    static let extensionHelp = ".mp4, .mov, .mkv, .webm, .ts, .flv, .nut, .m3u8 (HLS) or .mpd (DASH)"

    /// Resolves `location` (and `--format`, when given) to a muxer, or throws one line saying what is supported.
    public init(_ location: String, format: String? = nil) throws {
        self.location = location
        let scheme = Self.scheme(of: location)
        var kind: Kind
        if let scheme, scheme != "file" {
            if scheme == "pipe" {
                kind = .stream
            } else {
                // RTSP is a muxer that opens its own connection, not an I/O protocol.
                let opensItself = scheme == "rtsp" || scheme == "rtsps"
                guard opensItself || Self.protocolWrites(scheme) else {
                    let known = Self.schemeFormats.map { $0.scheme + "://" }.joined(separator: ", ")
                    throw InvalidRequest("\(location): unknown output protocol '\(scheme)://' (Prism streams to \(known); "
                                     + "files, pipe:N and v4l2:DEVICE too)")
                }
                kind = .network(scheme: scheme)
            }
        } else {
            kind = .file
        }
        let path = scheme == "file" ? String(location.dropFirst("file:".count)) : location
        let ext = (((path as NSString).lastPathComponent) as NSString).pathExtension.lowercased()
        var outputFormat: UnsafePointer<AVOutputFormat>?
        if let format {
            outputFormat = av_guess_format(format, nil, nil)
            guard let found = outputFormat, String(cString: found.pointee.name).split(separator: ",").contains(where: { $0 == format }) else {
                throw InvalidRequest("\(Setting.format) \(format): no such container in this FFmpeg (e.g. mp4, matroska, mpegts, flv, "
                                 + "hls, dash; `ffmpeg -muxers` lists them)")
            }
        } else if case .network(let scheme) = kind {
            guard let name = Self.schemeFormats.first(where: { $0.scheme == scheme })?.format else {
                throw InvalidRequest("\(location): \(scheme):// carries no container of its own; name one with \(Setting.format) "
                                 + "(e.g. \(Setting.format) mpegts)")
            }
            outputFormat = av_guess_format(name, nil, nil)
        } else if kind == .stream {
            throw InvalidRequest("\(location): a pipe has no name to choose the container from; name one with \(Setting.format) "
                             + "(e.g. \(Setting.format) mpegts, matroska, nut or flv)")
        } else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw InvalidRequest("\(location): is a directory, not an output file")
            }
            guard !ext.isEmpty else {
                throw InvalidRequest("\(location): no file extension to choose the container from (use \(Self.extensionHelp), "
                                 + "or \(Setting.format) NAME)")
            }
            outputFormat = av_guess_format(nil, path, nil)
            guard outputFormat != nil else {
                throw InvalidRequest("\(location): unknown output file extension '.\(ext)' (use \(Self.extensionHelp), or \(Setting.format) NAME)")
            }
        }
        guard let outputFormat else { throw InvalidRequest("\(location): no container for this output") }
        formatName = String(cString: outputFormat.pointee.name)
        if formatName == "hls" { kind = .playlist(.hls) }
        if formatName == "dash" { kind = .playlist(.dash) }
        if case .playlist = kind, scheme != nil, scheme != "file" {
            throw InvalidRequest("\(location): Prism writes HLS and DASH playlists to files (serve the folder with any web server)")
        }
        self.kind = kind
    }

    /// The muxer (`av_guess_format` by name).
    var outputFormat: UnsafePointer<AVOutputFormat> { av_guess_format(formatName, nil, nil)! }

    /// For a playlist: throws one line when writing it could write over `path`, which the run reads or writes
    /// as `what` ("the input", the output, the face sidecar): a segment's name in its folder, its temporary, its list;
    /// for another playlist, its segments' names. Nothing for other destinations or a URL.
    package func checkSegmentNames(against path: String, as what: String) throws {
        guard case .playlist(let format) = kind, let own = Self.localPath(of: location), let other = Self.localPath(of: path),
              !OutputTarget.sameFile(own, other) else { return }
        let files = PlaylistFiles(path: own, format: format, settings: PlaylistSettings())
        var names = [other]
        if let otherDestination = try? MovieDestination(path), case .playlist(let otherFormat) = otherDestination.kind {
            names += PlaylistFiles(path: other, format: otherFormat, settings: PlaylistSettings()).firstNames
        }
        guard let taken = names.first(where: files.claims) else { return }
        throw InvalidRequest("\(location) writes its files as \(files.firstNames.map { ($0 as NSString).lastPathComponent }.joined(separator: ", "))… "
                         + "beside it, and \(taken) would be one of them (\(what) \(path)); name the playlist otherwise")
    }

    /// `rtmp` of `rtmp://host/app`; nil for a plain path. `pipe:1` is a scheme too, and `file:`.
    public static func scheme(of location: String) -> String? {
        guard let colon = location.firstIndex(of: ":") else { return nil }
        let scheme = location[..<colon]
        guard scheme.count >= 2, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
              scheme.first!.isLetter else { return nil }
        // `pipe:1`, `file:x`, or `scheme://…`.
        let rest = location[location.index(after: colon)...]
        guard rest.hasPrefix("//") || scheme == "pipe" || scheme == "file" else { return nil }
        return scheme.lowercased()
    }

    /// The file a location names on this machine: a plain path, or what follows a `file:` URL's scheme (as
    /// FFmpeg's file protocol reads it: `file:///abs/out.mp4` is `///abs/out.mp4`); nil for a network URL or
    /// a pipe. Checks that compare outputs with inputs compare these.
    public static func localPath(of location: String) -> String? {
        switch scheme(of: location) {
        case nil: return location
        case "file": return String(location.dropFirst("file:".count))
        default: return nil
        }
    }

    /// Whether this FFmpeg can write to `scheme`.
    static func protocolWrites(_ scheme: String) -> Bool { NetworkURL.outputProtocols.contains(scheme) }

    /// `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: the process's own descriptor, written as `pipe:N`
    /// (following the link would name `pipe:[inode]` or the terminal, not a file to replace).
    public static func descriptorPipe(_ path: String) -> String? {
        switch path {
        case "/dev/stdout": return "pipe:1"
        case "/dev/stderr": return "pipe:2"
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                if let fd = Int32(path.dropFirst(prefix.count)), fd >= 0 { return "pipe:\(fd)" }
            }
            return nil
        }
    }
}

/// The two live playlist formats.
public enum PlaylistFormat: String, Sendable, Equatable {
    case hls, dash
}

/// How an HLS or DASH output is cut and kept.
public struct PlaylistSettings: Sendable, Hashable {
    /// What a player sees while the run goes on.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A rolling window of the newest segments; segments leaving it are deleted (a live stream).
        case live
        /// Every segment stays listed and on disk while the run goes on (an event: players may seek back).
        case event
        /// Every segment; the playlist says VOD (for files: the whole movie, as one playlist).
        case vod
    }
    public var kind = Kind.live
    /// Target segment length in seconds (segments are cut at keyframes).
    public var segmentSeconds: Double = 2
    /// Segments a live playlist lists.
    public var window = 6
    /// MPEG-TS segments, or fragmented MP4 (CMAF: what DASH always uses, and HLS with fmp4).
    public var fragmentedMP4 = false

    public init() {}
}

/// The files an HLS or DASH output is made of, named after the playlist: `NAME.m3u8` with `NAME0.ts`,
/// `NAME1.ts`… (or `NAME-init.mp4` and `NAME0.m4s`…); `NAME.mpd` with `NAME-init-0.m4s` and
/// `NAME-0-00001.m4s`…
struct PlaylistFiles {
    let format: PlaylistFormat
    let directory: String
    let name: String
    let settings: PlaylistSettings

    init(path: String, format: PlaylistFormat, settings: PlaylistSettings) {
        self.format = format
        self.settings = settings
        let directory = (path as NSString).deletingLastPathComponent
        self.directory = directory.isEmpty ? "." : directory
        name = (((path as NSString).lastPathComponent) as NSString).deletingPathExtension
    }

    private var segmentExtension: String { settings.fragmentedMP4 ? "m4s" : "ts" }

    /// The muxer's options: segment names, length, window, what becomes of old segments.
    func muxerOptions() -> [(String, String)] {
        let seconds = String(format: "%g", settings.segmentSeconds)
        switch format {
        case .hls:
            var flags = ["independent_segments", "temp_file"]
            var options: [(String, String)] = [("hls_time", seconds),
                                               ("hls_segment_filename", directory + "/" + name + "%d." + segmentExtension)]
            switch settings.kind {
            case .live:
                flags.append("delete_segments")
                options.append(("hls_list_size", String(settings.window)))
            case .event:
                options += [("hls_list_size", "0"), ("hls_playlist_type", "event")]
            case .vod:
                options += [("hls_list_size", "0"), ("hls_playlist_type", "vod")]
            }
            if settings.fragmentedMP4 {
                options += [("hls_segment_type", "fmp4"), ("hls_fmp4_init_filename", name + "-init.mp4")]
            }
            options.append(("hls_flags", flags.joined(separator: "+")))
            return options
        case .dash:
            var options: [(String, String)] = [
                ("seg_duration", seconds), ("use_template", "1"), ("use_timeline", "1"),
                ("init_seg_name", name + "-init-$RepresentationID$.$ext$"),
                ("media_seg_name", name + "-$RepresentationID$-$Number%05d$.$ext$"),
            ]
            if settings.kind == .live {
                options += [("window_size", String(settings.window)), ("extra_window_size", "1"), ("streaming", "1")]
            } else {
                options.append(("window_size", "0"))
            }
            return options
        }
    }

    /// Whether `file` (a name in `directory`) is a segment or init file of this playlist.
    func isSegment(_ entry: String) -> Bool {
        // The muxer writes each file under `.tmp` first (HLS's temp_file): a killed run leaves those.
        let file = entry.hasSuffix(".tmp") ? String(entry.dropLast(4)) : entry
        switch format {
        case .hls:
            if file == name + "-init.mp4" { return true }
            for ext in ["ts", "m4s"] where file.hasPrefix(name) && file.hasSuffix("." + ext) {
                let number = file.dropFirst(name.count).dropLast(ext.count + 1)
                if !number.isEmpty, number.allSatisfy(\.isNumber) { return true }
            }
            return false
        case .dash:
            guard file.hasPrefix(name + "-"), file.hasSuffix(".m4s") else { return false }
            let middle = file.dropFirst(name.count + 1).dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
            if middle.count == 2, middle[0] == "init", !middle[1].isEmpty, middle[1].allSatisfy(\.isNumber) { return true }
            return middle.count == 2 && middle.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        }
    }

    /// The first files it writes (paths), for messages and for checking two playlists against each other.
    var firstNames: [String] {
        let names = format == .hls ? [name + "0.ts", name + "-init.mp4", name + "0.m4s"] : [name + "-init-0.m4s", name + "-0-00001.m4s"]
        return names.map { directory + "/" + $0 }
    }

    /// The playlist's own file (`NAME.m3u8`, `NAME.mpd`) and the muxer's temporary of it.
    var outputNames: Set<String> {
        let own = name + "." + (format == .hls ? "m3u8" : "mpd")
        return [own, own + ".tmp"]
    }

    /// Where the files Prism wrote for this playlist are listed (`PlaylistLedger`).
    var ledgerPath: String { directory + "/." + name + "." + (format == .hls ? "m3u8" : "mpd") + ".written" }

    /// Whether writing this playlist could write over `path` (whatever its spelling, a symlink's target too):
    /// a segment's or init file's name in the playlist's folder, the playlist's temporary, its list.
    func claims(_ path: String) -> Bool {
        let spellings = [path, (try? OutputTarget.resolvingLinks(path)) ?? path]
        return spellings.contains { spelling in
            let folder = (spelling as NSString).deletingLastPathComponent, entry = (spelling as NSString).lastPathComponent
            guard isSegment(entry) || entry == (ledgerPath as NSString).lastPathComponent
                    || (outputNames.contains(entry) && entry.hasSuffix(".tmp")) else { return false }
            return OutputTarget.sameFile(folder.isEmpty ? "." : folder, directory)
        }
    }

    /// Before the muxer writes anything: what an earlier run of this playlist wrote (`PlaylistLedger`'s list,
    /// each file still the one listed) is deleted, so segments never pile up; any other file in the folder
    /// with one of this playlist's names refuses the run, before anything is deleted. Returns this run's list,
    /// which the muxer's opens go through.
    func prepare() throws -> PlaylistLedger {
        let earlier = try PlaylistLedger.read(ledgerPath)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var owned: [String] = []
        for entry in entries.sorted() where isSegment(entry) {
            guard earlier.contains(where: { $0.isOnDisk(as: entry, in: directory) }) else {
                func shown(_ file: String) -> String { directory == "." ? file : directory + "/" + file }
                throw InvalidRequest("\(shown(name + "." + (format == .hls ? "m3u8" : "mpd"))): \(shown(entry)) has the name of one of its "
                                 + "segments, and no earlier run of this playlist wrote it; move it away or name the playlist otherwise "
                                 + "(Prism never replaces it)")
            }
            owned.append(entry)
        }
        for entry in owned { unlink(directory + "/" + entry) }
        return try PlaylistLedger(path: ledgerPath, directory: directory, output: outputNames, isOwnName: isSegment)
    }

    /// After a failed run: the files this run wrote (its list) go, and with `playlist` (this run began
    /// writing it) the playlist and the list itself.
    func removeWritten(_ ledger: PlaylistLedger, playlist: Bool) {
        ledger.close()
        for entry in ledger.written {
            for name in [entry.name, entry.name.hasSuffix(".tmp") ? String(entry.name.dropLast(4)) : entry.name + ".tmp"]
            where entry.isOnDisk(as: name, in: directory) {
                unlink(directory + "/" + name)
            }
        }
        guard playlist else { return }
        for own in outputNames { unlink(directory + "/" + own) }
        unlink(ledgerPath)
    }
}
