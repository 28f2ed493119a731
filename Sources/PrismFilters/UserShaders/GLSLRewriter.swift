/// Rewrites GLSL text token by token, outside comments, keeping every newline so the line count
/// (and so the line map) is unchanged. Used to turn ISF and older GLSL into GLSL ES 3.00.
struct GLSLRewriter {
    /// Identifier replacements (whole identifiers only).
    var identifiers: [String: String]
    /// The images ISF's IMG_ macros may name; nil leaves IMG_ identifiers alone.
    var images: Set<String>?

    /// Set when the text used an identifier that was renamed.
    private(set) var used: Set<String> = []

    static let isfIdentifiers: [String: String] = [
        "gl_FragColor": "isf_FragColor",
        "texture2D": "texture", "texture2DRect": "texture", "textureCube": "texture",
        "texture2DProj": "textureProj", "texture2DRectProj": "textureProj", "texture2DLod": "textureLod",
        "varying": "in", "vv_FragNormCoord": "isf_FragNormCoord",
        // Desktop ISF hosts run everything at high precision; llvmpipe honours mediump literally
        // (16-bit floats), which turns the usual hash-noise functions into NaN or constants.
        "mediump": "highp", "lowp": "highp",
    ]

    /// An ISF vertex shader: its varyings are outputs, its attributes inputs.
    static let isfVertexIdentifiers: [String: String] = isfIdentifiers.merging([
        "varying": "out", "attribute": "in", "vv_vertShaderInit": "isf_vertShaderInit",
    ]) { $1 }

    static let legacyTextureIdentifiers: [String: String] = [
        "texture2D": "texture", "textureCube": "texture", "texture2DProj": "textureProj", "texture2DLod": "textureLod",
    ]

    static let imageMacros: Set<String> = ["IMG_PIXEL", "IMG_NORM_PIXEL", "IMG_THIS_PIXEL", "IMG_THIS_NORM_PIXEL", "IMG_SIZE"]

    /// The uniform holding an image's size in pixels.
    static func sizeUniform(_ image: String) -> String { "_\(image)_imgSize" }

    init(identifiers: [String: String], images: Set<String>?) {
        self.identifiers = identifiers
        self.images = images
    }

    mutating func rewrite(_ lines: [SourceLine]) throws(ShaderLoadError) -> [SourceLine] {
        let text = lines.map(\.text).joined(separator: "\n")
        var edited: Set<Int> = []
        let output = try rewrite(text, lines: lines, firstLine: 0, edited: &edited)
        let outLines = splitLines(output)
        precondition(outLines.count == lines.count, "rewriting must keep the line count")
        return zip(lines, outLines).enumerated().map { index, pair in
            var line = pair.0
            line.text = pair.1
            if edited.contains(index) || line.text != pair.0.text { line.edited = true }
            return line
        }
    }

    private mutating func rewrite(_ text: String, lines: [SourceLine], firstLine: Int,
                                  edited: inout Set<Int>) throws(ShaderLoadError) -> String {
        let chars = Array(text)
        var out = ""
        out.reserveCapacity(chars.count)
        var i = 0
        var line = firstLine
        var lineStart = 0

        func location(_ offset: Int) -> (SourceLine, Int) {
            let source = lines[min(line, lines.count - 1)]
            return (source, offset - lineStart + 1)
        }

        while i < chars.count {
            let c = chars[i]
            if c == "\n" {
                out.append(c)
                i += 1
                line += 1
                lineStart = i
                continue
            }
            if c == "/", i + 1 < chars.count, chars[i + 1] == "/" {
                while i < chars.count, chars[i] != "\n" { out.append(chars[i]); i += 1 }
                continue
            }
            if c == "/", i + 1 < chars.count, chars[i + 1] == "*" {
                out += "/*"
                i += 2
                while i < chars.count, !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") {
                    if chars[i] == "\n" { line += 1; lineStart = i + 1 }
                    out.append(chars[i])
                    i += 1
                }
                if i < chars.count { out += "*/"; i += 2 }
                continue
            }
            if c.isNumber {
                // A number with its suffixes (1.0e5, 0x1Fu): never an identifier.
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "." || chars[i] == "_" { out.append(chars[i]); i += 1 }
                continue
            }
            guard c.isLetter || c == "_" else {
                out.append(c)
                i += 1
                continue
            }
            let start = i
            while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" { i += 1 }
            let word = String(chars[start..<i])
            if let images, Self.imageMacros.contains(word) {
                edited.insert(line)
                let (source, column) = location(start)
                func fail(_ message: String) -> ShaderLoadError {
                    ShaderLoadError(file: source.file, line: source.line, column: column, message: message)
                }
                var j = i
                while j < chars.count, chars[j] == " " || chars[j] == "\t" { j += 1 }
                guard j < chars.count, chars[j] == "(" else { throw fail("\(word) must be followed by '('") }
                j += 1
                guard let arguments = Self.arguments(chars, from: &j) else { throw fail("\(word)( is never closed") }
                let expected = (word == "IMG_PIXEL" || word == "IMG_NORM_PIXEL") ? 2 : 1
                guard arguments.count == expected else {
                    throw fail("\(word) takes \(expected) argument\(expected == 1 ? "" : "s"), found \(arguments.count)")
                }
                let image = arguments[0].trimmingLeadingWhitespace().trimmingTrailingWhitespace()
                guard images.contains(image) else {
                    let known = images.sorted().joined(separator: ", ")
                    throw fail("\(word): '\(image)' is not an image of this shader (images: \(known.isEmpty ? "none" : known))")
                }
                var coordinate = ""
                if expected == 2 {
                    var nested: Set<Int> = []
                    coordinate = try rewrite(arguments[1], lines: lines, firstLine: line, edited: &nested)
                    edited.formUnion(nested)
                }
                switch word {
                case "IMG_PIXEL": out += "texture(\(image), (\(coordinate)) / \(Self.sizeUniform(image)))"
                case "IMG_NORM_PIXEL":
                    // The reference samples at (c · size) / size (its VVSAMPLER_2DBYNORM with a whole-texture
                    // rectangle), which can differ from c in the last bit. At isf_FragNormCoord itself both
                    // land on the pixel's own texel (ISFConventionsTests), and the short form keeps fusing.
                    let trimmed = coordinate.trimmingLeadingWhitespace().trimmingTrailingWhitespace()
                    if trimmed == "isf_FragNormCoord" || trimmed == "vv_FragNormCoord" {
                        out += "texture(\(image), isf_FragNormCoord)"
                    } else {
                        out += "texture(\(image), (\(coordinate)) * \(Self.sizeUniform(image)) / \(Self.sizeUniform(image)))"
                    }
                case "IMG_SIZE": out += Self.sizeUniform(image)
                default: out += "texture(\(image), isf_FragNormCoord)"
                }
                // Keep the lines the call spanned.
                for k in i..<j where chars[k] == "\n" { line += 1; lineStart = k + 1 }
                i = j
                used.insert(word)
                continue
            }
            if let replacement = identifiers[word] {
                out += replacement
                edited.insert(line)
                used.insert(word)
            } else {
                out += word
            }
        }
        return out
    }

    /// The arguments of a call whose `(` is just before `j`, split at top-level commas, with `j` moved past
    /// its `)`; nil when it is never closed.
    private static func arguments(_ chars: [Character], from j: inout Int) -> [String]? {
        var depth = 0
        var arguments: [String] = []
        var current = ""
        var closed = false
        while j < chars.count {
            let d = chars[j]
            if d == "(" { depth += 1 }
            if d == ")" {
                if depth == 0 { closed = true; j += 1; break }
                depth -= 1
            }
            if d == ",", depth == 0 { arguments.append(current); current = ""; j += 1; continue }
            current.append(d)
            j += 1
        }
        guard closed else { return nil }
        arguments.append(current)
        return arguments
    }
}

extension SourceLine {
    /// The line's text with leading blanks removed.
    var trimmedText: String { text.trimmingLeadingWhitespace() }

    /// True for a `#version` directive line.
    var isVersionDirective: Bool {
        let t = trimmedText
        guard t.hasPrefix("#") else { return false }
        return String(t.dropFirst()).trimmingLeadingWhitespace().hasPrefix("version")
    }
}
