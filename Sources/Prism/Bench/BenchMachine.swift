import Foundation
import Synchronization
import PrismGPU

/// What the figures were measured on: the benchmark's header.
struct BenchHeader: Codable, Sendable {
    var date: String
    var command: String
    var build: String
    var cpuModel: String
    var cpuCores: Int
    /// /proc/loadavg when the bench started: other work on the machine skews every figure.
    var loadAverage: String
    /// /proc/loadavg when the bench finished.
    var loadAverageAtEnd: String
    var glRenderer: String
    var glVendor: String
    var glVersion: String
    var glslVersion: String
    var driverVersion: String
    var eglPlatform: String
    var eglDevice: String
    var eglVendor: String
    var eglVersion: String
    var softwareRenderer: Bool
    var gpuThreads: Int
    var encoderThreads: String
    var llvmpipeThreads: String
    var timerMethod: String
    var timerNote: String
}

enum BenchMachine {
    /// The CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere).
    static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") || line.hasPrefix("Model") {
            if let colon = line.firstIndex(of: ":") {
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if !value.isEmpty { return value }
            }
        }
        return "unknown CPU"
    }

    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The 1, 5 and 15 minute load averages.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The driver's own version out of GL_VERSION ("OpenGL ES 3.2 Mesa 22.3.6" → "Mesa 22.3.6",
    /// "OpenGL ES 3.2 NVIDIA 550.54" → "NVIDIA 550.54").
    static func driverVersion(glVersion: String) -> String {
        var words = glVersion.split(separator: " ").map(String.init)
        if words.count >= 3, words[0] == "OpenGL", words[1] == "ES" { words.removeFirst(3) }
        else if let first = words.first, first.first?.isNumber == true { words.removeFirst() }
        return words.isEmpty ? glVersion : words.joined(separator: " ")
    }

    /// LP_NUM_THREADS as set, or what llvmpipe does without it.
    static func llvmpipeThreads(isSoftware: Bool) -> String {
        if let value = ProcessInfo.processInfo.environment["LP_NUM_THREADS"] { return "LP_NUM_THREADS=\(value)" }
        return isSoftware ? "LP_NUM_THREADS unset (llvmpipe uses one thread per core: \(cores))" : "LP_NUM_THREADS unset"
    }

    static func header(info: GPUInfo, command: String, loadAverage: String, timerMethod: String, timerNote: String) -> BenchHeader {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        #if DEBUG
        let build = "debug (figures from a debug build are not representative; use swift build -c release)"
        #else
        let build = "release"
        #endif
        return BenchHeader(
            date: formatter.string(from: Date()), command: command, build: build,
            cpuModel: cpuModel(), cpuCores: cores, loadAverage: loadAverage, loadAverageAtEnd: Self.loadAverage(),
            glRenderer: info.renderer, glVendor: info.vendor, glVersion: info.version,
            glslVersion: info.shadingLanguageVersion, driverVersion: driverVersion(glVersion: info.version),
            eglPlatform: info.platform.rawValue, eglDevice: info.source, eglVendor: info.eglVendor,
            eglVersion: info.eglVersion, softwareRenderer: info.isSoftware, gpuThreads: 1,
            encoderThreads: "libx264/libx265 threads=0 (the encoder's automatic choice for \(cores) cores); "
                + "FFmpeg's own defaults for its runs",
            llvmpipeThreads: llvmpipeThreads(isSoftware: info.isSoftware),
            timerMethod: timerMethod, timerNote: timerNote)
    }
}

/// Resident memory of this process, from /proc/self/status and getrusage.
enum BenchMemoryProbe {
    /// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), nil when unreadable.
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.split(separator: " ").compactMap { Int($0) }
            if let kilobytes = digits.first { return kilobytes * 1024 }
        }
        return nil
    }

    static var residentBytes: Int { status("VmRSS") ?? 0 }

    /// Peak resident set: getrusage's ru_maxrss (kilobytes on Linux), or VmHWM.
    static var peakBytes: Int {
        var usage = rusage()
        if getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0, usage.ru_maxrss > 0 { return Int(usage.ru_maxrss) * 1024 }
        return status("VmHWM") ?? 0
    }
}

/// Samples VmRSS on a background thread while a run goes on.
final class BenchRSSSampler: Sendable {
    private let state = Mutex((running: true, samples: [(seconds: Double, bytes: Int)]()))
    private let done = DispatchSemaphore(value: 0)
    private let interval: Double

    init(interval: Double = 0.05) {
        self.interval = interval
        let start = benchNow()
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) {
                let sample = (Double(benchNow() - start) / 1e9, BenchMemoryProbe.residentBytes)
                state.withLock { $0.samples.append(sample) }
                Thread.sleep(forTimeInterval: interval)
            }
            done.signal()
        }
    }

    func stop() -> [(seconds: Double, bytes: Int)] {
        state.withLock { $0.running = false }
        done.wait()
        return state.withLock { $0.samples }
    }
}

/// Whether memory stayed flat over a long run.
struct BenchMemory: Codable, Sendable {
    var peakRSSBytes: Int
    var peakRSSMiB: Double
    var soakSize: String
    var soakFrames: Int
    var soakSeconds: Double
    var rssSamples: Int
    /// Median RSS over the second quarter of the run (after warm-up) and the largest in the last quarter.
    var earlyRSSMiB: Double
    var lateRSSMiB: Double
    var growthMiB: Double
    var flat: Bool
    var verdict: String

    static func judge(samples: [(seconds: Double, bytes: Int)], size: String, frames: Int, seconds: Double) -> BenchMemory {
        let mib = { (bytes: Int) in Double(bytes) / 1_048_576 }
        let values = samples.map(\.bytes)
        let peak = BenchMemoryProbe.peakBytes
        guard values.count >= 8 else {
            let last = mib(values.last ?? BenchMemoryProbe.residentBytes)
            return BenchMemory(peakRSSBytes: peak, peakRSSMiB: mib(peak), soakSize: size, soakFrames: frames,
                               soakSeconds: seconds, rssSamples: values.count, earlyRSSMiB: last, lateRSSMiB: last,
                               growthMiB: 0, flat: true,
                               verdict: "too few RSS samples (\(values.count)) to judge; run without --quick for a longer soak")
        }
        let quarter = values.count / 4
        let early = values[quarter..<(2 * quarter)].sorted()[quarter / 2]
        let late = values[(values.count - quarter)...].max() ?? early
        let growth = mib(late) - mib(early)
        // Allowance: allocator noise and lazily touched pages, 4 MiB plus 2 %.
        let allowance = 4 + 0.02 * mib(early)
        let flat = growth <= allowance
        let verdict = flat
            ? String(format: "flat: %.1f → %.1f MiB over %d frames (%.1f s), within %.1f MiB", mib(early), mib(late), frames, seconds, allowance)
            : String(format: "GROWING: %.1f → %.1f MiB over %d frames (%.1f s), more than %.1f MiB", mib(early), mib(late), frames, seconds, allowance)
        return BenchMemory(peakRSSBytes: peak, peakRSSMiB: mib(peak), soakSize: size, soakFrames: frames,
                           soakSeconds: seconds, rssSamples: values.count, earlyRSSMiB: mib(early), lateRSSMiB: mib(late),
                           growthMiB: growth, flat: flat, verdict: verdict)
    }
}
