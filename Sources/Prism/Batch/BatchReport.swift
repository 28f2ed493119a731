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
    /// Lines that were not whole results (a torn last line).
    var damagedLines: Int

    init(results: [BatchResult], files: Int, damagedLines: Int) {
        self.files = files
        self.damagedLines = damagedLines
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
        frames = ok.reduce(0) { $0 + $1.frames }
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
        let (results, damaged) = BatchResultsFile.read(paths)
        guard !results.isEmpty else {
            throw UsageError("\(paths.joined(separator: ", ")): no results (JSON Lines written by prism batch)")
        }
        return BatchReport(results: results, files: paths.count, damagedLines: damaged)
    }

    var text: String {
        var lines = [
            "jobs:        \(jobs) (\(succeeded) ok, \(failed) failed; \(attempts) attempt(s) in \(files) file(s))",
            "frames:      \(frames)",
            String(format: "wall time:   %.2f s (first start to last end), %.2f s of job time", wallSeconds, jobSeconds),
            String(format: "aggregate:   %.1f fps", aggregateFPS),
            "hosts:       \(hosts.joined(separator: ", "))",
        ]
        if damagedLines > 0 { lines.append("damaged:     \(damagedLines) line(s) skipped") }
        for failure in failures { lines.append("failed:      \(failure.job): \(failure.error)") }
        return lines.joined(separator: "\n")
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
