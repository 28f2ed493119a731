import Foundation

/// A reload failure as the author needs it: `file:line:column: message`, taken from the thrown error's
/// text (shader loaders and compilers report in that form; `.cube` files say `file, line N: message`).
struct DevDiagnostic: Sendable, Equatable {
    var file: String
    var line: Int?
    var column: Int?
    var message: String

    var text: String {
        var s = file
        if let line { s += ":\(line)" }
        if let column, line != nil { s += ":\(column)" }
        return s + ": " + message
    }

    /// Finds the first `path:line[:column]: message` (or `path, line N: message`) in `description`,
    /// preferring a location in one of `files`; otherwise the whole text against `fallbackFile`.
    static func from(_ description: String, files: [String], fallbackFile: String) -> DevDiagnostic {
        let flat = description.replacingOccurrences(of: "\n", with: " ")
        var candidates: [DevDiagnostic] = []
        let colon = try? Regex(#"([^\s:,'"]+):(\d+)(?::(\d+))?:\s*(.*)"#)
        let comma = try? Regex(#"([^\s:,'"]+), line (\d+):\s*(.*)"#)
        var searchStart = flat.startIndex
        while let colon, searchStart < flat.endIndex, let match = try? colon.firstMatch(in: flat[searchStart...]) {
            if let file = match.output[1].substring, let line = match.output[2].substring.flatMap({ Int($0) }) {
                candidates.append(DevDiagnostic(file: String(file), line: line,
                                                column: match.output[3].substring.flatMap { Int($0) },
                                                message: String(match.output[4].substring ?? "")))
            }
            searchStart = flat.index(after: match.range.lowerBound)
        }
        if let comma, let match = try? comma.firstMatch(in: flat), let file = match.output[1].substring,
           let line = match.output[2].substring.flatMap({ Int($0) }) {
            candidates.append(DevDiagnostic(file: String(file), line: line, column: nil,
                                            message: String(match.output[3].substring ?? "")))
        }
        let known = Set(files.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        func isKnown(_ file: String) -> Bool {
            known.contains(URL(fileURLWithPath: file).standardizedFileURL.path)
                || files.contains { URL(fileURLWithPath: $0).lastPathComponent == file }
        }
        if let best = candidates.first(where: { isKnown($0.file) }) ?? candidates.first {
            return best
        }
        return DevDiagnostic(file: fallbackFile, line: nil, column: nil, message: flat)
    }
}
