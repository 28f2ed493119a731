import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Camera input end to end: the built `prism` runs with libFakeV4L2.so preloaded (Sources/FakeV4L2), which
/// emulates V4L2 capture devices at the paths its environment names. Prism makes the same open / ioctl /
/// mmap / poll / munmap / close calls it makes against a real camera; the fake answers them and draws, per
/// frame k, a red bar at x = 4k mod (width - bar) on blue (device 0) or green (device 1), and k in binary
/// as 16 white/black blocks along the top.
final class CameraTests: XCTestCase {
    let dir = ScratchDirectory()
    static let camera = "/dev/video60"
    static let second = "/dev/video61"

    /// The preload library SwiftPM builds next to `prism` (product FakeV4L2).
    static func fakeLibrary() throws -> String {
        let path = URL(fileURLWithPath: Tools.prism).deletingLastPathComponent().appendingPathComponent("libFakeV4L2.so").path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("\(path) is missing: `swift build --build-tests` builds it (product FakeV4L2)")
            throw InvalidRequest("no fake V4L2 library")
        }
        return path
    }

    /// Runs `prism` with the fake camera at `camera` (and more variables, e.g. PRISM_FAKE_V4L2_FORMATS).
    private func prism(_ arguments: [String], _ variables: [String: String] = [:]) throws -> ProcessResult {
        var environment = ["LD_PRELOAD": try Self.fakeLibrary(), "PRISM_FAKE_V4L2": Self.camera]
        environment.merge(variables) { $1 }
        return try Tools.run(Tools.prism, arguments, environment: environment, timeout: 60)
    }

    // MARK: reading the fake's picture back

    private struct RGB { var r, g, b: Int }

    private func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> RGB {
        let i = (y * image.size.width + x) * 4
        return RGB(r: Int(image.pixels[i]), g: Int(image.pixels[i + 1]), b: Int(image.pixels[i + 2]))
    }

    /// The frame number the fake drew into the top row of blocks; `scale` is the output's size over the
    /// camera's (a camera that had no such size is scaled to the size asked for).
    private func counter(_ image: RGBAImage, scale: Int = 1) -> Int {
        (0..<16).reduce(0) { value, bit in
            let p = pixel(image, (8 + 16 * bit + 8) * scale, 16 * scale)
            return p.r + p.g + p.b > 3 * 128 ? value | 1 << bit : value
        }
    }

    /// Checks that frame `image` shows the bar where the fake draws it for its counter, in red, on `background`.
    private func assertPicture(_ image: RGBAImage, background: (RGB) -> Bool, _ label: String, scale: Int = 1,
                               file: StaticString = #filePath, line: UInt = #line) -> Int {
        let k = counter(image, scale: scale)
        let width = image.size.width / scale, middle = image.size.height / 2
        let bar = max(8, (width / 20) & ~3)
        let x = (4 * k) % (width - bar) & ~1
        let inBar = pixel(image, (x + bar / 2) * scale, middle)
        XCTAssert(inBar.r > 190 && inBar.g < 70 && inBar.b < 70, "\(label): frame \(k) bar at x=\(x) is \(inBar), not red", file: file, line: line)
        let away = pixel(image, ((x + bar / 2 + width / 2) % width) * scale, middle)
        XCTAssert(background(away), "\(label): frame \(k) background is \(away)", file: file, line: line)
        return k
    }

    private let blue = { (p: RGB) in p.r < 70 && p.g < 70 && p.b > 190 }
    private let green = { (p: RGB) in p.r < 70 && p.g > 190 && p.b < 70 }

    /// "prism: N frames in …, M dropped …" → (N, M).
    private func counts(_ stderr: String) -> (written: Int, dropped: Int)? {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("prism: ") && $0.contains(" frames in ") }) else { return nil }
        let words = line.split(separator: " ")
        guard let written = Int(words[1]) else { return nil }
        let dropped = words.firstIndex(of: "dropped").flatMap { Int(words[$0 - 1]) } ?? 0
        return (written, dropped)
    }

    // MARK: tests

    func testRunRecordsTheCameraWithItsTimingAndReleasesTheDevice() throws {
        let output = dir.path("camera.mp4")
        let result = try prism(["run", Self.camera, "-o", output, "--size", "640x480", "--fps", "30", "--frames", "60"],
                               ["PRISM_FAKE_V4L2_TRACE": "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stderr.contains("input: camera \(Self.camera) (Prism Fake Camera 0, prism-fake) YUYV 640x480 @ 30 fps"),
                  result.stderr)
        // --frames counts frames written (late frames the live queue dropped are not among them).
        let (written, _) = try XCTUnwrap(counts(result.stderr), result.stderr)
        XCTAssertEqual(written, 60)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, written)
        XCTAssertEqual(report.size, Size(width: 640, height: 480))
        // The camera's own timestamps: increasing, each step a whole number of 1/30 s periods.
        let seconds = report.videoPTS.map(\.seconds)
        for (a, b) in zip(seconds, seconds.dropFirst()) {
            let periods = (b - a) * 30
            XCTAssert(periods > 0.5 && abs(periods - periods.rounded()) < 0.03, "frame step \(b - a) s is not a multiple of 1/30 s")
        }
        // The picture survives the GPU round trip, and each frame's time is the fake's frame number / 30.
        var previous = -1
        var first = 0
        for index in [0, 1, written / 2, written - 1] {
            let k = assertPicture(try MediaInspector.frameRGBA(output, index: index), background: blue, "frame \(index)")
            if index == 0 { first = k }
            XCTAssertGreaterThan(k, previous, "the frame counter goes forward")
            previous = k
            XCTAssertEqual(Double(k - first) / 30, seconds[index], accuracy: 0.002, "frame \(index) is camera frame \(k)")
        }
        // The device was given back in order: streaming stopped, buffers unmapped and freed, then closed.
        let trace = result.stderrLines.filter { $0.hasPrefix("fake-v4l2: ") }
        let streamOff = try XCTUnwrap(trace.firstIndex { $0.contains("VIDIOC_STREAMOFF") }, result.stderr)
        let close = try XCTUnwrap(trace.firstIndex { $0.contains("close fd") }, result.stderr)
        XCTAssertLessThan(streamOff, close)
        XCTAssert(trace[close].contains("streaming=0 buffers=0 mapped=0"), trace[close])
    }

    /// --audio with the camera: the emulated microphone (AudioCaptureTests) and the fake camera are both
    /// stamped on CLOCK_MONOTONIC, so the audio starts with the video and lasts as long.
    func testCameraWithEmulatedMicrophoneIsInSync() throws {
        let output = dir.path("camera-audio.mp4")
        let microphone = try AudioCaptureTests.emulatedMicrophone(in: dir)
        let result = try prism(["run", Self.camera, "-o", output, "--size", "320x240", "--fps", "30", "--frames", "60",
                                "--audio", "prismtest"], microphone)
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.audioCodecName, "aac")
        let video = report.videoPTS.map(\.seconds)
        let first = try XCTUnwrap(video.min()), last = try XCTUnwrap(video.max())
        let videoSeconds = last - first + 1.0 / 30
        let audioSeconds = Double(report.audioSampleCount) / Double(try XCTUnwrap(report.audioSampleRate))
        XCTAssertEqual(audioSeconds, videoSeconds, accuracy: 0.1)
        XCTAssertEqual(try XCTUnwrap(report.firstAudioPTS).seconds, first, accuracy: 1.0 / 30)
        XCTAssertGreaterThan(report.audioPeak, 0.2)
    }

    func testPlanarAndSemiPlanarFormatsWithPaddedRows() throws {
        for (format, align) in [("NV12", "256"), ("YU12", "128")] {
            let output = dir.path("\(format).mp4")
            let result = try prism(["run", "v4l2:\(Self.camera)", "-o", output, "--size", "320x240", "--frames", "6", "--quiet"],
                                   ["PRISM_FAKE_V4L2_FORMATS": "MJPG,\(format)", "PRISM_FAKE_V4L2_STRIDE_ALIGN": align])
            XCTAssertEqual(result.status, 0, "\(format): \(result.stderr)")
            let report = try MediaInspector.inspect(output)
            XCTAssertEqual(report.size, Size(width: 320, height: 240), format)
            _ = assertPicture(try MediaInspector.frameRGBA(output, index: report.videoFrameCount - 1), background: blue, format)
        }
    }

    func testSwitchingCamerasMidRunKeepsTheOutputGoing() throws {
        // The second camera only has 320x240 and draws on green: the run asks for the current size, gets
        // the closest, recompiles the graph for it and keeps writing 640x480.
        let output = dir.path("switch.mp4")
        let result = try prism(["run", Self.camera, "-o", output, "--size", "640x480", "--frames", "40",
                                "--switch-camera-after", "15:\(Self.second)"],
                               ["PRISM_FAKE_V4L2_1": Self.second, "PRISM_FAKE_V4L2_1_SIZES": "320x240",
                                "PRISM_FAKE_V4L2_1_FORMATS": "NV12", "PRISM_FAKE_V4L2_TRACE": "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(result.stderr.contains("switched camera \(Self.camera) → \(Self.second) (Prism Fake Camera 1): NV12 320x240 @ 30 fps "
                                         + "(it has no 640x480; closest size taken)"), result.stderr)
        XCTAssert(result.stderr.contains("input is now nv12 320x240: graph recompiled, output stays 640x480"), result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.size, Size(width: 640, height: 480))
        XCTAssertEqual(report.videoFrameCount, try XCTUnwrap(counts(result.stderr)).written)
        XCTAssertEqual(report.videoPTS, report.videoPTS.sorted())
        XCTAssertEqual(Set(report.videoPTS).count, report.videoPTS.count, "timestamps stay increasing across the switch")
        _ = assertPicture(try MediaInspector.frameRGBA(output, index: 0), background: blue, "first camera")
        _ = assertPicture(try MediaInspector.frameRGBA(output, index: report.videoFrameCount - 1), background: green, "second camera",
                          scale: 2)
        // Both devices were released cleanly.
        let closes = result.stderrLines.filter { $0.contains("fake-v4l2: close fd") }
        XCTAssertEqual(closes.count, 2, result.stderr)
        XCTAssert(closes.allSatisfy { $0.contains("streaming=0 buffers=0 mapped=0") }, closes.joined(separator: "\n"))
    }

    func testSIGUSR2SwitchesToTheNextCameraMidRun() throws {
        let output = dir.path("flip.mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", Self.camera, "-o", output, "--size", "320x240", "--frames", "90"]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["LD_PRELOAD": try Self.fakeLibrary(), "PRISM_FAKE_V4L2": Self.camera, "PRISM_FAKE_V4L2_1": Self.second]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        Thread.sleep(forTimeInterval: 1.5)
        kill(process.processIdentifier, SIGUSR2)
        process.waitUntilExit()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, log)
        XCTAssert(log.contains("switching to \(Self.second)"), log)
        XCTAssert(log.contains("switched camera \(Self.camera) → \(Self.second)"), log)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 90)
        _ = assertPicture(try MediaInspector.frameRGBA(output, index: 0), background: blue, "before the signal")
        _ = assertPicture(try MediaInspector.frameRGBA(output, index: 89), background: green, "after the signal")
    }

    func testDevPreviewsTheCamera() throws {
        // The invert look on the fake camera: its blue background comes out yellow in the preview.
        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("invert.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("invert.cube"), Self.camera, "--size", "320x240"],
                                 environment: ["LD_PRELOAD": try Self.fakeLibrary(), "PRISM_FAKE_V4L2": Self.camera])
        defer { dev.stop() }
        XCTAssert(dev.stderr.contains("input: camera \(Self.camera) (Prism Fake Camera 0, prism-fake) YUYV 320x240 @ 30 fps"),
                  dev.stderr)
        try dev.waitForState("camera frames flowing") { ($0["frames"] as? Int ?? 0) > 5 }
        let image = try dev.snapshot()
        XCTAssertEqual(image.size, Size(width: 320, height: 240))
        let corner = image.pixel(x: image.size.width - 4, y: image.size.height - 4)
        XCTAssert(corner.r > 190 && corner.g > 190 && corner.b < 70, "inverted blue is yellow, got \(corner)")
    }

    /// `prism dev` on camera 0 (blue, 320x240), recording; `POST /camera` switches to camera 1 (green, NV12,
    /// only 160x120) between frames: frames keep flowing, the graph is recompiled for the new size, the
    /// preview turns green at 160x120, and the recording (which cannot change size) ends with a note and a
    /// playable 320x240 file. Devices that are not listed cameras are refused.
    func testDevSwitchesCamerasWithoutRestarting() throws {
        let directory = try TemporaryDirectory()
        // The identity LUT: the camera's picture unchanged.
        try "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"
            .write(toFile: directory.file("identity.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("identity.cube"), Self.camera, "--size", "320x240", "--out", directory.path],
                                 environment: ["LD_PRELOAD": try Self.fakeLibrary(), "PRISM_FAKE_V4L2": Self.camera,
                                               "PRISM_FAKE_V4L2_1": Self.second, "PRISM_FAKE_V4L2_1_SIZES": "160x120",
                                               "PRISM_FAKE_V4L2_1_FORMATS": "NV12"])
        defer { dev.stop() }
        func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
        func camera(_ state: [String: Any]) -> [String: Any] { state["camera"] as? [String: Any] ?? [:] }
        /// The share of the bottom row (below the counter blocks) on `background`.
        func share(_ image: RGBAImage, _ background: (RGB) -> Bool) -> Double {
            let y = image.size.height - 3
            let hits = (0..<image.size.width).filter { background(pixel(image, $0, y)) }.count
            return Double(hits) / Double(image.size.width)
        }

        let started = try dev.waitForState("camera frames flowing") { frames($0) > 5 }
        XCTAssertEqual(camera(started)["device"] as? String, Self.camera)
        let listed = (camera(started)["cameras"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        XCTAssertEqual(listed, [Self.camera, Self.second], "\(started)")
        let before = try dev.snapshot()
        XCTAssertEqual(before.size, Size(width: 320, height: 240))
        XCTAssertGreaterThan(share(before, blue), 0.8, "camera 0 is blue")

        // Only listed cameras: nothing else is opened because of a request.
        XCTAssertEqual(try dev.post("/camera", ["device": "/dev/video59"]).status, 400)
        XCTAssertEqual(try dev.post("/camera", ["device": "/etc/passwd"]).status, 400)
        XCTAssertEqual(try dev.post("/camera", ["path": Self.second]).status, 400)
        XCTAssertEqual(try dev.request("POST", "/camera", body: Array("{not json".utf8)).status, 400)
        XCTAssertEqual(try dev.post("/camera", ["device": Self.camera]).status, 200, "the current camera: nothing to do")
        XCTAssertEqual(camera(try dev.json("/state"))["device"] as? String, Self.camera)

        XCTAssertEqual(try dev.post("/record", ["action": "start"]).status, 202)
        try dev.waitForState("recording") { ($0["recording"] as? [String: Any])?["frames"] as? Int ?? 0 > 5 }

        XCTAssertEqual(try dev.post("/camera", ["device": Self.second]).status, 202)
        let switched = try dev.waitForState("the switch") {
            camera($0)["device"] as? String == Self.second && ($0["size"] as? [Int]) == [160, 120]
        }
        XCTAssert(camera(switched)["error"] is NSNull, "\(switched)")
        XCTAssert((switched["input"] as? String ?? "").contains("Prism Fake Camera 1"), "\(switched)")
        let count = frames(switched)
        try dev.waitForState("frames after the switch") { frames($0) > count + 10 }
        let after = try dev.snapshot()
        XCTAssertEqual(after.size, Size(width: 160, height: 120))
        XCTAssertGreaterThan(share(after, green), 0.8, "camera 1 is green")
        XCTAssert(dev.stderr.contains("switched camera \(Self.camera) → \(Self.second) (Prism Fake Camera 1): NV12 160x120"), dev.stderr)
        XCTAssert(dev.stderr.contains("input is now nv12 160x120: graph recompiled, output 320x240 → 160x120"), dev.stderr)

        // The recording ended at the switch, finished and playable at its own size.
        let ended = try dev.waitForState("the recording ended") {
            ($0["recording"] as? [String: Any])?["active"] as? Bool == false
        }
        let recording = try XCTUnwrap(ended["recording"] as? [String: Any])
        XCTAssert((recording["note"] as? String ?? "").hasPrefix("recording stopped: the camera now delivers 160x120"), "\(recording)")
        let file = try XCTUnwrap(recording["last"] as? String, "\(recording)")
        let report = try MediaInspector.inspect(file)
        XCTAssertEqual(report.size, Size(width: 320, height: 240))
        XCTAssertGreaterThan(report.videoFrameCount, 5)

        // The page offers the dropdown.
        XCTAssert(try dev.get("/").text.contains("id=\"camera\""))
    }

    func testDevicesListsTheCamera() throws {
        let result = try prism(["devices"], ["PRISM_FAKE_V4L2_FORMATS": "YUYV,MJPG", "PRISM_FAKE_V4L2_SIZES": "640x480,1280x720"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        XCTAssert(text.contains("\(Self.camera): Prism Fake Camera 0 (driver prism-fake, platform:prism-fake-0)"), text)
        XCTAssert(text.contains("    YUYV (YUYV 4:2:2): 640x480, 1280x720; 30/15 fps\n"), text)
        XCTAssert(text.contains("    MJPG (Motion-JPEG): 640x480, 1280x720; 30/15 fps\n"), text)
    }

    func testBadDevicesFailWithOneLineNamingTheDeviceAndTheCall() throws {
        let cases: [(arguments: [String], variables: [String: String], message: String)] = [
            (["/dev/video59"], [:], "prism: camera /dev/video59: open: No such file or directory"),
            ([Self.camera], ["PRISM_FAKE_V4L2_CAPS": "output"],
             "prism: camera \(Self.camera): VIDIOC_QUERYCAP: not a video capture device (it offers: video output, streaming I/O)"),
            ([Self.camera], ["PRISM_FAKE_V4L2_CAPS": "readwrite"],
             "prism: camera \(Self.camera): VIDIOC_QUERYCAP: no streaming I/O, which Prism needs (it offers: video capture, read/write I/O)"),
            ([Self.camera], ["PRISM_FAKE_V4L2_FORMATS": "H264"],
             "prism: camera \(Self.camera): VIDIOC_ENUM_FMT: offers no format Prism takes (it offers H264; Prism takes YUYV, NV12, YU12, MJPG)"),
            (["v4l2:/dev/null"], [:], "prism: camera /dev/null: VIDIOC_QUERYCAP: Inappropriate ioctl for device (not a V4L2 device)"),
        ]
        for item in cases {
            let output = dir.path("bad.mp4")
            let result = try prism(["run"] + item.arguments + ["-o", output, "--frames", "5"], item.variables)
            XCTAssertEqual(result.status, 1, item.message)
            XCTAssertEqual(result.stderrLines, [item.message])
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
    }

    func testACameraThatStopsDeliveringEndsTheRunWithAnError() throws {
        let output = dir.path("stalled.mp4")
        let result = try prism(["run", Self.camera, "-o", output, "--frames", "60", "--quiet"], ["PRISM_FAKE_V4L2_STALL_AFTER": "5"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderrLines.last,
                       "prism: camera \(Self.camera): poll: camera stopped delivering frames (none for 3.0 s); "
                       + "what was recorded until then is in \(output)")
        // A live recording keeps what it recorded: the frames before the stall, finished and playable.
        // (A live source drops a frame that comes while the GPU thread is still busy with the first one's
        // shaders, as on a loaded box: 5 delivered, at least 4 kept, none invented.)
        let report = try MediaInspector.inspect(output)
        XCTAssertTrue((4...5).contains(report.videoFrameCount), "\(report.videoFrameCount) frames")
        _ = assertPicture(try MediaInspector.frameRGBA(output, index: report.videoFrameCount - 1), background: blue,
                          "last frame before the stall")
    }
}
