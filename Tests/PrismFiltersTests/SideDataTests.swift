import XCTest
import PrismCore
@testable import PrismFilters

/// The refusal of a graph that reads side data (faces, the segmentation mask, sound) its run does not
/// supply: one line naming the first node that reads what is missing, the same for every run that checks.
final class SideDataTests: XCTestCase {
    func testAGraphIsRefusedForTheFirstSideDataItsRunLacks() throws {
        let wave = ISFParityTests.corpus.appendingPathComponent("audio-waveform.fs").path
        let faces = "face-mask needs faces: this run has no face side input (a detector or a \(Setting.facesIn) sidecar)"
        let mask = "needs a segmentation model: give one with \(Setting.segmentModel) SEG.onnx (or model=SEG.onnx)"
        let sound = "\(wave): input 'wave' needs audio: no sound here"
        let both = "face-pixellate, background-blur(radius=8)"
        let rows: [(graph: String, supplied: SideData, refusal: String?)] = [
            ("invert", [], nil),
            ("face-pixellate", [], faces),
            ("face-pixellate", [.segmentation, .audio], faces),
            ("face-pixellate", .faceRegions, nil),
            ("background-blur(radius=8)", .faceRegions, "background-blur " + mask),
            ("background-blur(radius=8)", .segmentation, nil),
            ("segment-mask", .audio, "segment-mask " + mask),
            (wave, [.faceRegions, .segmentation], sound),
            (wave, .audio, nil),
            (both, [], faces),
            (both, .faceRegions, "background-blur " + mask),
            (both, .segmentation, faces),
            (both, [.faceRegions, .segmentation], nil),
            ("\(wave), face-pixellate", .segmentation, faces),
            ("\(wave), face-pixellate", .faceRegions, sound),
            ("\(wave), \(both)", .all, nil),
        ]
        for row in rows {
            let graph = try GraphBinder().bind(row.graph)
            let refusal = graph.missingSideDataError(supplied: row.supplied, noSound: "no sound here")
            XCTAssertEqual(refusal?.description, row.refusal, "\(row.graph) supplied \(row.supplied.rawValue)")
        }
    }
}
