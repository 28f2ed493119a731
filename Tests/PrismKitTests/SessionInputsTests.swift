import Foundation
import XCTest
import PrismKit

/// Several inputs through `Session` (`Session.Options.inputs`): the graph reads the second input as `[1]` (or
/// its name), matched by timestamp to the first, shifted by its offset.
final class SessionInputsTests: XCTestCase {
    static let size = Size(width: 160, height: 90)

    private func options(frames: Int, inputs: [ExtraInput]) -> Session.Options {
        var options = Session.Options()
        options.size = Self.size
        options.frameRate = Rational(30, 1)
        options.frameLimit = frames
        options.inputs = inputs
        return options
    }

    private func pattern(offsetFrames: Int = 0, name: String? = nil) -> ExtraInput {
        ExtraInput(spec: SourceSpec(input: .pattern, size: Self.size, frameRate: Rational(30, 1)), name: name,
                   offset: MediaTime(value: Int64(offsetFrames), timescale: 30))
    }

    /// The largest difference over R, G, B between `frame` and `reference` inverted (nil reference: the
    /// inverse of transparent black, white).
    private func worstDifference(_ frame: Frame, invertedFrom reference: Frame?) -> Int {
        var worst = 0
        frame.withPlane(0) { out, rowBytes in
            for y in 0..<Self.size.height {
                for x in 0..<Self.size.width {
                    for channel in 0..<3 {
                        let offset = y * rowBytes + x * 4 + channel
                        let source = reference.map { $0.withPlane(0) { input, _ in Int(input[offset]) } } ?? 0
                        worst = max(worst, abs(Int(out[offset]) - (255 - source)))
                    }
                }
            }
        }
        return worst
    }

    func testTheGraphReadsTheSecondInputAtTheFirstInputsTimes() async throws {
        let plain = try await collect(try Session(input: .pattern, graph: "", options: options(frames: 8, inputs: [])).frames())
        // The second input is the same pattern, started 3 frames later: output frame i shows its frame i − 3.
        let shifted = try await collect(try Session(input: .pattern, graph: "[second]invert",
                                                     options: options(frames: 8, inputs: [pattern(offsetFrames: 3, name: "second")])).frames())
        XCTAssertEqual(shifted.count, 8)
        for (i, frame) in shifted.enumerated() {
            XCTAssertLessThanOrEqual(worstDifference(frame, invertedFrom: i >= 3 ? plain[i - 3] : nil), 1, "frame \(i)")
        }
    }

    func testAGraphReadingAnInputTheSessionLacksIsRefused() throws {
        XCTAssertThrowsError(try Session(input: .pattern, graph: "[0][1]over", options: options(frames: 2, inputs: []))) { error in
            XCTAssert("\(error)".contains("input [1] does not exist"), "\(error)")
        }
    }

    /// A composition through the API: the pattern beside itself 2 frames
    /// later, `[0][1]side-by-side` — the left half is the first input's frame i, the right half the second's
    /// frame i − 2 (opaque black before it starts), pixel for pixel.
    func testTwoInputsSideBySideThroughASession() async throws {
        let plain = try await collect(try Session(input: .pattern, graph: "", options: options(frames: 6, inputs: [])).frames())
        let both = try await collect(try Session(input: .pattern, graph: "[0][1]side-by-side",
                                                 options: options(frames: 6, inputs: [pattern(offsetFrames: 2)])).frames())
        XCTAssertEqual(both.count, 6)
        XCTAssertEqual(both.first?.size, Size(width: Self.size.width * 2, height: Self.size.height))
        for (i, frame) in both.enumerated() {
            var worst = 0
            frame.withPlane(0) { out, rowBytes in
                for y in 0..<Self.size.height {
                    for x in 0..<(Self.size.width * 2) {
                        let source = x < Self.size.width ? plain[i] : (i >= 2 ? plain[i - 2] : nil)
                        let sx = x % Self.size.width
                        for channel in 0..<3 {
                            let want = source.map { $0.withPlane(0) { input, inputRow in Int(input[y * inputRow + sx * 4 + channel]) } } ?? 0
                            worst = max(worst, abs(Int(out[y * rowBytes + x * 4 + channel]) - want))
                        }
                    }
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, "frame \(i)")
        }
    }
}
