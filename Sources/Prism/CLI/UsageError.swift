import PrismCore

/// A mistake in the command line itself: an unknown flag, a flag's value, a missing argument. `prism`
/// exits with status 2 for it, as it does for an `InvalidRequest` from the library.
struct UsageError: PrismError {
    /// What is wrong, in a form the command line prints as it is.
    let message: String
    /// An error carrying `message` as its whole description.
    init(_ message: String) { self.message = message }
    var description: String { message }
}
