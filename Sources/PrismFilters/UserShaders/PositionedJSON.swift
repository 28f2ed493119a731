/// A small JSON reader that remembers where every value starts, so ISF header problems (syntax
/// and meaning alike) can be reported at a line and column of the author's file.
///
/// It accepts what real ISF files contain beyond strict JSON: trailing commas in objects and
/// arrays. Everything else is standard JSON.
struct PositionedJSON {
    indirect enum Value {
        case object([(key: String, keyOffset: Int, value: PositionedJSON)])
        case array([PositionedJSON])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    var value: Value
    /// The index in the parsed character array where the value starts.
    var offset: Int

    subscript(key: String) -> PositionedJSON? {
        guard case .object(let members) = value else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// Like the subscript but case-insensitive (some hand-written ISF files write "Name" or "name").
    func member(_ key: String) -> PositionedJSON? {
        if let exact = self[key] { return exact }
        guard case .object(let members) = value else { return nil }
        return members.last { $0.key.uppercased() == key }?.value
    }

    var typeName: String {
        switch value {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    struct SyntaxError: Error {
        var message: String
        var offset: Int
    }

    /// Parses one value starting at `start` in `chars`; returns it and the index just past it.
    static func parse(_ chars: [Character], from start: Int, end: Int) throws(SyntaxError) -> (PositionedJSON, Int) {
        var parser = Parser(chars: chars, position: start, end: end)
        parser.skipSpace()
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        return (value, parser.position)
    }

    private struct Parser {
        let chars: [Character]
        var position: Int
        let end: Int

        var current: Character? { position < end ? chars[position] : nil }

        func fail(_ message: String, at offset: Int? = nil) -> SyntaxError {
            SyntaxError(message: message, offset: offset ?? position)
        }

        func found() -> String {
            guard let c = current else { return "the end of the header" }
            return "'\(c)'"
        }

        mutating func skipSpace() {
            while let c = current, c.isWhitespace { position += 1 }
        }

        mutating func parseValue(depth: Int) throws(SyntaxError) -> PositionedJSON {
            guard depth < 200 else { throw fail("the header nests too deeply") }
            let start = position
            guard let c = current else { throw fail("expected a value, found the end of the header") }
            switch c {
            case "{": return PositionedJSON(value: try parseObject(depth: depth), offset: start)
            case "[": return PositionedJSON(value: try parseArray(depth: depth), offset: start)
            case "\"": return PositionedJSON(value: .string(try parseString()), offset: start)
            case "-", "0"..."9": return PositionedJSON(value: .number(try parseNumber()), offset: start)
            default:
                var word = ""
                while let d = current, d.isLetter { word.append(d); position += 1 }
                switch word {
                case "true": return PositionedJSON(value: .bool(true), offset: start)
                case "false": return PositionedJSON(value: .bool(false), offset: start)
                case "null": return PositionedJSON(value: .null, offset: start)
                case "": throw fail("expected a value, found \(found())")
                default: throw fail("expected a value, found '\(word)'", at: start)
                }
            }
        }

        mutating func parseObject(depth: Int) throws(SyntaxError) -> Value {
            position += 1
            var members: [(key: String, keyOffset: Int, value: PositionedJSON)] = []
            while true {
                skipSpace()
                if current == "}" { position += 1; return .object(members) }
                guard current == "\"" else {
                    if current == "," { throw fail(members.isEmpty ? "expected a key, found ','" : "two commas in a row") }
                    throw fail("expected a quoted key or '}', found \(found())")
                }
                let keyOffset = position
                let key = try parseString()
                skipSpace()
                guard current == ":" else { throw fail("expected ':' after key \"\(key)\", found \(found())") }
                position += 1
                skipSpace()
                let value = try parseValue(depth: depth + 1)
                members.append((key, keyOffset, value))
                skipSpace()
                if current == "," { position += 1; continue } // a trailing comma is allowed
                if current == "}" { position += 1; return .object(members) }
                throw fail("expected ',' or '}' after the value of \"\(key)\", found \(found())")
            }
        }

        mutating func parseArray(depth: Int) throws(SyntaxError) -> Value {
            position += 1
            var elements: [PositionedJSON] = []
            while true {
                skipSpace()
                if current == "]" { position += 1; return .array(elements) }
                if current == "," { throw fail(elements.isEmpty ? "expected a value, found ','" : "two commas in a row") }
                elements.append(try parseValue(depth: depth + 1))
                skipSpace()
                if current == "," { position += 1; continue }
                if current == "]" { position += 1; return .array(elements) }
                throw fail("expected ',' or ']' in the array, found \(found())")
            }
        }

        mutating func parseString() throws(SyntaxError) -> String {
            let start = position
            position += 1
            var result = ""
            while true {
                guard let c = current else { throw fail("unterminated string", at: start) }
                if c == "\n" || c == "\r\n" || c == "\r" { throw fail("unterminated string (strings cannot span lines)", at: start) }
                position += 1
                if c == "\"" { return result }
                if c != "\\" { result.append(c); continue }
                guard let e = current else { throw fail("unterminated string", at: start) }
                position += 1
                switch e {
                case "\"": result.append("\"")
                case "\\": result.append("\\")
                case "/": result.append("/")
                case "b": result.append("\u{08}")
                case "f": result.append("\u{0C}")
                case "n": result.append("\n")
                case "r": result.append("\r")
                case "t": result.append("\t")
                case "u":
                    var hex = ""
                    for _ in 0..<4 {
                        guard let h = current, h.isHexDigit else { throw fail("expected four hex digits after \\u") }
                        hex.append(h)
                        position += 1
                    }
                    result.unicodeScalars.append(Unicode.Scalar(UInt32(hex, radix: 16)!) ?? "\u{FFFD}")
                default:
                    throw fail("unknown escape '\\\(e)' in string", at: position - 2)
                }
            }
        }

        mutating func parseNumber() throws(SyntaxError) -> Double {
            let start = position
            while let c = current, c.isASCII, c.isNumber || "+-.eE".contains(c) { position += 1 }
            let token = String(chars[start..<position])
            guard let value = GraphParser.number(from: token), !token.hasPrefix("+") else {
                throw fail("invalid number '\(token)'", at: start)
            }
            return value
        }
    }
}
