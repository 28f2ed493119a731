import PrismCore

/// One option of a command, declared once: its spellings, the value it takes (nil for a flag) and its
/// help line. The parser accepts exactly what is declared and the usage text is printed from the same
/// declarations, so the two cannot drift apart.
struct OptionSpec: Sendable {
    /// Every spelling, the one shown in the usage first: `["-o", "--output"]`.
    let names: [String]
    /// What the value looks like in the usage (`FILE`, `h264|hevc|ffv1|prores`); nil for a flag.
    let value: String?
    var help: String
    /// Shown without brackets in the synopsis (the command refuses to run without it).
    var required = false
    /// Accepted but left out of the usage (test hooks).
    var hidden = false

    static func value(_ names: String..., value: String, help: String, required: Bool = false, hidden: Bool = false) -> OptionSpec {
        OptionSpec(names: names, value: value, help: help, required: required, hidden: hidden)
    }

    var name: String { names[0] }
    var takesValue: Bool { value != nil }

    /// `[--crf N]`, `-o OUTPUT`, `[--quiet]`.
    var synopsis: String {
        let text = name + (value.map { " " + $0 } ?? "")
        return required ? text : "[" + text + "]"
    }
}

/// An option that takes a value, declared once: its row of the command's table (`spec`) and how its text
/// reads (`read`), so a parser asks for the key (`scanner.value(Key.port)`) and gets a value of the key's
/// type, checked the one way, instead of reading a spelling and converting it where it is read.
struct OptionKey<Value>: Sendable {
    let spec: OptionSpec
    /// Reads the text given for the option spelt as its first name; throws a one-line `UsageError`.
    let read: @Sendable (_ text: String, _ name: String) throws -> Value

    init(spec: OptionSpec, read: @escaping @Sendable (_ text: String, _ name: String) throws -> Value) {
        precondition(spec.takesValue, "\(spec.name) is a flag: declare it as a FlagKey")
        self.spec = spec
        self.read = read
    }

    var name: String { spec.name }
}

extension OptionKey where Value: OptionValue {
    /// An option whose value type reads and checks itself.
    init(_ names: String..., value: String, help: String, required: Bool = false, hidden: Bool = false) {
        self.init(spec: OptionSpec(names: names, value: value, help: help, required: required, hidden: hidden),
                  read: { try Value(text: $0, name: $1) })
    }
}

extension OptionKey where Value == String {
    /// An option whose value is taken as it is given (a path, an address, a list its command splits).
    init(_ names: String..., value: String, help: String, required: Bool = false, hidden: Bool = false) {
        self.init(spec: OptionSpec(names: names, value: value, help: help, required: required, hidden: hidden),
                  read: { text, _ in text })
    }
}

extension OptionKey where Value == Int {
    /// A whole number in `range`.
    init(_ names: String..., value: String, in range: ClosedRange<Int>, help: String, hidden: Bool = false) {
        self.init(spec: OptionSpec(names: names, value: value, help: help, hidden: hidden),
                  read: { try WholeNumber.parse($0, $1, in: range) })
    }
}

/// A flag, declared once: its row of the command's table.
struct FlagKey: Sendable {
    let spec: OptionSpec

    init(_ names: String..., help: String, hidden: Bool = false) {
        spec = OptionSpec(names: names, value: nil, help: help, hidden: hidden)
    }

    var name: String { spec.name }
}

/// A command's arguments and options, declared once (swift-argument-parser's model, as a table): the
/// parser, the one-line synopsis in `prism --help` and the detailed `prism COMMAND --help` come from it.
struct CommandSpec: Sendable {
    let name: String
    /// The positional arguments as the synopsis shows them: `[INPUT]`, `SHADER [INPUT]`.
    let arguments: String
    let summary: String
    let options: [OptionSpec]
    /// Lines after the option list in the detailed help (what the arguments mean).
    var notes: [String] = []

    /// The option `name` is a spelling of.
    func option(named name: String) -> OptionSpec? { options.first { $0.names.contains(name) } }

    /// `run [INPUT] -o OUTPUT [--filter SPEC] …`, wrapped to `width` columns with continuation lines indented.
    func synopsis(indent: String = "  ", width: Int = 116) -> String {
        var lines: [String] = []
        var line = indent + name + (arguments.isEmpty ? "" : " " + arguments)
        for option in options where !option.hidden {
            let word = option.synopsis
            if line.count + 1 + word.count > width {
                lines.append(line)
                line = indent + String(repeating: " ", count: name.count + 1) + word
            } else {
                line += " " + word
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// `prism COMMAND --help`: the synopsis, what the command does, one line per option, the notes.
    var help: String {
        var lines = ["usage: prism " + synopsis(indent: "").trimmingCharacters(in: .whitespaces), "", summary]
        let visible = options.filter { !$0.hidden }
        if !visible.isEmpty {
            lines.append("")
            lines.append("options:")
            let labels = visible.map { option in option.names.joined(separator: ", ") + (option.value.map { " " + $0 } ?? "") }
            let column = min(34, (labels.map(\.count).max() ?? 0) + 2)
            for (label, option) in zip(labels, visible) {
                let padding = label.count < column ? String(repeating: " ", count: column - label.count) : "\n  " + String(repeating: " ", count: column)
                lines.append("  " + label + padding + option.help)
            }
        }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }
}

/// One word of a command line as the one tokenizer reads it, for the scanner and for the splits that take
/// out an input's or an output's own options first (`InputArguments`, `OutputArguments`): all of them agree
/// on `--name=value`, on `--` and on `-` alone and negative numbers being words, not options.
enum ArgumentToken: Equatable {
    /// A word that is no option: an operand, `-` (stdin or stdout) or a number (`-3`, left to whichever
    /// option or check reads it).
    case operand(String)
    /// `--` and every word after it, all operands.
    case endOfOptions([String])
    /// An option as written (`words`: one, or two when its value is the next word), with its value: the
    /// text after `=` (`--crf=18`, flags included), else the next word when the option takes one (nil when
    /// there is none).
    case option(name: String, value: String?, words: [String])

    /// `arguments` as tokens; `takesValue` says which option names take the next word as their value.
    static func read(_ arguments: [String], takesValue: (String) -> Bool) -> [ArgumentToken] {
        var tokens: [ArgumentToken] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                tokens.append(.endOfOptions(Array(arguments[index...])))
                break
            }
            guard argument.hasPrefix("-"), argument != "-", Double(argument) == nil else {
                tokens.append(.operand(argument))
                continue
            }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                tokens.append(.option(name: String(argument[..<equals]), value: String(argument[argument.index(after: equals)...]),
                                      words: [argument]))
            } else if takesValue(argument), index < arguments.count {
                tokens.append(.option(name: argument, value: arguments[index], words: [argument, arguments[index]]))
                index += 1
            } else {
                tokens.append(.option(name: argument, value: nil, words: [argument]))
            }
        }
        return tokens
    }
}

/// Walks a command's arguments against its `CommandSpec`: options with values (`--crf 18`, `--crf=18`,
/// `-o out.mp4`), flags and positionals. Unknown options, a missing value, a value given to a flag and an
/// option that takes one value given twice are errors at once; `checkAllUsed()` reports any option the
/// command was given but never read.
struct ArgumentScanner {
    let command: CommandSpec
    /// Values by the option's first spelling, with the spelling used.
    private var values: [String: (spelling: String, value: String)] = [:]
    /// Flags given, by first spelling, with the spelling used.
    private var flags: [String: String] = [:]
    private var used: Set<String> = []
    private(set) var positionals: [String] = []

    init(_ arguments: [String], command: CommandSpec) throws {
        self.command = command
        for token in ArgumentToken.read(arguments, takesValue: { command.option(named: $0)?.takesValue == true }) {
            switch token {
            case .operand(let word):
                positionals.append(word)
            case .endOfOptions(let words):
                positionals += words
            case .option(let name, let value, _):
                guard let option = command.option(named: name) else {
                    let known = command.options.filter { !$0.hidden }.flatMap(\.names).filter { $0.hasPrefix("--") }
                    throw UsageError("unknown option \(name) for \(command.name)" + NearestName.suggestion(for: name, among: known)
                                     + " (prism \(command.name) --help lists them)")
                }
                if option.takesValue {
                    guard let value else { throw UsageError("\(name) needs a value") }
                    if let earlier = values[option.name] {
                        let both = earlier.spelling == name ? name : "\(earlier.spelling) and \(name)"
                        throw UsageError("\(both) given twice ('\(earlier.value)' and '\(value)'); give it once")
                    }
                    values[option.name] = (name, value)
                } else {
                    // A flag has a value only when one was written into it (`--quiet=yes`).
                    guard value == nil else { throw UsageError("\(name) takes no value") }
                    flags[option.name] = name
                }
            }
        }
    }

    /// A command without options or operands (`prism devices`, `models`, `manual`): anything else is one line.
    static func checkNoArguments(_ arguments: [String], command: CommandSpec) throws {
        let scanner = try ArgumentScanner(arguments, command: command)
        guard scanner.positionals.isEmpty else { throw UsageError("\(command.name) takes no arguments") }
    }

    /// The option `name` spells, marked used; asking for an undeclared option is a programming error.
    private mutating func declared(_ name: String) -> String {
        guard let option = command.option(named: name) else { preconditionFailure("\(name) is not declared for \(command.name)") }
        used.insert(option.name)
        return option.name
    }

    /// The value of `key`, read by the key's type; nil when not given.
    mutating func value<Value>(_ key: OptionKey<Value>) throws -> Value? {
        guard let text = values[declared(key.spec.name)]?.value else { return nil }
        return try key.read(text, key.spec.name)
    }

    /// Whether the flag `key` was given.
    mutating func flag(_ key: FlagKey) -> Bool { flags[declared(key.spec.name)] != nil }

    /// Whether the option of `spec` was given (its value unread), for refusing it where it does not apply.
    mutating func isGiven(_ spec: OptionSpec) -> Bool {
        let option = declared(spec.name)
        return values[option] != nil || flags[option] != nil
    }

    /// Throws for an option that was given but that the command never read: it would be silently ignored.
    func checkAllUsed() throws {
        let given = values.map { ($0.key, $0.value.spelling) } + flags.map { ($0.key, $0.value) }
        if let (_, spelling) = given.sorted(by: { $0.1 < $1.1 }).first(where: { !used.contains($0.0) }) {
            throw UsageError("\(spelling) has no effect on prism \(command.name) here")
        }
    }
}

/// A command line as an option source: a group's key `crf` is the option `--crf`.
extension ArgumentScanner: OptionSource {
    mutating func text(for key: String) -> String? { values[declared("--" + key)]?.value }
    mutating func flag(for key: String) -> Bool { flags[declared("--" + key)] != nil }
    func spelling(for key: String) -> String { "--" + key }
}
