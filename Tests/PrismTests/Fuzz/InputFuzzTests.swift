import Foundation
import PrismCore
import XCTest
@testable import Prism
@testable import PrismPipeline

/// The batch manifest's values, results files and `record`'s stdin under the seeded mutation
/// fuzzer. Every input is either accepted with values the engine can run (a rate it can time frames by,
/// settings in the command line's ranges) or refused with one line; nothing traps.
final class InputFuzzTests: XCTestCase {
    static let manifests = [
        #"{"input": "pattern", "output": "o.mp4", "fps": "30000/1001", "crf": 20, "frames": 12, "size": "64x48"}"#,
        #"{"input": "pattern", "output": "o.mkv", "codec": "ffv1", "fps": 29.97, "duration": 0.5, "bitrate": "4M"}"#,
        #"{"input": "pattern", "id": "x", "output": "out/o.mov", "codec": "prores", "preset": "ultrafast", "filter": "invert, mono"}"#,
        // Rates that rounded to 0/1000 (a trap), and past run's limit.
        #"{"input": "pattern", "output": "o.mp4", "fps": "0.0001"}"#,
        #"{"input": "pattern", "output": "o.mp4", "fps": 0.0001}"#,
        #"{"input": "pattern", "output": "o.mp4", "fps": "5000"}"#,
        #"{"input": "pattern", "output": "o.mp4", "fps": "1/0", "duration": 1e308, "frames": 9223372036854775807}"#,
        #"{"input": "pattern", "output": "o.mp4", "crf": -1, "bitrate": "1e308k", "size": "99999999999x2"}"#,
        #"{"input": "pattern", "output": "o.mp4", "id": "\u001b[31mred", "filter": "invert, invert, invert"}"#,
    ]
    static let manifestDictionary = [#""fps""#, #""crf""#, #""frames""#, #""duration""#, #""size""#, #""bitrate""#, #""codec""#,
                                     #""preset""#, #""filter""#, #""id""#, #""output""#, #""input""#, #""pattern""#, ":", ",", "{", "}",
                                     "\"", "/", "1001", "0.0001", "5000", "1e-300", "\\u001b", "\n", "x", "k", "M", "720p"]

    func testFuzzManifestValues() throws {
        let scratch = ScratchDirectory()
        let path = scratch.path("jobs.jsonl")
        var accepted = 0
        let tried = Fuzzer(corpus: Self.manifests, dictionary: Self.manifestDictionary).run("manifest") { text in
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
            do {
                for job in try BatchManifest(path: path).jobs {
                    accepted += 1
                    let settings = job.settings
                    if let rate = settings.input.frameRate {
                        XCTAssertNoThrow(try FrameTimer.step(at: rate), "\(text.debugDescription)")
                        XCTAssertTrue(Rational.frameRates.contains(rate.doubleValue), "\(rate) from \(text.debugDescription)")
                    }
                    if let crf = settings.encoder.crf { XCTAssertTrue((0...51).contains(crf)) }
                    if let frames = settings.frames { XCTAssertTrue((1...100_000_000).contains(frames)) }
                    if let duration = settings.input.duration { XCTAssertTrue(Seconds.range.contains(duration)) }
                    _ = job.runOptions(outputPath: scratch.path("t.mp4"))
                }
            } catch {
                assertOneLine(error, text)
                XCTAssertTrue("\(error)".hasPrefix(path), "errors name the manifest: \(error)")
            }
        }
        XCTAssertGreaterThan(accepted, 2, "the valid corpus entries are accepted")
        print("fuzz manifest: \(tried) inputs, \(accepted) jobs accepted")
    }

    static let results = [
        #"{"job":"a","status":"ok","frames":10,"fps":5,"seconds":2,"input":"i","output":"o","fingerprint":"f","started":1,"finished":3,"host":"h","worker":"w"}"#,
        #"{"job":"b","status":"failed","frames":0,"fps":0,"seconds":1,"error":"boom","input":"i","output":"o","fingerprint":"f","started":2,"finished":3,"host":"h","shard":"0/2","worker":"w"}"#,
        // Counts and times no run writes.
        #"{"job":"c","status":"ok","frames":9223372036854775807,"fps":1e308,"seconds":-1,"input":"i","output":"o","fingerprint":"f","started":-1e308,"finished":1e308,"host":"h","worker":"w"}"#,
        #"{"job":"d","status":"ok","frames":-1,"fps":5,"seconds":2,"input":"i","output":"o","fingerprint":"f","started":5,"finished":1,"host":"\u001b]0;x\u0007","worker":"w"}"#,
        #"{"job":"a","sta"#,
    ]
    static let resultsDictionary = [#""frames""#, #""fps""#, #""seconds""#, #""started""#, #""finished""#, #""status""#, #""ok""#,
                                    #""failed""#, #""job""#, ":", ",", "{", "}", "\n", "\"", "1e308", "-1", "9223372036854775807"]

    func testFuzzResultsFiles() throws {
        let scratch = ScratchDirectory()
        let path = scratch.path("results.jsonl")
        var reports = 0
        let tried = Fuzzer(corpus: [Self.results.joined(separator: "\n")] + Self.results, dictionary: Self.resultsDictionary)
            .run("results") { text in
                XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
                let (results, problems) = BatchResultsFile.readChecked([path])
                XCTAssertTrue(results.allSatisfy { $0.problem == nil })
                for problem in problems { XCTAssertFalse(problem.contains("\n"), problem) }
                do {
                    let report = try BatchReport.load([path])
                    reports += 1
                    XCTAssertGreaterThanOrEqual(report.frames, 0)
                    XCTAssertTrue(report.aggregateFPS.isFinite && report.wallSeconds.isFinite && report.jobSeconds.isFinite)
                    _ = PrismCommandLine.terminalSafe(report.text)
                    _ = try report.json()
                } catch {
                    assertOneLine(error, text)
                }
            }
        XCTAssertGreaterThan(reports, 1)
        print("fuzz results: \(tried) inputs, \(reports) reports")
    }

    static let stdin = ["start\nsnap\nquit\n", "toggle\n\nstop\r\ncamera /dev/video9\nphoto\nexit", "camera\n  start  \n\tquit\t\n",
                        String(repeating: "x", count: 300) + "\nstart\n", "\u{1B}]0;x\u{07}\n\u{0}\n\u{202E}stop\n"]
    static let stdinDictionary = ["start", "stop", "toggle", "snap", "photo", "camera ", "quit", "exit", "\n", "\r\n", " ", "\t",
                                  "\u{1B}[31m", "/dev/video0", String(repeating: "y", count: 100)]

    func testFuzzRecordStdin() throws {
        let scratch = ScratchDirectory()
        let path = scratch.path("stdin")
        var commands = 0
        let limit = 64
        let tried = Fuzzer(corpus: Self.stdin, dictionary: Self.stdinDictionary).run("record-stdin") { text in
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { return XCTFail("open") }
            defer { close(fd) }
            var reader = BoundedLineReader(descriptor: fd, limit: limit)
            var lines = 0
            while let line = reader.next() {
                lines += 1
                XCTAssertLessThanOrEqual(lines, text.utf8.count + 1, "more lines than bytes")
                switch line {
                case .text(let text): XCTAssertLessThanOrEqual(text.utf8.count, limit)
                case .overlong(let prefix, let bytes):
                    XCTAssertGreaterThan(bytes, limit)
                    XCTAssertLessThanOrEqual(prefix.unicodeScalars.count, RecordInput.echoLimit)
                }
                switch RecordInput(line) {
                case .command: commands += 1
                case .empty: break
                case .refused(let message):
                    XCTAssertLessThan(message.count, RecordInput.echoLimit + 200, message)
                    XCTAssertFalse(PrismCommandLine.terminalSafe(message).contains("\u{1B}"))
                }
            }
        }
        XCTAssertGreaterThan(commands, 3)
        print("fuzz record stdin: \(tried) inputs, \(commands) commands")
    }
}
