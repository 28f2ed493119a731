import Foundation
import XCTest
import PrismCore
import PrismMedia
import TestFixtures

/// The C library as a C program uses it: installed by `scripts/install-lib`, found with pkg-config, loaded
/// without the Swift toolchain, and giving `prism run`'s frames (a movie read, frames pushed from a second
/// thread), `prism render`'s stills, and a status with one line for each misuse.
final class CLibraryTests: XCTestCase {
    func testTheInstalledLibraryNeedsNothingOfTheToolchain() throws {
        let prefix = try InstalledLibrary.prefix.get()
        for path in ["lib/libprism.so", "include/prism.h", "lib/pkgconfig/prism.pc", "lib/gstreamer-1.0/libgstprism.so"] {
            XCTAssert(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) is installed")
        }
        let toolchain = URL(fileURLWithPath: try XCTUnwrap(Tools.which("swiftc"))).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().path
        for library in ["lib/libprism.so", "lib/gstreamer-1.0/libgstprism.so"] {
            let ldd = try InstalledLibrary.run("/usr/bin/ldd", [prefix + "/" + library])
            let text = String(decoding: ldd.stdout, as: UTF8.self)
            XCTAssertFalse(text.contains("not found"), text)
            XCTAssertFalse(text.contains(toolchain), "\(library) loads the toolchain's runtime: \(text)")
            XCTAssert(text.contains(prefix + "/lib/prism/libswiftCore.so") || text.contains("/../prism/libswiftCore.so"), text)
        }
        let modversion = try InstalledLibrary.run("/usr/bin/pkg-config", ["--modversion", "prism"])
        XCTAssertEqual(modversion.status, 0, modversion.stderr)
        XCTAssert(String(decoding: modversion.stdout, as: UTF8.self).hasPrefix("0."), "prism.pc gives the version")
    }

    /// A C program reads a movie of OpenCV's footage through face-pixellate and through an ISF shader (with a
    /// parameter set by name): every frame is `prism run`'s.
    func testFramesOfAMovieEqualPrismRun() throws {
        let program = try InstalledLibrary.cProgram.get()
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 12, in: directory)
        let shader = try InstalledLibrary.isfShader(in: directory)
        let frameBytes = 720 * 528 * 4
        for (graph, options, reference) in [("face-pixellate", [String](), "face-pixellate"),
                                            (shader, ["params=ripple.amount=0.03"], "\(shader)(amount=0.03)")] {
            let output = directory.path("c.rgba")
            let result = try InstalledLibrary.run(program, ["read", clip, graph, output] + options)
            XCTAssertEqual(result.status, 0, result.stderr)
            let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
            XCTAssert(lines.contains("output 720x528"), lines.joined(separator: "\n"))
            XCTAssertEqual(lines.filter { $0.hasPrefix("frame ") }.count, 12)
            XCTAssert(lines.contains { $0.contains("\"frames_out\":12") }, "the report counts the frames")
            let expected = try InstalledLibrary.prismRun(clip, reference)
            InstalledLibrary.assertSameFrames(try Data(contentsOf: URL(fileURLWithPath: output)), expected,
                                              frameBytes: frameBytes, "C program, \(graph)")
            XCTAssertNotEqual(expected, try InstalledLibrary.prismRun(clip, ""), "\(graph) changes the frames")
        }
    }

    /// Frames pushed from a producer thread (yuv420p from a file, timestamps as frame numbers) while the main
    /// thread pulls: `prism run` of the same raw frames on standard input.
    func testPushedFramesEqualPrismRunOfTheSameRawFrames() throws {
        let program = try InstalledLibrary.cProgram.get()
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 12, in: directory)
        let raw = directory.path("clip.yuv")
        try Tools.ffmpeg(["-i", clip, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let shader = try InstalledLibrary.isfShader(in: directory)
        let graph = "\(shader)(amount=0.02), face-pixellate"
        let output = directory.path("pushed.rgba")
        let result = try InstalledLibrary.run(program, ["push", "720x528", "25", raw, graph, output, "queue=2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let expected = try InstalledLibrary.prismRun("-", graph, ["--input-format", "720x528:yuv420p:25"],
                                                     stdin: try Data(contentsOf: URL(fileURLWithPath: raw)))
        InstalledLibrary.assertSameFrames(try Data(contentsOf: URL(fileURLWithPath: output)), expected,
                                          frameBytes: 720 * 528 * 4, "pushed frames")
        // Frame N was pushed at N/25 s: the timestamps come back.
        let times = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("frame ") }
            .map { $0.split(separator: " ")[2] }
        XCTAssertEqual(times, (0..<12).map { Substring(String($0 * 40_000_000)) })
    }

    func testWriteAndRenderAreTheToolsOwn() throws {
        let program = try InstalledLibrary.cProgram.get()
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 6, in: directory)
        let movie = directory.path("out.mkv")
        let write = try InstalledLibrary.run(program, ["write", clip, "invert, mono", movie, "codec=ffv1"])
        XCTAssertEqual(write.status, 0, write.stderr)
        let report = try MediaInspector.inspect(movie)
        XCTAssertEqual(report.videoFrameCount, 6)
        XCTAssertEqual(report.size, Size(width: 720, height: 528))
        // A still, as `prism render` makes it: a PNG, and a JPEG (Y'CbCr decoded as the tool decodes it).
        for image in [try TestFixtures.path("chelsea.png"), try TestFixtures.opencv("messi5.jpg")] {
            let ours = directory.path("ours.png"), theirs = directory.path("theirs.png")
            let render = try InstalledLibrary.run(program, ["render", "face-pixellate, mono", image, ours])
            XCTAssertEqual(render.status, 0, render.stderr)
            let tool = try Tools.run(Tools.prism, ["render", "--filter", "face-pixellate, mono", image, "-o", theirs])
            XCTAssertEqual(tool.status, 0, tool.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: ours)), try Data(contentsOf: URL(fileURLWithPath: theirs)),
                           "\(image): prism_render's PNG is prism render's")
        }
    }

    /// The built-in shaders are read from beside the installed library (PREFIX/lib/prism/), not from the build
    /// that made it: a copy of the installation whose radial-gradient.fs draws one flat colour draws that colour.
    func testBuiltInShadersComeFromTheInstallation() throws {
        let program = try InstalledLibrary.cProgram.get()
        let directory = ScratchDirectory()
        let copy = directory.path("prefix")
        try FileManager.default.copyItem(atPath: try InstalledLibrary.prefix.get(), toPath: copy)
        let shader = copy + "/lib/prism/Prism_PrismFilters.resources/Shaders/radial-gradient.fs"
        let text = try String(contentsOfFile: shader, encoding: .utf8)
        let header = try XCTUnwrap(text.range(of: "*/")).upperBound
        try (text[..<header] + "\nvoid main() { gl_FragColor = vec4(0.25, 0.5, 0.75, 1.0); }\n")
            .write(toFile: shader, atomically: true, encoding: .utf8)
        func firstPixel(library: String?) throws -> [UInt8] {
            let output = directory.path("gradient.rgba")
            let result = try InstalledLibrary.run(program, ["read", "pattern", "radial-gradient", output, "frames=1", "size=64x48"],
                                                  extra: library.map { ["LD_LIBRARY_PATH": $0] } ?? [:])
            XCTAssertEqual(result.status, 0, result.stderr)
            return Array(try Data(contentsOf: URL(fileURLWithPath: output)).prefix(4))
        }
        XCTAssertEqual(try firstPixel(library: copy + "/lib"), [64, 128, 191, 255], "the copy's shader")
        let tool = try InstalledLibrary.prismRun("pattern", "radial-gradient", ["--frames", "1", "--size", "64x48"])
        XCTAssertEqual(try firstPixel(library: nil), Array(tool.prefix(4)), "the installation's own: the tool's gradient")
    }

    /// Each misuse: its status, a line in prism_last_error(), nothing crashes, and a session freed while its run
    /// goes on stops it (the program exits cleanly). The program checks each and prints what it got.
    func testMisuseGetsAStatusAndALine() throws {
        let program = try InstalledLibrary.cProgram.get()
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 6, in: directory)
        let result = try InstalledLibrary.run(program, ["errors", clip])
        XCTAssertEqual(result.status, 0, result.stderr + String(decoding: result.stdout, as: UTF8.self))
        let text = String(decoding: result.stdout, as: UTF8.self)
        XCTAssert(text.contains("-> -2: /no/such/file.mp4: no such file"), text)
        XCTAssert(text.contains("unknown filter 'no-such-filter'"), text)
        XCTAssert(text.contains("params: pixellate.scale: scale must be in"), text)
        XCTAssert(text.contains("frame timestamps must increase"), text)
        XCTAssert(text.contains("unknown output file extension '.no-such-container' (use "), text)
        XCTAssert(text.contains(", or format NAME)"), "the setting as PrismKit names it, not --format: \(text)")
        XCTAssert(text.hasSuffix("errors ok\n"), text)
    }
}
