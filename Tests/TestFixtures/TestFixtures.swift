import Foundation

/// The test photographs (astronaut, coffee, chelsea): the one place every test target finds them.
///
/// They are looked for in `$PRISM_FIXTURES` (a directory), then in `.fixtures/` at the checkout's root, where
/// `scripts/install-deps --tests` puts them (from Debian's python3-skimage). Nothing outside the checkout is
/// read unless asked for, so a fresh clone tests the same as CI.
public enum TestFixtures {
    /// The cache `scripts/install-deps --tests` fills.
    public static var cache: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".fixtures")
    }

    /// Where photographs are looked for, in order.
    public static var directories: [URL] {
        let chosen = ProcessInfo.processInfo.environment["PRISM_FIXTURES"].flatMap { $0.isEmpty ? nil : $0 }
        return (chosen.map { [URL(fileURLWithPath: $0)] } ?? []) + [cache]
    }

    /// The path of the photograph `name` (`"astronaut.png"`). Throws, naming the command that installs them,
    /// when it is missing: a test that needs a photograph fails, it never skips.
    public static func path(_ name: String) throws -> String {
        let candidates = directories.map { $0.appendingPathComponent(name).path }
        guard let found = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0) }) else {
            throw Missing(name: name, searched: directories.map(\.path))
        }
        return found
    }

    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public let searched: [String]
        public var description: String {
            "test image \(name) not found in \(searched.joined(separator: " or ")): run `scripts/install-deps --tests` "
                + "(it fills .fixtures/), or set PRISM_FIXTURES to a directory holding astronaut.png, coffee.png, chelsea.png"
        }
    }
}
