import Foundation
import PrismCore

/// `prism batch MANIFEST --sbatch`: an `sbatch --array` script whose tasks each run one shard of the
/// manifest with `prism batch` (the shard comes from SLURM_ARRAY_TASK_ID/COUNT), each appending to its own
/// results file. The script is plain text to read, keep or edit; `--submit` hands it to `sbatch`.
struct SlurmScript {
    var prism: String
    var manifest: String
    var results: ResultsLocation
    var tasks: Int
    /// `gpu:1` by default; nil (`--gres none`) for CPU-only clusters (and the test's one-node cluster).
    var gres: String?
    var logDirectory: String
    var partition: String?
    var timeLimit: String?
    var maxParallel: Int?
    var jobName = "prism-batch"
    /// Options passed on to every task's `prism batch` (job defaults, --force, --output-dir…).
    var passOn: [String]

    /// How many GPUs each task asks for (and so how many workers it runs).
    var gpusPerTask: Int? {
        guard let gres else { return nil }
        return gres.split(separator: ":").last.flatMap { Int($0) } ?? 1
    }

    var text: String {
        var lines = ["#!/bin/bash",
                     "# prism batch: \(tasks) shard(s) of \(manifest), one Slurm array task each.",
                     "# Written by `prism batch --sbatch`. Task I runs shard I/\(tasks) and appends to its own results file;",
                     "# merge them with: prism batch --report \(Self.quote(results.split.stem)).shard-*\(Self.quote(results.split.ext))",
                     "# Slurm opens the log files before the script runs: the log directory must exist (--submit makes it).",
                     "#SBATCH --job-name=\(jobName)",
                     "#SBATCH --array=0-\(tasks - 1)" + (maxParallel.map { "%\($0)" } ?? ""),
                     "#SBATCH --ntasks=1"]
        if let gres { lines.append("#SBATCH --gres=\(gres)") }
        if let partition { lines.append("#SBATCH --partition=\(partition)") }
        if let timeLimit { lines.append("#SBATCH --time=\(timeLimit)") }
        lines.append("#SBATCH --output=\(logDirectory)/\(jobName)-%A_%a.out")
        lines.append("#SBATCH --error=\(logDirectory)/\(jobName)-%A_%a.out")
        lines.append("set -eu")
        var command = [prism, "batch", manifest, "--results", results.base, "--progress", "lines"]
        // With GPUs: one worker per GPU Slurm gave the task. A GPU node should constrain devices
        // (cgroup.conf ConstrainDevices=yes), so the task can open only its own GPUs.
        if let gpus = gpusPerTask { command += ["--gpus", "all", "--workers", String(gpus)] }
        command += passOn
        lines.append("exec " + command.map(Self.quote).joined(separator: " "))
        return lines.joined(separator: "\n") + "\n"
    }

    /// Single-quoted for the shell unless plainly safe (the script's words, and the commands `prism bench` prints).
    static func quote(_ word: String) -> String {
        let safe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+")
        if !word.isEmpty, word.unicodeScalars.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Submits the script with `sbatch --parsable` (script on stdin); returns the job id.
    func submit() throws -> String {
        guard let sbatch = Self.which("sbatch") else {
            throw UsageError("--submit: sbatch not found on PATH (run it on a Slurm login node, or print the script with --sbatch)")
        }
        try FileManager.default.createDirectory(atPath: logDirectory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sbatch)
        process.arguments = ["--parsable"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let message = String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else {
            throw UsageError("sbatch failed (status \(process.terminationStatus)): \(message.isEmpty ? "no message" : message)")
        }
        // --parsable prints "jobid" or "jobid;cluster".
        let id = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .split(separator: ";").first.map(String.init) ?? ""
        guard !id.isEmpty, id.allSatisfy(\.isNumber) else { throw UsageError("sbatch printed no job id: '\(message)'") }
        return id
    }

    /// `name`'s executable in the first directory of `searchPath` (colon-separated) that has one.
    static func which(_ name: String, searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") -> String? {
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
