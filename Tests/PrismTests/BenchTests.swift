import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import PrismCore
import PrismFilters
import XCTest
@testable import Prism

/// `prism bench` in its short mode, in-process: the JSON carries every stage with positive, finite
/// figures, the chart is SVG, the FFmpeg comparison works with ffmpeg and says so clearly without it.
/// No test asserts a wall-clock time.
final class BenchTests: XCTestCase {
    private func quickOptions() -> BenchOptions {
        var options = BenchOptions()
        options.makeQuick()
        options.sizes = [Size(width: 160, height: 96)]
        options.soakFrames = 40
        return options
    }

    private func json(_ result: BenchResult) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: try result.jsonData())
        return try XCTUnwrap(object as? [String: Any])
    }

    private func assertPositiveFigure(_ value: Any?, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let figure = value as? [String: Any] else { return XCTFail("\(what): no figure", file: file, line: line) }
        for key in ["medianMs", "p10Ms", "p90Ms", "fps"] {
            guard let number = figure[key] as? Double else { XCTFail("\(what).\(key) missing", file: file, line: line); continue }
            XCTAssertTrue(number.isFinite && number > 0, "\(what).\(key) = \(number)", file: file, line: line)
        }
        XCTAssertGreaterThan(figure["samples"] as? Int ?? 0, 0, "\(what).samples", file: file, line: line)
    }

    /// A graph that draws faces: the bench says what the detector costs per detection, on what input, and
    /// how old the regions the frames got were.
    func testFaceGraphsReportTheDetector() throws {
        var options = quickOptions()
        options.sizes = [Size(width: 320, height: 240)]
        options.filter = "face-pixellate(scale=8)"
        let result = try BenchRunner(options: options).run()
        XCTAssertTrue(result.verified, result.failures.joined(separator: "; "))
        // Its frames are checked against the graph computed on the CPU (face-mask from its documented maths,
        // on the bench's stand-in face), not only for being deterministic.
        let checks = result.sizes.flatMap(\.verifications).filter { $0.against == "CPU reference of the graph" }
        XCTAssertFalse(checks.isEmpty, "\(result.sizes.flatMap(\.verifications).map(\.against))")
        XCTAssertTrue(checks.allSatisfy(\.passed))
        let sizes = try XCTUnwrap(try json(result)["sizes"] as? [[String: Any]])
        let rows = try XCTUnwrap(sizes.first?["rows"] as? [[String: Any]])
        let detector = try XCTUnwrap(rows.first { ($0["id"] as? String) == "faces.detector" }, "\(rows.map { $0["id"] ?? "" })")
        let note = detector["note"] as? String ?? ""
        // The default smallest face (40 px) is 24 px in the detection image: 192x144 for a 320x240 frame.
        XCTAssert(note.contains("ms per detection on 192x144"), note)
        XCTAssert(note.contains("frames old on average"), note)
    }

    func testQuickBenchReportsEveryStageVerifiedWithAValidChart() throws {
        var options = quickOptions()
        options.compareFFmpeg = true
        let runner = try BenchRunner(options: options)
        let result = try runner.run()
        XCTAssertTrue(result.verified, result.failures.joined(separator: "; "))

        let root = try json(result)
        let header = try XCTUnwrap(root["header"] as? [String: Any])
        for key in ["cpuModel", "glRenderer", "glVersion", "driverVersion", "eglPlatform", "timerMethod", "llvmpipeThreads"] {
            XCTAssertFalse((header[key] as? String ?? "").isEmpty, "header.\(key)")
        }
        XCTAssertGreaterThan(header["cpuCores"] as? Int ?? 0, 0)
        let sizes = try XCTUnwrap(root["sizes"] as? [[String: Any]])
        XCTAssertEqual(sizes.count, 1)
        let rows = try XCTUnwrap(sizes[0]["rows"] as? [[String: Any]])
        let stages = Set(rows.compactMap { $0["stage"] as? String })
        XCTAssertEqual(stages, ["decode", "upload", "convert", "filter", "readback", "encode", "end-to-end"])
        let ids = Set(rows.compactMap { $0["id"] as? String })
        for id in ["decode", "upload.yuv420p", "upload.nv12", "upload.rgba", "convert.yuv420p-rgba", "convert.rgba-yuv420p",
                   "pass.1", "graph.total", "readback.sync", "readback.pbo", "gpu.frame", "encode.h264.ultrafast",
                   "e2e.h264.ultrafast", "e2e.discard"] {
            XCTAssertTrue(ids.contains(id), "row \(id) missing")
        }
        for row in rows {
            let id = row["id"] as? String ?? "?"
            assertPositiveFigure(row["prism"], "\(id).prism")
            if let ffmpeg = row["ffmpeg"] {
                assertPositiveFigure(ffmpeg, "\(id).ffmpeg")
                let speedup = try XCTUnwrap(row["speedup"] as? Double, "\(id).speedup")
                XCTAssertTrue(speedup.isFinite && speedup > 0)
            }
        }
        // The passes are the graph's, and the checks compared frames with the CPU reference.
        XCTAssertEqual((sizes[0]["passes"] as? [String])?.count, rows.filter { ($0["id"] as? String)?.hasPrefix("pass.") == true }.count)
        let checks = try XCTUnwrap(sizes[0]["verifications"] as? [[String: Any]])
        XCTAssertTrue(checks.contains { ($0["against"] as? String) == "CPU reference of the graph" && ($0["passed"] as? Bool) == true })
        XCTAssertTrue(checks.contains { ($0["what"] as? String)?.hasPrefix("end to end") == true && ($0["passed"] as? Bool) == true })
        let memory = try XCTUnwrap(root["memory"] as? [String: Any])
        XCTAssertGreaterThan(memory["peakRSSBytes"] as? Int ?? 0, 0)

        // FFmpeg: compared when it is installed (CI installs it), reported clearly when not.
        let ffmpeg = try XCTUnwrap(root["ffmpeg"] as? [String: Any])
        if BenchFFmpeg.locate(explicit: nil, searchPath: nil) != nil {
            XCTAssertEqual(ffmpeg["available"] as? Bool, true)
            XCTAssertEqual(ffmpeg["filterChain"] as? String, "negate,hue=s=0,pixelize=w=16:h=16")
            for id in ["decode", "gpu.frame", "encode.h264.ultrafast", "e2e.h264.ultrafast", "e2e.discard"] {
                let row = try XCTUnwrap(rows.first { ($0["id"] as? String) == id })
                XCTAssertNotNil(row["ffmpeg"], "\(id) has no FFmpeg figure: \(row["comparison"] ?? "")")
            }
        } else {
            XCTAssertEqual(ffmpeg["available"] as? Bool, false)
        }

        // The chart: well-formed XML with an <svg> root, one panel per size, both series in the legend.
        let svg = BenchChart.svg(result)
        let parser = XMLParser(data: Data(svg.utf8))
        let delegate = RootRecorder()
        parser.delegate = delegate
        XCTAssertTrue(parser.parse(), "chart is not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        XCTAssertEqual(delegate.root, "svg")
        XCTAssertGreaterThan(delegate.count["rect"] ?? 0, rows.count)
        XCTAssertTrue(svg.contains("160x96"))
        XCTAssertTrue(svg.contains("Prism"))

        // The table names every row and says it is verified.
        let table = BenchTable.render(result)
        XCTAssertTrue(table.contains("VERIFIED"))
        XCTAssertTrue(table.contains("upload yuv420p"))
        XCTAssertTrue(table.contains("llvmpipe") || !result.header.softwareRenderer)
    }

    func testMissingFFmpegIsReportedNotFatal() throws {
        var options = quickOptions()
        options.sizes = [Size(width: 64, height: 48)]
        options.compareFFmpeg = true
        options.searchPath = "/nonexistent-prism-bench-path"
        let result = try BenchRunner(options: options).run()
        XCTAssertFalse(result.ffmpeg.available)
        XCTAssertTrue(result.ffmpeg.message.contains("ffmpeg not found on PATH"), result.ffmpeg.message)
        for row in result.sizes.flatMap(\.rows) {
            XCTAssertNil(row.ffmpeg)
            XCTAssertTrue(row.comparison.contains("ffmpeg not found"), row.comparison)
        }
        XCTAssertTrue(BenchTable.render(result).contains("ffmpeg not found"))
        let root = try json(result)
        XCTAssertEqual((root["ffmpeg"] as? [String: Any])?["available"] as? Bool, false)

        // An explicit executable that is not there reads the same way.
        XCTAssertNil(BenchFFmpeg.locate(explicit: "/nonexistent/ffmpeg", searchPath: nil))
    }

    func testCommandLine() throws {
        let command = try BenchCommand(arguments: ["--quick", "--sizes", "720p,640x360", "--compare", "ffmpeg", "--json",
                                                   "--chart", "out.svg", "--filter", "invert"])
        XCTAssertEqual(command.options.sizes, [Size(width: 1280, height: 720), Size(width: 640, height: 360)])
        XCTAssertTrue(command.options.quick && command.options.json && command.options.compareFFmpeg)
        XCTAssertEqual(command.options.chartPath, "out.svg")
        XCTAssertEqual(command.options.filter, "invert")
        XCTAssertEqual(try BenchCommand(arguments: []).options.sizes.map(\.height), [480, 720, 1080, 2160])
        XCTAssertEqual(try BenchCommand(arguments: []).options.filter, "invert, mono, pixellate(scale=16)")
        for bad in [["--compare", "gstreamer"], ["--sizes", "7x7"], ["--sizes", "huge"], ["--chart", "out.png"], ["extra"]] {
            XCTAssertThrowsError(try BenchCommand(arguments: bad), "\(bad)") { XCTAssertTrue($0 is UsageError, "\($0)") }
        }
        // Through the tool: a bad flag is a usage error (exit 2), before any GPU work.
        XCTAssertEqual(PrismCommandLine.main(["bench", "--compare", "vlc"]), 2)
    }

    /// `prism bench CLIP` times the user's own input with the user's encoder settings, end to end, and checks
    /// that every run's output holds every frame of the clip (on the code before, a clip was refused).
    func testTheUsersClipIsTimedWithTheUsersEncoderSettings() throws {
        let dir = ScratchDirectory()
        let clip = dir.path("mine.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "17", "-c:v", "ffv1", clip])
        let command = try BenchCommand(arguments: [clip, "--quick", "--sizes", "160x96", "--codec", "ffv1", "--filter", "invert"])
        XCTAssertEqual(command.options.userClip, clip)
        XCTAssertEqual(command.options.userEncoder.codec, .ffv1)
        var options = command.options
        options.soakFrames = 40
        let result = try BenchRunner(options: options).run()
        XCTAssertTrue(result.verified, result.failures.joined(separator: "; "))
        XCTAssertEqual(result.sizes.map(\.name), ["your clip", "160x96"])
        let mine = try XCTUnwrap(result.sizes.first)
        XCTAssertEqual([mine.width, mine.height, mine.clipFrames], [96, 64, 17])
        let row = try XCTUnwrap(mine.rows.first { $0.id == "e2e.clip" })
        XCTAssertTrue(row.label.contains("ffv1") && row.label.hasSuffix(".mkv"), row.label)
        XCTAssertEqual(row.check, "counted")
        XCTAssertTrue(row.prism.isPlausible)
        XCTAssertTrue(mine.verifications.allSatisfy(\.passed))
        XCTAssertTrue(BenchTable.render(result).contains("your clip → ffv1 .mkv"))
        // Encoder options without a clip, a clip that does not exist, two clips: usage errors.
        for bad in [["--crf", "20"], [dir.path("absent.mp4")], [clip, clip]] {
            XCTAssertThrowsError(try BenchCommand(arguments: bad), "\(bad)") { XCTAssertTrue($0 is UsageError, "\($0)") }
        }
    }

    func testFFmpegChainsAndReferences() throws {
        let graph = try GraphBinder().bind("invert, mono, pixellate(scale=16)")
        XCTAssertEqual(try BenchFFmpeg.filterChain(for: graph).get(), "negate,hue=s=0,pixelize=w=16:h=16")
        XCTAssertEqual(try BenchFFmpeg.filterChain(for: try GraphBinder().bind("")).get(), "null")
        guard case .failure(let error) = BenchFFmpeg.filterChain(for: try GraphBinder().bind("noir")) else {
            return XCTFail("noir has no FFmpeg equivalent")
        }
        XCTAssertTrue(error.message.contains("noir"))
        XCTAssertEqual(BenchFFmpeg.rtime(in: "frame=   12 fps=0.0\nbench: utime=0.030s stime=0.010s rtime=0.125s\n"), 0.125)
        XCTAssertEqual(BenchFFmpeg.frameCount(in: "frame=    7 fps=0.0 q=-0.0 Lsize=N/A"), 7)
        XCTAssertEqual(BenchMachine.driverVersion(glVersion: "OpenGL ES 3.2 Mesa 22.3.6"), "Mesa 22.3.6")
        XCTAssertEqual(BenchMachine.driverVersion(glVersion: "OpenGL ES 3.2 NVIDIA 550.54.14"), "NVIDIA 550.54.14")

        // The checks have teeth: a stage that did nothing (output = input) is far from the reference.
        let size = Size(width: 64, height: 48)
        var frame = [UInt8](repeating: 128, count: size.pixelCount * 3 / 2)
        for i in 0..<size.pixelCount { frame[i] = UInt8(16 + (i * 37) % 219) }
        let space = YUVColorSpace(matrix: .bt601, range: .limited)
        let reference = try BenchReference.make(for: graph).get()
        let expected = reference.apply(yuv420p: frame, size: size, colorSpace: space)
        XCTAssertLessThan(BenchComparison(frame, expected, size: size).lumaPSNR, 25)
        XCTAssertEqual(BenchComparison(expected, expected, size: size).lumaPSNR, 99)
        // face-mask: the face's disc is pixellated, the rest is the input; no face, no change.
        let faces = try BenchReference.make(for: try GraphBinder().bind("face-pixellate(scale=8)")).get()
        let face = FrameContext.Region(center: SIMD2(0.5, 0.5), radius: 0.2)
        let masked = faces.apply(yuv420p: frame, size: size, colorSpace: space, keepsYUV: true, regions: [face])
        XCTAssertEqual(faces.apply(yuv420p: frame, size: size, colorSpace: space, keepsYUV: true), frame)
        XCTAssertNotEqual(masked[24 * 64 + 28], frame[24 * 64 + 28], "inside the face")
        XCTAssertEqual(masked[2 * 64 + 2], frame[2 * 64 + 2], "far from the face")
        XCTAssertLessThan(BenchComparison(masked, frame, size: size).lumaPSNR, 40)
        // Statistics: median, nearest-rank percentiles, MAD.
        let figure = try XCTUnwrap(BenchFigure(milliseconds: [5, 1, 3, 2, 4]))
        XCTAssertEqual(figure.medianMs, 3)
        XCTAssertEqual(figure.madMs, 1)
        XCTAssertEqual(figure.p10Ms, 1)
        XCTAssertEqual(figure.p90Ms, 5)
        XCTAssertNil(BenchFigure(milliseconds: [.nan]))
    }
}

private final class RootRecorder: NSObject, XMLParserDelegate {
    var root: String?
    var count: [String: Int] = [:]
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        if root == nil { root = elementName }
        count[elementName, default: 0] += 1
    }
}
