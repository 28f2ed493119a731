import Foundation
import PrismCore
import PrismKit
import PrismMedia
import XCTest
@testable import Prism
@testable import PrismPipeline

/// One option model: every option a manifest line shares with the command line gets the same
/// answer from `run`, `record`, `batch`'s own defaults and a manifest line (the same value, or a refusal with
/// the same message, naming the option as that source spells it), because all of them read the same option
/// groups through the same value types.
final class OptionModelTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Valid and invalid values for every manifest setting, edges included.
    static let table: [(key: String, values: [String])] = [
        ("filter", ["invert", "invert, mono", String(repeating: "x", count: (128 << 10) + 1)]),
        ("codec", ["h264", "HEVC", "ffv1", "prores", "vp9", "", "h264 "]),
        ("preset", ["ultrafast", "medium", "placebo", "Medium", "insane", ""]),
        ("crf", ["0", "18", "51", "52", "-1", "18.5", "high", "", "1e3"]),
        ("bitrate", ["4M", "2500k", "800000", "2000M", "2001M", "0.5", "0", "-4M", "fast", "1e308k"]),
        ("threads", ["0", "8", "64", "65", "-1", "two"]),
        ("size", ["1280x720", "720p", "64x48", "4k", "big", "0x0", "-2x2", "99999999999x2", ""]),
        ("fps", ["30", "29.97", "30000/1001", "0.001", "1000", "1000.5", "5000", "0.0001", "0", "-30", "1/0", "1e-300", "abc", ""]),
        ("frames", ["1", "12", "100000000", "100000001", "0", "-3", "2.5", "many"]),
        ("duration", ["0.5", "0.001", "10000000", "0.0001", "0", "-1", "1e308", "nan", "soon"]),
    ]

    /// The keys a manifest may give as JSON numbers.
    static let numericKeys: Set<String> = ["crf", "bitrate", "threads", "fps", "frames", "duration"]

    /// What the engine is asked to do for `key`, as text: what both sources must agree on.
    private func answer(_ options: RunOptions, _ key: String) -> String {
        switch key {
        case "filter": options.filter
        case "codec": "\(options.session.encoder.codec)"
        case "preset": options.session.encoder.preset
        case "crf": "\(options.session.encoder.crf.map(String.init) ?? "nil")"
        case "bitrate": "\(options.session.encoder.bitrate.map(String.init) ?? "nil")"
        case "threads": "\(options.session.encoder.threads)"
        case "size": options.session.size.map(\.description) ?? "nil"
        case "fps": options.session.frameRate.map { "\($0.num)/\($0.den)" } ?? "nil"
        case "frames": options.session.frameLimit.map(String.init) ?? "nil"
        case "duration": options.session.durationLimit.map { "\($0.value)/\($0.timescale)" } ?? "nil"
        default: "?"
        }
    }

    private enum Answer: Equatable, CustomStringConvertible {
        case value(String), refused(String)
        var description: String {
            switch self {
            case .value(let value): "accepted \(value.prefix(60))"
            case .refused(let message): "refused: \(message.prefix(200))"
            }
        }
    }

    private func capture(_ body: () throws -> String) -> Answer {
        do { return .value(try body()) } catch { return .refused("\(error)") }
    }

    private func manifestLine(_ key: String, _ value: JSONValue) throws -> String {
        let json: String
        switch value {
        case .number(let number): json = "\(number)"
        case .string(let text): json = String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
        default: json = "null"
        }
        return #"{"input": "pattern", "output": "o.mkv", "\#(key)": \#(json)}"#
    }

    func testManifestAndCommandLineGiveTheSameAnswerForEveryValue() throws {
        let output = dir.path("o.mkv")
        let takes = dir.path("takes")
        try FileManager.default.createDirectory(atPath: takes, withIntermediateDirectories: true)
        let plain = try dir.writeLines([#"{"input": "pattern", "output": "o.mkv"}"#], name: "plain.jsonl")
        var compared = 0
        for (key, values) in Self.table {
            for text in values {
                let option = "--" + key
                let run = capture { answer(try RunCommand(arguments: ["-o", output, option, text]).options, key) }
                // The manifest line, the value as a JSON string.
                let path = try dir.writeLines([try manifestLine(key, .string(text))], name: "m.jsonl")
                let manifest = capture { answer(try BatchManifest(path: path).jobs[0].runOptions(outputPath: output), key) }
                // batch's own command line: the jobs' default.
                let batch = capture {
                    let command = try BatchCommand(arguments: [plain, option, text])
                    return answer(try BatchManifest(path: plain, defaults: command.defaults).jobs[0].runOptions(outputPath: output), key)
                }
                let context = "\(key) = \(text.prefix(40).debugDescription)"
                switch run {
                case .value:
                    XCTAssertEqual(manifest, run, context)
                case .refused(let message):
                    XCTAssertTrue(message.contains(option), "\(context): \(message)")
                    XCTAssertFalse(message.contains("\n"), context)
                    let quoted = message.replacingOccurrences(of: option, with: "\"\(key)\"")
                    XCTAssertEqual(manifest, .refused("\(path):1: \(quoted)"), context)
                }
                XCTAssertEqual(batch, run, context)
                // record reads the same groups as run (all but run's own --frames).
                if key != "frames" {
                    let record = capture { answer(try RecordCommand(arguments: [takes, option, text]).options, key) }
                    XCTAssertEqual(record, run, context)
                }
                // A JSON number where the value is a number: the answer of the number as a command line writes it.
                if Self.numericKeys.contains(key), let number = Double(text), number.isFinite,
                   text == String(Int64(exactly: number) ?? 0) || text == String(number) {
                    let path = try dir.writeLines([try manifestLine(key, .number(number))], name: "n.jsonl")
                    let numeric = capture { answer(try BatchManifest(path: path).jobs[0].runOptions(outputPath: output), key) }
                    switch run {
                    case .value: XCTAssertEqual(numeric, run, "\(context) as a JSON number")
                    case .refused:
                        guard case .refused(let message) = numeric else { XCTFail("\(context) as a JSON number: \(numeric)"); break }
                        XCTAssertTrue(message.hasPrefix("\(path):1: \"\(key)\" "), message)
                    }
                }
                compared += 1
            }
        }
        XCTAssertEqual(compared, Self.table.map(\.values.count).reduce(0, +))
    }

    /// `prism dev` takes the same frame-rate and size values with the same check; only its ceiling is lower.
    func testDevReadsRatesAndSizesWithTheSameChecks() throws {
        let shader = dir.path("look.fs")
        try "void main() { gl_FragColor = vec4(1.0); }\n".write(toFile: shader, atomically: true, encoding: .utf8)
        for (key, values) in Self.table where key == "fps" || key == "size" {
            for text in values {
                let option = "--" + key
                let run = capture { answer(try RunCommand(arguments: ["-o", dir.path("o.mkv"), option, text]).options, key) }
                let dev = capture {
                    let options = try DevCommand(arguments: [shader, option, text]).options
                    return key == "fps" ? "\(options.frameRate.num)/\(options.frameRate.den)" : options.patternSize.description
                }
                let context = "dev \(key) = \(text.debugDescription)"
                if key == "fps", let rate = Rational(parsing: text), rate.den > 0, rate.doubleValue > 240, rate.doubleValue <= 1000 {
                    XCTAssertEqual(dev, .refused("--fps takes a frame rate from 0.001 to 240 like 30, 29.97 or 30000/1001, not '\(text)'"), context)
                } else if case .refused(let message) = run {
                    XCTAssertEqual(dev, .refused(message.replacingOccurrences(of: "to 1000 like", with: "to 240 like")), context)
                } else {
                    XCTAssertEqual(dev, run, context)
                }
            }
        }
    }

    /// A bad value on any line stops the batch before the first job: exit 2, one line naming the line and
    /// the key, no output written.
    func testABadValueOnALaterLineIsRefusedBeforeAnyJobStarts() throws {
        let manifest = try dir.writeLines([
            #"{"input": "pattern", "output": "a.mkv", "codec": "ffv1", "frames": 2, "size": "64x48"}"#,
            #"{"input": "pattern", "output": "b.mkv", "codec": "ffv1", "frames": 2, "size": "64x48", "threads": 65}"#,
        ])
        let result = try Tools.run(Tools.prism, ["batch", manifest, "--progress", "lines"], timeout: 120)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderrLines, ["prism: \(manifest):2: \"threads\" takes a whole number in 0...64, not '65'"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("a.mkv")), "no job ran")
        // The same refusal as a place, for tools.
        XCTAssertThrowsError(try BatchManifest(path: manifest)) { error in
            XCTAssertEqual(error.prismDiagnostics, [Diagnostic(file: manifest, line: 2, message: "\"threads\" takes a whole number in 0...64, not '65'")])
        }
    }

    // MARK: - Scoped options

    /// The encoder's settings an output gets, as text, for `key`.
    private func encoderAnswer(_ encoder: VideoEncoderSettings?, _ key: String) -> String {
        guard let encoder else { return "no encoder" }
        switch key {
        case "codec": return "\(encoder.codec)"
        case "preset": return encoder.preset
        case "crf": return encoder.crf.map(String.init) ?? "nil"
        case "bitrate": return encoder.bitrate.map(String.init) ?? "nil"
        default: return "\(encoder.threads)"
        }
    }

    private func playlistAnswer(_ output: SessionOutput) -> String {
        let playlist = output.playlist
        return "\(playlist.kind) \(playlist.segmentSeconds) \(playlist.window) \(playlist.fragmentedMP4)"
    }

    /// The playlist options, which only an HLS or DASH output takes.
    static let playlistTable: [(key: String, values: [String])] = [
        ("playlist", ["live", "event", "vod", "Live", "rolling", ""]),
        ("segment-duration", ["2", "0.5", "0.001", "0", "-2", "10000001", "two"]),
        ("window", ["1", "6", "10000", "10001", "0", "-1", "6.5", "six"]),
        ("segment-type", ["ts", "fmp4", "mp4", "TS", ""]),
    ]

    /// An output's options given for the run (with one -o), before an -o (that output's alone) and after
    /// the last -o (every output's) get the same answer for the output they reach, or the same refusal.
    func testAnOutputsOwnOptionsGetTheSameAnswerAsTheRuns() throws {
        let (a, b) = (dir.path("a.mkv"), dir.path("b.mkv"))
        var compared = 0
        let encoderTable = Self.table.filter { ["codec", "preset", "crf", "bitrate", "threads"].contains($0.key) }
        for (key, values) in encoderTable {
            for text in values {
                let option = "--" + key
                let context = "\(key) = \(text.prefix(40).debugDescription)"
                // One -o: its encoder is the run's.
                let run = capture { encoderAnswer(try RunCommand(arguments: ["-o", a, option, text]).options.session.encoder, key) }
                let own = capture {
                    let outputs = try RunCommand(arguments: [option, text, "-o", a, "-o", b]).options.outputs
                    let untouched = try RunCommand(arguments: ["-o", a, "-o", b]).options.outputs[1]
                    XCTAssertEqual(encoderAnswer(outputs[1].encoder, key), encoderAnswer(untouched.encoder, key), "\(context): only the first output's")
                    return encoderAnswer(outputs[0].encoder, key)
                }
                let every = capture {
                    let outputs = try RunCommand(arguments: ["-o", a, "-o", b, option, text]).options.outputs
                    XCTAssertEqual(encoderAnswer(outputs[1].encoder, key), encoderAnswer(outputs[0].encoder, key), context)
                    return encoderAnswer(outputs[0].encoder, key)
                }
                XCTAssertEqual(own, run, "\(context) before an -o")
                XCTAssertEqual(every, run, "\(context) after the last -o")
                compared += 1
            }
        }
        let (p, q) = (dir.path("p.m3u8"), dir.path("q/q.m3u8"))
        try FileManager.default.createDirectory(atPath: dir.path("q"), withIntermediateDirectories: true)
        for (key, values) in Self.playlistTable {
            for text in values {
                let option = "--" + key
                let context = "\(key) = \(text.debugDescription)"
                let run = capture { playlistAnswer(try RunCommand(arguments: ["-o", p, option, text]).options.outputs[0]) }
                let own = capture { playlistAnswer(try RunCommand(arguments: [option, text, "-o", p, "-o", q]).options.outputs[0]) }
                let every = capture { playlistAnswer(try RunCommand(arguments: ["-o", p, "-o", q, option, text]).options.outputs[1]) }
                XCTAssertEqual(own, run, "\(context) before an -o")
                XCTAssertEqual(every, run, "\(context) after the last -o")
                if case .refused(let message) = run { XCTAssertTrue(message.contains(option), "\(context): \(message)") }
                compared += 1
            }
        }
        XCTAssertEqual(compared, (encoderTable + Self.playlistTable).map(\.values.count).reduce(0, +))
    }

    /// An input's own options (`--offset`, `--end`), given before an input after the first, get the same
    /// answer from `run`, `record` and `dev`, the one their key reads; a good value given for the run (after
    /// the last input) is refused by the scoping rule, a bad one by its own check wherever it stands.
    func testAnInputsOwnOptionsGetTheSameAnswerFromEveryCommand() throws {
        let shader = dir.path("look.fs")
        try "void main() { gl_FragColor = vec4(1.0); }\n".write(toFile: shader, atomically: true, encoding: .utf8)
        let takes = dir.path("takes")
        try FileManager.default.createDirectory(atPath: takes, withIntermediateDirectories: true)
        let table: [(key: String, values: [String])] = [
            ("offset", ["0", "1.5", "10000000", "10000001", "-1", "nan", "inf", "1e308", "soon", ""]),
            ("end", ["hold", "stop", "hide", "Hold", "keep", ""]),
        ]
        func inputAnswer(_ inputs: [ExtraInput], _ key: String) -> String {
            key == "offset" ? "\(inputs[0].offset.value)/\(inputs[0].offset.timescale)" : "\(inputs[0].end)"
        }
        var compared = 0
        for (key, values) in table {
            for text in values {
                let option = "--" + key
                let context = "\(key) = \(text.debugDescription)"
                let scoped = ["pattern", option, text, "pattern"]
                let run = capture { inputAnswer(try RunCommand(arguments: ["-o", dir.path("o.mkv")] + scoped).options.session.inputs, key) }
                let record = capture { inputAnswer(try RecordCommand(arguments: [takes] + scoped).options.session.inputs, key) }
                let dev = capture { inputAnswer(try DevCommand(arguments: [shader] + scoped).options.session.inputs, key) }
                XCTAssertEqual(record, run, "record \(context)")
                XCTAssertEqual(dev, run, "dev \(context)")
                // The value itself, read by its key: the one check.
                let read = capture {
                    key == "offset" ? "\(Int64((try InputArguments.Key.offset.read(text, option) * 1_000_000).rounded()))/1000000"
                        : "\(try InputArguments.Key.end.read(text, option))"
                }
                XCTAssertEqual(run, read, "\(context) read by its key")
                // Given for the run: after the last input there is none for it to belong to.
                let forTheRun = capture { inputAnswer(try RunCommand(arguments: ["-o", dir.path("o.mkv"), "pattern", "pattern", option, text]).options.session.inputs, key) }
                if case .refused = run {
                    XCTAssertEqual(forTheRun, run, "\(context) given for the run")
                } else {
                    XCTAssertEqual(forTheRun, .refused("--offset and --end apply to the input given after them; none follows"), context)
                }
                compared += 1
            }
        }
        XCTAssertEqual(compared, 16)
    }
}
