import Foundation
import PrismGPU
import XCTest

/// A seeded mutation fuzzer for the parsers: deterministic (same seed, same inputs), bounded by an
/// iteration count and a time budget so `swift test` in CI runs every target on every submission.
/// Inputs come from a corpus of valid texts and the crashing inputs of issue 9 (kept as regressions),
/// mutated by splicing, deleting, duplicating and inserting tokens from a per-parser dictionary.
///
/// `PRISM_FUZZ_SECONDS` (per target, default 2) and `PRISM_FUZZ_SEED` change the budget and seed,
/// e.g. for a longer run by hand; the seed of a failing input is in the failure message.
struct Fuzzer {
    /// SplitMix64: tiny, seedable, good enough to spread mutations.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    let corpus: [String]
    let dictionary: [String]
    var seed: UInt64 = ProcessInfo.processInfo.environment["PRISM_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_F122
    var seconds: Double = ProcessInfo.processInfo.environment["PRISM_FUZZ_SECONDS"].flatMap { Double($0) } ?? 2
    var maxIterations = 200_000
    /// Longest input tried, in characters.
    var maxLength = 4096

    /// Extreme values every parser with numbers should meet.
    static let numbers = ["1e309", "-1e309", "1e19", "-1e19", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
                          "nan", "NaN", "inf", "-inf", "0", "-0", "0.0", "1e-320", "4.9e-324", "99999999999999999999999",
                          "65536", "16384", "16385", "2147483648", "-1", "0x10", "1.", ".5", "1e", "--1", "+1"]

    /// Runs `body` on the corpus as given, then on mutations, until the budget is spent. Returns how
    /// many inputs were tried. `body` should throw nothing but the parser's own errors; anything else
    /// it checks with XCTest. A crash stops the test run: the last input is written to
    /// `$TMPDIR/prism-fuzz-last-<name>.txt` before each call so it can be added to the corpus.
    @discardableResult
    func run(_ name: String, _ body: (String) -> Void) -> Int {
        var random = Generator(state: seed)
        let lastInput = NSTemporaryDirectory() + "/prism-fuzz-last-\(name).txt"
        let start = Date()
        var count = 0
        func attempt(_ input: String) {
            try? input.write(toFile: lastInput, atomically: false, encoding: .utf8)
            body(input)
            count += 1
        }
        for input in corpus { attempt(input) }
        while count < maxIterations && Date().timeIntervalSince(start) < seconds {
            var input = corpus.randomElement(using: &random) ?? ""
            for _ in 0..<Int.random(in: 1...4, using: &random) { input = mutate(input, &random) }
            if input.count > maxLength { input = String(input.prefix(maxLength)) }
            attempt(input)
        }
        try? FileManager.default.removeItem(atPath: lastInput)
        return count
    }

    private func mutate(_ text: String, _ random: inout Generator) -> String {
        var chars = Array(text)
        func position() -> Int { chars.isEmpty ? 0 : Int.random(in: 0...chars.count, using: &random) }
        func range() -> Range<Int> {
            let a = position(), b = position()
            return min(a, b)..<max(a, b)
        }
        switch Int.random(in: 0..<9, using: &random) {
        case 0, 1:  // a token from the dictionary
            let token = (dictionary + Self.numbers).randomElement(using: &random) ?? ""
            chars.insert(contentsOf: token, at: position())
        case 2:  // replace a run of digits (or any position) with an extreme number
            let token = Self.numbers.randomElement(using: &random)!
            let r = range()
            chars.replaceSubrange(r.lowerBound..<min(r.upperBound, r.lowerBound + 6), with: token)
        case 3:  // delete a range
            let r = range()
            chars.removeSubrange(r.lowerBound..<min(r.upperBound, r.lowerBound + 12))
        case 4:  // duplicate a range
            let r = range()
            chars.insert(contentsOf: chars[r.lowerBound..<min(r.upperBound, r.lowerBound + 64)], at: position())
        case 5:  // one random character, sometimes a control or non-ASCII one
            let pool: [Character] = ["(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "\"", "'", "\\", "\n", "\r", "\t", "\0",
                                     " ", "#", "$", "x", "-", "+", ".", "e", "é", "\u{202E}", "🎨", "\u{FEFF}"]
            let c = pool.randomElement(using: &random)!
            if !chars.isEmpty, Bool.random(using: &random) { chars[Int.random(in: 0..<chars.count, using: &random)] = c }
            else { chars.insert(c, at: position()) }
        case 6:  // splice with another corpus entry
            let other = Array(corpus.randomElement(using: &random) ?? "")
            let cut = position()
            let from = other.isEmpty ? 0 : Int.random(in: 0...other.count, using: &random)
            chars = Array(chars[..<cut]) + Array(other[from...])
        case 7:  // repeat a token many times (nesting, long chains)
            let token = (dictionary.randomElement(using: &random) ?? "(")
            chars.insert(contentsOf: String(repeating: token, count: Int.random(in: 2...400, using: &random)), at: position())
        default:  // truncate
            chars = Array(chars.prefix(position()))
        }
        return String(chars)
    }
}

/// Checks shared by every target: a refusal is one line that says something.
func assertOneLine(_ error: any Error, _ input: String, file: StaticString = #filePath, line: UInt = #line) {
    let text = "\(error)"
    XCTAssertFalse(text.isEmpty, "empty error for \(input.debugDescription.prefix(200))", file: file, line: line)
    XCTAssertFalse(text.contains("\n"), "a multi-line error for \(input.debugDescription.prefix(200)): \(text.prefix(300))",
                   file: file, line: line)
}

/// The one GPU context the fuzz targets render on, made on first use (llvmpipe contexts are slow to make).
enum FuzzGPU {
    nonisolated(unsafe) private static var context: GPUContext?

    static func shared() throws -> GPUContext {
        if let context { return context }
        let made = try GPUContext()
        context = made
        return made
    }
}
