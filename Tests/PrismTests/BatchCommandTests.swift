import XCTest
import PrismCore
import PrismGPU
import PrismMedia
import PrismPipeline
@testable import Prism

/// `prism batch` end to end with the built binary on llvmpipe: outputs decoded again and compared with
/// their own inputs, results files, reruns, failures, interrupts and shards.
final class BatchCommandTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Lossless RGB clips (FFV1 on bgra) of different sizes and lengths, so an output can only match its own input.
    private func makeClips(_ count: Int) throws -> [(path: String, size: Size, frames: Int)] {
        try (0..<count).map { n in
            let size = Size(width: 48 + 16 * n, height: 32 + 8 * (n % 3))
            let frames = 6 + 3 * n
            let path = dir.path("clip\(n).mkv")
            try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size.width)x\(size.height):rate=25",
                              "-frames:v", "\(frames)", "-c:v", "ffv1", "-pix_fmt", "bgra", path])
            return (path, size, frames)
        }
    }

    private func writeManifest(_ lines: [String], name: String = "jobs.jsonl") throws -> String { try dir.writeLines(lines, name: name) }

    private func modificationDate(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// Checks frame count, size and that every sampled frame is exactly the input inverted.
    private func assertInverted(_ output: String, of clip: (path: String, size: Size, frames: Int),
                                file: StaticString = #filePath, line: UInt = #line) throws {
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, clip.frames, output, file: file, line: line)
        XCTAssertEqual(report.size, clip.size, output, file: file, line: line)
        for index in Set([0, clip.frames / 2, clip.frames - 1]) {
            let input = try MediaInspector.frameRGBA(clip.path, index: index)
            let result = try MediaInspector.frameRGBA(output, index: index)
            var wrong = 0
            for i in stride(from: 0, to: input.pixels.count, by: 4) {
                for c in 0..<3 where result.pixels[i + c] != 255 - input.pixels[i + c] { wrong += 1 }
            }
            XCTAssertEqual(wrong, 0, "\(output) frame \(index) is not its input inverted", file: file, line: line)
        }
    }

    func testWorkersShareTheQueueAndRerunsSkipFinishedJobs() throws {
        let clips = try makeClips(5)
        let manifest = try writeManifest(clips.enumerated().map { n, clip in
            #"{"input": "\#((clip.path as NSString).lastPathComponent)", "output": "out/o\#(n).mkv"}"#
        })
        let resultsPath = dir.path("jobs.results.jsonl")
        var run = try Tools.run(Tools.prism, ["batch", manifest, "--workers", "2", "--filter", "invert", "--codec", "ffv1",
                                              "--progress", "json"], timeout: 300)
        XCTAssertEqual(run.status, 0, run.stderr)
        let events = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(events.first?["event"] as? String, "batch")
        XCTAssertEqual(events.last?["event"] as? String, "end")
        XCTAssertEqual(events.last?["ok"] as? Int, 5)
        let done = events.filter { $0["event"] as? String == "done" }
        XCTAssertEqual(done.count, 5)
        XCTAssertTrue(done.allSatisfy { $0["status"] as? String == "ok" })
        XCTAssertEqual(Set(events.filter { $0["event"] as? String == "start" }.compactMap { $0["worker"] as? String }).count, 2,
                       "both workers took jobs from the queue")
        for (n, clip) in clips.enumerated() { try assertInverted(dir.path("out/o\(n).mkv"), of: clip) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("out")).filter { $0.hasPrefix(".") }, [],
                       "no temporaries left")
        var lines = results(resultsPath)
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(Set(lines.compactMap { $0["job"] as? String }), Set((0..<5).map { "out/o\($0).mkv" }))
        for line in lines {
            let n = Int((line["job"] as! String).dropFirst(5).prefix(1))!
            XCTAssertEqual(line["frames"] as? Int, clips[n].frames)
            XCTAssertEqual(line["status"] as? String, "ok")
            XCTAssertNil(line["error"] as? String)
        }
        let stamps = (0..<5).map { modificationDate(dir.path("out/o\($0).mkv")) }

        // The same command again: nothing to do, nothing touched.
        run = try Tools.run(Tools.prism, ["batch", manifest, "--workers", "2", "--filter", "invert", "--codec", "ffv1"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("5 already done"), run.stderr)
        XCTAssertEqual(results(resultsPath).count, 5)
        XCTAssertEqual((0..<5).map { modificationDate(dir.path("out/o\($0).mkv")) }, stamps)

        // Another filter is another job: all five run again. Then one output deleted: only it is redone.
        run = try Tools.run(Tools.prism, ["batch", manifest, "--codec", "ffv1", "--filter", "invert, invert"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(results(resultsPath).count, 10)
        try FileManager.default.removeItem(atPath: dir.path("out/o3.mkv"))
        run = try Tools.run(Tools.prism, ["batch", manifest, "--codec", "ffv1", "--filter", "invert, invert"])
        XCTAssertEqual(run.status, 0, run.stderr)
        lines = results(resultsPath)
        XCTAssertEqual(lines.count, 11)
        XCTAssertEqual(lines.last?["job"] as? String, "out/o3.mkv")
        // --force runs everything.
        run = try Tools.run(Tools.prism, ["batch", manifest, "--codec", "ffv1", "--filter", "invert", "--force", "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(results(resultsPath).count, 16)
        for (n, clip) in clips.enumerated() { try assertInverted(dir.path("out/o\(n).mkv"), of: clip) }
    }

    func testAFailingJobDoesNotStopTheOthers() throws {
        let clips = try makeClips(2)
        try Data("this is not a movie".utf8).write(to: URL(fileURLWithPath: dir.path("broken.mkv")))
        try Data("precious".utf8).write(to: URL(fileURLWithPath: dir.path("kept.mkv")))
        let manifest = try writeManifest([
            #"{"input": "clip0.mkv", "output": "a.mkv"}"#,
            #"{"input": "broken.mkv", "output": "kept.mkv", "id": "broken"}"#,
            #"{"input": "clip1.mkv", "output": "b.mkv"}"#,
        ])
        let run = try Tools.run(Tools.prism, ["batch", manifest, "--codec", "ffv1", "--filter", "invert", "--workers", "1",
                                              "--progress", "lines"])
        XCTAssertEqual(run.status, 3, run.stderr)
        let failures = run.stderrLines.filter { $0.contains("failed:") }
        XCTAssertEqual(failures.count, 1, run.stderr)
        XCTAssertTrue(failures[0].contains("job broken failed") && failures[0].contains("broken.mkv"), failures[0])
        XCTAssertTrue(run.stderrLines.last?.contains("1 of 3 job(s) failed") ?? false, run.stderr)
        try assertInverted(dir.path("a.mkv"), of: clips[0])
        try assertInverted(dir.path("b.mkv"), of: clips[1])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.path("kept.mkv"))), Data("precious".utf8),
                       "a failed job leaves an existing output alone")
        XCTAssertFalse(dir.contents().contains { $0.hasPrefix(".") }, "\(dir.contents())")
        let lines = results(dir.path("jobs.results.jsonl"))
        XCTAssertEqual(lines.compactMap { $0["status"] as? String }, ["ok", "failed", "ok"])
        XCTAssertTrue((lines[1]["error"] as? String)?.contains("broken.mkv") ?? false)
        // A rerun tries only the failed job again.
        let again = try Tools.run(Tools.prism, ["batch", manifest, "--codec", "ffv1", "--filter", "invert"])
        XCTAssertEqual(again.status, 3)
        XCTAssertTrue(again.stderr.contains("2 already done"), again.stderr)
        XCTAssertEqual(results(dir.path("jobs.results.jsonl")).count, 4)
        // The report says the same.
        let report = try Tools.run(Tools.prism, ["batch", "--report", dir.path("jobs.results.jsonl"), "--json"])
        XCTAssertEqual(report.status, 3)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        XCTAssertEqual(summary["jobs"] as? Int, 3)
        XCTAssertEqual(summary["failed"] as? Int, 1)
        XCTAssertEqual(summary["frames"] as? Int, clips[0].frames + clips[1].frames)
    }

    func testAnInterruptedBatchKeepsFinishedWorkAndLeavesNoPartialOutput() throws {
        let clips = try makeClips(1)
        let manifest = try writeManifest([
            #"{"input": "clip0.mkv", "output": "out/first.mkv", "codec": "ffv1", "filter": "invert"}"#,
            #"{"input": "pattern", "output": "out/long.mp4", "frames": 3000, "size": "64x48", "preset": "ultrafast"}"#,
        ])
        let resultsPath = dir.path("jobs.results.jsonl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["batch", manifest, "--workers", "1", "--progress", "quiet"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Interrupt once the first job is recorded, while the long one runs.
        let deadline = Date().addingTimeInterval(60)
        while results(resultsPath).isEmpty && process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(process.isRunning, "the long job should still be running")
        kill(process.processIdentifier, SIGINT)
        let stopBy = Date().addingTimeInterval(30)
        while process.isRunning && Date() < stopBy { usleep(20_000) }
        XCTAssertFalse(process.isRunning, "prism batch did not stop on SIGINT")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 130)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("out")), ["first.mkv"],
                       "the interrupted job leaves neither an output nor a temporary")
        XCTAssertEqual(results(resultsPath).count, 1)
        let stamp = modificationDate(dir.path("out/first.mkv"))
        // Killed outright (a node lost): hidden temporaries stay behind, and the rerun clears them.
        let killed = Process()
        killed.executableURL = URL(fileURLWithPath: Tools.prism)
        killed.arguments = ["batch", manifest, "--workers", "1", "--progress", "quiet"]
        killed.standardError = FileHandle.nullDevice
        try killed.run()
        func hidden() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir.path("out"))) ?? []).filter { $0.hasPrefix(".") } }
        let killBy = Date().addingTimeInterval(60)
        while hidden().isEmpty && killed.isRunning && Date() < killBy { usleep(10_000) }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        XCTAssertFalse(hidden().isEmpty, "the killed run was writing a temporary")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out/long.mp4")))
        // The rerun does only the missing job.
        let rerun = try Tools.run(Tools.prism, ["batch", manifest, "--workers", "1", "--progress", "lines"], timeout: 300)
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let lines = results(resultsPath)
        XCTAssertEqual(lines.compactMap { $0["job"] as? String }, ["out/first.mkv", "out/long.mp4"])
        XCTAssertEqual(modificationDate(dir.path("out/first.mkv")), stamp)
        XCTAssertEqual(hidden(), [], "the rerun removed the killed run's temporaries")
        XCTAssertEqual(try MediaInspector.inspect(dir.path("out/long.mp4")).videoFrameCount, 3000)
        try assertInverted(dir.path("out/first.mkv"), of: clips[0])
    }

    func testShardsFromTheSchedulersEnvironmentCoverTheManifestOnce() throws {
        let clips = try makeClips(5)
        let manifest = try writeManifest(clips.enumerated().map { n, clip in
            #"{"input": "\#((clip.path as NSString).lastPathComponent)", "output": "out/o\#(n).mkv", "codec": "ffv1", "filter": "invert"}"#
        })
        // Three Slurm array tasks (numbered from 1, as --array=1-3 does) and one more run as a Kubernetes pod
        // of a two-completion Indexed Job over a second results file.
        var files: [String] = []
        for task in 1...3 {
            let run = try Tools.run(Tools.prism, ["batch", manifest, "--progress", "lines"],
                                    environment: ["SLURM_ARRAY_TASK_ID": "\(task)", "SLURM_ARRAY_TASK_COUNT": "3",
                                                  "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stderr.contains("shard \(task - 1)/3"), run.stderr)
            files.append(dir.path("jobs.results.shard-\(task - 1)-of-3.jsonl"))
        }
        let jobsPerShard = files.map { results($0).compactMap { $0["job"] as? String } }
        XCTAssertEqual(jobsPerShard.map(\.count), [2, 2, 1])
        XCTAssertEqual(Set(jobsPerShard.joined()).count, 5, "disjoint, and together every job")
        for (n, clip) in clips.enumerated() { try assertInverted(dir.path("out/o\(n).mkv"), of: clip) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("jobs.results.jsonl")))
        // An unsharded rerun sees every shard's results: nothing left.
        let rerun = try Tools.run(Tools.prism, ["batch", manifest])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("5 already done"), rerun.stderr)
        // Kubernetes: the index from the pod, the count from --shards.
        let k8s = try Tools.run(Tools.prism, ["batch", manifest, "--results", dir.path("k8s.jsonl"), "--shards", "2", "--force"],
                                environment: ["JOB_COMPLETION_INDEX": "1"])
        XCTAssertEqual(k8s.status, 0, k8s.stderr)
        XCTAssertEqual(results(dir.path("k8s.shard-1-of-2.jsonl")).compactMap { $0["job"] as? String }, ["out/o1.mkv", "out/o3.mkv"])
        // The merged report over the three shards.
        let report = try Tools.run(Tools.prism, ["batch", "--report"] + files + ["--json"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        XCTAssertEqual(summary["jobs"] as? Int, 5)
        XCTAssertEqual(summary["succeeded"] as? Int, 5)
        XCTAssertEqual(summary["frames"] as? Int, clips.reduce(0) { $0 + $1.frames })
        XCTAssertGreaterThan(summary["aggregateFPS"] as? Double ?? 0, 0)
    }

    /// A stop that lands between two jobs: the next job starts on a stopped engine, which has no frame to
    /// write and throws for it. That is not the job failing: nothing is written and nothing recorded, and
    /// the rerun does the job.
    func testAJobStoppedBeforeItsFirstFrameLeavesNothingAndIsNotAFailure() throws {
        var settings = JobSettings()
        settings.frames = 30
        settings.input.size = Size(width: 64, height: 48)
        let job = BatchJob(id: "p", line: 1, index: 0, input: "pattern", output: dir.path("out/p.mp4"), settings: settings)
        let worker = try BatchWorker(slot: WorkerPlan.Slot(label: "test", gpu: GPUOptions()))
        defer { worker.close() }
        let stop = StopSignal()
        stop.stop()
        do {
            if case .finished = try worker.execute(job, stop: stop, progress: { _, _ in }) { XCTFail("a stopped job finished") }
        } catch {
            // "no frames to write": BatchRun.work takes an error under a stop as an interruption, not a failure.
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("out")), [], "no output, no temporary")
        let results = try BatchResultsFile(path: dir.path("r.jsonl"))
        let summary = BatchRun(jobs: [job], results: results, progress: BatchProgress(style: .quiet, workers: ["test"]), shard: nil)
            .run(workers: [worker], stop: stop)
        XCTAssertTrue(summary.interrupted)
        XCTAssertEqual(summary.failed.count + summary.succeeded.count, 0)
        XCTAssertEqual(summary.unfinished, 1)
        XCTAssertEqual(self.results(dir.path("r.jsonl")).count, 0)
    }

    func testAReaderThatGoesAwayDoesNotStopTheBatch() throws {
        let clips = try makeClips(2)
        let manifest = try writeManifest(clips.enumerated().map { n, clip in
            #"{"input": "\#((clip.path as NSString).lastPathComponent)", "output": "o\#(n).mkv", "codec": "ffv1", "filter": "invert"}"#
        })
        // `prism batch --progress json | head -0`: stdout is a pipe nobody reads.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["batch", manifest, "--progress", "json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try output.fileHandleForReading.close()
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "prism batch crashed on a closed stdout")
        XCTAssertEqual(process.terminationStatus, 0)
        for (n, clip) in clips.enumerated() { try assertInverted(dir.path("o\(n).mkv"), of: clip) }
        XCTAssertEqual(results(dir.path("jobs.results.jsonl")).count, 2)
    }

    func testBadArgumentsAndManifestsFailWithOneLineAndTouchNothing() throws {
        _ = try makeClips(1)
        let good = try writeManifest([#"{"input": "clip0.mkv", "output": "o.mkv", "codec": "ffv1"}"#])
        let bad = try writeManifest([#"{"input": "clip0.mkv", "output": "o.mkv", "codec": "ffv1"}"#, #"{"input": "clip0.mkv", "output": "p.mp4", "crf": "high"}"#],
                                    name: "bad.jsonl")
        let cases: [([String], Int32, [String])] = [
            (["batch", dir.path("none.jsonl")], 2, ["none.jsonl", "no such manifest"]),
            (["batch", bad], 2, ["bad.jsonl:2:", "crf", "high"]),
            (["batch", good, "--shard", "3/3"], 2, ["--shard"]),
            (["batch", good, "--gpus", "7,"], 2, ["no GPU 7"]),
            (["batch", good, "--progress", "loud"], 2, ["--progress"]),
            (["batch", good, "--crf", "80"], 2, ["--crf"]),
            (["batch", good, "--submit"], 2, ["--sbatch"]),
            (["batch", good, "--shards", "2"], 2, ["--shards"]),
            (["batch", "--report", dir.path("nothing.jsonl")], 2, ["nothing.jsonl"]),
            (["batch"], 2, ["MANIFEST"]),
        ]
        let before = dir.contents()
        for (arguments, status, words) in cases {
            let run = try Tools.run(Tools.prism, arguments)
            XCTAssertEqual(run.status, status, "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderrLines.count, 1, "\(arguments): \(run.stderr)")
            for word in words { XCTAssertTrue(run.stderr.contains(word), "\(arguments): '\(run.stderr)' should mention \(word)") }
            XCTAssertEqual(dir.contents(), before, "\(arguments) must create nothing")
        }
        // The sbatch script for a CPU-only cluster, printed.
        let script = try Tools.run(Tools.prism, ["batch", good, "--sbatch", "--shards", "2", "--gres", "none", "--crf", "20"])
        XCTAssertEqual(script.status, 0, script.stderr)
        let text = String(decoding: script.stdout, as: UTF8.self)
        XCTAssertTrue(text.contains("#SBATCH --array=0-0\n"), "no more tasks than jobs:\n\(text)")
        XCTAssertTrue(text.contains(" batch \(good) --results \(dir.path("jobs.results.jsonl"))"), text)
        XCTAssertTrue(text.contains("--crf 20"), text)
        XCTAssertFalse(text.contains("--gres"), text)
        XCTAssertEqual(dir.contents(), before)
    }
}
