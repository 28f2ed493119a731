import Foundation
import PrismCore
import PrismPipeline
import PrismGPU
import PrismMedia

/// `prism batch`: many jobs from a JSON Lines manifest on every GPU of this box (or N llvmpipe workers),
/// one shard of them on a cluster node, an sbatch script for a Slurm array, or a report merging results.
///
/// Exit status: 0 when every job of the run succeeded (or was already done), 3 when any job failed (one
/// line each on stderr), 130 when interrupted (finished jobs are kept; a rerun does the rest), 2 for bad
/// arguments or an invalid manifest, 1 when the batch could not start (no GPU context, unwritable results).
struct BatchCommand: PrismCommand {
    static let spec = CommandSpec(
        name: "batch", arguments: "MANIFEST.jsonl",
        summary: "Runs a JSON Lines manifest of jobs on every GPU (or llvmpipe workers), or one shard of it on a node.",
        options: [
            Key.workers.spec,
            Key.gpus.spec,
            Key.results.spec,
            Key.shard.spec,
            Key.shards.spec,
            Key.force.spec,
            Key.dryRun.spec,
            Key.progress.spec,
            Key.quiet.spec,
            Key.outputDirectory.spec,
        ] + JobSettings.options.map(\.asJobDefault) + [
            Key.sbatch.spec,
            Key.submit.spec,
            Key.gres.spec,
            Key.partition.spec,
            Key.time.spec,
            Key.logs.spec,
            Key.maxParallel.spec,
            Key.prism.spec,
            Key.report.spec,
            Key.json.spec,
        ],
        notes: ["MANIFEST.jsonl: one job per line, e.g. {\"input\": \"a.mp4\", \"output\": \"out/a.mp4\", \"filter\": \"invert\", \"crf\": 20};",
                "keys: " + BatchManifest.keys.joined(separator: ", ") + ". Paths are relative to",
                "the manifest. prism batch --report RESULTS.jsonl... merges results files.",
                "Exit status: 0 every job succeeded (or was done), 3 a job failed, 130 interrupted, 2 bad arguments or",
                "manifest, 1 the batch could not start."])

    static let failedJobsStatus: Int32 = 3
    static let interruptedStatus: Int32 = 130

    enum Mode {
        case run
        case sbatch(submit: Bool)
        case report(paths: [String], json: Bool)
    }

    var mode: Mode = .run
    var manifestPath = ""
    var defaults = JobSettings()
    var outputDirectory: String?
    var resultsPath: String?
    var shard: Shard?
    var shardCount: Int?
    var gpus = GPUSelection.all
    var workers: Int?
    var force = false
    var dryRun = false
    var progress: BatchProgressStyle
    // --sbatch
    var gres: String? = "gpu:1"
    var partition: String?
    var timeLimit: String?
    var logDirectory: String?
    var maxParallel: Int?
    var prismPath: String?
    /// What the command line said, passed on to the tasks of an sbatch script.
    private var passOn: [String] = []

    /// `batch`'s own options, declared once: the table above and the parser read them.
    enum Key {
        static let workers = OptionKey<Int>("--workers", value: "N", in: 1...256, help: "workers (each its own GPU context): llvmpipe workers, or spread over the GPUs")
        static let gpus = OptionKey<GPUSelection>(spec: .value("--gpus", value: "all|N|0,2", help: "the GPUs to use: all (default), the first N, or these indices"), read: { text, _ in try GPUSelection(parsing: text) })
        static let results = OptionKey<String>("--results", value: "FILE", help: "the results file (default: MANIFEST.results.jsonl beside the manifest)")
        static let shard = OptionKey<Shard>(spec: .value("--shard", value: "I/N", help: "run shard I of N (from 0); default from SLURM_ARRAY_TASK_ID/COUNT"), read: { text, _ in try Shard(parsing: text) })
        static let shards = OptionKey<Int>("--shards", value: "N", in: 1...100_000, help: "shards of --sbatch, or the count with JOB_COMPLETION_INDEX (Kubernetes)")
        static let force = FlagKey("--force", help: "run jobs already done too")
        static let dryRun = FlagKey("--dry-run", help: "list the jobs and whether each would run, run nothing")
        static let progress = OptionKey<BatchProgressStyle>("--progress", value: BatchProgressStyle.placeholder, help: "a bar on a terminal, a line per job, JSON Lines on stdout, or failures only")
        static let quiet = FlagKey("--quiet", "-q", help: "--progress quiet")
        static let outputDirectory = OptionKey<String>("--output-dir", value: "DIR", help: "where jobs without an output write (named after the input)")
        static let sbatch = FlagKey("--sbatch", help: "print an sbatch --array script, one task per shard")
        static let submit = FlagKey("--submit", help: "with --sbatch: submit it (prints the job id)")
        static let gres = OptionKey<String>("--gres", value: "gpu:1|none", help: "with --sbatch: GPUs per task (none for CPU-only clusters)")
        static let partition = OptionKey<String>("--partition", value: "P", help: "with --sbatch: the Slurm partition")
        static let time = OptionKey<String>("--time", value: "T", help: "with --sbatch: the time limit per task")
        static let logs = OptionKey<String>("--logs", value: "DIR", help: "with --sbatch: the tasks' log directory (default: logs/ beside the results)")
        static let maxParallel = OptionKey<Int>("--max-parallel", value: "M", in: 1...100_000, help: "with --sbatch: at most M tasks at once")
        static let prism = OptionKey<String>("--prism", value: "PATH", help: "with --sbatch: the prism the tasks run (default: this one)")
        static let report = FlagKey("--report", help: "merge results files (the arguments) into one summary")
        static let json = FlagKey("--json", help: "with --report: the summary as JSON")
    }

    init(arguments: [String]) throws {
        var scanner = try ArgumentScanner(arguments, command: Self.spec)
        progress = isatty(2) != 0 ? .bar : .lines
        if scanner.flag(Key.report) {
            guard !scanner.positionals.isEmpty else { throw UsageError("--report takes one or more RESULTS.jsonl files") }
            mode = .report(paths: scanner.positionals, json: scanner.flag(Key.json))
            try scanner.checkAllUsed()
            return
        }
        guard scanner.positionals.count == 1 else {
            throw UsageError("batch takes one MANIFEST.jsonl (or --report RESULTS…), got \(scanner.positionals.count) arguments")
        }
        manifestPath = scanner.positionals[0]
        // Job defaults: the same options, spellings and checks as `run` and as the manifest's keys.
        defaults = try JobSettings(from: &scanner)
        for key in JobSettings.keys {
            if let value = scanner.text(for: key) { passOn += [scanner.spelling(for: key), value] }
        }
        if let directory = try scanner.value(Key.outputDirectory) {
            outputDirectory = directory
            passOn += [Key.outputDirectory.spec.name, BatchManifest.absolute(directory, relativeTo: FileManager.default.currentDirectoryPath)]
        }
        resultsPath = try scanner.value(Key.results)
        shard = try scanner.value(Key.shard)
        shardCount = try scanner.value(Key.shards)
        if let selection = try scanner.value(Key.gpus) { gpus = selection }
        workers = try scanner.value(Key.workers)
        force = scanner.flag(Key.force)
        if force { passOn.append(Key.force.spec.name) }
        dryRun = scanner.flag(Key.dryRun)
        if scanner.flag(Key.quiet) { progress = .quiet }
        if let style = try scanner.value(Key.progress) { progress = style }
        if scanner.flag(Key.sbatch) {
            mode = .sbatch(submit: scanner.flag(Key.submit))
            if let text = try scanner.value(Key.gres) { gres = text == "none" ? nil : text }
            partition = try scanner.value(Key.partition)
            timeLimit = try scanner.value(Key.time)
            logDirectory = try scanner.value(Key.logs)
            maxParallel = try scanner.value(Key.maxParallel)
            prismPath = try scanner.value(Key.prism)
            if shard != nil { throw UsageError("--sbatch makes the shards itself: give --shards N, not --shard") }
        } else {
            if scanner.flag(Key.submit) { throw UsageError("--submit goes with --sbatch") }
            for option in [Key.gres.spec, Key.partition.spec, Key.time.spec, Key.logs.spec, Key.maxParallel.spec, Key.prism.spec]
            where scanner.isGiven(option) {
                throw UsageError("\(option.name) goes with --sbatch")
            }
        }
        try scanner.checkAllUsed()
    }

    func execute() throws -> Int32 {
        switch mode {
        case .report(let paths, let json):
            let report = try BatchReport.load(paths)
            print(json ? try report.json() : PrismCommandLine.terminalSafe(report.text))
            return report.failed > 0 ? Self.failedJobsStatus : 0
        case .sbatch(let submit):
            return try writeScript(submit: submit)
        case .run:
            return try runBatch()
        }
    }

    private func loadManifest() throws -> BatchManifest {
        guard FileManager.default.fileExists(atPath: manifestPath) else { throw UsageError("\(manifestPath): no such manifest") }
        do {
            return try BatchManifest(path: manifestPath, defaults: defaults, outputDirectory: outputDirectory)
        } catch let error as ManifestError {
            throw UsageError(error.description) // bad input: the usage status, like a bad argument
        }
    }

    private func writeScript(submit: Bool) throws -> Int32 {
        let manifest = try loadManifest()
        let results = ResultsLocation(explicit: resultsPath, manifest: manifestPath)
        let tasks = min(shardCount ?? min(manifest.jobs.count, 16), manifest.jobs.count)
        let cwd = FileManager.default.currentDirectoryPath
        let prism = prismPath.map { BatchManifest.absolute($0, relativeTo: cwd) }
            ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let logs = logDirectory.map { BatchManifest.absolute($0, relativeTo: cwd) }
            ?? (results.base as NSString).deletingLastPathComponent + "/logs"
        let script = SlurmScript(prism: prism, manifest: BatchManifest.absolute(manifestPath, relativeTo: cwd), results: results,
                                 tasks: tasks, gres: gres, logDirectory: logs, partition: partition, timeLimit: timeLimit,
                                 maxParallel: maxParallel, passOn: passOn)
        guard submit else {
            print(script.text, terminator: "")
            return 0
        }
        let id = try script.submit()
        print(id)
        if progress != .quiet && progress != .json {
            PrismCommandLine.info("prism: submitted Slurm array job \(id): \(tasks) task(s) over \(manifest.jobs.count) job(s); "
                                  + "logs in \(logs); merge with prism batch --report "
                                  + SlurmScript.quote(results.split.stem) + ".shard-*" + results.split.ext)
        }
        return 0
    }

    private func runBatch() throws -> Int32 {
        let manifest = try loadManifest()
        let environment = ProcessInfo.processInfo.environment
        var shard = self.shard
        if shard == nil { shard = try Shard.fromEnvironment(environment, shardCount: shardCount) }
        if shard == nil, shardCount != nil {
            throw UsageError("--shards N goes with --sbatch, or with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); use --shard I/N")
        }
        let location = ResultsLocation(explicit: resultsPath, manifest: manifestPath)
        let resultsFile = location.file(for: shard)
        let mine = manifest.jobs.filter { shard?.contains($0) ?? true }
        let finished = force ? FinishedJobs([]) : FinishedJobs(BatchResultsFile.readChecked(location.allFiles()).results)
        let pending = mine.filter { !finished.isDone($0) }
        let skipped = mine.count - pending.count

        if dryRun {
            for job in mine {
                print("\(finished.isDone(job) ? "done" : "todo")  \(BatchProgress.shown(job.id))  \(BatchProgress.shown(job.input)) → "
                      + BatchProgress.shown(job.output))
            }
            PrismCommandLine.info("prism: \(pending.count) of \(mine.count) job(s) to run" + (shard.map { " (shard \($0))" } ?? ""))
            return 0
        }
        FFmpegLog.setLevel(.quiet)
        guard !pending.isEmpty else {
            let progress = BatchProgress(style: progress, workers: [])
            progress.begin(jobs: 0, skipped: skipped, shard: shard, results: resultsFile, summary: "nothing to do")
            progress.end(BatchRun.Summary(), skipped: skipped)
            return 0
        }
        // Workers: contexts are made before any job starts, so a machine without a usable GPU fails here.
        let cores = environment["SLURM_CPUS_PER_TASK"].flatMap { Int($0) } ?? ProcessInfo.processInfo.activeProcessorCount
        let plan = try WorkerPlan.make(selection: gpus, workers: workers, devices: GPUContext.listDevices().devices, cores: cores)
        let slots = Array(plan.slots.prefix(pending.count))
        let workers = try slots.map { try BatchWorker(slot: $0) }
        defer { for worker in workers { worker.close() } }
        let results = try BatchResultsFile(path: resultsFile)

        // Signals first (SIGPIPE is ignored from the tool's start, `ProcessSignals`: a reader that went away
        // is an error to shrug off, not a signal that kills the batch).
        let stop = StopSignal()
        let signals = StopSignals.droppingJobs(stop)
        defer { signals.finish(restoringDefaults: true) }
        let progress = BatchProgress(style: progress, workers: workers.map(\.label))
        progress.begin(jobs: pending.count, skipped: skipped, shard: shard, results: resultsFile, summary: plan.summary)
        let run = BatchRun(jobs: pending, results: results, progress: progress, shard: shard)
        let summary = run.run(workers: workers, stop: stop)
        progress.end(summary, skipped: skipped)

        if progress.style != .json {
            var line = String(format: "prism: batch: %d ok, %d failed", summary.succeeded.count, summary.failed.count)
            if skipped > 0 { line += ", \(skipped) skipped (done before)" }
            line += String(format: "; %d frames in %.2f s, %.1f fps aggregate", summary.frames, summary.wallSeconds,
                           summary.wallSeconds > 0 ? Double(summary.frames) / summary.wallSeconds : 0)
            PrismCommandLine.info(line + "; results → \(resultsFile)")
        }
        if summary.interrupted {
            PrismCommandLine.report("batch interrupted: \(summary.unfinished) job(s) not done; run the same command again to finish them")
            return Self.interruptedStatus
        }
        if !summary.failed.isEmpty {
            PrismCommandLine.report("\(summary.failed.count) of \(pending.count) job(s) failed (exit status \(Self.failedJobsStatus))")
            return Self.failedJobsStatus
        }
        return 0
    }
}
