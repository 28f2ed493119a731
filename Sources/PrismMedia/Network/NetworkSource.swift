import CFFmpeg
import Foundation
import PrismCore
import Synchronization

/// How a network input is opened and kept going (`prism run --input-timeout`, `--reconnect`, …).
public struct NetworkInputOptions: Sendable, Equatable {
    /// Seconds a network input may take to connect (listening: for a sender to arrive) and, once it runs,
    /// to send more data; past it, opening fails and a running stream counts as lost.
    public var timeout = 10.0
    /// What happens when a running stream is lost.
    public var reconnect = ReconnectPolicy()
    /// RTSP's transport, `tcp` or `udp` (`rtsp_transport`); nil: FFmpeg's choice (UDP, then TCP).
    public var rtspTransport: String?
    /// Wait for the sender instead of calling it: `listen` for rtmp, tcp and http, `mode=listener` for
    /// srt, `rtsp_flags=listen` for rtsp (a publisher's ANNOUNCE). udp and rtp always wait.
    public var listen = false

    /// Ten seconds to connect or stall, reconnection for 30 s after a loss.
    public init() {}
}

/// What a network input lost during a run: how often it reconnected, and the time its gaps left out
/// (reported; the output's time line closes over them).
public struct NetworkStatistics: Sendable, Equatable {
    /// Successful reconnections.
    public var reconnects = 0
    /// Gaps closed on the output's time line (a reconnection, or the sender's clock jumping).
    public var gaps = 0
    /// Wall-clock seconds the gaps lasted, less one frame each: what the output does not show.
    public var missingSeconds = 0.0
    /// `missingSeconds` in frames at the stream's rate.
    public var missingFrames = 0

    /// "2 reconnection(s), 3 gap(s): 4.2 s (≈105 frames) missing".
    public var summary: String {
        String(format: "%d reconnection(s), %d gap(s): %.1f s (≈%d frames) missing", reconnects, gaps,
               missingSeconds, missingFrames)
    }
}

/// A network input's figures so far, readable from any thread (progress reports) while its source
/// thread updates them.
public final class NetworkCounters: Sendable {
    private let value = Mutex(NetworkStatistics())
    init() {}
    /// The figures now.
    public var statistics: NetworkStatistics { value.withLock { $0 } }
    func update(_ change: (inout NetworkStatistics) -> Void) { value.withLock { change(&$0) } }
}

/// A network input (rtsp, srt, rtmp, udp, rtp, tcp, http(s) live) that survives the network: every
/// blocking call has a deadline (`IOWatchdog`: the open timeout, then a read timeout that detects a
/// stalled stream), and a stream lost mid-run is opened again with back-off (`ReconnectPolicy`). The run
/// goes on across a reconnection: the new stream's timestamps are rebased to follow the last frame, so
/// the output's time line stays continuous, and the gap is counted (`counters`). A new stream of another
/// size or format reaches the engine's size-change path like any frame.
///
/// It is a live source (`SourceInfo.isLive`): the engine drops the frames it is late for. Audio passes
/// through on the same time line while the reconnected stream's audio is like the first's. An http(s)
/// URL with a duration is a file on a server: read like one (back-pressure, no reconnection), with the
/// same deadlines. Used from one thread, but `cancellation` and `counters` may be read from others.
package final class NetworkSource: MediaSource {
    package let url: String
    /// The URL as messages show it (its password replaced by ***).
    package let label: String
    package private(set) var info: SourceInfo
    /// Reconnections and gaps so far.
    package let counters = NetworkCounters()
    /// True once the run stops: blocking calls end at once, and a loss is not reconnected.
    package var cancellation: (@Sendable () -> Bool)? {
        didSet { watchdog.setCancellation(cancellation) }
    }
    /// Told each loss, reconnection and discontinuity, as one line (from the source's thread).
    package var onEvent: ((String) -> Void)?

    private let options: NetworkInputOptions
    private let colorOverride: ColorOverride?
    /// Every session's skipped packets, counted together (`DecodeDamage`).
    package let damage: DecodeDamage
    package var decodeDamage: DecodeDamage? { damage }
    private let watchdog: IOWatchdog
    private let protocolOptions: [String: String]
    /// It waits for its sender (`--listen`, udp, rtp): a timeout means no sender, not no answer.
    private let listening: Bool
    /// Real time: reconnected when lost (a file over http is not).
    private let live: Bool
    private var session: MovieSource?
    /// The first stream's audio: every session's packets are carried onto it while the audio matches.
    private let audio: AudioStreamInfo?
    private var passesAudio = true
    // The output's time line: a session's frame at `pts` goes to `base + (pts - sessionStart)`.
    private var base: MediaTime?
    private var sessionStart: MediaTime?
    private var lastPTS: MediaTime?
    /// One frame: the stream's nominal rate, else the last frames' spacing. A rebased session starts one step after the last frame.
    private var step: MediaTime?
    private var lastAudioPTS: MediaTime?
    private var pendingAudio: [AudioPacket] = []
    private var ready: [SourceEvent] = []
    private var framesSeen = 0
    /// When the last frame arrived (monotonic ns): a gap lasts from there to the next frame after a loss.
    private var lastArrival: UInt64 = 0
    private var gapOpen = false
    /// About when the reconnected stream's frames began to arrive (a probe before its open returned), for the gap.
    private var connectedAt: UInt64?
    /// Where the session's pacing started: a frame leaves no earlier than `wall + (pts - pts) / catchUp`, so
    /// what the probe buffered at the start is played out at twice the stream's rate until the input is
    /// live again, instead of arriving at once (and being dropped as late) or adding a second of latency
    /// for good (reading slower than the sender also loses what a protocol drops at its close: SRT). Frames
    /// that arrive late are passed on at once: the engine drops what it cannot take.
    private var pacing: (wall: UInt64, pts: MediaTime)?

    /// Opens `url` within `options.timeout`. Throws one line naming the URL and the reason: connection
    /// refused, no answer (or no sender, or no data) within the timeout, not a stream FFmpeg reads.
    package init(url: String, options: NetworkInputOptions = .init(), colorOverride: ColorOverride? = nil,
                 strictDecoding: Bool = false) throws {
        try NetworkURL.checkScheme(url)
        _ = Self.initialiseNetwork
        self.url = url
        let label = NetworkURL.redacted(url)
        self.label = label
        let watchdog = IOWatchdog()
        self.watchdog = watchdog
        self.options = options
        self.colorOverride = colorOverride
        let scheme = NetworkURL.scheme(url) ?? ""
        // A live stream is probed for one second, not FFmpeg's five: a connection (and a reconnection) starts
        // within a second, with a second's frames buffered to play out (`pacing`).
        var protocolOptions: [String: String] = ["analyzeduration": String(Int(Self.probeSeconds * 1e6))]
        switch scheme {
        case "rtsp", "rtsps":
            if let transport = options.rtspTransport { protocolOptions["rtsp_transport"] = transport }
            if options.listen { protocolOptions["rtsp_flags"] = "listen" }
        case "rtmp", "rtmps", "rtmpt", "rtmpts", "rtmpe", "rtmpte", "tcp", "http", "https":
            if options.listen { protocolOptions["listen"] = "1" }
        case "srt":
            if options.listen { protocolOptions["mode"] = "listener" }
        default:
            break
        }
        self.protocolOptions = protocolOptions
        listening = options.listen || ["udp", "udplite", "rtp", "srtp"].contains(scheme)
        damage = DecodeDamage(input: label, strict: strictDecoding)
        let first = try Self.open(url: url, label: label, options: protocolOptions, colorOverride: colorOverride, damage: damage,
                                  watchdog: watchdog, timeout: options.timeout, listening: listening)
        session = first
        var info = first.info
        live = NetworkURL.streamingSchemes.contains(scheme) || info.duration == nil
        if live {
            info.isLive = true
            info.duration = nil
            info.estimatedFrameCount = nil
            info.frameCountFromHeader = false
            info.summary += ", live (\(options.reconnect.summary))"
        }
        audio = info.audio
        step = info.frameRate.flatMap { $0.num > 0 && $0.den > 0 ? MediaTime(value: Int64($0.den), timescale: $0.num) : nil }
        self.info = info
    }

    /// How long a live stream is probed when it is opened: its frames from then are buffered.
    private static let probeSeconds = 1.0

    /// How much faster than the stream's rate buffered frames are played out (`pacing`).
    private static let catchUp = 2.0

    private static let initialiseNetwork: Void = { avformat_network_init() }()

    /// One session: `MovieSource` on the URL with the watchdog armed for `timeout`.
    private static func open(url: String, label: String, options: [String: String], colorOverride: ColorOverride?, damage: DecodeDamage,
                             watchdog: IOWatchdog, timeout: Double, listening: Bool,
                             limitedBy setting: Setting = .inputTimeout) throws -> MovieSource {
        watchdog.reset()
        watchdog.arm(seconds: timeout)
        defer { watchdog.disarm() }
        do {
            // The timeout bounds the wait for the stream; once it is there, probing it gets a timeout of its
            // own (a sender that starts late would otherwise be cut off mid-probe, leaving a broken session).
            return try MovieSource(url: url, colorOverride: colorOverride, protocolOptions: options,
                                   interrupt: watchdog.callback, label: label, damage: damage, watchdog: watchdog,
                                   connected: { watchdog.arm(seconds: timeout) })
        } catch {
            if watchdog.isCancelled { throw AVError("stopped while connecting", context: label) }
            if watchdog.expired {
                let what = listening ? "no sender (or no data)" : "no answer"
                throw AVError("\(what) within \(seconds(timeout)) s (\(setting))", context: label)
            }
            throw error
        }
    }

    package func next() throws -> SourceEvent? {
        while true {
            if !ready.isEmpty { return ready.removeFirst() }
            guard let session else { return nil }
            var lost = "the stream ended"
            var event: SourceEvent?
            watchdog.arm(seconds: options.timeout)
            do {
                event = try session.next()
                watchdog.disarm()
            } catch {
                watchdog.disarm()
                if watchdog.isCancelled { return end() }
                lost = try lossReason(error)
            }
            if watchdog.isCancelled { return end() }
            guard let event else {
                // A read that failed after the first packet ended the session once its decoder was drained.
                if let failure = session.readFailure { lost = try lossReason(failure) }
                guard framesSeen > 0 else { throw AVError("the stream ended before its first frame", context: label) }
                guard live, try reconnect(after: lost) else { return end() }
                continue
            }
            switch event {
            case .audio(let packet):
                guard live else { return event }  // a file over http: as a file gives it
                guard passesAudio, let audio else { continue }
                guard let base, let sessionStart else {
                    // Placed once the session's first frame fixes its offset.
                    if pendingAudio.count >= 1000 { pendingAudio.removeFirst() }
                    pendingAudio.append(packet)
                    continue
                }
                if let moved = try carried(packet, onto: audio, shift: base - sessionStart) { return .audio(moved) }
            case .video(let frame):
                if let placed = try place(frame) { return .video(placed) }
            }
        }
    }

    /// What a session's `error` lost, for the reconnection message; thrown instead when nothing came yet or
    /// the input is a file over http (the error is then the run's, not a loss).
    private func lossReason(_ error: any Error) throws -> String {
        if framesSeen == 0 || !live {
            if watchdog.expired { throw AVError("no data within \(Self.seconds(options.timeout)) s (\(Setting.inputTimeout))", context: label) }
            throw error
        }
        return watchdog.expired ? "no data for \(Self.seconds(options.timeout)) s" : (error as? AVError)?.message ?? "\(error)"
    }

    /// `frame` on the output's time line: the session's first frame follows the last one by a frame; a
    /// timestamp that jumps (a sender restarted behind the same port, a clock wrap) is rebased the same
    /// way. A frame at or just before the last one is dropped.
    private func place(_ frame: VideoFrame) throws -> VideoFrame? {
        // A file over http keeps its own timestamps (gaps in a variable-rate file are meant).
        guard live else {
            framesSeen += 1
            return frame
        }
        let now = DispatchTime.now().uptimeNanoseconds
        let frameStep = step ?? frame.duration.flatMap { $0.value > 0 ? $0 : nil } ?? MediaTime(value: 1, timescale: 30)
        if sessionStart == nil {
            sessionStart = frame.pts
            base = lastPTS.map { $0 + frameStep } ?? frame.pts
            let shift = base! - frame.pts
            ready = try pendingAudio.compactMap { packet in try carried(packet, onto: audio, shift: shift).map(SourceEvent.audio) }
            pendingAudio.removeAll()
        }
        // On the first stream's time base, which the writers were set up with (a reconnected stream may count in another).
        var pts = Self.rounded(base! + (frame.pts - sessionStart!), to: info.timeBase)
        if let lastPTS {
            let delta = (pts - lastPTS).seconds
            let jumpLimit = max(2.0, 10 * frameStep.seconds)
            // Just behind the last frame (a repeated timestamp): dropped; further behind, or far ahead: a jump.
            if delta <= 0, delta > -max(0.25, 3 * frameStep.seconds) { return nil }
            if delta <= 0 || delta > jumpLimit {
                // The sender's clock jumped: continue one frame after the last, and count the gap.
                sessionStart = frame.pts
                base = lastPTS + frameStep
                pts = Self.rounded(base!, to: info.timeBase)
                pacing = nil
                if !gapOpen { onEvent?("\(label): the stream's timestamps jumped \(String(format: "%+.2f", delta)) s: continued after the last frame") }
                gapOpen = true
            }
        }
        if gapOpen, lastPTS != nil {
            // A reconnected stream's frames flow from about when it connected (the probe buffers them); a
            // jump's, from now.
            let resumed = min(connectedAt ?? now, now)
            let seconds = max(0, Double(resumed - min(lastArrival, resumed)) / 1e9 - frameStep.seconds)
            let rate = info.frameRate?.doubleValue ?? (1 / frameStep.seconds)
            counters.update {
                $0.gaps += 1
                $0.missingSeconds += seconds
                $0.missingFrames += Int((seconds * rate).rounded())
            }
        }
        gapOpen = false
        connectedAt = nil
        if step == nil, let lastPTS { step = pts - lastPTS }
        lastPTS = pts
        lastArrival = pace(pts, now: now)
        framesSeen += 1
        return frame.retimed(pts: pts)
    }

    /// Waits until `pts` is due on the session's clock; returns the time it leaves.
    private func pace(_ pts: MediaTime, now: UInt64) -> UInt64 {
        guard live else { return now }
        guard let pacing else {
            self.pacing = (now, pts)
            return now
        }
        let offset = (pts - pacing.pts).seconds
        guard offset > 0 else { return now }
        let due = pacing.wall + UInt64(offset / Self.catchUp * 1e9)
        // A far-off time is a jump the time line has already closed over: start pacing again from here.
        guard due > now, due - now < 2_000_000_000 else {
            if due > now { self.pacing = (now, pts) }
            return now
        }
        _ = sleep(seconds: Double(due - now) / 1e9)
        return DispatchTime.now().uptimeNanoseconds
    }

    /// An audio packet on the first stream and the output's time line, or nil when it is out of order.
    private func carried(_ packet: AudioPacket, onto target: AudioStreamInfo?, shift: MediaTime) throws -> AudioPacket? {
        guard let target else { return nil }
        let moved = try packet.carried(onto: target, shiftedBy: shift)
        if let pts = moved.pts {
            if let lastAudioPTS, pts <= lastAudioPTS { return nil }
            lastAudioPTS = pts
        }
        return moved
    }

    /// Opens the URL again with back-off after a loss; false when the policy gives up or the run stops.
    private func reconnect(after reason: String) throws -> Bool {
        closeSession()
        let policy = options.reconnect
        guard policy.enabled else {
            onEvent?("\(label): input lost (\(reason)); not reconnecting (\(Setting.noReconnect)): the run ends here")
            return false
        }
        onEvent?("\(label): input lost (\(reason)); reconnecting")
        let lostAt = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - lostAt) / 1e9 }
        // Listening, the attempt itself is the wait (for the sender to come back): the first starts at once.
        var delay = listening ? 0 : policy.initialDelay
        var attempt = 0
        var lastError = reason
        while true {
            if let most = policy.attempts, attempt >= most { break }
            if let seconds = policy.seconds, elapsed() >= seconds { break }
            let wait = min(delay, policy.seconds.map { $0 - elapsed() } ?? delay)
            guard sleep(seconds: wait) else { return false }
            attempt += 1
            let remaining = policy.seconds.map { $0 - elapsed() } ?? options.timeout
            let attemptStart = DispatchTime.now().uptimeNanoseconds
            // The last attempts are cut to what is left of the time to reconnect.
            let timeout = max(0.5, min(options.timeout, remaining))
            do {
                let opened = try Self.open(url: url, label: label, options: protocolOptions, colorOverride: colorOverride, damage: damage,
                                           watchdog: watchdog, timeout: timeout, listening: listening,
                                           limitedBy: timeout < options.timeout ? .reconnectFor : .inputTimeout)
                // The stream came back about a probe before the open returned (listening, the wait for the
                // sender is in the open too), and not before the attempt began.
                connectedAt = max(attemptStart, DispatchTime.now().uptimeNanoseconds - UInt64(Self.probeSeconds * 1e9))
                adopt(opened)
                counters.update { $0.reconnects += 1 }
                onEvent?("\(label): reconnected after \(attempt) attempt(s), \(Self.seconds(elapsed())) s after the loss")
                return true
            } catch {
                if watchdog.isCancelled { return false }
                lastError = (error as? AVError)?.message ?? "\(error)"
                delay = min(max(delay * 2, policy.initialDelay), policy.maxDelay)
            }
        }
        onEvent?("\(label): gave up reconnecting after \(attempt) attempt(s) in \(Self.seconds(elapsed())) s (\(lastError)): the run ends here")
        return false
    }

    /// A reconnected stream: its first frame will follow the last one; its audio goes on while it is like the first's.
    private func adopt(_ opened: MovieSource) {
        session = opened
        sessionStart = nil
        base = nil
        pacing = nil
        gapOpen = true
        pendingAudio.removeAll()
        if passesAudio, let audio, let now = opened.info.audio,
           now.codecName != audio.codecName || now.sampleRate != audio.sampleRate || now.channelCount != audio.channelCount {
            passesAudio = false
            onEvent?("\(label): the reconnected stream's audio (\(now.codecName) \(now.sampleRate) Hz) differs from the first's: left out from here on")
        }
    }

    /// Waits `seconds`, a twentieth of a second at a time; false when the run stops meanwhile.
    private func sleep(seconds: Double) -> Bool {
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while case let now = DispatchTime.now().uptimeNanoseconds, now < until {
            if watchdog.isCancelled { return false }
            usleep(UInt32(min(until - now, 50_000_000) / 1000))
        }
        return !watchdog.isCancelled
    }

    /// Closes the session with a short deadline, so a teardown on a dead connection cannot hang.
    private func closeSession() {
        watchdog.arm(seconds: 1)
        session = nil
        watchdog.disarm()
    }

    private func end() -> SourceEvent? {
        closeSession()
        ready.removeAll()
        return nil
    }

    deinit { closeSession() }

    private static func rounded(_ time: MediaTime, to timeBase: Rational) -> MediaTime {
        MediaTime(value: time.ticks(in: timeBase), timeBase: timeBase)
    }

    private static func seconds(_ value: Double) -> String { String(format: "%g", (value * 10).rounded() / 10) }
}

extension AudioPacket {
    /// A copy on `target`'s stream and time base, moved by `shift` (a reconnected stream's packets, carried
    /// onto the first stream the writers were set up for); itself when there is nothing to change.
    func carried(onto target: AudioStreamInfo, shiftedBy shift: MediaTime) throws(AVError) -> AudioPacket {
        if target === stream && shift.value == 0 { return self }
        guard let copy = av_packet_clone(packet) else { throw AVError(call: "av_packet_clone", code: averrorENOMEM) }
        av_packet_rescale_ts(copy, stream.timeBase.av, target.timeBase.av)
        let ticks = shift.ticks(in: target.timeBase)
        if copy.pointee.pts != noPTS { copy.pointee.pts += ticks }
        if copy.pointee.dts != noPTS { copy.pointee.dts += ticks }
        return AudioPacket(adopting: copy, stream: target)
    }
}
