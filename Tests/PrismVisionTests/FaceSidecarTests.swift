import XCTest
import PrismCore
import PrismVision

final class FaceSidecarTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-sidecar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func frame(_ index: Int, faces: [TrackedFace]) -> FaceFrame {
        FaceFrame(frameIndex: index, pts: MediaTime(value: Int64(index) * 1001, timescale: 30000),
                  frameSize: Size(width: 1280, height: 720), faces: faces, age: 0)
    }

    func testWrittenSidecarsReadBackAndDriveTheRegions() throws {
        let frames = [
            frame(0, faces: [TrackedFace(id: 1, box: FaceBox(x: 100.25, y: 80, width: 120, height: 120), score: 12)]),
            frame(1, faces: []),
            frame(2, faces: [TrackedFace(id: 1, box: FaceBox(x: 104, y: 81, width: 121.5, height: 121.5), score: 11),
                             TrackedFace(id: 2, box: FaceBox(x: 900, y: 300, width: 60, height: 60), score: 4)]),
        ]
        let output = path("faces.jsonl")
        let writer = try FaceSidecarWriter(path: output)
        for f in frames { try writer.write(f) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "appears only when committed")
        try writer.commit()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertEqual(text.split(separator: "\n").first,
                       #"{"frame":0,"pts":"0/30000","size":[1280,720],"faces":[{"id":1,"box":[100.25,80.00,120.00,120.00],"score":12.00}]}"#)
        let provider = try SidecarFaceProvider(path: output)
        XCTAssertEqual(provider.requests(frameIndex: 0, pts: frames[0].pts, frameSize: frames[0].frameSize), [])
        for f in frames {
            // pts are matched as times, whatever their timescale.
            let pts = MediaTime(value: f.pts.value * 2, timescale: 60000)
            XCTAssertEqual(try provider.regions(frameIndex: f.frameIndex, pts: pts, frameSize: f.frameSize).faces, f.faces)
        }
        // Used at another size: boxes scale with the frame.
        let half = try provider.regions(frameIndex: 0, pts: frames[0].pts, frameSize: Size(width: 640, height: 360))
        XCTAssertEqual(half.faces[0].box, FaceBox(x: 50.125, y: 40, width: 60, height: 60))
        // A frame the sidecar does not cover: one clear error naming the file, frame and pts.
        XCTAssertThrowsError(try provider.regions(frameIndex: 3, pts: MediaTime(value: 3003, timescale: 30000),
                                                  frameSize: frames[0].frameSize)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(output): no line for frame 3 at pts 3003/30000"), "\(error)")
        }
    }

    func testMalformedSidecarsNameTheFileAndLine() throws {
        let good = #"{"pts":"0/1","faces":[]}"#
        let cases: [(String, String)] = [
            ("\(good)\nnot json\n", ":2: not a JSON object"),
            (#"{"faces":[]}"#, ":1: \"pts\" must be a time"),
            (#"{"pts":"1/0","faces":[]}"#, ":1: \"pts\" must be a time"),
            ("\(good)\n\n\(good)\n", ":3: pts 0/1 already given on line 1"),
            (#"{"pts":"0/1"}"#, ":1: \"faces\" must be a list"),
            (#"{"pts":"0/1","faces":[{"id":1,"box":[1,2,3]}]}"#, ":1: face 1: \"box\" must be [x, y, width, height]"),
            (#"{"pts":"0/1","faces":[{"id":1,"box":[1,2,0,4]}]}"#, ":1: face 1: \"box\" must be"),
            (#"{"pts":"0/1","faces":[{"id":"a","box":[1,2,3,4]}]}"#, ":1: face 1: \"id\" must be a whole number"),
            (#"{"pts":"0/1","faces":[{"id":true,"box":[1,2,3,4]}]}"#, ":1: face 1: \"id\" must be a whole number"),
            (#"{"pts":"0/1","size":[0,4],"faces":[]}"#, ":1: \"size\" must be [width, height]"),
            (#"{"pts":"0/1","faces":[{"id":1,"box":[1,2,3,4],"score":"high"}]}"#, ":1: face 1: \"score\" must be a number"),
            ("", ": no lines"),
        ]
        for (index, (content, message)) in cases.enumerated() {
            let file = path("bad\(index).jsonl")
            try Data(content.utf8).write(to: URL(fileURLWithPath: file))
            XCTAssertThrowsError(try SidecarFaceProvider(path: file), content) { error in
                XCTAssertTrue(error is FaceSidecarError)
                XCTAssertTrue("\(error)".hasPrefix(file + message), "\(error) for \(content)")
            }
        }
        XCTAssertThrowsError(try SidecarFaceProvider(path: path("missing.jsonl"))) { error in
            XCTAssertEqual("\(error)", path("missing.jsonl") + ": no such file")
        }
    }

    func testAnUncommittedWriterLeavesNothingAndTouchesNothing() throws {
        let output = path("keep.jsonl")
        try Data("earlier run\n".utf8).write(to: URL(fileURLWithPath: output))
        do {
            let writer = try FaceSidecarWriter(path: output)
            try writer.write(frame(0, faces: []))
        }  // dropped without commit: a failed run
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "earlier run\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["keep.jsonl"])
        XCTAssertThrowsError(try FaceSidecarWriter(path: path("no/such/dir/f.jsonl"))) { error in
            XCTAssertTrue("\(error)".contains("does not exist"), "\(error)")
        }
    }
}
