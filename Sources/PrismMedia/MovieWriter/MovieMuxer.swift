import CFFmpeg
import CMediaShims
import Foundation
import PrismCore

/// The container side of a `MovieWriter`: one libavformat context and where it writes (a hidden temporary
/// beside the target, a FIFO or device in place, a network URL, a playlist's segments), from the header to
/// the trailer, and what is left of the output when the movie is finished, salvaged or aborted. Owns the
/// context, its I/O and the temporary; in deinit an unfinished output is aborted.
final class MovieMuxer {
    enum State { case open, finished, aborted }

    /// The file (or URL) the movie ends up at.
    let outputPath: String
    /// Where the movie goes (file, stream, network URL, playlist) and in which container.
    let destination: MovieDestination
    let outputFormat: UnsafePointer<AVOutputFormat>
    /// libavformat's muxer name (`mp4`, `flv`, `hls`, …).
    var formatName: String { destination.formatName }
    let context: UnsafeMutablePointer<AVFormatContext>
    private(set) var state: State = .open
    /// Recordings a killed earlier run left as temporaries of this output, recovered next to it.
    private(set) var recoveredLeftovers: [OutputTarget.Recovered] = []
    /// Whether the container takes timestamps below 0 (`AVFMT_TS_NEGATIVE`).
    let allowsNegativeTimestamps: Bool
    /// The most bytes the finished file may take; see `MovieWriter.byteBudget`.
    var byteBudget: Int64?
    /// A packet did not fit `byteBudget`: it and every packet after it are left out.
    private(set) var budgetReached = false
    /// Bytes handed to the muxer so far, each packet with an upper estimate of its container overhead.
    private var muxedBytes: Int64 = 0
    private let temporaryPath: String?
    /// Where the finished movie goes: `outputPath`, or the final target of the symlink it names (for a new file
    /// only, another name when something took this one meanwhile: see `placeFinished`).
    private(set) var finalPath: String
    /// A new file only (a take Prism named): nothing at the path is followed or replaced, at open or at the end.
    private let newFileOnly: Bool
    private var ioOpen = false
    private var headerWritten = false
    /// Whether a file cut off before its trailer still plays (see `salvage`).
    private var keepsWithoutTrailer = false
    private var isFragmentedMP4 = false
    private var isTransportStream = false
    /// An HLS or DASH output's segments (removed with the playlist when a run fails).
    private var playlistFiles: PlaylistFiles?
    /// The files this run's playlist wrote, listed as they are opened (what a failed run removes, what the
    /// next run of the same playlist may delete); nothing it did not write is written over.
    private var playlistLedger: PlaylistLedger?
    /// The deadline every blocking call on a network output runs under.
    private let deadline = IOWatchdog()

    /// How long a network output may block in one call (connecting, a write the server does not take)
    /// before it fails instead of hanging the run.
    static let networkTimeout: Double = 10
    /// How long a listening output (SRT listener, RTMP/TCP `listen`) waits for its reader to connect.
    static let listenTimeout: Double = 60
    /// Header and trailer beyond the per-packet overhead (moov's fixed boxes, Matroska's seek head and
    /// cues' fixed part, a last PAT/PMT).
    static let trailerReserve: Int64 = 16_384
    /// Containers that are written front to back without seeking, so they can go into a FIFO or a device.
    private static let streamableFormats = ["matroska", "webm", "mpegts", "nut"]

    /// Picks the container and the place to write, and creates the output context; nothing is written yet
    /// (`open` does that once the streams are added).
    init(path: String, destination: MovieDestination?, codec: VideoEncoderSettings.Codec,
         playlist: PlaylistSettings, newFileOnly: Bool) throws {
        outputPath = path
        self.newFileOnly = newFileOnly
        // The container: from the extension, the URL's scheme, or --format (see MovieDestination).
        let destination = try destination ?? MovieDestination(path)
        self.destination = destination
        let outputFormat = destination.outputFormat
        let formatName = destination.formatName
        self.outputFormat = outputFormat
        // 0: the container refuses the codec. Unknown (< 0) is refused for raw single-codec formats too
        // (`.mjpeg` would otherwise get a raw H.264 stream under a JPEG name).
        let takes = avformat_query_codec(outputFormat, codec.avCodecID, FF_COMPLIANCE_NORMAL)
        if takes == 0 || (takes < 0 && outputFormat.pointee.flags & AVFMT_NOTIMESTAMPS != 0) {
            throw InvalidRequest("\(path): the \(formatName) container cannot hold \(codec.rawValue) video")
        }
        // Files: symlinks followed, FIFOs and devices written in place, directories refused (see OutputTarget).
        // Network URLs and pipe:N are written as they are; a playlist is checked as a file.
        var target: OutputTarget?
        var info = stat()
        if newFileOnly, lstat(path, &info) == 0 {
            throw InvalidRequest("\(path) exists now; a new recording never replaces a file")
        }
        switch destination.kind {
        case .file, .playlist: target = try OutputTarget(path: MovieDestination.localPath(of: path) ?? path)  // `file:` URLs too
        case .stream, .network: target = nil
        }
        let inPlace = destination.kind == .stream || target?.isStream == true
        if inPlace, !Self.streamableFormats.contains(where: formatName.contains) {
            let what = target?.streamKind ?? "pipe"
            throw InvalidRequest("\(path): is a \(what), and the \(formatName) container needs a seekable "
                             + "file; write .mkv or .ts into it (or \(Setting.output) - for raw frames)")
        }
        if let target, !target.isStream, destination.kind == .file {
            recoveredLeftovers = target.removeStaleTemporaries().recovered
            temporaryPath = target.makeTemporaryPath()
        } else {
            temporaryPath = nil
        }
        finalPath = target?.path ?? path
        if case .playlist(let format) = destination.kind {
            playlistFiles = PlaylistFiles(path: finalPath, format: format, settings: playlist)
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, outputFormat, nil, temporaryPath ?? finalPath),
                  "avformat_alloc_output_context2", path)
        guard let ctx else { throw AVError("cannot create the output context", context: path) }
        context = ctx
        allowsNegativeTimestamps = outputFormat.pointee.flags & AVFMT_TS_NEGATIVE != 0
    }

    deinit {
        if state == .open { abort() }
        if ioOpen { _ = Self.muxing { avio_closep(&context.pointee.pb) } }
        avformat_free_context(context)
    }

    /// Whether the container wants the codecs' headers out of band.
    var wantsGlobalHeader: Bool { outputFormat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    /// A new stream in the container.
    func addStream() throws -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else {
            throw AVError(call: "avformat_new_stream", code: averrorENOMEM, context: outputPath)
        }
        return stream
    }

    // MARK: open

    /// Opens the output (`avio_open`, or the network connection) and writes the header
    /// (`avformat_write_header`), once every stream is added.
    /// - Parameter fragmented: a live recording (see `MovieWriter.init`'s `fragmented`).
    func open(fragmented: Bool) throws {
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if destination.isNetwork {
            // A server that never answers or stops reading fails the call at the deadline (no hang). A peer
            // that closes the connection is an error from write: FFmpeg's tcp and unix sockets send with
            // MSG_NOSIGNAL, and FIFOs and pipe:N are written with SIGPIPE blocked on this thread (`muxing`).
            context.pointee.interrupt_callback = deadline.callback
            context.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
            // A listening output waits for its reader to connect: a minute, not the deadline of a call.
            deadline.arm(seconds: destination.waitsForPeer ? Self.listenTimeout : Self.networkTimeout)
            if formatName == "rtsp" { av_dict_set(&options, "rtsp_transport", "tcp", 0) }
            if formatName == "flv" { av_dict_set(&options, "flvflags", "no_duration_filesize", 0) }
        }
        if outputFormat.pointee.flags & AVFMT_NOFILE == 0 { try openIO() }
        for (key, value) in playlistFiles?.muxerOptions() ?? [] { av_dict_set(&options, key, value, 0) }
        let isMP4 = formatName.contains("mp4") || formatName.contains("mov")
        if isMP4 && fragmented {
            // delay_moov: the header waits for the first fragment, so it can carry the edit list that
            // starts B-frame video at 0.
            av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+delay_moov+default_base_moof", 0)
            av_dict_set(&options, "frag_duration", "1000000", 0)
        } else if isMP4 {
            av_dict_set(&options, "movflags", "+faststart", 0)
        } else if fragmented && formatName.contains("matroska") {
            av_dict_set(&options, "cluster_time_limit", "1000", 0)
        }
        if fragmented { context.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS }
        // What survives without a trailer: fragments, clusters, transport packets.
        isFragmentedMP4 = isMP4 && fragmented
        isTransportStream = formatName.contains("mpegts")
        keepsWithoutTrailer = (isMP4 && fragmented) || formatName.contains("matroska") || formatName.contains("webm")
            || formatName == "mpegts" || formatName == "nut"
        // An earlier run's segments go with the playlist this run replaces (they would pile up otherwise): only
        // those it listed as written; another file with a segment's name refuses the run instead.
        if let playlistFiles {
            let ledger = try playlistFiles.prepare()
            ledger.guardOpens(of: context)
            playlistLedger = ledger
        }
        let ctx = context
        // An RTSP publish connects here (the server may refuse the path); the others send their header.
        try checkWrite(Self.muxing { avformat_write_header(ctx, &options) }, "avformat_write_header", what: "cannot write the header")
        headerWritten = true
    }

    /// Opens the file the container is written to, or connects to the network output.
    private func openIO() throws {
        let path = outputPath
        let writePath = temporaryPath ?? finalPath
        if let temporaryPath { PartialOutputs.register(temporaryPath) }
        if case .network(let scheme) = destination.kind {
            var callback = deadline.callback
            var ioOptions: OpaquePointer?
            defer { av_dict_free(&ioOptions) }
            // SRT drops what is still in flight when the socket closes unless it lingers; MPEG-TS over UDP
            // goes in datagrams of seven transport packets. A setting in the URL's query wins.
            if scheme == "srt", !path.contains("linger=") { av_dict_set(&ioOptions, "linger", "2", 0) }
            if scheme == "udp", !path.contains("pkt_size=") { av_dict_set(&ioOptions, "pkt_size", "1316", 0) }
            try Self.checkNetwork(avio_open2(&context.pointee.pb, writePath, AVIO_FLAG_WRITE, &callback, &ioOptions),
                                  "avio_open2", path, waited: destination.waitsForPeer ? Self.listenTimeout : Self.networkTimeout)
        } else {
            try check(avio_open(&context.pointee.pb, writePath, AVIO_FLAG_WRITE), "avio_open", path,
                      what: "cannot create the output file")
        }
        ioOpen = true
    }

    // MARK: write

    /// Bytes in the file so far (`avio_tell`); 0 for outputs without a file.
    var bytesWritten: Int64 { ioOpen ? max(0, avio_tell(context.pointee.pb)) : 0 }

    /// An upper estimate of the finished file's size if nothing more were muxed: the packets muxed (on
    /// disk or still queued in the muxer's interleaving and fragment buffers), their container overhead,
    /// and room for the header and the trailer (index, cues).
    var projectedBytes: Int64 { max(bytesWritten, muxedBytes) + Self.trailerReserve }

    /// An upper bound on what the container adds for one packet of `size` bytes: index entries (MP4's
    /// stsz/stts/ctts/stco/stss, a fragment's trun, Matroska's block header and cue), and for MPEG-TS the
    /// 4-byte header per 184 bytes of payload, the PES header and the last transport packet's stuffing.
    private func overhead(_ size: Int32) -> Int64 {
        isTransportStream ? 220 + Int64(size) / 40 : 48 + Int64(size) / 256
    }

    /// A call into the muxer that may write (header, packets, trailer, the final flush): with SIGPIPE
    /// blocked on this thread, so a FIFO or `pipe:N` whose reader went away fails the write with EPIPE
    /// instead of ending the process, whose handling of SIGPIPE is left as it is.
    private static func muxing(_ call: () -> Int32) -> Int32 { withoutSIGPIPE(call) }

    /// Every packet reaches the file through here: it is muxed only while the file stays within
    /// `byteBudget` (see `budgetReached`). Returns whether it was.
    func write(_ pkt: UnsafeMutablePointer<AVPacket>, what: String) throws -> Bool {
        guard !budgetReached else { return false }
        let cost = Int64(pkt.pointee.size) + overhead(pkt.pointee.size)
        if let byteBudget, projectedBytes + cost > byteBudget {
            budgetReached = true
            return false
        }
        muxedBytes += cost
        let ctx = context
        if destination.isNetwork { deadline.arm(seconds: Self.networkTimeout) }
        try checkWrite(Self.muxing { av_interleaved_write_frame(ctx, pkt) }, "av_interleaved_write_frame", what: what)
        return true
    }

    /// The result of a header or packet write: a network output's failure as `checkNetwork` words it, a
    /// playlist's refused open as its own line, anything else as FFmpeg says it.
    private func checkWrite(_ code: Int32, _ call: String, what: String) throws {
        if destination.isNetwork { return try Self.checkNetwork(code, call, outputPath) }
        if let refusal = playlistLedger?.refusal(code, playlist: outputPath) { throw refusal }
        try check(code, call, outputPath, what: what)
    }

    /// A network call's failure in words a user can act on: a refused connection, a server that did not
    /// answer within `networkTimeout` (the interrupt callback's AVERROR_EXIT), a refused publish.
    private static func checkNetwork(_ code: Int32, _ call: String, _ url: String, waited: Double = networkTimeout) throws {
        guard code < 0 else { return }
        if code == prism_averror_exit() {
            throw AVError(waited == listenTimeout ? "no reader connected within \(Int(waited)) s"
                          : "no answer within \(Int(waited)) s (is the server up and reading?)", context: url, call: call)
        }
        let what: String
        switch call {
        case "avio_open2": what = "cannot connect"
        case "avformat_write_header": what = "the server refused the stream"
        default: what = "the stream failed"
        }
        throw AVError(call: call, code: code, context: url, what: what)
    }

    // MARK: end

    /// Writes the trailer (`av_write_trailer`), closes the file and renames it over the target. On error
    /// the caller aborts.
    func finish() throws {
        let ctx = context
        if destination.isNetwork { deadline.arm(seconds: Self.networkTimeout) }
        let trailer = Self.muxing { av_write_trailer(ctx) }
        if let refusal = playlistLedger?.refusal(trailer, playlist: outputPath) { throw refusal }
        try check(trailer, "av_write_trailer", outputPath, what: "cannot finish the file")
        if ioOpen {
            // An SRT receiver holds each packet for its latency (120 ms by default) before it plays it, and
            // drops what it holds when the connection closes: the stream's last frames need that long.
            if destination.kind == .network(scheme: "srt") { usleep(500_000) }
            try check(Self.muxing { avio_closep(&ctx.pointee.pb) }, "avio_closep", outputPath, what: "cannot close the file")
            ioOpen = false
        }
        if let temporaryPath {
            guard placeFinished(temporaryPath) else { throw SystemError("rename", code: errno, context: outputPath) }
            PartialOutputs.unregister(temporaryPath)
        }
        state = .finished
    }

    /// Writes the trailer after a failure and keeps the file when it plays (see `MovieWriter.salvage`);
    /// aborts otherwise. Returns whether the file was kept.
    func salvage() -> Bool {
        let ctx = context
        if destination.isNetwork { deadline.arm(seconds: Self.networkTimeout) }
        let trailerWritten = Self.muxing { av_write_trailer(ctx) } >= 0
        guard trailerWritten || keepsWithoutTrailer else { abort(); return false }
        if ioOpen {
            _ = Self.muxing { avio_closep(&ctx.pointee.pb) }
            ioOpen = false
        }
        // A fragment cut off mid-write would not decode (the trailer may "succeed" on an I/O error that
        // is only reported later): keep the file up to the last whole fragment.
        if isFragmentedMP4, let path = temporaryPath,
           FragmentedMP4.truncateToLastCompleteFragment(path: path) == nil {
            abort()
            return false
        }
        if let temporaryPath {
            guard placeFinished(temporaryPath) else { abort(); return false }
            PartialOutputs.unregister(temporaryPath)
        }
        state = .finished
        return true
    }

    /// Puts the finished temporary at `finalPath` (`OutputTarget.placeFinished`), which says where it went.
    private func placeFinished(_ temporary: String) -> Bool {
        guard let placed = OutputTarget.placeFinished(temporary, at: finalPath, newFileOnly: newFileOnly) else { return false }
        finalPath = placed
        return true
    }

    /// Stops writing and deletes the temporary file; an existing target is left as it was.
    func abort() {
        guard state == .open else { return }
        state = .aborted
        if ioOpen {
            _ = Self.muxing { avio_closep(&context.pointee.pb) }
            ioOpen = false
        }
        if let temporaryPath {
            unlink(temporaryPath)
            PartialOutputs.unregister(temporaryPath)
        }
        // A playlist is written in place: what this run wrote of it goes (its list says what).
        if let playlistLedger { playlistFiles?.removeWritten(playlistLedger, playlist: headerWritten) }
    }
}
