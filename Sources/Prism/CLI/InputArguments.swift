import Foundation
import PrismCore
import PrismKit
import PrismMedia
import PrismPipeline

/// INPUT may repeat (`prism run a.mp4 b.mp4 -o out.mp4`), as positionals or `--input [NAME=]SOURCE` (`-i`), in
/// any mix; the first is the run's clock and sound (`--audio-from` picks another's sound), the others are `[1]`, `[2]`… (or `[NAME]`) in the graph.
/// The options that belong to one input (`--offset SECONDS`, `--end hold|stop|hide`) are given *before* it and
/// are that input's alone, as an output's options come before its `-o`; the first input takes none (it is
/// the clock the others are placed on).
struct InputArguments {
    /// One input as written, with its own options.
    struct Input: Equatable {
        var source: String
        var name: String?
        var offset: Double?
        var end: InputEndPolicy?
    }

    /// The options an input takes for itself, declared once.
    enum Key {
        static let input = OptionKey<String>("--input", value: "[NAME=]SOURCE", help: "an input (repeat for several; as INPUT, in any mix): [0] is the "
               + "first, [1], [2]… the others in the graph, or [NAME]; the first sets the run's clock and its sound (see --audio-from)")
        /// `-i`: `--input`'s short spelling, left out of the usage.
        static let inputShort = "-i"
        static let offset = OptionKey<Double>(
            spec: .value("--offset", value: "SECONDS", help: "start the input that follows this many seconds into the run "
                         + "(it shows nothing before)"),
            read: { text, name in
                guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 1e7 else {
                    throw UsageError("\(name) takes seconds (0 or more), not '\(text)'")
                }
                return seconds
            })
        static let end = OptionKey<InputEndPolicy>("--end", value: InputEndPolicy.placeholder, help: "what happens when the input that follows ends before the run: keep its last "
               + "frame (default), end the run, or show nothing (transparent)")
    }

    static let scoped: [OptionSpec] = [Key.input.spec, Key.offset.spec, Key.end.spec]

    /// The arguments with every input taken out, and the inputs in order (empty: none was given).
    static func split(_ arguments: [String], command: CommandSpec) throws -> (rest: [String], inputs: [Input]) {
        var rest: [String] = [], inputs: [Input] = []
        var offset: Double?, end: InputEndPolicy?
        func add(_ text: String, named: Bool) throws {
            var input = Input(source: text, offset: offset, end: end)
            if named, let (name, source) = Self.named(text) {
                input.name = name
                input.source = source
            }
            guard !input.source.isEmpty else { throw UsageError("--input needs a SOURCE") }
            inputs.append(input)
            (offset, end) = (nil, nil)
        }
        let own = [Key.input.name, Key.inputShort, Key.offset.name, Key.end.name]
        let tokens = ArgumentToken.read(arguments, takesValue: { own.contains($0) || command.option(named: $0)?.takesValue == true })
        for token in tokens {
            switch token {
            case .operand(let word):
                try add(word, named: false)
            case .endOfOptions(let words):
                for word in words { try add(word, named: false) }
            case .option(let name, let value, let words):
                guard own.contains(name) else {
                    rest += words
                    continue
                }
                guard let value else { throw UsageError("\(name) needs a value") }
                switch name {
                case Key.offset.name:
                    let seconds = try Key.offset.read(value, name)
                    guard offset == nil else { throw UsageError("--offset is given twice for one input") }
                    offset = seconds
                case Key.end.name:
                    let policy = try Key.end.read(value, name)
                    guard end == nil else { throw UsageError("--end is given twice for one input") }
                    end = policy
                default:
                    try add(value, named: true)
                }
            }
        }
        if offset != nil || end != nil {
            throw UsageError("--offset and --end apply to the input given after them; none follows")
        }
        if let first = inputs.first, first.offset != nil || first.end != nil {
            throw UsageError("--offset and --end apply to the inputs after the first; the first input (\(first.source)) is the run's clock")
        }
        var names: Set<String> = []
        for input in inputs {
            guard let name = input.name else { continue }
            guard names.insert(name).inserted else { throw UsageError("input name '\(name)' is given twice") }
        }
        return (rest, inputs)
    }

    /// The input `--audio-from` names, by its index (`0` the first) or its name among `names` (every input's,
    /// the first's first). An index the run lacks is the engine's to refuse, where the inputs are.
    static func audioInput(_ text: String, names: [String?]) throws -> Int {
        if let index = Int(text) { return index }
        guard let index = names.firstIndex(of: text) else {
            throw UsageError("--audio-from: no input is named '\(text)'")
        }
        return index
    }

    /// `NAME=SOURCE` when the text before the first `=` is a label name (letters, digits, `-`, `_`, not a
    /// number, not `in` or `out`); a URL's query (`srt://host?mode=listener`) is not a name.
    static func named(_ text: String) -> (name: String, source: String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let name = String(text[..<equals])
        guard !name.isEmpty, name.allSatisfy({ ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") && $0.isASCII }),
              Int(name) == nil, name != "in", name != "out" else { return nil }
        return (name, String(text[text.index(after: equals)...]))
    }

    /// The first INPUT as `run`, `record` and `dev` read it: the pattern (none, or `pattern`), raw frames on
    /// stdin (`-`, which `--input-format` describes), a camera, or a movie (a file, FIFO, `pipe:N`, URL or
    /// image sequence), checked before anything opens it.
    static func firstInput(_ argument: String?, rawFormat inputFormat: String?) throws -> InputSpec {
        switch argument {
        case nil, "pattern":
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            return .pattern
        case "-":
            guard let inputFormat else { throw UsageError("raw input on stdin needs --input-format WxH:PIXFMT:RATE") }
            return .standardInput(try RawVideoFormat(parsing: inputFormat))
        case let argument? where InputSpec.cameraPath(argument) != nil:
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            let path = InputSpec.cameraPath(argument)!
            guard !path.isEmpty else { throw UsageError("v4l2: needs a device path, e.g. v4l2:/dev/video0") }
            return .camera(path)
        case let path?:
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            try InputSpec.checkMovieArgument(path)  // files, FIFOs, pipe:N, URLs, img%03d.png patterns
            return .movie(path)
        }
    }

    /// An input after the first, checked before anything opens it: a file that exists, a URL, a camera or
    /// the pattern (raw frames on stdin can only be the first input).
    static func extraInput(_ input: Input, index: Int, options: Session.Options) throws -> ExtraInput {
        var spec: SourceSpec
        switch input.source {
        case "pattern":
            spec = SourceSpec(input: .pattern, size: options.size, frameRate: options.frameRate)
        case "-":
            throw UsageError("input \(index): raw frames on stdin (-) can only be the first input")
        case let argument where InputSpec.cameraPath(argument) != nil:
            let path = InputSpec.cameraPath(argument)!
            guard !path.isEmpty else { throw UsageError("v4l2: needs a device path, e.g. v4l2:/dev/video0") }
            spec = SourceSpec(input: .camera(path))
        case let path:
            do {
                try InputSpec.checkMovieArgument(path)
            } catch let error as InvalidRequest {
                throw UsageError("input \(index): \(error.description)")
            }
            spec = SourceSpec(input: .movie(path))
            spec.strictDecoding = options.strictDecoding
        }
        return ExtraInput(spec: spec, name: input.name,
                          offset: MediaTime(value: Int64(((input.offset ?? 0) * 1_000_000).rounded()), timescale: 1_000_000),
                          end: input.end ?? .hold)
    }
}
