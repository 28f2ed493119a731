import PrismCore

/// Shard `index` of `count` (0-based): the jobs whose manifest position is `index` modulo `count`. Every
/// machine computes the same split from the manifest alone, so shards need no coordinator.
struct Shard: Sendable, Equatable, CustomStringConvertible {
    let index: Int
    let count: Int

    var description: String { "\(index)/\(count)" }

    func contains(_ job: BatchJob) -> Bool { job.index % count == index }

    /// `I/N` as given to `--shard`.
    init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (0..<count).contains(index) else {
            throw UsageError("--shard takes I/N with 0 <= I < N (shard I of N, counted from 0), not '\(text)'")
        }
        self.init(index: index, count: count)
    }

    init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// The shard a scheduler gave this process, from its environment:
    /// - a Slurm job array: `SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` of `SLURM_ARRAY_TASK_COUNT`
    ///   (so `--array=1-4` works as well as `0-3`; a stepped array like `0-6:2` would not, and is refused);
    /// - a Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` of `shardCount` (`--shards N`, or
    ///   `PRISM_SHARDS`; Kubernetes does not tell a pod the completions count).
    /// nil when neither is set.
    static func fromEnvironment(_ environment: [String: String], shardCount: Int?) throws -> Shard? {
        if let id = environment["SLURM_ARRAY_TASK_ID"] {
            guard let task = Int(id), let countText = environment["SLURM_ARRAY_TASK_COUNT"], let count = Int(countText), count >= 1 else {
                throw UsageError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not a count: run prism batch in an "
                                 + "sbatch --array job, or give --shard I/N")
            }
            let minimum = environment["SLURM_ARRAY_TASK_MIN"].flatMap { Int($0) } ?? 0
            let maximum = environment["SLURM_ARRAY_TASK_MAX"].flatMap { Int($0) } ?? (minimum + count - 1)
            guard maximum - minimum + 1 == count, (0..<count).contains(task - minimum) else {
                throw UsageError("the Slurm array \(minimum)-\(maximum) (\(count) tasks) is not one contiguous range: "
                                 + "use --array=0-\(count - 1), or give --shard I/N")
            }
            return Shard(index: task - minimum, count: count)
        }
        if let text = environment["JOB_COMPLETION_INDEX"] {
            guard let index = Int(text), index >= 0 else { throw UsageError("JOB_COMPLETION_INDEX is '\(text)', not an index") }
            let count = shardCount ?? environment["PRISM_SHARDS"].flatMap { Int($0) }
            guard let count, count > index else {
                throw UsageError("JOB_COMPLETION_INDEX is \(text): give the Job's completions count as --shards N "
                                 + "(or PRISM_SHARDS), greater than the index")
            }
            return Shard(index: index, count: count)
        }
        return nil
    }
}
