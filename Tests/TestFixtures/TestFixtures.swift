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
        public var command = "scripts/install-deps --tests"
        public var description: String {
            if command != "scripts/install-deps --tests" || !name.hasSuffix(".png") {
                return "\(name) not found in \(searched.joined(separator: " or ")): run `\(command)`"
            }
            return "test image \(name) not found in \(searched.joined(separator: " or ")): run `scripts/install-deps --tests` "
                + "(it fills .fixtures/), or set PRISM_FIXTURES to a directory holding astronaut.png, coffee.png, chelsea.png"
        }
    }

    /// The checkout's root (where `.fixtures/`, `.models/` and `.venv/` live).
    public static var checkout: URL { cache.deletingLastPathComponent() }

    /// An OpenCV sample file (`"Megamind.avi"`, `"messi5.jpg"`) from Debian's opencv-doc, extracted by
    /// `scripts/install-deps --tests` into `.fixtures/opencv/` (list and checksums: Tests/opencv-fixtures.md5).
    public static func opencv(_ name: String) throws -> String {
        try path("opencv/" + name)
    }

    /// A default model (`"centerface.onnx"`) as `scripts/install-models` installs it: `$PRISM_MODELS`, then the
    /// checkout's `.models/`. Throws, naming the command, when it is missing.
    public static func model(_ name: String) throws -> String {
        var folders: [String] = []
        if let chosen = ProcessInfo.processInfo.environment["PRISM_MODELS"], !chosen.isEmpty { folders.append(chosen) }
        folders.append(checkout.appendingPathComponent(".models").path)
        for folder in folders {
            let candidate = (folder as NSString).appendingPathComponent(name)
            if FileManager.default.isReadableFile(atPath: candidate) { return candidate }
        }
        throw Missing(name: name, searched: folders, command: "scripts/install-deps` (or `scripts/install-models")
    }

    /// The reference Python with onnxruntime, onnx and numpy (`.venv/`, made by `scripts/install-deps --tests`).
    public static func referencePython() throws -> String {
        let python = checkout.appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Missing(name: "onnxruntime (.venv/bin/python)", searched: [checkout.path], command: "scripts/install-deps --tests")
        }
        return python
    }
}
