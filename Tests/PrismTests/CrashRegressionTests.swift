import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Issue 9's crashes and runaway allocations, through the built `prism`: each input that trapped,
/// overflowed the stack or took gigabytes must now be one clear line and a non-zero exit, before
/// any real work starts.
final class CrashRegressionTests: XCTestCase {
    let dir = ScratchDirectory()
    var image: String { get throws { try Tools.fixture("chelsea.png") } }

    /// Runs prism (under a 3 GB address-space limit, so a runaway allocation fails rather than
    /// swapping the machine) and checks: non-zero exit, one line on stderr mentioning `expected`, no
    /// trap, no output file.
    @discardableResult
    private func assertOneLineFailure(_ arguments: [String], mentioning expected: [String], environment: [String: String] = [:],
                                      file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let before = Set(dir.contents())
        let quoted = ([Tools.prism] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // AddressSanitizer reserves terabytes of address space for its shadow: no limit under it.
        let limit = ProcessInfo.processInfo.environment["PRISM_TEST_NO_MEMORY_LIMIT"] == "1" ? "" : "ulimit -v 3000000; "
        let result = try Tools.run("/bin/sh", ["-c", limit + "exec " + quoted.joined(separator: " ")],
                                   environment: environment)
        XCTAssertNotEqual(result.status, 0, "\(arguments.prefix(4)) should fail", file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, "one line, got: \(result.stderr.prefix(2000))", file: file, line: line)
        XCTAssertFalse(result.stderr.contains("Fatal error") || result.stderr.contains("Backtrac"), file: file, line: line)
        for word in expected {
            XCTAssertTrue(result.stderr.lowercased().contains(word.lowercased()),
                          "'\(result.stderr.prefix(500))' should mention \(word)", file: file, line: line)
        }
        let after = Set(dir.contents()).subtracting(before).filter { !$0.hasSuffix(".fs") && !$0.hasSuffix(".ppm") }
        XCTAssertEqual(after, [], "no output left behind", file: file, line: line)
        return result.stderr
    }

    private func shader(_ name: String, width: String = "$WIDTH", extra: String = "", body: String? = nil) throws -> String {
        let text = """
            /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" }, { "NAME": "scale", "TYPE": "float", "DEFAULT": 0.5 } ],
              \(extra)"PASSES": [ { "TARGET": "first", "WIDTH": "\(width)", "HEIGHT": "$HEIGHT" }, {} ] }*/
            \(body ?? "void main() { gl_FragColor = PASSINDEX == 0 ? IMG_THIS_NORM_PIXEL(inputImage) : IMG_NORM_PIXEL(first, isf_FragNormCoord); }")
            """
        let path = dir.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Item 9: integer parameters given huge floats, infinities or NaN.
    func testHugeNumbersForIntegerParameters() throws {
        let out = dir.path("out.mp4")
        for filter in ["crop(x=1e19)", "crop(x=-1e19)", "crop(y=9223372036854775808)", "crop(width=1e300)"] {
            try assertOneLineFailure(["run", "--frames", "1", "--size", "64x64", "--filter", filter, "-o", out], mentioning: ["must be in"])
        }
        try assertOneLineFailure(["run", "--frames", "1", "--size", "64x64", "--filter", "rotate(angle=1e309)", "-o", out],
                                 mentioning: ["1e309", "too large"])
        try assertOneLineFailure(["run", "--frames", "1", "--size", "64x64", "--filter", "crop(x=nan)", "-o", out], mentioning: ["nan"])
    }

    /// Items 10 and 12: size expressions beyond Int's range, or nested 20,000 deep.
    func testSizeExpressionsBeyondIntOrTooDeep() throws {
        let out = dir.path("out.png")
        for (index, width) in ["$WIDTH*1e20", "pow(2.0,1000.0)", "$WIDTH*$scale*1e300"].enumerated() {
            let path = try shader("big\(index).fs", width: width)
            try assertOneLineFailure(["render", "--filter", path, image, "-o", out], mentioning: ["limit"])
        }
        let deep = try shader("deep.fs", width: String(repeating: "(", count: 20_000) + "1" + String(repeating: ")", count: 20_000))
        try assertOneLineFailure(["render", "--filter", deep, image, "-o", out], mentioning: ["deep.fs", "size expression"])
        let long = try shader("long.fs", width: Array(repeating: "1", count: 20_000).joined(separator: "+"))
        try assertOneLineFailure(["render", "--filter", long, image, "-o", out], mentioning: ["long.fs"])
        try assertOneLineFailure(["render", "--filter", String(repeating: "[", count: 20_000), image, "-o", out],
                                 mentioning: ["filter graph"])
    }

    /// Item 11: an IMPORTED PPM whose header claims a huge size (the Netpbm decoder overflowed).
    func testImportedImageWithHugeHeaderSize() throws {
        let out = dir.path("out.png")
        for (index, size) in ["4000000000 4000000000", "99999999999999999999 1", "3037000500 3037000500"].enumerated() {
            let ppm = dir.path("huge\(index).ppm")
            try Data("P6\n\(size)\n255\n".utf8 + [0, 1, 2]).write(to: URL(fileURLWithPath: ppm))
            let path = try shader("imports\(index).fs", extra: "\"IMPORTED\": { \"picture\": { \"PATH\": \"huge\(index).ppm\" } },\n",
                                  body: "void main() { gl_FragColor = IMG_NORM_PIXEL(picture, isf_FragNormCoord); }")
            try assertOneLineFailure(["render", "--filter", path, image, "-o", out], mentioning: ["huge\(index).ppm"])
        }
    }

    /// Item 14: 400 chained filters, huge arrays, passes past the size limit; each limit can be raised.
    func testResourceLimitsAreErrorsThatNameTheLimit() throws {
        let out = dir.path("out.png")
        let chain = Array(repeating: "invert", count: 400).joined(separator: ", ")
        try assertOneLineFailure(["render", "--filter", chain, image, "-o", out], mentioning: ["400 filters", "PRISM_MAX_FILTERS"])
        try assertOneLineFailure(["render", "--filter", "invert, mono, invert", image, "-o", out], mentioning: ["PRISM_MAX_FILTERS"],
                                 environment: ["PRISM_MAX_FILTERS": "2"])
        let array = try shader("array.fs", body: "float a[100000000];\nvoid main() { a[0] = 1.0; gl_FragColor = vec4(a[0]); }")
        try assertOneLineFailure(["render", "--filter", array, image, "-o", out],
                                 mentioning: ["array.fs:3", "100000000", "PRISM_MAX_ARRAY_ELEMENTS"])
        let grid = try shader("grid.fs", body: "float a[65536][65536];\nvoid main() { gl_FragColor = vec4(1.0); }")
        try assertOneLineFailure(["render", "--filter", grid, image, "-o", out], mentioning: ["PRISM_MAX_ARRAY_ELEMENTS"])
        // A 16384-wide pass: over the default 8192 limit.
        let wide = try shader("wide.fs", width: "16384")
        try assertOneLineFailure(["render", "--filter", wide, image, "-o", out], mentioning: ["16384", "PRISM_MAX_TEXTURE_SIZE"])
        try assertOneLineFailure(["render", "--filter", "invert", image, "-o", out], mentioning: ["PRISM_MAX_GPU_MEMORY"],
                                 environment: ["PRISM_MAX_GPU_MEMORY": "1K"])
        try assertOneLineFailure(["render", "--filter", "invert", image, "-o", out], mentioning: ["PRISM_MAX_GPU_MEMORY"],
                                 environment: ["PRISM_MAX_GPU_MEMORY": "lots"])
        // Raised explicitly, a small array over the default works.
        let medium = try shader("medium.fs", body: "float a[70000];\nvoid main() { a[1] = 0.5; gl_FragColor = vec4(a[1]); }")
        let raised = try Tools.run(Tools.prism, ["render", "--filter", medium, image, "-o", out],
                                   environment: ["PRISM_MAX_ARRAY_ELEMENTS": "70000"])
        XCTAssertFalse(raised.stderr.contains("PRISM_MAX_ARRAY_ELEMENTS"), raised.stderr)
        try? FileManager.default.removeItem(atPath: out)
    }

    /// Item 15: sizes that cannot work fail before work starts.
    func testImpossibleSizesFailBeforeWork() throws {
        let out = dir.path("out.mp4")
        try assertOneLineFailure(["run", "--size", "16384x16384", "--frames", "1", "-o", out], mentioning: ["16384x16384", "limit"])
        try assertOneLineFailure(["run", "--size", "64x64", "--frames", "1", "--filter", "scale(size=16384x16384)", "-o", out],
                                 mentioning: ["scale", "limit"])
    }

    /// Item 16: a shader that never finishes fails with the watchdog's error instead of hanging.
    func testGPUWatchdogEndsAShaderThatNeverFinishes() throws {
        // Four nested loops of a million: hours on any GPU (llvmpipe caps loops, so it would end at last).
        let spin = dir.path("spin.fs")
        try """
            /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" }, { "NAME": "n", "TYPE": "float", "DEFAULT": 1000000.0 } ] }*/
            void main() {
                float acc = 0.0;
                for (int i = 0; i < int(n); i++) { for (int j = 0; j < int(n); j++) { for (int k = 0; k < int(n); k++) {
                    for (int l = 0; l < int(n); l++) { acc += sin(float(i + j + k + l)); } } } }
                gl_FragColor = IMG_THIS_PIXEL(inputImage) + vec4(acc * 1e-30);
            }
            """.write(toFile: spin, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["render", "--filter", spin, try image, "-o", dir.path("out.png")]
        process.environment = ProcessInfo.processInfo.environment.merging(["PRISM_GPU_TIMEOUT": "0.5"]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 90)
        while process.isRunning && Date() < deadline { usleep(100_000) }
        let finished = !process.isRunning
        if !finished { process.terminate() }  // the driver's own teardown may still be busy: not this test's subject
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(finished, "prism ended on its own: \(text)")
        XCTAssertNotEqual(process.terminationStatus, 0)
        XCTAssertTrue(text.contains("did not finish") && text.contains("PRISM_GPU_TIMEOUT"), text)
        XCTAssertEqual(text.split(separator: "\n").count, 1, text)
    }

    /// Item 13: SIGQUIT stops a run like SIGTERM (the movie is finished) instead of a crash report.
    func testSIGQUITStopsARunCleanly() throws {
        let out = dir.path("quit.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", "--size", "160x90", "--frames", "100000", "-o", out]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let start = Date(timeIntervalSinceNow: 30)
        // Wait for the movie's temporary file: frames are flowing.
        while Date() < start && !dir.contents().contains(where: { $0.contains("quit.mp4") }) { usleep(100_000) }
        usleep(500_000)
        kill(process.processIdentifier, SIGQUIT)
        let deadline = Date(timeIntervalSinceNow: 30)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationReason, .exit, text)
        XCTAssertFalse(text.contains("Backtrac") || text.contains("Crash") || text.contains("Fatal"), text)
        XCTAssertTrue(text.contains("stopping"), text)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out), "the movie was finished: \(dir.contents()) \(text)")
    }
}
