import XCTest
import PrismCore
@testable import PrismGPU
import PrismMedia
@testable import Prism

/// The batch's parts that need no GPU: manifests, shards, results files, reports, worker plans, the sbatch script.
final class BatchManifestTests: XCTestCase {
    let dir = ScratchDirectory()

    private func manifest(_ lines: [String], name: String = "jobs.jsonl") throws -> String { try dir.writeLines(lines, name: name) }

    private func touch(_ name: String) -> String {
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.path(name), contents: Data("x".utf8)))
        return dir.path(name)
    }

    private func assertManifestError(_ lines: [String], line: Int, mentioning words: [String], more: Int = 0,
                                     file: StaticString = #filePath, sourceLine: UInt = #line) throws {
        let path = try manifest(lines)
        XCTAssertThrowsError(try BatchManifest(path: path), file: file, line: sourceLine) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("\(path):\(line): "), "'\(text)' should start with \(path):\(line):", file: file, line: sourceLine)
            for word in words {
                XCTAssertTrue(text.contains(word), "'\(text)' should mention \(word)", file: file, line: sourceLine)
            }
            XCTAssertEqual(text.contains("more problem"), more > 0, text, file: file, line: sourceLine)
            if more > 0 { XCTAssertTrue(text.contains("and \(more) more problem"), text, file: file, line: sourceLine) }
            XCTAssertFalse(text.contains("\n"), "one line", file: file, line: sourceLine)
        }
    }

    func testManifestResolvesPathsAgainstItsDirectoryAndAppliesDefaults() throws {
        _ = touch("a.mp4")
        try FileManager.default.createDirectory(atPath: dir.path("clips"), withIntermediateDirectories: true)
        _ = touch("clips/b.mov")
        let path = try manifest([
            "# a comment, then a blank line",
            "",
            #"{"input": "a.mp4", "output": "out/a.mp4", "filter": "invert", "crf": 18}"#,
            #"{"input": "clips/b.mov", "id": "second", "codec": "ffv1", "output": "out/b.mkv", "fps": "30000/1001"}"#,
            #"{"input": "pattern", "frames": 12, "size": "64x48", "output": "/abs/p.mp4", "duration": 0.5}"#,
        ])
        var defaults = JobSettings()
        XCTAssertTrue(try defaults.set("filter", text: "mono"))
        XCTAssertTrue(try defaults.set("preset", text: "ultrafast"))
        XCTAssertTrue(try defaults.set("crf", text: "30"))
        // From another working directory: paths still mean the manifest's directory.
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath("/"))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        let jobs = try BatchManifest(path: path, defaults: defaults).jobs
        XCTAssertEqual(jobs.count, 3)
        XCTAssertEqual(jobs.map(\.line), [3, 4, 5])
        XCTAssertEqual(jobs.map(\.index), [0, 1, 2])
        XCTAssertEqual(jobs[0].input, dir.path("a.mp4"))
        XCTAssertEqual(jobs[0].output, dir.path("out/a.mp4"))
        XCTAssertEqual(jobs[0].id, "out/a.mp4")
        XCTAssertEqual(jobs[0].settings.filter, "invert", "the line's own setting wins")
        XCTAssertEqual(jobs[0].settings.encoder.crf, 18)
        XCTAssertEqual(jobs[0].settings.encoder.preset, "ultrafast", "a default fills what the line leaves out")
        XCTAssertEqual(jobs[1].id, "second")
        XCTAssertEqual(jobs[1].input, dir.path("clips/b.mov"))
        XCTAssertEqual(jobs[1].settings.encoder.codec, .ffv1)
        XCTAssertEqual(jobs[1].settings.input.frameRate, Rational(30000, 1001))
        XCTAssertEqual(jobs[1].settings.filter, "mono")
        XCTAssertEqual(jobs[2].input, "pattern")
        XCTAssertEqual(jobs[2].output, "/abs/p.mp4")
        XCTAssertEqual(jobs[2].settings.frames, 12)
        XCTAssertEqual(jobs[2].settings.input.size, Size(width: 64, height: 48))
        // What the engine is asked to do.
        let options = jobs[2].runOptions(outputPath: "/tmp/x.mp4")
        XCTAssertEqual(options.input, .pattern)
        XCTAssertEqual(options.output, .movie("/tmp/x.mp4"))
        XCTAssertEqual(options.session.frameLimit, 12)
        XCTAssertEqual(options.session.durationLimit, MediaTime(value: 500, timescale: 1000))
        XCTAssertEqual(options.session.encoder.crf, 30)
        XCTAssertTrue(options.quiet)
        let movie = jobs[1].runOptions(outputPath: "/tmp/y.mkv")
        XCTAssertEqual(movie.input, .movie(dir.path("clips/b.mov")))
        XCTAssertEqual(movie.session.encoder.codec, .ffv1)
    }

    func testOutputDirectoryNamesOutputsAfterInputs() throws {
        _ = touch("take1.mov")
        let path = try manifest([#"{"input": "take1.mov"}"#, #"{"input": "take1.mov", "codec": "prores", "output": "x.mov"}"#])
        let jobs = try BatchManifest(path: path, outputDirectory: dir.path("graded")).jobs
        XCTAssertEqual(jobs[0].output, dir.path("graded/take1.mp4"))
        XCTAssertEqual(jobs[1].output, dir.path("x.mov"))
        XCTAssertThrowsError(try BatchManifest(path: path)) { XCTAssertTrue("\($0)".contains(":1: "), "\($0)") }
    }

    func testEveryKindOfBadLineIsNamedByFileAndLine() throws {
        _ = touch("a.mp4")
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4"}"#, "{not json"], line: 2, mentioning: ["not valid JSON"])
        try assertManifestError([#"["a.mp4"]"#], line: 1, mentioning: ["JSON object", "array"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "crff": 20}"#], line: 1, mentioning: ["unknown key \"crff\"", "did you mean \"crf\""])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "codec": "vp9"}"#], line: 1, mentioning: ["\"codec\"", "vp9"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "crf": 99}"#], line: 1, mentioning: ["crf", "99"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "frames": true}"#], line: 1, mentioning: ["frames", "boolean"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "size": "big"}"#], line: 1, mentioning: ["size", "big"])
        try assertManifestError([#"{"input": "missing.mp4", "output": "o.mp4"}"#], line: 1, mentioning: ["missing.mp4", "no such file"])
        try assertManifestError([#"{"output": "o.mp4"}"#], line: 1, mentioning: ["\"input\""])
        try assertManifestError([#"{"input": "a.mp4"}"#], line: 1, mentioning: ["\"output\"", "--output-dir"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.avi"}"#], line: 1, mentioning: ["o.avi", ".mp4"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "codec": "ffv1"}"#], line: 1, mentioning: ["ffv1", ".mkv"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "filter": "invert, sparkle"}"#], line: 1,
                                mentioning: ["\"filter\"", "sparkle"])
        try assertManifestError([#"{"input": "a.mp4", "output": "a.mp4"}"#], line: 1, mentioning: ["output is the input"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4"}"#, #"{"input": "pattern", "output": "./o.mp4"}"#], line: 2,
                                mentioning: ["also line 1"])
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4", "id": "x"}"#, #"{"input": "a.mp4", "output": "p.mp4", "id": "x"}"#],
                                line: 2, mentioning: ["id 'x'", "line 1"])
        // Several problems: the first, and how many more, in one line.
        try assertManifestError([#"{"input": "a.mp4", "output": "o.mp4"}"#, "nope", #"{"input": 3}"#, "[]"], line: 2,
                                mentioning: ["not valid JSON"], more: 2)
        let empty = try manifest(["# nothing", ""])
        XCTAssertThrowsError(try BatchManifest(path: empty)) { XCTAssertTrue("\($0)".contains("no jobs"), "\($0)") }
    }

    func testFingerprintFollowsWhatTheJobProduces() throws {
        _ = touch("a.mp4")
        let one = try BatchManifest(path: try manifest([#"{"input": "a.mp4", "output": "o.mp4", "filter": "invert"}"#], name: "1.jsonl")).jobs[0]
        let same = try BatchManifest(path: try manifest([#"{"output": "o.mp4", "filter": "invert", "input": "a.mp4"}"#], name: "2.jsonl")).jobs[0]
        let other = try BatchManifest(path: try manifest([#"{"input": "a.mp4", "output": "o.mp4", "filter": "mono"}"#], name: "3.jsonl")).jobs[0]
        XCTAssertEqual(one.fingerprint, same.fingerprint)
        XCTAssertNotEqual(one.fingerprint, other.fingerprint)
    }

    func testShardsSplitJobsDisjointlyAndComeFromTheScheduler() throws {
        XCTAssertEqual(try Shard(parsing: "2/4"), Shard(index: 2, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3"] {
            XCTAssertThrowsError(try Shard(parsing: bad), bad)
        }
        let jobs = (0..<11).map { BatchJob(id: "\($0)", line: $0 + 1, index: $0, input: "pattern", output: "/o\($0).mp4", settings: JobSettings()) }
        var seen: [Int] = []
        for index in 0..<4 {
            let shard = Shard(index: index, count: 4)
            let mine = jobs.filter { shard.contains($0) }
            XCTAssertTrue((2...3).contains(mine.count), "balanced: \(mine.count)")
            seen += mine.map(\.index)
        }
        XCTAssertEqual(seen.sorted(), Array(0..<11), "every job in exactly one shard")

        XCTAssertEqual(try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0",
                                                  "SLURM_ARRAY_TASK_MAX": "3"], shardCount: nil), Shard(index: 3, count: 4))
        XCTAssertEqual(try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
                                                  "SLURM_ARRAY_TASK_MAX": "4"], shardCount: nil), Shard(index: 0, count: 4))
        XCTAssertThrowsError(try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0",
                                                        "SLURM_ARRAY_TASK_MAX": "4"], shardCount: nil), "a stepped array is refused")
        XCTAssertThrowsError(try Shard.fromEnvironment(["SLURM_ARRAY_TASK_ID": "2"], shardCount: nil))
        XCTAssertEqual(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "5"], shardCount: 8), Shard(index: 5, count: 8))
        XCTAssertEqual(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "0", "PRISM_SHARDS": "2"], shardCount: nil), Shard(index: 0, count: 2))
        XCTAssertThrowsError(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "5"], shardCount: nil), "needs the count")
        XCTAssertThrowsError(try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "5"], shardCount: 5), "index beyond the count")
        XCTAssertNil(try Shard.fromEnvironment(["HOME": "/root"], shardCount: nil))
    }

    private func result(_ job: String, _ status: BatchResult.Status, frames: Int = 10, started: Double, finished: Double,
                        fingerprint: String = "f", output: String = "/nonexistent", host: String = "a") -> BatchResult {
        BatchResult(job: job, status: status, frames: frames, fps: 1, seconds: finished - started, error: status == .failed ? "boom" : nil,
                    input: "in", output: output, fingerprint: fingerprint, started: started, finished: finished, host: host,
                    shard: nil, worker: "w")
    }

    func testResultsFilesAppendWholeLinesAndSurviveATornLine() throws {
        let path = dir.path("r/results.jsonl")
        let file = try BatchResultsFile(path: path)
        try file.append(result("a", .ok, started: 1, finished: 2))
        // A line cut short (what a full disk leaves): readers skip it and the next append starts a new line.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"job":"b","stat"#.utf8))
        try handle.close()
        try file.append(result("c", .failed, started: 2, finished: 3))
        let (results, problems) = BatchResultsFile.readChecked([path, dir.path("absent.jsonl")])
        XCTAssertEqual(results.map(\.job), ["a", "c"])
        XCTAssertEqual(results[1].error, "boom")
        XCTAssertEqual(problems.count, 1)
        // Many threads appending at once: every line whole.
        let shared = try BatchResultsFile(path: dir.path("many.jsonl"))
        let lines = (0..<64).map { result("job\($0)", .ok, started: 0, finished: 1) }
        DispatchQueue.concurrentPerform(iterations: 64) { n in
            try? shared.append(lines[n])
        }
        let many = BatchResultsFile.readChecked([dir.path("many.jsonl")])
        XCTAssertEqual(many.problems, [])
        XCTAssertEqual(Set(many.results.map(\.job)).count, 64)
    }

    func testFinishedJobsNeedASuccessTheSameFingerprintAndTheOutput() throws {
        let output = touch("done.mp4")
        let job = BatchJob(id: "j", line: 1, index: 0, input: "pattern", output: output, settings: JobSettings())
        let ok = result("j", .ok, started: 0, finished: 1, fingerprint: job.fingerprint, output: output)
        XCTAssertTrue(FinishedJobs([ok]).isDone(job))
        XCTAssertFalse(FinishedJobs([result("j", .failed, started: 0, finished: 1, fingerprint: job.fingerprint)]).isDone(job))
        XCTAssertFalse(FinishedJobs([result("j", .ok, started: 0, finished: 1, fingerprint: "old")]).isDone(job), "the job changed")
        XCTAssertFalse(FinishedJobs([]).isDone(job))
        try FileManager.default.removeItem(atPath: output)
        XCTAssertFalse(FinishedJobs([ok]).isDone(job), "its output was deleted")
    }

    func testResultsLocationsKeepShardsApartAndFindThemAll() throws {
        let manifestPath = dir.path("set.jsonl")
        let location = ResultsLocation(explicit: nil, manifest: manifestPath)
        XCTAssertEqual(location.base, dir.path("set.results.jsonl"))
        XCTAssertEqual(location.file(for: nil), dir.path("set.results.jsonl"))
        XCTAssertEqual(location.file(for: Shard(index: 0, count: 1)), dir.path("set.results.jsonl"))
        XCTAssertEqual(location.file(for: Shard(index: 2, count: 4)), dir.path("set.results.shard-2-of-4.jsonl"))
        for name in ["set.results.shard-0-of-4.jsonl", "set.results.shard-3-of-4.jsonl", "other.results.shard-0-of-4.jsonl"] { _ = touch(name) }
        XCTAssertEqual(location.allFiles(), [dir.path("set.results.jsonl"), dir.path("set.results.shard-0-of-4.jsonl"),
                                             dir.path("set.results.shard-3-of-4.jsonl")])
        XCTAssertEqual(ResultsLocation(explicit: dir.path("r.txt"), manifest: manifestPath).file(for: Shard(index: 1, count: 2)),
                       dir.path("r.shard-1-of-2.txt"))
    }

    func testReportTakesEachJobsLatestAttemptAndTheWallSpan() throws {
        let results = [
            result("a", .ok, frames: 30, started: 100, finished: 103, host: "n1"),
            result("b", .failed, frames: 0, started: 100, finished: 101, host: "n2"),
            result("c", .failed, frames: 0, started: 101, finished: 102, host: "n1"),
            result("b", .ok, frames: 50, started: 104, finished: 110, host: "n1"), // b retried and succeeded
        ]
        let report = BatchReport(results: results, files: 2, damagedLines: 1)
        XCTAssertEqual(report.jobs, 3)
        XCTAssertEqual(report.succeeded, 2)
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.failures.map(\.job), ["c"])
        XCTAssertEqual(report.attempts, 4)
        XCTAssertEqual(report.frames, 80)
        XCTAssertEqual(report.wallSeconds, 10, accuracy: 1e-9)
        XCTAssertEqual(report.aggregateFPS, 8, accuracy: 1e-9)
        XCTAssertEqual(report.jobSeconds, 9, accuracy: 1e-9)
        XCTAssertEqual(report.hosts, ["n1", "n2"])
        XCTAssertTrue(report.text.contains("3 (2 ok, 1 failed"))
        XCTAssertTrue(report.text.contains("damaged"))
        let decoded = try JSONSerialization.jsonObject(with: Data(try report.json().utf8)) as? [String: Any]
        XCTAssertEqual(decoded?["frames"] as? Int, 80)
    }

    private func listing(_ index: Int, software: Bool = false, usable: Bool = true) -> GPUDeviceListing {
        let info = GPUInfo(platform: .device, source: "test", eglVendor: "v", eglVersion: "1.5", vendor: "v", renderer: "R\(index)",
                           version: "OpenGL ES 3.2", shadingLanguageVersion: "3.20", extensions: [], isSoftware: software)
        return GPUDeviceListing(index: index, extensions: "", drmDevice: nil, renderNode: nil, isSoftware: software,
                                info: usable ? .success(info) : .failure(GPUContextError(attempts: ["no"])))
    }

    func testWorkerPlanUsesEveryHardwareGPUOrSoftwareWorkers() throws {
        let box = [listing(0), listing(1, usable: false), listing(2), listing(3, software: true)]
        var plan = try WorkerPlan.make(selection: .all, workers: nil, devices: box, cores: 32)
        XCTAssertEqual(plan.slots.map(\.gpu.deviceIndex), [0, 2], "usable hardware devices only")
        plan = try WorkerPlan.make(selection: .all, workers: 5, devices: box, cores: 32)
        XCTAssertEqual(plan.slots.map(\.gpu.deviceIndex), [0, 2, 0, 2, 0], "spread round robin")
        plan = try WorkerPlan.make(selection: .first(1), workers: nil, devices: box, cores: 32)
        XCTAssertEqual(plan.slots.map(\.gpu.deviceIndex), [0])
        plan = try WorkerPlan.make(selection: .indices([2, 3]), workers: nil, devices: box, cores: 32)
        XCTAssertEqual(plan.slots.map(\.gpu.deviceIndex), [2, 3], "a software device when named")
        XCTAssertThrowsError(try WorkerPlan.make(selection: .first(3), workers: nil, devices: box, cores: 32))
        XCTAssertThrowsError(try WorkerPlan.make(selection: .indices([1]), workers: nil, devices: box, cores: 32))
        XCTAssertThrowsError(try WorkerPlan.make(selection: .indices([9]), workers: nil, devices: box, cores: 32))
        // A CPU-only box: llvmpipe workers, by cores unless told.
        let cpuOnly = [listing(0, software: true)]
        plan = try WorkerPlan.make(selection: .all, workers: nil, devices: cpuOnly, cores: 8)
        XCTAssertEqual(plan.slots.count, WorkerPlan.defaultSoftwareWorkers(cores: 8))
        XCTAssertTrue(plan.slots.allSatisfy { $0.gpu.deviceIndex == nil && $0.label.hasPrefix("llvmpipe") })
        plan = try WorkerPlan.make(selection: .all, workers: 3, devices: [], cores: 2)
        XCTAssertEqual(plan.slots.count, 3)
        XCTAssertEqual(try GPUSelection(parsing: "0,2"), .indices([0, 2]))
        XCTAssertEqual(try GPUSelection(parsing: "3"), .first(3))
        XCTAssertEqual(try GPUSelection(parsing: "all"), .all)
        for bad in ["0", "x", "1,-2", ""] { XCTAssertThrowsError(try GPUSelection(parsing: bad), bad) }
    }

    func testSbatchScriptAsksForOneGPUPerTaskUnlessToldNone() throws {
        let location = ResultsLocation(explicit: "/data/run/results.jsonl", manifest: "/data/jobs.jsonl")
        var script = SlurmScript(prism: "/opt/prism/bin/prism", manifest: "/data/my jobs.jsonl", results: location, tasks: 4,
                                 gres: "gpu:1", logDirectory: "/data/run/logs", partition: "gpu", timeLimit: "01:00:00",
                                 maxParallel: 2, passOn: ["--filter", "invert, mono", "--force"])
        let text = script.text
        XCTAssertTrue(text.hasPrefix("#!/bin/bash\n"))
        for line in ["#SBATCH --array=0-3%2", "#SBATCH --gres=gpu:1", "#SBATCH --partition=gpu", "#SBATCH --time=01:00:00",
                     "#SBATCH --output=/data/run/logs/prism-batch-%A_%a.out"] {
            XCTAssertTrue(text.contains(line + "\n"), "missing \(line) in\n\(text)")
        }
        XCTAssertTrue(text.contains("exec /opt/prism/bin/prism batch '/data/my jobs.jsonl' --results /data/run/results.jsonl "
                                    + "--progress lines --gpus all --workers 1 --filter 'invert, mono' --force\n"), text)
        XCTAssertTrue(text.contains("prism batch --report /data/run/results.shard-*.jsonl"), text)
        script.gres = nil
        script.maxParallel = nil
        XCTAssertFalse(script.text.contains("--gres"))
        XCTAssertFalse(script.text.contains("--workers"))
        XCTAssertTrue(script.text.contains("#SBATCH --array=0-3\n"))
        XCTAssertEqual(SlurmScript.quote("it's"), #"'it'\''s'"#)
    }
}
