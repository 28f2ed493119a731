import PrismCore

/// A run that could not finish its outputs, on an input whose damage was skipped: the damage is said with it.
public struct DamagedInputError: PrismError {
    /// The error that ended the run.
    public let underlying: any Error
    /// What the inputs' decoders skipped (`DamageSummary.lines`).
    public let damage: [String]
    public var description: String { "\(underlying) — \(damage.joined(separator: "; "))" }
}

/// A live run failed, and what it had recorded was kept.
public struct RecordingKeptError: PrismError {
    /// The error that ended the run.
    public let underlying: any Error
    /// Where the recordings are.
    public let kept: [String]
    public var description: String {
        "\(underlying); what was recorded until then is in \(kept.joined(separator: ", "))"
    }
}
