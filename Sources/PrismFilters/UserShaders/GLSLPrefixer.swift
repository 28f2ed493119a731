/// Renames every identifier an author declared (globals, functions, locals, macros, uniforms) by
/// putting a prefix in front, so that the code of several shaders can live in one fused program.
///
/// Built-in names (keywords, types, functions, `gl_` variables, predefined macros) are kept, as are
/// names after a `.` (swizzles, struct fields, `.length()`) and member names inside `struct { … }`.
/// Comments and preprocessor directive words are copied as written; `#version`, `#extension`,
/// `#pragma` and `#line` lines are copied whole. Newlines are kept, so the line count is unchanged.
struct GLSLPrefixer {
    var prefix: String
    /// Identifiers replaced by fixed text instead of being prefixed (applied before prefixing).
    var replacements: [String: String] = [:]

    /// Identifiers seen (before renaming) that were prefixed.
    private(set) var renamed: Set<String> = []

    init(prefix: String, replacements: [String: String] = [:]) {
        self.prefix = prefix
        self.replacements = replacements
    }

    /// The renamed text as a token list: `.text` pieces are copied, `.identifier` pieces are the
    /// renamed identifiers (original name kept for pattern matching).
    enum Piece: Equatable {
        case text(String)
        case identifier(original: String, renamed: String)
        /// One punctuation character.
        case symbol(Character)

        var output: String {
            switch self {
            case .text(let s): s
            case .identifier(_, let renamed): renamed
            case .symbol(let c): String(c)
            }
        }
    }

    mutating func pieces(_ text: String) -> [Piece] {
        let chars = Array(text)
        var out: [Piece] = []
        var i = 0
        var atLineStart = true
        var previousSignificant: Character? = nil
        var pendingStruct = false
        var braceDepth = 0
        var structDepths: [Int] = []

        while i < chars.count {
            let c = chars[i]
            if c == "\n" {
                out.append(.text("\n"))
                atLineStart = true
                i += 1
                continue
            }
            if c == " " || c == "\t" || c == "\r" {
                out.append(.text(String(c)))
                i += 1
                continue
            }
            if c == "/", i + 1 < chars.count, chars[i + 1] == "/" {
                var s = ""
                while i < chars.count, chars[i] != "\n" { s.append(chars[i]); i += 1 }
                out.append(.text(s))
                continue
            }
            if c == "/", i + 1 < chars.count, chars[i + 1] == "*" {
                var s = "/*"
                i += 2
                while i < chars.count, !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") { s.append(chars[i]); i += 1 }
                if i < chars.count { s += "*/"; i += 2 }
                out.append(.text(s))
                continue
            }
            if c == "#", atLineStart {
                // The directive word is kept; some directives are copied whole.
                var j = i + 1
                while j < chars.count, chars[j] == " " || chars[j] == "\t" { j += 1 }
                let wordStart = j
                while j < chars.count, chars[j].isLetter { j += 1 }
                let word = String(chars[wordStart..<j])
                if ["version", "extension", "pragma", "line", "error"].contains(word) {
                    var s = ""
                    while i < chars.count, chars[i] != "\n" { s.append(chars[i]); i += 1 }
                    out.append(.text(s))
                } else {
                    out.append(.text(String(chars[i..<j])))
                    i = j
                }
                atLineStart = false
                continue
            }
            atLineStart = false
            if c.isNumber || (c == "." && i + 1 < chars.count && chars[i + 1].isNumber) {
                out.append(.text(Self.number(in: chars, at: &i)))
                previousSignificant = "0"
                continue
            }
            if c.isLetter || c == "_" {
                let start = i
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" { i += 1 }
                let word = String(chars[start..<i])
                let renamedWord: String
                if previousSignificant == "." {
                    renamedWord = word
                } else if let replacement = replacements[word] {
                    renamedWord = replacement
                } else if Self.builtins.contains(word) || word.hasPrefix("gl_") || word.hasPrefix("GL_") || word.hasPrefix("__") {
                    renamedWord = word
                } else if structDepths.last == braceDepth, let next = Self.nextSignificant(in: chars, from: i), next == ";" || next == "," || next == "[" {
                    renamedWord = word  // a struct member's name
                } else {
                    renamedWord = prefix + word
                    renamed.insert(word)
                }
                if word == "struct" { pendingStruct = true }
                out.append(.identifier(original: word, renamed: renamedWord))
                previousSignificant = "a"
                continue
            }
            if c == "{" {
                braceDepth += 1
                if pendingStruct { structDepths.append(braceDepth); pendingStruct = false }
            } else if c == "}" {
                if structDepths.last == braceDepth { structDepths.removeLast() }
                braceDepth -= 1
            } else if c == ";" {
                pendingStruct = false
            }
            out.append(.symbol(c))
            previousSignificant = c
            i += 1
        }
        return out
    }

    /// The first character from `index` that is not white space or in a comment.
    static func nextSignificant(in chars: [Character], from index: Int) -> Character? {
        var j = index
        while j < chars.count {
            let c = chars[j]
            if c == " " || c == "\t" || c == "\n" || c == "\r" { j += 1; continue }
            if c == "/", j + 1 < chars.count, chars[j + 1] == "/" {
                while j < chars.count, chars[j] != "\n" { j += 1 }
                continue
            }
            if c == "/", j + 1 < chars.count, chars[j + 1] == "*" {
                j += 2
                while j + 1 < chars.count, !(chars[j] == "*" && chars[j + 1] == "/") { j += 1 }
                j += 2
                continue
            }
            return c
        }
        return nil
    }

    /// The number literal at `i` (`1e-5`, `0x1F`, `2.0E+3`, `1u`), moving `i` past it.
    static func number(in chars: [Character], at i: inout Int) -> String {
        var s = ""
        while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "." || chars[i] == "_" {
            s.append(chars[i])
            i += 1
            // Exponent signs: 1e-5, 2.0E+3.
            if let last = s.last, last == "e" || last == "E", !s.hasPrefix("0x"), !s.hasPrefix("0X"),
               i < chars.count, chars[i] == "-" || chars[i] == "+" {
                s.append(chars[i])
                i += 1
            }
        }
        return s
    }

    /// Keywords, types, built-in functions and predefined macros of GLSL ES 3.00/3.10.
    static let builtins: Set<String> = [
        // keywords and qualifiers
        "attribute", "const", "uniform", "varying", "buffer", "shared", "coherent", "volatile", "restrict", "readonly",
        "writeonly", "layout", "centroid", "flat", "smooth", "noperspective", "patch", "sample", "break", "continue", "do",
        "for", "while", "switch", "case", "default", "if", "else", "subroutine", "in", "out", "inout", "true", "false",
        "invariant", "precise", "discard", "return", "lowp", "mediump", "highp", "precision", "struct", "defined",
        "location", "binding", "std140", "std430", "packed", "row_major", "column_major", "offset",
        // types
        "void", "bool", "int", "uint", "float", "double", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3",
        "uvec4", "bvec2", "bvec3", "bvec4", "mat2", "mat3", "mat4", "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3",
        "mat3x4", "mat4x2", "mat4x3", "mat4x4", "sampler2D", "sampler3D", "samplerCube", "sampler2DShadow",
        "samplerCubeShadow", "sampler2DArray", "sampler2DArrayShadow", "isampler2D", "isampler3D", "isamplerCube",
        "isampler2DArray", "usampler2D", "usampler3D", "usamplerCube", "usampler2DArray", "sampler2DMS",
        // functions
        "radians", "degrees", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "pow", "exp", "log", "exp2", "log2", "sqrt", "inversesqrt", "abs", "sign", "floor", "trunc", "round", "roundEven",
        "ceil", "fract", "mod", "modf", "min", "max", "clamp", "mix", "step", "smoothstep", "isnan", "isinf",
        "floatBitsToInt", "floatBitsToUint", "intBitsToFloat", "uintBitsToFloat", "fma", "frexp", "ldexp",
        "packSnorm2x16", "unpackSnorm2x16", "packUnorm2x16", "unpackUnorm2x16", "packHalf2x16", "unpackHalf2x16",
        "packUnorm4x8", "packSnorm4x8", "unpackUnorm4x8", "unpackSnorm4x8", "length", "distance", "dot", "cross",
        "normalize", "faceforward", "reflect", "refract", "matrixCompMult", "outerProduct", "transpose", "determinant",
        "inverse", "lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual", "equal", "notEqual", "any", "all", "not",
        "bitfieldExtract", "bitfieldInsert", "bitfieldReverse", "bitCount", "findLSB", "findMSB", "uaddCarry", "usubBorrow",
        "umulExtended", "imulExtended", "textureSize", "texture", "textureProj", "textureLod", "textureOffset", "texelFetch",
        "texelFetchOffset", "textureProjOffset", "textureLodOffset", "textureProjLod", "textureProjLodOffset", "textureGrad",
        "textureGradOffset", "textureProjGrad", "textureProjGradOffset", "textureGather", "textureGatherOffset",
        "dFdx", "dFdy", "fwidth",
        // predefined macros
        "GL_ES",
    ]
}
