import Foundation

/// Reconnection after a network input drops mid-run (end of stream, an error, no data for the timeout):
/// the URL is opened again after 0.5 s, 1 s, 2 s… (at most `maxDelay` apart) until it answers, the
/// attempts or the time run out, or the run is stopped.
public struct ReconnectPolicy: Sendable, Equatable {
    /// False: a lost stream ends the run (cleanly: the output is finished).
    public var enabled = true
    /// At most this many attempts per loss; nil: as many as `seconds` allow.
    public var attempts: Int?
    /// Stop trying this many seconds after the loss; nil: as long as `attempts` allow.
    public var seconds: Double? = 30
    /// The wait before the first attempt, doubled after each failed one.
    public var initialDelay = 0.5
    /// The longest wait between two attempts.
    public var maxDelay = 8.0

    /// Tries for 30 s, 0.5 s doubling to 8 s apart.
    public init() {}

    /// One line for an input's or output's summary: "reconnects for 30 s".
    public var summary: String {
        guard enabled else { return "no reconnection" }
        var limits: [String] = []
        if let attempts { limits.append("\(attempts) attempt(s)") }
        if let seconds { limits.append(String(format: "%g s", seconds)) }
        return "reconnects for " + (limits.isEmpty ? "ever" : limits.joined(separator: " or "))
    }
}
