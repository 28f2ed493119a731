/// What `prism --version` says about the build itself.
public enum BuildInfo {
    /// The release this source tree is (raised by hand when one is cut).
    public static let version = "0.2.0"
    /// The git commit it was built from (`-dirty`: with uncommitted changes), embedded at build time by
    /// Plugins/GitCommit; "unknown" when built outside a git checkout.
    public static let commit = gitCommit
}
