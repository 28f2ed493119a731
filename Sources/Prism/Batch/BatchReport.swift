import Foundation
import PrismCore

/// `prism batch --report RESULTS…`: results files of any number of shards and reruns merged into one
/// summary. A job's latest attempt decides its status (a failure later retried successfully is a success);
/// the aggregate rate is all frames over the wall-clock span from the first start to the last end, what the
/// machines together delivered.
struct BatchReport: Encodable, Equatable {
    struct Failure: Encodable, Equatable {
        var job: String
        var error: String
    }

    var files: Int
    var jobs: Int
    var succeeded: Int
    var failed: Int
    var attempts: Int
    var frames: Int
    /// Sum of the successful jobs' own run times.
    var jobSeconds: Double
    /// First start to last end, over every attempt read.
    var wallSeconds: Double
    var aggregateFPS: Double
    var hosts: [String]
    var failures: [Failure]
    /// Lines that were not whole, plausible results (a torn last line, a negative frame count).
    var damagedLines: Int
    /// `FILE:LINE: why` for the first of them.
    var damaged: [String]
    static let damagedListed = 10

    init(results: [BatchResult], files: Int, damagedLines: Int, problems: [String] = []) {
        self.files = files
        self.damagedLines = max(damagedLines, problems.count)
        damaged = Array(problems.prefix(Self.damagedListed))
        attempts = results.count
        var latest: [String: BatchResult] = [:]
        var order: [String] = []
        for result in results {
            if latest[result.job] == nil { order.append(result.job) }
            // The latest attempt wins; a success stands over a failure at the same instant.
            if let previous = latest[result.job], previous.finished > result.finished { continue }
            latest[result.job] = result
        }
        let final = order.compactMap { latest[$0] }
        jobs = final.count
        let ok = final.filter { $0.status == .ok }
        succeeded = ok.count
        failed = jobs - succeeded
        // Each count is at most BatchResult.maximumFrames; saturate rather than trap all the same.
        frames = ok.reduce(0) { sum, result in
            let (total, overflow) = sum.addingReportingOverflow(result.frames)
            return overflow ? .max : total
        }
        jobSeconds = ok.reduce(0) { $0 + $1.seconds }
        let start = results.map(\.started).min() ?? 0
        let end = results.map(\.finished).max() ?? 0
        wallSeconds = max(0, end - start)
        aggregateFPS = wallSeconds > 0 ? Double(frames) / wallSeconds : 0
        hosts = Array(Set(results.map(\.host))).sorted()
        failures = final.filter { $0.status == .failed }.map { Failure(job: $0.job, error: $0.error ?? "unknown error") }
    }

    static func load(_ paths: [String]) throws -> BatchReport {
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            throw UsageError("\(path): no such results file")
        }
        let (results, problems) = BatchResultsFile.readChecked(paths)
        guard !results.isEmpty else {
            let damaged = problems.first.map { "; \(problems.count) damaged line(s), the first \($0)" } ?? ""
            throw UsageError("\(paths.joined(separator: ", ")): no results (JSON Lines written by prism batch)\(damaged)")
        }
        return BatchReport(results: results, files: paths.count, damagedLines: problems.count, problems: problems)
    }

    var text: String {
        var lines = [
            "jobs:        \(jobs) (\(succeeded) ok, \(failed) failed; \(attempts) attempt(s) in \(files) file(s))",
            "frames:      \(frames)",
            String(format: "wall time:   %.2f s (first start to last end), %.2f s of job time", wallSeconds, jobSeconds),
            String(format: "aggregate:   %.1f fps", aggregateFPS),
            "hosts:       \(hosts.joined(separator: ", "))",
        ]
        if damagedLines > 0 {
            lines.append("damaged:     \(damagedLines) line(s) skipped")
            lines += damaged.map { "  \($0)" }
            if damagedLines > damaged.count { lines.append("  … and \(damagedLines - damaged.count) more") }
        }
        for failure in failures { lines.append("failed:      \(failure.job): \(failure.error)") }
        return lines.joined(separator: "\n")
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
