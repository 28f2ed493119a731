import XCTest
import PrismCore
@testable import Prism

/// The option tables and the scanner that reads arguments against them.
final class ArgumentScannerTests: XCTestCase {
    private enum Key {
        static let output = OptionKey<String>("-o", "--output", value: "FILE", help: "where", required: true)
        static let crf = OptionKey<Int>("--crf", value: "N", in: 0...51, help: "quality")
        /// `--crf` read as a frame rate: the same option, another key's reading.
        static let crfAsRate = OptionKey<FrameRate>("--crf", value: "N", help: "quality")
        static let filter = OptionKey<String>("--filter", "-f", value: "SPEC", help: "graph")
        static let quiet = FlagKey("--quiet", "-q", help: "hush")
        static let secret = FlagKey("--secret", help: "", hidden: true)
    }

    private let command = CommandSpec(name: "test", arguments: "[INPUT]", summary: "A command for the tests.", options: [
        Key.output.spec, Key.crf.spec, Key.filter.spec, Key.quiet.spec, Key.secret.spec,
    ])

    private func message(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }

    func testValuesFlagsAndPositionals() throws {
        var scanner = try ArgumentScanner(["in.mp4", "--crf=18", "-f", "invert", "-q", "--output", "-", "--", "--not-an-option"],
                                          command: command)
        XCTAssertEqual(scanner.positionals, ["in.mp4", "--not-an-option"])
        XCTAssertEqual(try scanner.value(Key.crf), 18)
        XCTAssertEqual(try scanner.value(Key.filter), "invert", "the key finds the value given under any of its spellings")
        XCTAssertEqual(try scanner.value(Key.output), "-", "- is a value, not an option")
        XCTAssertTrue(scanner.flag(Key.quiet))
        XCTAssertFalse(scanner.flag(Key.secret))
        XCTAssertNoThrow(try scanner.checkAllUsed())
        // A negative number is not an option: it reaches the option that takes it, which checks its range.
        var negative = try ArgumentScanner(["--crf", "-3", "-o", "x"], command: command)
        XCTAssertEqual(message { _ = try negative.value(Key.crf) }, "--crf takes a whole number in 0...51, not '-3'")
    }

    func testMistakesAreNamed() {
        XCTAssertEqual(message { _ = try ArgumentScanner(["-o", "a.mp4", "-o", "b.mp4"], command: self.command) },
                       "-o given twice ('a.mp4' and 'b.mp4'); give it once")
        XCTAssertEqual(message { _ = try ArgumentScanner(["-o", "a.mp4", "--output=b.mp4"], command: self.command) },
                       "-o and --output given twice ('a.mp4' and 'b.mp4'); give it once")
        XCTAssertEqual(message { _ = try ArgumentScanner(["--colour", "red"], command: self.command) },
                       "unknown option --colour for test (prism test --help lists them)")
        XCTAssertEqual(message { _ = try ArgumentScanner(["--quiet=yes"], command: self.command) }, "--quiet takes no value")
        XCTAssertEqual(message { _ = try ArgumentScanner(["-o"], command: self.command) }, "-o needs a value")
        // Flags may repeat: nothing is lost.
        XCTAssertNil(message { _ = try ArgumentScanner(["-q", "--quiet"], command: self.command) })
    }

    func testAnOptionTheCommandNeverReadIsReported() throws {
        var scanner = try ArgumentScanner(["-o", "x", "--crf", "20"], command: command)
        _ = try scanner.value(Key.output)
        XCTAssertEqual(message { try scanner.checkAllUsed() }, "--crf has no effect on prism test here")
        _ = try scanner.value(Key.crf)
        XCTAssertNoThrow(try scanner.checkAllUsed())
    }

    /// The one tokenizer the scanner and the input and output splits share.
    func testTokens() {
        let tokens = ArgumentToken.read(["in.mp4", "--crf=18", "-f", "mono", "-", "-3", "-q", "-o", "--", "a", "--b"],
                                        takesValue: { ["-f", "-o"].contains($0) })
        XCTAssertEqual(tokens, [
            .operand("in.mp4"),
            .option(name: "--crf", value: "18", words: ["--crf=18"]),
            .option(name: "-f", value: "mono", words: ["-f", "mono"]),
            .operand("-"), .operand("-3"),
            .option(name: "-q", value: nil, words: ["-q"]),
            // An option's value is the next word, whatever it looks like.
            .option(name: "-o", value: "--", words: ["-o", "--"]),
            .operand("a"),
            .option(name: "--b", value: nil, words: ["--b"]),
        ])
        XCTAssertEqual(ArgumentToken.read(["-q", "--", "-o", "x"], takesValue: { $0 == "-o" }),
                       [.option(name: "-q", value: nil, words: ["-q"]), .endOfOptions(["-o", "x"])])
        XCTAssertEqual(ArgumentToken.read(["-o"], takesValue: { $0 == "-o" }), [.option(name: "-o", value: nil, words: ["-o"])])
    }

    func testFrameRatesAreBounded() throws {
        for text in ["0.0000001", "0", "-5", "1/0", "5000", "abc"] {
            var scanner = try ArgumentScanner(["--crf", text], command: command)
            XCTAssertThrowsError(try scanner.value(Key.crfAsRate), text)
        }
        var scanner = try ArgumentScanner(["--crf", "29.97"], command: command)
        XCTAssertEqual(try scanner.value(Key.crfAsRate)?.rate, Rational(30000, 1001))
    }

    /// The usage is printed from the tables the parser reads: every visible option of every command is in
    /// `prism --help` and in the command's own help, hidden ones in neither, and each is accepted.
    func testUsageAndParserComeFromOneTable() throws {
        let usage = PrismCommandLine.usage
        XCTAssertEqual(Set(PrismCommandLine.commands.map(\.name)), ["run", "render", "filters", "models", "devices", "dev", "bench", "record", "batch", "completions", "manual", "help"])
        for spec in PrismCommandLine.commands {
            XCTAssertTrue(usage.contains("  " + spec.name), spec.name)
            for option in spec.options {
                let arguments = option.takesValue ? [option.name, "1"] : [option.name]
                XCTAssertNoThrow(try ArgumentScanner(arguments, command: spec), "\(spec.name) \(option.name)")
                if option.hidden {
                    XCTAssertFalse(usage.contains(option.name + " ") || usage.contains(option.name + "]"), option.name)
                    XCTAssertFalse(spec.help.contains(option.name), option.name)
                } else {
                    XCTAssertTrue(usage.contains(option.synopsis), "\(spec.name): \(option.synopsis) missing from the usage")
                    XCTAssertTrue(spec.help.contains(option.names.joined(separator: ", ")), "\(spec.name): \(option.name)")
                    XCTAssertFalse(option.help.isEmpty, "\(spec.name) \(option.name) needs a help line")
                }
            }
        }
        // The two that used to be accepted but undocumented.
        XCTAssertTrue(RunCommand.spec.help.contains("--threads N"))
        XCTAssertTrue(RenderCommand.spec.help.contains("--quality N"))
    }

    func testErrorLinesCannotDriveTheTerminal() {
        let hostile = "lut: x.cube, line 1: '\u{1B}]0;owned\u{07}TITLE' \u{202E}gpj.exe\u{9B}31m é"
        let safe = PrismCommandLine.terminalSafe(hostile)
        XCTAssertEqual(safe, "lut: x.cube, line 1: '\\x1b]0;owned\\x07TITLE' \\u{202e}gpj.exe\\u{9b}31m é")
        XCTAssertFalse(safe.unicodeScalars.contains { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
    }
}
