import XCTest
import PrismCore
import PrismVision

/// OpenCV's cascades from Debian on the fixture photographs.
final class CascadeDetectorTests: XCTestCase {
    func testFindsTheAstronautsFaceWithBothModels() throws {
        let image = try VisionFixtures.image("astronaut.png")
        let luma = VisionFixtures.luma(image)
        XCTAssertEqual(luma.size, Size(width: 320, height: 320))
        for model in ["haar", "lbp"] {
            let faces = try CascadeFaceDetector(model: model).detect(DetectionImage(luma))
            XCTAssertEqual(faces.count, 1, "\(model): \(faces)")
            guard let face = faces.first else { continue }
            // The face (eyes at about y 120, mouth at about 150 of 512; centred near x 225): inside the box,
            // boxes in the frame's pixels, not the thumbnail's.
            XCTAssertTrue((150...200).contains(face.box.x) && (40...110).contains(face.box.y), "\(model): \(face.box)")
            XCTAssertTrue((70...140).contains(face.box.width), "\(model): \(face.box)")
            XCTAssertEqual(face.box.width, face.box.height, accuracy: 1)
            XCTAssertEqual(face.box.center.x, 225, accuracy: 20, "\(model)")
            XCTAssertEqual(face.box.center.y, 120, accuracy: 25, "\(model)")
            XCTAssertGreaterThan(face.score, 0)
        }
    }

    func testFindsEveryFaceInATiledPictureAndNoneInACupOfCoffee() throws {
        let image = try VisionFixtures.image("astronaut.png")
        let tiled = VisionFixtures.tiled(image, columns: 2, rows: 1)  // 1024x512: thumbnail 320x160
        let faces = try CascadeFaceDetector().detect(DetectionImage(VisionFixtures.luma(tiled)))
        XCTAssertEqual(faces.count, 2, "\(faces)")
        let centres = faces.map(\.box.center.x).sorted()
        if centres.count == 2 {
            XCTAssertEqual(centres[0], 225, accuracy: 25)
            XCTAssertEqual(centres[1], 512 + 225, accuracy: 25)
        }
        let cat = try CascadeFaceDetector().detect(DetectionImage(VisionFixtures.luma(try VisionFixtures.image("coffee.png"))))
        XCTAssertEqual(cat.count, 0, "a cup of coffee has no face: \(cat)")
    }

    func testBadModelsAreOneClearError() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("prism-vision-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try Data("<?xml version=\"1.0\"?>\n<opencv_storage><nothing/></opencv_storage>\n".utf8).write(to: URL(fileURLWithPath: scratch))
        let garbage = scratch + ".txt"
        try Data("not xml at all".utf8).write(to: URL(fileURLWithPath: garbage))
        defer { try? FileManager.default.removeItem(atPath: garbage) }
        for (path, reason) in [("/nonexistent/face.xml", "cannot open"), (scratch, "not an OpenCV cascade"),
                               (garbage, "not an OpenCV cascade"), ("/tmp", "")] {
            XCTAssertThrowsError(try CascadeFaceDetector(model: path), path) { error in
                let text = "\(error)"
                XCTAssertTrue(error is FaceDetectorError, text)
                XCTAssertTrue(text.hasPrefix("face model \(path): \(reason)"), text)
                XCTAssertFalse(text.contains("\n"), text)
            }
        }
    }
}
