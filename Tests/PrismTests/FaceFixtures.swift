import Foundation
import XCTest
import PrismCore

/// The photographs of Debian's python3-skimage (astronaut.png, coffee.png…), found without reading outside
/// the checkout: `$PRISM_FIXTURES/NAME`, else `.build/fixtures/NAME`, else extracted from the package
/// (`apt-get download python3-skimage`, `dpkg-deb`) into `.build/fixtures/` for the next run.
/// One place, so it can give way to scripts/install-deps' cache when that lands.
enum FaceFixtures {
    static var cache: URL { Tools.repositoryRoot.appendingPathComponent(".build/fixtures") }

    static func path(_ name: String) throws -> String {
        if let dir = ProcessInfo.processInfo.environment["PRISM_FIXTURES"] {
            let candidate = URL(fileURLWithPath: dir).appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        let cached = cache.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: cached) { return cached }
        try extract()
        guard FileManager.default.fileExists(atPath: cached) else {
            throw UsageError("\(name) is not in Debian's python3-skimage (skimage/data)")
        }
        return cached
    }

    /// Every PNG of skimage/data into the cache.
    private static func extract() throws {
        let scratch = ScratchDirectory()
        guard let apt = Tools.which("apt-get"), let dpkg = Tools.which("dpkg-deb") else {
            throw UsageError("fixtures: set PRISM_FIXTURES to a folder with astronaut.png, or install apt-get and dpkg-deb")
        }
        let download = Process()
        download.executableURL = URL(fileURLWithPath: apt)
        download.arguments = ["download", "python3-skimage"]
        download.currentDirectoryURL = scratch.url
        download.standardOutput = FileHandle.nullDevice
        download.standardError = FileHandle.nullDevice
        try download.run()
        download.waitUntilExit()
        guard let deb = scratch.contents().first(where: { $0.hasSuffix(".deb") }) else {
            throw UsageError("fixtures: apt-get download python3-skimage failed (set PRISM_FIXTURES instead)")
        }
        let tree = scratch.path("tree")
        let unpacked = try Tools.run(dpkg, ["-x", scratch.path(deb), tree], timeout: 300)
        guard unpacked.status == 0 else { throw UsageError("fixtures: dpkg-deb -x failed: \(unpacked.stderr)") }
        let data = URL(fileURLWithPath: tree).appendingPathComponent("usr/lib/python3/dist-packages/skimage/data")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: data.path) where file.hasSuffix(".png") {
            let target = cache.appendingPathComponent(file)
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: data.appendingPathComponent(file), to: target)
        }
    }
}
