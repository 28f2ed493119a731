import XCTest
import PrismCore
import PrismFilters
import PrismMedia
@testable import Prism

/// Transitions end to end: `prism run` on the pattern, the time ramp taken from the frames' own times (the
/// output's timestamps, which start at 0 as the graph's time does), checked against the run without them.
final class CompositingRunTests: XCTestCase {
    let dir = ScratchDirectory()

    private func run(_ filter: String, to name: String) throws -> String {
        var options = RunOptions()
        options.input = .pattern
        options.size = Size(width: 128, height: 72)
        options.frameLimit = 11
        options.output = .movie(dir.path(name))
        options.encoder = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 0)
        _ = try RunJob(options: options, graph: GraphBinder().bind(filter)).run(progress: nil)
        return dir.path(name)
    }

    func testWipeAndCrossfadeFollowTheFramesTimes() throws {
        let plain = try run("", to: "plain.mkv")
        let pts = try MediaInspector.inspect(plain).videoPTS.map(\.seconds)
        XCTAssertEqual(pts.count, 11)
        let duration = pts[10]  // t = time / duration: 0 at the first frame, 1 at the last
        let wiped = try run("[in]invert[b]; [in][b]wipe(direction=right, duration=\(duration))", to: "wipe.mkv")
        let faded = try run("[in]invert[b]; [in][b]crossfade(duration=\(duration))", to: "fade.mkv")
        for index in [0, 5, 10] {
            let t = pts[index] / duration
            let base = try MediaInspector.frameRGBA(plain, index: index)
            let wipe = try MediaInspector.frameRGBA(wiped, index: index)
            let fade = try MediaInspector.frameRGBA(faded, index: index)
            let width = base.size.width, edge = Double(width) * t
            var wipeError = 0, fadeError = 0, count = 0
            for i in stride(from: 0, to: base.pixels.count, by: 4) {
                let x = Double((i / 4) % width) + 0.5
                for c in 0..<3 {
                    let p = Double(base.pixels[i + c])
                    fadeError += abs(Int((p * (1 - t) + (255 - p) * t).rounded()) - Int(fade.pixels[i + c]))
                    // A band of four columns each side of the edge takes the 4:2:0 chroma of both sides.
                    guard abs(x - edge) > 4 else { continue }
                    wipeError += abs(Int(x < edge ? 255 - p : p) - Int(wipe.pixels[i + c]))
                    count += 1
                }
            }
            XCTAssertLessThanOrEqual(wipeError / max(count, 1), 3, "wipe frame \(index) (t = \(t))")
            XCTAssertLessThanOrEqual(fadeError / (base.pixels.count * 3 / 4), 3, "crossfade frame \(index) (t = \(t))")
        }
    }
}
