import Synchronization

/// Lets a progress report through at most every quarter second.
final class ProgressThrottle: Sendable {
    private let start: UInt64
    private let last: Mutex<UInt64>
    init(start: UInt64) {
        self.start = start
        last = Mutex(start)
    }
    /// Seconds since the start when a report is due, else nil.
    func due() -> Double? {
        let now = StageTimes.now()
        let isDue = last.withLock { last in
            guard now - last > 250_000_000 else { return false }
            last = now
            return true
        }
        return isDue ? Double(now - start) / 1e9 : nil
    }
}
