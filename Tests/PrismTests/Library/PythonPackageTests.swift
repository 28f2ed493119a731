import Foundation
import XCTest
import PrismCore
import PrismMedia
import TestFixtures

/// The Python package as its users get it: `pip install` of a copy of `python/` (offline, with the tests'
/// .venv's setuptools and wheel) into a folder of its own, then its pytest suite (python/tests: movies and
/// numpy frames against `prism run`, stills against `prism render`, errors) against the installed library.
final class PythonPackageTests: XCTestCase {
    func testThePackageInstallsAndItsTestsPass() throws {
        let python = try TestFixtures.referencePython()
        let prefix = try InstalledLibrary.prefix.get()
        let directory = ScratchDirectory()
        // A copy, so the build's own folders (build/, *.egg-info) never land in the checkout.
        let source = directory.path("python"), site = directory.path("site")
        try FileManager.default.copyItem(atPath: Tools.repositoryRoot.appendingPathComponent("python").path, toPath: source)
        let install = try Tools.run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                                             "--no-build-isolation", "--no-index", "--target", site, source], timeout: 300)
        XCTAssertEqual(install.status, 0, install.stderr)
        XCTAssert(FileManager.default.fileExists(atPath: site + "/prism/__init__.py"), "pip installed the module")
        let tests = try InstalledLibrary.run(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", source + "/tests"],
                                             extra: ["PYTHONPATH": site, "PRISM_PREFIX": prefix, "PRISM_TOOL": Tools.prism,
                                                     "PRISM_FIXTURES": TestFixtures.cache.path], timeout: 900)
        let output = String(decoding: tests.stdout, as: UTF8.self)
        XCTAssertEqual(tests.status, 0, output + tests.stderr)
        XCTAssert(output.contains("passed") && !output.contains("failed") && !output.contains("skipped"), output)
    }

    /// The example in Examples/ runs as written and says what it did.
    func testTheExampleScriptRuns() throws {
        let python = try TestFixtures.referencePython()
        let prefix = try InstalledLibrary.prefix.get()
        let directory = ScratchDirectory()
        let result = try InstalledLibrary.run(python, [Tools.repositoryRoot.appendingPathComponent("Examples/python/faces.py").path,
                                                       try TestFixtures.opencv("Megamind.avi"), directory.path("faces.mp4"), "24"],
                                              extra: ["PYTHONPATH": Tools.repositoryRoot.appendingPathComponent("python").path,
                                                      "PRISM_PREFIX": prefix], timeout: 600)
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        XCTAssert(text.contains("24 frames"), text)
        XCTAssertEqual(try MediaInspector.inspect(directory.path("faces.mp4")).videoFrameCount, 24)
    }
}
