import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline
import XCTest

/// mpv hook files under the seeded mutation fuzzer, down to the sizes they lead to: every parsed file is
/// planned at several input and OUTPUT sizes with its parameters at their extremes (what a live `set` or
/// `prism dev`'s page can send), and a few are rendered on the GPU. A trap or an overflow fails the run;
/// every refusal is one line; every planned pass is 1...16384 on each side with a positive number of work
/// groups. Before, WIDTH 1e39 / 1e400 / 1e19, a parameter of 1e20 in WIDTH and COMPUTE of Int.max trapped.
final class HookFuzzTests: XCTestCase {
    static let corpus = [
        HookHardeningTests.scaled,
        HookHardeningTests.pass(["//!WIDTH HOOKED.w 2 *", "//!HEIGHT HOOKED.h 2 *", "//!WHEN OUTPUT.w MAIN.w / 1.2 >"]),
        HookHardeningTests.pass(["//!WIDTH 1e39"]),
        HookHardeningTests.pass(["//!HEIGHT 1e400"]),
        HookHardeningTests.pass(["//!WIDTH 1e19", "//!OFFSET nan nan"]),
        HookHardeningTests.pass(["//!COMPUTE 9223372036854775807 2"]),
        HookHardeningTests.pass(["//!COMPUTE 16 16 8 8", "//!OFFSET ALIGN"]),
        HookHardeningTests.pass(["//!WIDTH LUMA.w", "//!HEIGHT LUMA.h 0.5 *", "//!OFFSET 0.25 -0.5"]).replacingOccurrences(of: "MAIN", with: "CHROMA"),
        HookHardeningTests.scaled.replacingOccurrences(of: "\n", with: "\r\n"),
        """
        //!PARAM steps
        //!TYPE DEFINE
        //!MAXIMUM 9
        3
        //!PARAM mode
        //!TYPE ENUM int
        soft
        hard
        //!HOOK MAIN
        //!BIND HOOKED
        //!SAVE HALF
        //!WIDTH HOOKED.w steps /
        //!HEIGHT HOOKED.h mode 1 + /
        vec4 hook() { return HOOKED_tex(HOOKED_pos); }
        //!HOOK MAIN
        //!BIND HALF
        vec4 hook() { return HALF_tex(HALF_pos); }

        """,
    ]

    static let dictionary = ["//!HOOK MAIN\n", "//!BIND HOOKED\n", "//!WIDTH ", "//!HEIGHT ", "//!WHEN ", "//!OFFSET ", "//!COMPUTE ",
                             "//!SAVE X\n", "//!BIND X\n", "//!PARAM p\n//!TYPE float\n", "//!MINIMUM ", "//!MAXIMUM ", "HOOKED.w",
                             "HOOKED.h", "OUTPUT.w", "MAIN.h", "scale", "steps", " * ", " / ", " + ", " - ", " % ", " ! ", " > ", " = ",
                             "1e39", "1e400", "1e19", "-1e19", "1e20", "nan", "inf", "NaN", "9223372036854775807", "4294967296", "ALIGN",
                             "\r\n", "\n", "\r", " ", "0", "0.5"]

    /// Values a parameter may be set to live (the float ones are unbounded unless the file bounds them).
    static let extremes: [Double] = [0, 1, -1, 0.5, 1e20, -1e20, 1e39, 1e300, 16384, 16385, .nan, .infinity]

    func testFuzzHookFilesSizesAndParameters() {
        let sizes = [Size(width: 1, height: 1), Size(width: 160, height: 90), Size(width: 16384, height: 16384)]
        var parsed = 0, planned = 0, rendered = 0
        let directory = NSTemporaryDirectory() + "/prism-hook-fuzz-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tried = Fuzzer(corpus: Self.corpus, dictionary: Self.dictionary).run("hook") { text in
            let file: HookFile
            do { file = try HookFile.parse(text: text, path: "/fuzz/h.glsl") } catch {
                assertOneLine(error, text)
                return
            }
            parsed += 1
            let names = file.parameters.filter { $0.names.isEmpty }.map(\.name)
            for value in [nil] + Self.extremes.map(Optional.some) {
                var values = Dictionary(uniqueKeysWithValues: file.parameters.map { ($0.name, $0.initial) })
                if let value { for name in names { values[name] = value } }
                for size in sizes {
                    do {
                        let plan = try HookPlan.make(files: [file], inputSize: size, outputSize: size, values: values)
                        planned += 1
                        for step in plan.steps {
                            XCTAssertTrue((1...HookPlan.maxSide).contains(step.size.width) && (1...HookPlan.maxSide).contains(step.size.height),
                                          "\(step.size) from \(text.debugDescription.prefix(200))")
                            if let compute = step.compute { XCTAssertTrue(compute.groups.x > 0 && compute.groups.y > 0) }
                        }
                    } catch {
                        assertOneLine(error, text)
                    }
                }
            }
            _ = HookPlan.validationSteps(files: [file])
            // Through the graph, the compiler and the GPU, as `prism run --filter 'h.glsl'` would.
            if rendered < 4, let context = try? FuzzGPU.shared() {
                let path = directory + "/h\(parsed).glsl"
                try? text.write(toFile: path, atomically: true, encoding: .utf8)
                if let graph = try? GraphBinder().bind("'" + path + "'") {
                    rendered += 1
                    let image = RGBAImage(size: Size(width: 24, height: 16), pixels: [UInt8](repeating: 128, count: 24 * 16 * 4))
                    do { _ = try FrameEngine.renderStill(graph, image: image, gpu: context) } catch { assertOneLine(error, text) }
                }
            }
        }
        XCTAssertGreaterThan(parsed, 5, "some inputs are hook files")
        XCTAssertGreaterThan(planned, 5, "some plans are made")
        print("fuzz hooks: \(tried) inputs, \(parsed) parsed, \(planned) plans, \(rendered) rendered")
    }
}
