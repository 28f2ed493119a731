import PrismCore

/// Walks a command's arguments: options with values (`--crf 18`, `--crf=18`, `-o out.mp4`), flags and
/// positionals. Each command pulls what it knows; anything left over is an error naming it.
struct ArgumentScanner {
    private var remaining: [String]
    private(set) var positionals: [String] = []

    init(_ arguments: [String], valueOptions: Set<String>, flags: Set<String>) throws {
        var index = 0
        var options: [String] = []
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positionals += arguments[index...]
                break
            }
            if argument.hasPrefix("-") && argument != "-" && !(Double(argument) != nil) {
                let (name, inlineValue) = Self.split(argument)
                if valueOptions.contains(name) {
                    if let inlineValue {
                        options += [name, inlineValue]
                    } else {
                        guard index < arguments.count else { throw UsageError("\(name) needs a value") }
                        options += [name, arguments[index]]
                        index += 1
                    }
                } else if flags.contains(name) {
                    guard inlineValue == nil else { throw UsageError("\(name) takes no value") }
                    options.append(name)
                } else {
                    throw UsageError("unknown option \(name)")
                }
            } else {
                positionals.append(argument)
            }
        }
        remaining = options
    }

    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// The last value given for any of `names` (later options override earlier ones).
    mutating func value(_ names: String...) -> String? {
        var found: String?
        var index = 0
        while index < remaining.count {
            if names.contains(remaining[index]), index + 1 < remaining.count {
                found = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
            } else {
                index += 1
            }
        }
        return found
    }

    mutating func flag(_ names: String...) -> Bool {
        let before = remaining.count
        remaining.removeAll { names.contains($0) }
        return remaining.count != before
    }

    mutating func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) takes a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    mutating func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), range.contains(number) else {
            throw UsageError("\(name) takes a number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    mutating func size(_ name: String) throws -> Size? {
        guard let text = value(name) else { return nil }
        guard let size = Size(parsing: text) else { throw UsageError("\(name) takes WxH (e.g. 1280x720) or 720p, not '\(text)'") }
        return size
    }
}
