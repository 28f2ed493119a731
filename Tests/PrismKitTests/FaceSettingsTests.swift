import Foundation
import XCTest
import PrismKit
import PrismFilters
import PrismVision
import TestFixtures

/// Which detector the face settings choose, and what they say when it is not the one asked for: the
/// installed CenterFace by default, the Haar cascade named in one line when no model is installed, and one
/// error line when `centerface` is asked for and not installed or a file is not a face model.
final class FaceSettingsTests: XCTestCase {
    /// The default with CenterFace installed: CenterFace, nothing said.
    func testTheInstalledCenterFaceIsTheDefaultAndSaysNothing() throws {
        let model = try TestFixtures.model("centerface.onnx")
        let (detector, note) = try FaceSettings.detector(for: nil, installed: model)
        XCTAssertTrue(detector is CenterFaceDetector, "\(type(of: detector))")
        XCTAssertNil(note)
    }

    /// No model installed: the Haar cascade finds the faces, and the one line the run says first names it,
    /// the file that is missing, where it was looked for, and how to install it.
    func testAMissingDefaultModelFallsBackToTheCascadeAndSaysSoInOneLine() throws {
        let (provider, note) = try FaceSettings().makeProvider(live: false, installed: nil)
        let detecting = try XCTUnwrap(provider as? DetectingFaceProvider)
        XCTAssertTrue(detecting.input.name.lowercased().contains("haar"), detecting.input.name)
        let line = try XCTUnwrap(note, "the fallback is said")
        XCTAssertFalse(line.contains("\n"), line)
        XCTAssertTrue(line.hasPrefix("no face model installed (\(CenterFaceDetector.defaultFile) is in none of "), line)
        XCTAssertTrue(line.contains(detecting.input.name), "the fallback named: \(line)")
        for folder in ModelLibrary.folders { XCTAssertTrue(line.contains(folder), "\(folder) in \(line)") }
        XCTAssertTrue(line.contains("scripts/install-models"), line)
    }

    /// `--face-model centerface` when it is not installed is an error, not the fallback.
    func testCenterFaceAskedForAndNotInstalledIsOneError() {
        XCTAssertThrowsError(try FaceSettings.detector(for: "centerface", installed: nil)) { error in
            let message = (error as? FaceDetectorError)?.message ?? "\(error)"
            XCTAssertTrue(message.hasPrefix("face model centerface: \(CenterFaceDetector.defaultFile) is not installed in any of "), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
    }

    /// An ONNX file that is no face model (another published model: U-2-Net's portable segmenter) is one error
    /// naming the file and what was expected, before any frame.
    func testAnotherPublishedModelIsNotTakenForAFaceModel() throws {
        let u2net = try TestFixtures.model("u2netp.onnx")
        XCTAssertThrowsError(try FaceSettings.detector(for: u2net, installed: nil)) { error in
            let message = (error as? FaceDetectorError)?.message ?? "\(error)"
            XCTAssertTrue(message.hasPrefix("face model \(u2net): not a face model (neither CenterFace nor YuNet"), message)
            XCTAssertFalse(message.contains("\n"), message)
        }
    }
}
