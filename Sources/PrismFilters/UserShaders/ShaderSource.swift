import Foundation
import PrismCore

/// A line (and optionally a column) in a file the author wrote. Lines and columns are 1-based.
public struct ShaderSourceLocation: Hashable, Sendable, CustomStringConvertible {
    /// Path of the file, as the shader or include named it.
    public var file: String
    /// 1-based line.
    public var line: Int
    /// 1-based column, when known.
    public var column: Int?

    /// The place `file`:`line`(:`column`).
    public init(file: String, line: Int, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String {
        column.map { "\(file):\(line):\($0)" } ?? "\(file):\(line)"
    }
}

/// Where each line of a generated GLSL source came from.
///
/// Generated sources are the author's lines (through `#include` expansion and ISF translation)
/// with a preamble before them and, for ShaderToy shaders, a `main` after them. The map sends a
/// generated line back to the author's file and line; preamble lines map to nil.
package struct ShaderLineMap: Hashable, Sendable {
    package struct Origin: Hashable, Sendable {
        package var file: String
        package var line: Int
        /// True when the generated line is the author's line unchanged, so compiler columns are
        /// the author's columns too. False when translation edited the line.
        package var columnsExact: Bool
    }

    /// One entry per generated line, index 0 for line 1.
    package var origins: [Origin?]

    package init(origins: [Origin?]) { self.origins = origins }

    /// The author's location of a 1-based generated line (and column), or nil for generated text.
    package func location(ofGeneratedLine line: Int, column: Int? = nil) -> ShaderSourceLocation? {
        guard line >= 1, line <= origins.count, let origin = origins[line - 1] else { return nil }
        return ShaderSourceLocation(file: origin.file, line: origin.line, column: origin.columnsExact ? column : nil)
    }
}

/// A complete GLSL ES source ready to compile, with the map back to the author's files.
package struct ShaderProgramSource: Hashable, Sendable {
    package var source: String
    package var lineMap: ShaderLineMap

    /// Turns a driver's info log into diagnostics in the author's files (see `ShaderCompilerLog`).
    /// `file` names lines of generated code that have no author line.
    package func diagnostics(fromLog log: String, file: String) -> [ShaderDiagnostic] {
        ShaderCompilerLog.parse(log, lineMap: lineMap, generatedFile: file)
    }
}

/// A shader that cannot be loaded: unreadable file, malformed ISF header, bad include, bad @param.
public struct ShaderLoadError: PrismError, Equatable {
    /// The shader file (or include) at fault.
    public var file: String
    /// 1-based line, when the problem is at one.
    public var line: Int?
    /// 1-based column, when known; only shown with a line.
    public var column: Int?
    /// What is wrong, without the place; may quote the author's text.
    public var message: String

    /// An error in `file`, at `line` and `column` when known.
    public init(file: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: message`, like a compiler.
    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        if let column, line != nil { s += ":\(column)" }
        // Messages quote the author's text, which may span lines: an error stays one line.
        return s + ": " + message.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// One diagnostic at the error's place (the column dropped when there is no line).
    public var diagnostics: [Diagnostic] { [Diagnostic(file: file, line: line, column: line == nil ? nil : column, message: message)] }
}

/// Where shader sources and includes are read from. The loader only reads text through this, so
/// tests and the hot-reload watcher can supply their own.
package protocol ShaderFileSystem: Sendable {
    /// The text of the file at `path` (already absolute or relative to the working directory).
    func contents(ofFile path: String) throws -> String
}

/// Reads files from disk as UTF-8.
package struct LocalShaderFileSystem: ShaderFileSystem {
    package init() {}

    /// The largest shader source read (a generated one with embedded tables is well under this).
    package static let maximumFileBytes = 64 << 20

    package func contents(ofFile path: String) throws -> String {
        // Not String(contentsOfFile:): a FIFO there would block the reload for ever.
        let bytes = try RegularFile.read(path, what: "a shader file", maximumBytes: Self.maximumFileBytes)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw RegularFile.Problem(path: path, message: "is not UTF-8 text") }
        return text
    }
}

/// Path arithmetic shared by includes and imported images.
package enum ShaderPaths {
    /// `path` resolved against the directory of `file` unless it is absolute, then normalised.
    package static func resolve(_ path: String, relativeTo file: String) -> String {
        if path.hasPrefix("/") { return normalise(path) }
        let directory = (file as NSString).deletingLastPathComponent
        return normalise(directory.isEmpty ? path : directory + "/" + path)
    }

    /// Removes `.` and `a/..` components and duplicate slashes, without touching the disk.
    package static func normalise(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." || part.isEmpty { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else if part == "..", absolute {
                continue
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}

/// One line of author text with its origin, as it flows through include expansion and translation.
struct SourceLine: Hashable, Sendable {
    var text: String
    var file: String
    var line: Int
    var edited: Bool = false

    var origin: ShaderLineMap.Origin { ShaderLineMap.Origin(file: file, line: line, columnsExact: !edited) }
}

/// Splits text into lines on LF, CRLF or CR.
func splitLines(_ text: String) -> [String] {
    var lines: [String] = []
    var current = ""
    var iterator = text.unicodeScalars.makeIterator()
    var pendingCR = false
    while let scalar = iterator.next() {
        if pendingCR {
            pendingCR = false
            if scalar == "\n" { continue }
        }
        if scalar == "\n" || scalar == "\r" {
            lines.append(current)
            current = ""
            pendingCR = scalar == "\r"
        } else {
            current.unicodeScalars.append(scalar)
        }
    }
    lines.append(current)
    return lines
}

/// Expands `#include "file"` and `#import "file"` lines (also `<file>`), resolved relative to the
/// including file. Files may be included more than once, but not recursively; nesting is limited.
struct IncludeExpander {
    static let maximumDepth = 16

    let fileSystem: any ShaderFileSystem
    /// Every file read, in first-read order, the root first.
    private(set) var dependencies: [String] = []

    init(fileSystem: any ShaderFileSystem) {
        self.fileSystem = fileSystem
    }

    /// The include directive on this line: the path as written and the column where it starts.
    static func includeDirective(in line: String) -> (path: String, column: Int)? {
        let chars = Array(line)
        var i = 0
        func skipSpace() { while i < chars.count, chars[i] == " " || chars[i] == "\t" { i += 1 } }
        skipSpace()
        guard i < chars.count, chars[i] == "#" else { return nil }
        i += 1
        skipSpace()
        var word = ""
        while i < chars.count, chars[i].isLetter { word.append(chars[i]); i += 1 }
        guard word == "include" || word == "import" else { return nil }
        skipSpace()
        guard i < chars.count, chars[i] == "\"" || chars[i] == "<" else { return nil }
        let close: Character = chars[i] == "\"" ? "\"" : ">"
        let start = i + 1
        guard let end = chars[start...].firstIndex(of: close) else { return nil }
        return (String(chars[start..<end]), start + 1)
    }

    mutating func expand(root lines: [SourceLine], file: String) throws(ShaderLoadError) -> [SourceLine] {
        if !dependencies.contains(file) { dependencies.append(file) }
        return try expand(lines, stack: [file])
    }

    private mutating func expand(_ lines: [SourceLine], stack: [String]) throws(ShaderLoadError) -> [SourceLine] {
        var output: [SourceLine] = []
        output.reserveCapacity(lines.count)
        for line in lines {
            guard let (written, column) = Self.includeDirective(in: line.text) else {
                output.append(line)
                continue
            }
            let path = ShaderPaths.resolve(written, relativeTo: line.file)
            func fail(_ message: String) -> ShaderLoadError {
                ShaderLoadError(file: line.file, line: line.line, column: column, message: message)
            }
            if let index = stack.firstIndex(of: path) {
                let loop = (stack[index...] + [path]).map { ($0 as NSString).lastPathComponent }
                throw fail("include cycle: " + loop.joined(separator: " → "))
            }
            if stack.count > Self.maximumDepth {
                throw fail("includes nested deeper than \(Self.maximumDepth) files")
            }
            let text: String
            do { text = try fileSystem.contents(ofFile: path) } catch {
                throw fail("cannot read included file '\(written)' (\(path)): \(error)")
            }
            if !dependencies.contains(path) { dependencies.append(path) }
            let included = splitLines(text).enumerated().map { SourceLine(text: $0.element, file: path, line: $0.offset + 1) }
            output += try expand(included, stack: stack + [path])
        }
        return output
    }
}
