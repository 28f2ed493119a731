import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import PrismCore
import PrismFilters
import PrismMedia
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
        // The installed CenterFace by default: the default smallest face (40 px) becomes its 20 px, so a 320x240
        // frame would be 160x120, and each side is rounded up to its stride of 32: 160x128.
        XCTAssert(note.contains("CenterFace"), note)
        XCTAssert(note.contains("ms per detection on 160x128"), note)
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
            XCTAssertThrowsError(try BenchCommand(arguments: bad), "\(bad)") { XCTAssertTrue($0 is Prism.UsageError || $0 is InvalidRequest, "\($0)") }
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
            XCTAssertThrowsError(try BenchCommand(arguments: bad), "\(bad)") { XCTAssertTrue($0 is Prism.UsageError || $0 is InvalidRequest, "\($0)") }
        }
    }

    func testFFmpegChainsAndReferences() throws {
        let dir = ScratchDirectory()
        let graph = try GraphBinder().bind("invert, mono, pixellate(scale=16)")
        XCTAssertEqual(try BenchFFmpeg.filterChain(for: graph).get(), "negate,hue=s=0,pixelize=w=16:h=16")
        XCTAssertEqual(try BenchFFmpeg.filterChain(for: try GraphBinder().bind("")).get(), "null")
        guard case .failure(let error) = BenchFFmpeg.filterChain(for: try GraphBinder().bind("noir")) else {
            return XCTFail("noir has no FFmpeg equivalent without a folder for its table")
        }
        XCTAssertTrue(error.message.contains("noir"))
        // The suite's equivalents: blur is gblur with σ = radius / 2; a look is its own table through lut3d.
        XCTAssertEqual(try BenchFFmpeg.filterChain(for: try GraphBinder().bind("blur(radius=8)")).get(), "gblur=sigma=4")
        let chain = try BenchFFmpeg.filterChain(for: try GraphBinder().bind("chrome, invert"), cubeDirectory: dir.url.path).get()
        XCTAssertEqual(chain, "lut3d=file='\(dir.url.path)/chrome.cube':interp=tetrahedral,negate")
        let cube = try String(contentsOfFile: dir.url.path + "/chrome.cube", encoding: .utf8)
        XCTAssertEqual(cube.split(separator: "\n").count, 4 + 33 * 33 * 33)
        guard case .failure(let unmapped) = BenchFFmpeg.filterChain(for: try GraphBinder().bind("rotate"), cubeDirectory: dir.url.path) else {
            return XCTFail("rotate has no FFmpeg equivalent")
        }
        XCTAssertTrue(unmapped.message.contains("rotate"))
        XCTAssertEqual(BenchFFmpeg.rtime(in: "frame=   12 fps=0.0\nbench: utime=0.030s stime=0.010s rtime=0.125s\n"), 0.125)
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

    // MARK: --suite

    /// `prism bench --suite`, the real thing (the built prism, which times `prism run` subprocesses) at 320x180:
    /// every row present, each row's pictures checked against FFmpeg's within the row's bound (every frame),
    /// speed the quotient of the two medians, face-blur against invert, all of it in the JSON and the table.
    func testSuiteTimesEveryFilterAgainstFFmpegAndChecksEveryPicture() throws {
        try XCTSkipIf(BenchFFmpeg.locate(explicit: nil, searchPath: nil) == nil, "the suite needs ffmpeg (CI installs it)")
        let run = try Tools.run(Tools.prism, ["bench", "--suite", "--quick", "--sizes", "320x180", "--json"], timeout: 240)
        XCTAssertEqual(run.status, 0, run.stderr)
        let result = try JSONDecoder().decode(BenchResult.self, from: run.stdout)
        XCTAssertTrue(result.verified, result.failures.joined(separator: "; "))
        XCTAssertTrue(result.sizes.isEmpty, "the suite replaces the stage rows")
        let clips = try XCTUnwrap(result.suite)
        XCTAssertEqual(clips.count, 1)
        let clip = try XCTUnwrap(clips.first)
        XCTAssertEqual([clip.width, clip.height, clip.frames, clip.runs], [320, 180, 12, 1])
        XCTAssertEqual(clip.rows.map(\.id), BenchSuite.rowIDs)
        for row in clip.rows {
            let comparison = try XCTUnwrap(row.comparison, row.id)
            XCTAssertEqual(row.check, "verified", "\(row.id): \(row.detail)")
            XCTAssertEqual(row.bound, BenchSuite.bound(row.id))
            XCTAssertGreaterThanOrEqual(comparison.worstLumaPSNR, row.bound.luma, row.id)
            XCTAssertGreaterThanOrEqual(comparison.worstChromaPSNR, row.bound.chroma, row.id)
            XCTAssertEqual([comparison.frames, comparison.prismFrames, comparison.ffmpegFrames], [12, 12, 12], row.id)
            XCTAssertTrue(row.prismCommand.hasPrefix("prism run "), row.prismCommand)
            XCTAssertTrue(row.prismCommand.contains(" -o - --output-format yuv420p"), row.prismCommand)
            XCTAssertTrue(row.ffmpegCommand?.hasSuffix("-f rawvideo -pix_fmt yuv420p -") == true, row.ffmpegCommand ?? "")
            XCTAssertEqual(row.prismSeconds.count, 1)
            XCTAssertEqual(row.prismMedianSeconds, row.prismSeconds[0])
            XCTAssertTrue(row.prismMedianSeconds > 0 && row.prismMedianSeconds.isFinite)
            XCTAssertEqual(row.prismFPS, 12 / row.prismMedianSeconds, accuracy: 1e-9)
            if row.id.hasPrefix("face-blur") {
                // No FFmpeg filter does it: its FFmpeg graph is the check only, and its figure is against invert.
                XCTAssertFalse(row.ffmpegTimed)
                XCTAssertNil(row.speed)
                XCTAssertNil(row.ffmpegSeconds)
                let invert = try XCTUnwrap(clip.rows.first { $0.id == "invert" })
                XCTAssertEqual(try XCTUnwrap(row.versusInvert), row.prismMedianSeconds / invert.prismMedianSeconds, accuracy: 1e-12)
                XCTAssertEqual(row.target, row.id == "face-blur-none" ? 1.2 : 2)
            } else {
                let ffmpeg = try XCTUnwrap(row.ffmpegMedianSeconds, row.id)
                XCTAssertEqual(row.ffmpegSeconds, [ffmpeg])
                XCTAssertEqual(try XCTUnwrap(row.speed), ffmpeg / row.prismMedianSeconds, accuracy: 1e-12)
                XCTAssertEqual(try XCTUnwrap(row.ffmpegFPS), 12 / ffmpeg, accuracy: 1e-9)
            }
        }
        // The one-face row's check looks inside the face too, where the blur is.
        let face = try XCTUnwrap(clip.rows.first { $0.id == "face-blur-one" }?.comparison)
        XCTAssertGreaterThanOrEqual(min(try XCTUnwrap(face.regionLumaPSNR), try XCTUnwrap(face.regionChromaPSNR)), 42)
        // The FFmpeg side is the same picture, not the nearest named filter.
        let filters = Dictionary(uniqueKeysWithValues: clip.rows.map { ($0.id, $0.ffmpegFilter ?? "") })
        XCTAssertEqual(filters["invert"], "lutyuv=y=251-val:u=256-val:v=256-val")
        XCTAssertEqual(filters["blur-10"], "gblur=sigma=10")
        XCTAssertEqual(filters["pixellate"], "pixelize=w=16:h=16")
        for id in ["lut", "transfer", "chrome", "noir", "mono"] {
            // 320x180 is BT.601: mono is its table too (Prism's mono is Rec.709 luma).
            XCTAssertTrue(filters[id]?.contains("lut3d=file=") == true && filters[id]?.contains(":interp=tetrahedral") == true, id)
        }

        // The JSON names what the figures are.
        let root = try XCTUnwrap(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let rows = try XCTUnwrap(((root["suite"] as? [[String: Any]])?.first)?["rows"] as? [[String: Any]])
        for key in ["prismSeconds", "prismMedianSeconds", "prismFPS", "comparison", "bound", "check", "prismCommand", "ffmpegCommand"] {
            XCTAssertTrue(rows.allSatisfy { $0[key] != nil }, key)
        }
        XCTAssertTrue(rows.filter { ($0["ffmpegTimed"] as? Bool) == true }.allSatisfy { $0["speed"] is Double })
        // And the table prints every row and the verdict.
        let table = BenchTable.render(result)
        for label in ["invert", "blur(radius=100)", "lut(file=look.cube)", "face-blur, one face", "invert, mono, pixellate(scale=16)"] {
            XCTAssertTrue(table.contains(label), label)
        }
        XCTAssertTrue(table.contains("result    VERIFIED"), table)
    }

    /// The suite's verdict fails pictures that differ. Real pairs where one side did not do the row's work — Prism
    /// with no filter against FFmpeg's blur, look and one-face merge — fall under the rows' bounds (the face also
    /// inside the face), while the same rows done pass (on testsrc2, not the bench's own pattern); and on decoded frames: one changed frame among equal ones
    /// fails on the worst frame although the PSNR over all frames stays high, a missing frame fails.
    func testSuiteVerdictFailsWhenThePicturesDiffer() throws {
        try XCTSkipIf(BenchFFmpeg.locate(explicit: nil, searchPath: nil) == nil, "the suite needs ffmpeg (CI installs it)")
        let dir = ScratchDirectory()
        let clip = dir.path("clip.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=30", "-frames:v", "6", "-c:v", "libx264", "-crf", "12",
                          "-pix_fmt", "yuv420p", clip])
        let ids = ["blur-2", "chrome", "face-blur-one"]
        let plan = try BenchSuitePlan(clip: clip, rows: ids, directory: dir.url.path)
        let runner = BenchSuiteRunner(prism: Tools.prism, ffmpeg: BenchFFmpeg.locate(explicit: nil, searchPath: nil), runs: 1,
                                      directory: dir.url.path, prismOptions: [], log: { _ in })
        for id in ids {
            let row = try XCTUnwrap(plan.rows[id])
            let done = try runner.check(row, clip: clip, size: plan.size, frames: 6)
            XCTAssertTrue(BenchSuite.verdict(done, bound: BenchSuite.bound(id)).passed, "\(id): \(done.summary)")
            var undone = row
            undone.prismFilter = ""        // Prism does nothing, FFmpeg does the row's work
            undone.prismExtra = []
            let compared = try runner.check(undone, clip: clip, size: plan.size, frames: 6)
            let verdict = BenchSuite.verdict(compared, bound: BenchSuite.bound(id))
            XCTAssertFalse(verdict.passed, "\(id) passed with no filter: \(verdict.detail)")
            XCTAssertTrue(verdict.detail.contains("FAILED"), verdict.detail)
            if id == "face-blur-one" {
                // Inside the face, where the work is (on a smooth picture the whole frame would pass: the region
                // is what catches an unblurred face there).
                XCTAssertLessThan(try XCTUnwrap(compared.regionLumaPSNR), try XCTUnwrap(BenchSuite.bound(id).region), compared.summary)
            }
        }

        // Decoded frames of the clip, compared in memory.
        let size = Size(width: 160, height: 96)
        let frames = try (0..<6).map { try MediaInspector.framePlanes(clip, index: $0).planes.flatMap { $0 } }
        var same = BenchStreamComparer(size: size)
        for frame in frames { same.add(frame, frame) }
        let equal = same.result(prismFrames: 6, ffmpegFrames: 6, expectedFrames: 6)
        XCTAssertEqual([equal.worstLumaPSNR, equal.worstChromaPSNR, equal.lumaPSNR], [99, 99, 99])
        XCTAssertTrue(BenchSuite.verdict(equal, bound: BenchPSNRBound(luma: 45, chroma: 45)).passed)
        // Frame 3 replaced by frame 0 (the pattern moves): that frame is far off, the whole run much less so.
        var one = BenchStreamComparer(size: size)
        for (index, frame) in frames.enumerated() { one.add(frame, index == 3 ? frames[0] : frame) }
        let changed = one.result(prismFrames: 6, ffmpegFrames: 6, expectedFrames: 6)
        XCTAssertEqual(changed.worstFrame, 3)
        XCTAssertLessThan(changed.worstLumaPSNR, 30)
        XCTAssertGreaterThan(changed.lumaPSNR, changed.worstLumaPSNR + 5)
        let verdict = BenchSuite.verdict(changed, bound: BenchPSNRBound(luma: 30, chroma: 20))
        XCTAssertFalse(verdict.passed)
        XCTAssertTrue(verdict.detail.contains("Y "), verdict.detail)
        // A frame short on one side fails however equal the rest is.
        let short = same.result(prismFrames: 6, ffmpegFrames: 5, expectedFrames: 6)
        XCTAssertFalse(BenchSuite.verdict(short, bound: BenchPSNRBound(luma: 45, chroma: 45)).passed)
        // A region: a difference inside it only.
        var region = [Bool](repeating: false, count: frames[0].count)
        for i in 0..<16 { region[i] = true }
        var inside = BenchStreamComparer(size: size, region: region)
        var touched = frames[1]
        for i in 0..<16 { touched[i] ^= 0x40 }
        inside.add(frames[1], touched)
        let local = inside.result(prismFrames: 1, ffmpegFrames: 1, expectedFrames: 1)
        XCTAssertGreaterThan(local.worstLumaPSNR, 40)
        XCTAssertLessThan(try XCTUnwrap(local.regionLumaPSNR), 20)
        XCTAssertFalse(BenchSuite.verdict(local, bound: BenchPSNRBound(luma: 40, chroma: 40, region: 40)).passed)
        XCTAssertTrue(BenchSuite.verdict(local, bound: BenchPSNRBound(luma: 40, chroma: 40)).passed)
    }

    func testSuiteCommandLine() throws {
        let suite = try BenchCommand(arguments: ["--suite"]).options
        XCTAssertTrue(suite.suite && suite.compareFFmpeg, "--suite compares with FFmpeg")
        XCTAssertEqual(suite.sizes.map(\.height), [720, 1080])
        XCTAssertNil(suite.suiteRows)
        XCTAssertEqual(try BenchCommand(arguments: ["--suite", "--quick"]).options.sizes, [Size(width: 320, height: 180)])
        XCTAssertEqual(try BenchCommand(arguments: ["--suite", "--sizes", "480p"]).options.sizes, [Size(width: 640, height: 480)])
        XCTAssertEqual(try BenchCommand(arguments: ["--suite", "--runs", "5"]).options.endToEndRuns, 5)
        // Rows by id or prefix, in the table's order; face-blur brings invert (its figure is against it).
        XCTAssertEqual(try BenchCommand(arguments: ["--suite", "--rows", "noir,blur"]).options.suiteRows, ["blur-2", "blur-10", "blur-50", "noir"])
        XCTAssertEqual(try BenchSuite.select(["face-blur"]), ["invert", "face-blur-none", "face-blur-one"])
        XCTAssertEqual(try BenchSuite.select(["blur-10"]), ["blur-10"])
        // A CLIP alone unless sizes are asked for.
        let dir = ScratchDirectory()
        let clip = dir.path("mine.mkv")
        XCTAssertTrue(FileManager.default.createFile(atPath: clip, contents: Data([0])))
        XCTAssertEqual(try BenchCommand(arguments: [clip, "--suite"]).options.sizes, [])
        XCTAssertEqual(try BenchCommand(arguments: [clip, "--suite", "--sizes", "720p"]).options.sizes.map(\.height), [720])
        // The plain bench is unchanged.
        let plain = try BenchCommand(arguments: []).options
        XCTAssertFalse(plain.suite)
        XCTAssertEqual(plain.sizes.map(\.height), [480, 720, 1080, 2160])
        for bad in [["--rows", "invert"], ["--suite", "--rows", "sharpen"], ["--suite", "--rows", ","], ["--suite", "--filter", "noir"],
                    ["--suite", "--samples", "5"], ["--suite", "--soak-frames", "100"], [clip, "--suite", "--crf", "20"]] {
            XCTAssertThrowsError(try BenchCommand(arguments: bad), "\(bad)") { XCTAssertTrue($0 is Prism.UsageError || $0 is InvalidRequest, "\($0)") }
        }
    }

    /// Without ffmpeg the suite still prints Prism's times, says why nothing is compared, and is not verified.
    func testSuiteWithoutFFmpegSaysSoAndIsNotVerified() throws {
        var options = BenchOptions()
        options.suite = true
        options.compareFFmpeg = true
        options.makeQuick()
        options.sizes = [Size(width: 64, height: 48)]
        options.suiteRows = ["invert"]
        options.searchPath = "/nonexistent-prism-bench-path"
        options.prismPath = Tools.prism
        let result = try BenchRunner(options: options).run()
        XCTAssertFalse(result.ffmpeg.available)
        XCTAssertFalse(result.verified)
        XCTAssertTrue(result.failures.contains { $0.contains("ffmpeg not found") }, "\(result.failures)")
        let row = try XCTUnwrap(result.suite?.first?.rows.first)
        XCTAssertEqual(row.check, "unchecked")
        XCTAssertNil(row.comparison)
        XCTAssertNil(row.speed)
        XCTAssertTrue(row.prismMedianSeconds > 0)
        let table = BenchTable.render(result)
        XCTAssertTrue(table.contains("ffmpeg not found on PATH"), table)
        XCTAssertTrue(table.contains("NOT VERIFIED"), table)
        // The chart draws the suite's rows.
        XCTAssertTrue(BenchChart.svg(result.suiteAsStages()).contains("invert"))
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
