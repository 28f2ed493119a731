import XCTest
import PrismCore
import PrismMedia

/// `prism batch --sbatch --submit` on a real one-node Slurm cluster (Debian's slurm-wlm and munge) that
/// the test starts itself with scripts/slurm-local-cluster: a 4-task array over a manifest of small clips,
/// one task cancelled half way through its shard, then the same array again, which must do only the work
/// that was missing. Needs root; CI sets PRISM_REQUIRE_SLURM=1 so a missing Slurm fails instead of skipping.
final class BatchSlurmTests: XCTestCase {
    let dir = ScratchDirectory()

    private var clusterScript: String { Tools.repositoryRoot.appendingPathComponent("scripts/slurm-local-cluster").path }

    private func requireSlurm() throws {
        let missing = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"].filter { Tools.which($0) == nil }
        var problem: String?
        if getuid() != 0 { problem = "the Slurm test runs slurmd, which needs root" }
        if !missing.isEmpty { problem = "Slurm is not installed (missing \(missing.joined(separator: ", ")); scripts/install-deps installs it)" }
        guard let problem else { return }
        if ProcessInfo.processInfo.environment["PRISM_REQUIRE_SLURM"] == "1" { XCTFail(problem); throw XCTSkip(problem) }
        throw XCTSkip(problem)
    }

    /// Waits until the cluster has no jobs left (at most `timeout` seconds).
    private func waitForQueue(_ environment: [String: String], timeout: TimeInterval = 240) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let queue = try Tools.run(Tools.which("squeue")!, ["-h"], environment: environment)
            if queue.status == 0, String(decoding: queue.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return }
            usleep(250_000)
        }
        XCTFail("the Slurm jobs did not finish within \(Int(timeout)) s")
    }

    func testArrayOnARealSlurmClusterResumesAKilledTask() throws {
        try requireSlurm()
        // The cluster, stopped however the test ends (its daemons also die on their own after 30 minutes).
        let clusterDirectory = dir.path("cluster")
        let start = try Tools.run(clusterScript, ["start", clusterDirectory, "2"], timeout: 120)
        addTeardownBlock { [clusterScript] in _ = try? Tools.run(clusterScript, ["stop", clusterDirectory], timeout: 60) }
        guard start.status == 0 else { return XCTFail("the one-node cluster did not start: \(start.stderr)") }
        let slurm = ["SLURM_CONF": clusterDirectory + "/slurm.conf"]

        // Seven small lossless clips, and a long pattern job as the 8th (index 7, the second job of shard 3).
        var clips: [(path: String, size: Size, frames: Int)] = []
        for n in 0..<7 {
            let size = Size(width: 32 + 16 * n, height: 32), frames = 10 + 3 * n
            let path = dir.path("clip\(n).mkv")
            try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size.width)x\(size.height):rate=25", "-frames:v", "\(frames)",
                              "-c:v", "ffv1", "-pix_fmt", "bgra", path])
            clips.append((path, size, frames))
        }
        let longFrames = 12_000
        var lines = (0..<7).map { #"{"input": "clip\#($0).mkv", "output": "out/o\#($0).mkv", "codec": "ffv1"}"# }
        lines.append(#"{"input": "pattern", "output": "out/long.mp4", "frames": \#(longFrames), "size": "64x48", "codec": "h264", "id": "long"}"#)
        let manifest = dir.path("jobs.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let submit = ["batch", manifest, "--sbatch", "--submit", "--shards", "4", "--gres", "none", "--filter", "invert"]

        // The script it submits: four tasks, no GPU request on this GPU-less cluster.
        let printed = try Tools.run(Tools.prism, ["batch", manifest, "--sbatch", "--shards", "4", "--gres", "none"])
        XCTAssertTrue(String(decoding: printed.stdout, as: UTF8.self).contains("#SBATCH --array=0-3\n"))

        // Round 1: submit; once shard 3 has recorded its first job, cancel that task (Slurm's SIGTERM, then SIGKILL).
        let first = try Tools.run(Tools.prism, submit, environment: slurm)
        XCTAssertEqual(first.status, 0, first.stderr)
        let job = String(decoding: first.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(job.isEmpty, "sbatch gave no job id: \(first.stderr)")
        let shard3 = dir.path("jobs.results.shard-3-of-4.jsonl")
        let deadline = Date().addingTimeInterval(180)
        while results(shard3).isEmpty && Date() < deadline { usleep(50_000) }
        XCTAssertEqual(results(shard3).count, 1, "shard 3 should have finished its first job")
        let cancel = try Tools.run(Tools.which("scancel")!, ["\(job)_3"], environment: slurm)
        XCTAssertEqual(cancel.status, 0, cancel.stderr)
        try waitForQueue(slurm)

        let files = (0..<4).map { dir.path("jobs.results.shard-\($0)-of-4.jsonl") }
        let afterKill = files.map { results($0).compactMap { $0["job"] as? String } }
        XCTAssertEqual(afterKill.map(\.count), [2, 2, 2, 1], "\(afterKill)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out/long.mp4")), "the cancelled job left an output")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path("out")).filter { $0.hasPrefix(".") }, [],
                       "no temporaries after a cancel")
        let stamps = (0..<7).map { (try? FileManager.default.attributesOfItem(atPath: dir.path("out/o\($0).mkv")))?[.modificationDate] as? Date }
        XCTAssertTrue(stamps.allSatisfy { $0 != nil }, "the other jobs' outputs")

        // Round 2: the same array again; only the cancelled job runs.
        let second = try Tools.run(Tools.prism, submit, environment: slurm)
        XCTAssertEqual(second.status, 0, second.stderr)
        try waitForQueue(slurm)
        let all = files.flatMap { results($0) }
        XCTAssertEqual(all.count, 8, "every job recorded once: nothing redone")
        XCTAssertEqual(Set(all.compactMap { $0["job"] as? String }).count, 8)
        XCTAssertTrue(all.allSatisfy { $0["status"] as? String == "ok" }, "\(all)")
        XCTAssertEqual(results(shard3).last?["job"] as? String, "long")
        XCTAssertEqual((0..<7).map { (try? FileManager.default.attributesOfItem(atPath: dir.path("out/o\($0).mkv")))?[.modificationDate] as? Date },
                       stamps, "finished outputs untouched")
        let secondJob = String(decoding: second.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let log0 = (try? String(contentsOfFile: dir.path("logs/prism-batch-\(secondJob)_0.out"), encoding: .utf8)) ?? ""
        XCTAssertTrue(log0.contains("2 already done"), "task 0's log: \(log0)")

        // Every output decoded again: the clips inverted exactly, the long job complete.
        for (n, clip) in clips.enumerated() {
            let output = dir.path("out/o\(n).mkv")
            let report = try MediaInspector.inspect(output)
            XCTAssertEqual(report.videoFrameCount, clip.frames, output)
            XCTAssertEqual(report.size, clip.size, output)
            let index = clip.frames - 1
            let input = try MediaInspector.frameRGBA(clip.path, index: index).pixels
            let result = try MediaInspector.frameRGBA(output, index: index).pixels
            XCTAssertTrue(stride(from: 0, to: input.count, by: 4).allSatisfy { i in (0..<3).allSatisfy { result[i + $0] == 255 - input[i + $0] } },
                          "\(output) is not its input inverted")
        }
        XCTAssertEqual(try MediaInspector.inspect(dir.path("out/long.mp4")).videoFrameCount, longFrames)

        // The merged report over the four shards' files.
        let report = try Tools.run(Tools.prism, ["batch", "--report"] + files + ["--json"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: report.stdout) as? [String: Any])
        XCTAssertEqual(summary["jobs"] as? Int, 8)
        XCTAssertEqual(summary["failed"] as? Int, 0)
        XCTAssertEqual(summary["files"] as? Int, 4)
        XCTAssertEqual(summary["frames"] as? Int, clips.reduce(0) { $0 + $1.frames } + longFrames)
    }
}
