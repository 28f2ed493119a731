import CALSA
import Foundation
import Synchronization
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// A failing alsa-lib call on a capture PCM. `description` is one line:
/// `"audio device <name>: <snd_strerror message> (<call>)"`.
public struct ALSAError: PrismError {
    /// The PCM name (`default`, `hw:1,0`, a PCM defined in the ALSA configuration).
    public let device: String
    /// The alsa-lib function that failed, e.g. `"snd_pcm_open"`.
    public let call: String
    /// alsa-lib's return code (a negative errno), nil for problems that are not one.
    public let code: Int32?
    /// What went wrong: alsa-lib's `snd_strerror` text (after what was being done), or Prism's own explanation.
    public let message: String

    /// The failure of `call` with alsa-lib's return `code`, described by `snd_strerror` after `what` (if given).
    public init(device: String, call: String, code: Int32, what: String = "") {
        self.device = device
        self.call = call
        self.code = code
        let text = String(cString: snd_strerror(code))
        message = what.isEmpty ? text : "\(what): \(text)"
    }

    /// A problem on `device` that is not an alsa-lib error code (an unusable answer); `code` is nil.
    public init(device: String, call: String, message: String) {
        self.device = device
        self.call = call
        code = nil
        self.message = message
    }

    public var description: String { "audio device \(device): \(message) (\(call))" }
}

/// The raw PCM a capture delivers and a `MovieWriter` takes: signed 16-bit little-endian, interleaved.
public struct PCMFormat: Hashable, Sendable, CustomStringConvertible {
    /// Frames (one sample per channel) per second, e.g. 48000.
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int

    /// S16LE at `sampleRate` Hz with `channels` interleaved channels (not validated).
    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Bytes of one frame: 2 bytes per sample times `channels`.
    public var bytesPerFrame: Int { 2 * channels }
    public var description: String { "s16le \(sampleRate) Hz \(channels == 1 ? "mono" : "\(channels) channels")" }
}

/// One period of captured sound.
public struct AudioChunk: Sendable {
    /// Interleaved S16 samples: `frameCount * format.channels` values.
    public var samples: [Int16]
    /// The rate and channel count the samples are in.
    public var format: PCMFormat
    /// When the first frame of the chunk was captured: CLOCK_MONOTONIC, microseconds (the clock camera
    /// frames are stamped with, see `CameraSource.originMonotonicMicroseconds`).
    public var captureTime: Int64

    /// Frames (samples per channel) in the chunk.
    public var frameCount: Int { samples.count / max(1, format.channels) }
}

/// Records from an ALSA capture PCM (`snd_pcm_open(…, SND_PCM_STREAM_CAPTURE, …)`) on its own thread.
///
/// - Negotiation: S16_LE interleaved, the rate nearest 48000, 2 channels or else 1 (`snd_pcm_hw_params_set_*`),
///   a period near 1024 frames and a buffer of about four periods. What the device took is `format`.
/// - Reading: blocking `snd_pcm_readi` of one period at a time. An overrun (`-EPIPE`) or a suspend is
///   recovered with `snd_pcm_recover` and counted in `overruns`; the samples lost are lost (the next chunk's
///   `captureTime` shows the gap).
/// - Time stamps: **the monotonic clock at the read minus the delay**. Right after `snd_pcm_readi`
///   returns n frames, `snd_pcm_delay` gives the frames captured since the last one read, so the chunk's
///   first frame was captured at `now - (delay + n) / rate`, read on CLOCK_MONOTONIC. (This needs nothing
///   of the driver's timestamp support, which plugins such as `file` and `null` lack.)
/// - Pacing: real hardware can never deliver sound ahead of the clock. A PCM that does (the `null` and
///   `file` plugins, which tests use as emulated microphones, return at once) is held back so that its
///   frames never run more than one period ahead of the monotonic clock from the first read; on a real
///   device this never waits.
///
/// The PCM handle has one owner, this object: `snd_pcm_close` in deinit. alsa-lib's own stderr messages
/// are switched off; failures are thrown as one-line `ALSAError`s.
public final class AudioCaptureSource: Sendable {
    /// The ALSA PCM name recorded from, as given (`default`, `hw:1,0`).
    public let device: String
    /// What the device agreed to deliver (S16LE; the rate nearest 48000; 2 channels or 1).
    public let format: PCMFormat
    /// Frames per read.
    public let periodFrames: Int
    /// Used by the capture thread only (and closed in deinit, after it has stopped).
    private let pcm: ThreadOwned<OpaquePointer>
    /// What the capture thread and its callers share.
    private struct Shared {
        var stopping = false
        var started = false
        var overrunCount = 0
        var framesCaptured = 0
        var readError: ALSAError?
    }
    private let shared = Mutex(Shared())
    private let finished = DispatchSemaphore(value: 0)

    /// The outputs of every file plugin in the PCM's chain (`snd_pcm_dump` of the opened, unconfigured
    /// PCM lists each plugin and its slave: `File PCM (file=PATH)`), other than /dev/null. A capture PCM
    /// through such a plugin writes what it records to PATH, or pipes it to a shell command (`|cmd`).
    static func filesWritten(by handle: OpaquePointer) -> [String] {
        var output: OpaquePointer?
        guard snd_output_buffer_open(&output) == 0, let output else { return [] }
        defer { snd_output_close(output) }
        guard snd_pcm_dump(handle, output) == 0 else { return [] }
        var text: UnsafeMutablePointer<CChar>?
        let count = snd_output_buffer_string(output, &text)
        guard let text, count > 0 else { return [] }
        let dump = String(decoding: UnsafeRawBufferPointer(start: text, count: Int(count)), as: UTF8.self)
        return dump.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "File PCM (file="), line.hasSuffix(")") else { return nil }
            let path = String(line[start.upperBound..<line.index(before: line.endIndex)])
            return path == "/dev/null" || path == "(null)" ? nil : path
        }
    }

    /// Opens and configures `device` for capture (nothing is read until `start`).
    public init(device: String, preferredRate: Int = 48000, preferredChannels: Int = 2, periodFrames: Int = 1024) throws(ALSAError) {
        self.device = device
        prism_alsa_silence_errors()
        var handle: OpaquePointer?
        // Non-blocking open: a busy device fails at once (EBUSY) instead of waiting for its owner.
        var result = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard result >= 0, let handle else {
            throw ALSAError(device: device, call: "snd_pcm_open", code: result, what: "cannot open for capture")
        }
        func fail(_ call: String, _ code: Int32, _ what: String = "") -> ALSAError {
            snd_pcm_close(handle)
            return ALSAError(device: device, call: call, code: code, what: what)
        }
        // Before hw_params, which is when alsa-lib's file plugin opens its output (or runs its `|command`).
        if let written = Self.filesWritten(by: handle).first {
            snd_pcm_close(handle)
            let what = written.hasPrefix("|") ? "would run the command \(written.dropFirst())"
                : "would overwrite \(written) with what it captures"
            throw ALSAError(device: device, call: "snd_pcm_open",
                            message: "is not a capture device but ALSA's file plugin, which \(what); refused")
        }
        result = snd_pcm_nonblock(handle, 0)
        if result < 0 { throw fail("snd_pcm_nonblock", result) }

        var paramsPointer: OpaquePointer?
        result = snd_pcm_hw_params_malloc(&paramsPointer)
        guard result >= 0, let params = paramsPointer else { throw fail("snd_pcm_hw_params_malloc", result) }
        defer { snd_pcm_hw_params_free(params) }
        result = snd_pcm_hw_params_any(handle, params)
        if result < 0 { throw fail("snd_pcm_hw_params_any", result, "no capture configuration") }
        result = snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        if result < 0 { throw fail("snd_pcm_hw_params_set_access", result, "interleaved access not supported") }
        result = snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16_LE)
        if result < 0 { throw fail("snd_pcm_hw_params_set_format", result, "S16_LE not supported") }
        var channels: UInt32 = 0
        for candidate in [UInt32(preferredChannels), 2, 1] where snd_pcm_hw_params_test_channels(handle, params, candidate) == 0 {
            channels = candidate
            break
        }
        guard channels > 0 else {
            _ = fail("snd_pcm_hw_params_set_channels", -EINVAL)
            throw ALSAError(device: device, call: "snd_pcm_hw_params_set_channels", message: "neither stereo nor mono capture is supported")
        }
        result = snd_pcm_hw_params_set_channels(handle, params, channels)
        if result < 0 { throw fail("snd_pcm_hw_params_set_channels", result) }
        var rate = UInt32(preferredRate)
        result = snd_pcm_hw_params_set_rate_near(handle, params, &rate, nil)
        if result < 0 { throw fail("snd_pcm_hw_params_set_rate_near", result, "no usable sample rate") }
        var period = snd_pcm_uframes_t(periodFrames)
        result = snd_pcm_hw_params_set_period_size_near(handle, params, &period, nil)
        if result < 0 { throw fail("snd_pcm_hw_params_set_period_size_near", result) }
        var buffer = period * 4
        result = snd_pcm_hw_params_set_buffer_size_near(handle, params, &buffer)
        if result < 0 { throw fail("snd_pcm_hw_params_set_buffer_size_near", result) }
        result = snd_pcm_hw_params(handle, params)
        if result < 0 { throw fail("snd_pcm_hw_params", result, "cannot configure capture") }
        result = snd_pcm_prepare(handle)
        if result < 0 { throw fail("snd_pcm_prepare", result) }
        pcm = ThreadOwned(handle)
        format = PCMFormat(sampleRate: Int(rate), channels: Int(channels))
        self.periodFrames = max(1, Int(period))
    }

    deinit {
        stop()
        snd_pcm_close(pcm.value)
    }

    /// Overruns recovered so far (the device's buffer filled up before Prism read it).
    public var overruns: Int { shared.withLock { $0.overrunCount } }
    /// Frames read so far.
    public var framesRead: Int { shared.withLock { $0.framesCaptured } }
    /// The error that ended reading early, if any (the handler is not called after it).
    public var error: ALSAError? { shared.withLock { $0.readError } }

    /// Starts reading on a new thread; `handler` gets each period in order, on that thread, and returns
    /// false to stop. Call once.
    public func start(handler: @escaping @Sendable (AudioChunk) -> Bool) {
        let thread = Thread { [self] in
            defer { finished.signal() }
            readLoop(handler)
        }
        thread.name = "prism-audio"
        shared.withLock { $0.started = true }
        thread.start()
    }

    /// Stops reading and waits (at most one period) for the thread to end. Safe to call more than once.
    public func stop() {
        let started = shared.withLock { shared -> Bool in
            shared.stopping = true
            defer { shared.started = false }
            return shared.started
        }
        if started { finished.wait() }
    }

    private var isStopping: Bool { shared.withLock { $0.stopping } }

    private func readLoop(_ handler: (AudioChunk) -> Bool) {
        let channels = format.channels
        let rate = Int64(format.sampleRate)
        var samples = [Int16](repeating: 0, count: periodFrames * channels)
        var anchor: Int64?     // capture time of the first frame read, µs
        var delivered: Int64 = 0 // frames since `anchor`
        let periodMicroseconds = Int64(periodFrames) * 1_000_000 / rate
        while !isStopping {
            if let anchor {
                // Pacing for PCMs that run ahead of the clock (see the type's documentation).
                let due = anchor + (delivered + Int64(periodFrames)) * 1_000_000 / rate
                let ahead = due - monotonicMicroseconds()
                if ahead > periodMicroseconds { usleep(UInt32(ahead - periodMicroseconds)) }
            }
            let read = samples.withUnsafeMutableBytes { snd_pcm_readi(pcm.value, $0.baseAddress, snd_pcm_uframes_t(periodFrames)) }
            let now = monotonicMicroseconds()
            if read < 0 {
                let code = Int32(read)
                if code == -EPIPE || code == -ESTRPIPE || code == -EINTR {
                    let recovered = snd_pcm_recover(pcm.value, code, 1)
                    if recovered >= 0 {
                        if code != -EINTR { shared.withLock { $0.overrunCount += 1 } }
                        anchor = nil // frames were lost: the time line restarts at the next read
                        continue
                    }
                }
                let failure = ALSAError(device: device, call: "snd_pcm_readi", code: code, what: "capture failed")
                shared.withLock { $0.readError = failure }
                return
            }
            let frames = Int(read)
            guard frames > 0 else { continue }
            var delay: snd_pcm_sframes_t = 0
            if snd_pcm_delay(pcm.value, &delay) < 0 || delay < 0 { delay = 0 }
            let captured = now - (Int64(delay) + Int64(frames)) * 1_000_000 / rate
            if anchor == nil {
                anchor = captured
                delivered = 0
            }
            delivered += Int64(frames)
            shared.withLock { $0.framesCaptured += frames }
            let chunk = AudioChunk(samples: frames == periodFrames ? samples : Array(samples[0..<(frames * channels)]),
                                   format: format, captureTime: captured)
            if !handler(chunk) { break }
        }
    }
}
