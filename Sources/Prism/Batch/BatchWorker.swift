import Foundation
import PrismCore
import PrismPipeline
import PrismFilters
import PrismGPU
import PrismMedia

/// Which GPUs get workers: `--gpus all` (every hardware EGL device `prism devices` lists), `--gpus N` (the
/// first N), `--gpus 0,2` (those indices, a software device too if named).
enum GPUSelection: Sendable, Equatable {
    case all
    case first(Int)
    case indices([Int])

    init(parsing text: String) throws {
        if text == "all" { self = .all; return }
        if !text.contains(","), let count = Int(text) {
            guard count >= 1 else { throw UsageError("--gpus takes all, a count (2) or indices (0,2), not '\(text)'") }
            self = .first(count)
            return
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: true).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil && $0! >= 0 }) else {
            throw UsageError("--gpus takes all, a count (2) or indices (0,2), not '\(text)'")
        }
        self = .indices(parts.map { $0! })
    }
}

/// Where each worker's context comes from.
struct WorkerPlan: Sendable {
    struct Slot: Sendable {
        /// "gpu 0 (NVIDIA …)" or "llvmpipe 2": for progress and results.
        var label: String
        var gpu: GPUOptions
    }

    var slots: [Slot]
    /// Why this many workers, for the first line of the batch's output.
    var summary: String

    /// llvmpipe workers when no GPU is there and `--workers` is not given. Each llvmpipe context already
    /// rasterises on every core and x264 threads too; more workers mainly hide each job's serial parts
    /// (opening, compiling, flushing), so one per two cores (BENCHMARKS.md has 1 vs 2 on a 2-core box).
    static func defaultSoftwareWorkers(cores: Int) -> Int { max(1, cores / 2) }

    /// Chooses workers from the EGL devices this machine has. `workers` spreads that many workers over
    /// the chosen GPUs (round robin), or sets the number of llvmpipe workers on a box without one.
    static func make(selection: GPUSelection, workers: Int?, devices: [GPUDeviceListing], cores: Int) throws -> WorkerPlan {
        func usable(_ device: GPUDeviceListing) -> Bool {
            if case .success = device.info { return true }
            return false
        }
        func name(_ device: GPUDeviceListing) -> String {
            if case .success(let info) = device.info { return "gpu \(device.index) (\(info.renderer))" }
            return "gpu \(device.index)"
        }
        let hardware = devices.filter { usable($0) && !$0.isSoftware }
        var chosen: [GPUDeviceListing]
        switch selection {
        case .all:
            chosen = hardware
        case .first(let count):
            guard hardware.count >= count else {
                throw UsageError("--gpus \(count): this machine has \(hardware.count) usable GPU(s) (prism devices lists them)")
            }
            chosen = Array(hardware.prefix(count))
        case .indices(let indices):
            chosen = try indices.map { index in
                guard let device = devices.first(where: { $0.index == index }) else {
                    throw UsageError("--gpus: no GPU \(index) (prism devices lists \(devices.isEmpty ? "none" : "0...\(devices.count - 1)"))")
                }
                guard usable(device) else { throw UsageError("--gpus: GPU \(index) cannot make a context (prism devices says why)") }
                return device
            }
        }
        if chosen.isEmpty {
            let count = workers ?? defaultSoftwareWorkers(cores: cores)
            let slots = (0..<count).map { Slot(label: "llvmpipe \($0)", gpu: GPUOptions()) }
            let why = workers == nil ? "no GPU; \(count) software worker(s) for \(cores) core(s)" : "no GPU; --workers \(count)"
            return WorkerPlan(slots: slots, summary: why)
        }
        let count = workers ?? chosen.count
        let slots = (0..<count).map { n -> Slot in
            let device = chosen[n % chosen.count]
            return Slot(label: name(device), gpu: GPUOptions(deviceIndex: device.index))
        }
        return WorkerPlan(slots: slots, summary: "\(count) worker(s) on \(chosen.count) GPU(s)")
    }
}

/// One worker: its own GPU context, reused for every job it takes from the queue.
final class BatchWorker: Sendable {
    let label: String
    let gpu: GPUContext

    init(slot: WorkerPlan.Slot) throws {
        label = slot.label
        gpu = try GPUContext(options: slot.gpu)
    }

    enum Outcome {
        case finished(RunReport)
        case interrupted
    }

    /// Runs one job: the output is written under a hidden temporary name in its directory and renamed
    /// over the target only when the job ran to its end, so outputs appear complete or not at all (a stop
    /// in the middle, which `run` would finish as a playable movie, leaves nothing here).
    func execute(_ job: BatchJob, stop: StopSignal, progress: @escaping @Sendable (Int, Int?) -> Void) throws -> Outcome {
        let directory = (job.output as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        BatchTemporaries.removeStale(for: job.output)
        let temporary = BatchTemporaries.path(for: job.output)
        defer { unlink(temporary) }
        let report = try Self.runJob(job, outputPath: temporary, gpu: gpu, stop: stop, progress: progress)
        if report.interrupted { return .interrupted }
        guard rename(temporary, job.output) == 0 else { throw SystemError("rename", code: errno, context: job.output) }
        return .finished(report)
    }

    // MARK: The engine hook
    /// The one place `batch` drives the engine: a freshly bound graph and `run`'s options through `RunJob`
    /// (the engine with a movie sink) on this worker's context.
    static func runJob(_ job: BatchJob, outputPath: String, gpu: GPUContext, stop: StopSignal,
                       progress: @escaping @Sendable (Int, Int?) -> Void) throws -> RunReport {
        let graph = try PrismGraphs.bind(job.settings.filter ?? "")
        let run = try RunJob(options: job.runOptions(outputPath: outputPath), graph: graph, gpu: gpu)
        return try run.run(stop: stop) { snapshot in progress(snapshot.frames, snapshot.expectedFrames) }
    }
    // MARK: -

    func close() { gpu.close() }
}

/// The batch's hidden temporaries: `.NAME.prism-batch-PID@HOST.EXT` beside the output (the writer's own
/// `.partial` goes beside that). A task killed outright leaves them; the next attempt at the same job on the
/// same host removes those whose process is gone.
enum BatchTemporaries {
    /// This machine's short name (gethostname: no name lookup).
    static let host: String = {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "host" }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: ".").first.map(String.init) ?? ""
        return text.isEmpty ? "host" : text
    }()

    static func path(for output: String) -> String {
        let directory = (output as NSString).deletingLastPathComponent
        let name = (output as NSString).lastPathComponent
        let ext = (name as NSString).pathExtension
        return "\(directory)/\(prefix(name))\(getpid())@\(host).\(ext)"
    }

    private static func prefix(_ name: String) -> String {
        ".\((name as NSString).deletingPathExtension).prism-batch-"
    }

    static func removeStale(for output: String) {
        let directory = (output as NSString).deletingLastPathComponent
        let ours = prefix((output as NSString).lastPathComponent)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names {
            // Ours, or the movie writer's partial file of ours (one more dot in front).
            let rest: Substring
            if name.hasPrefix(ours) { rest = name.dropFirst(ours.count) }
            else if name.hasPrefix("." + ours) { rest = name.dropFirst(ours.count + 1) }
            else { continue }
            guard let at = rest.firstIndex(of: "@"), let pid = Int32(rest[..<at]),
                  rest[rest.index(after: at)...].hasPrefix(host + ".") else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                unlink(directory + "/" + name)
            }
        }
    }
}
