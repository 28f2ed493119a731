import Foundation

/// An mpv / libplacebo user shader ("hook" file, `.glsl` or `.hook`), parsed as libplacebo's
/// `pl_mpv_user_shader_parse` reads it: blocks that each start with `//!` directive lines, the first of
/// which says what the block is — `//!TEXTURE` (an embedded texture, hex data as its body), `//!PARAM` (a
/// parameter, its initial value or ENUM names as its body) or anything else (a pass: `//!HOOK`, `//!BIND`, …,
/// its GLSL as its body). Text before the first directive (licences) is skipped.
///
/// Where mpv and libplacebo differ, this follows libplacebo: `//!SAVE MAIN` saves to MAIN (libplacebo's
/// MAINPRESUB alias), a pass binding a texture that does not exist is an error here (libplacebo skips the
/// pass silently, which renders a different picture without a word), `//!PARAM` takes TYPE DYNAMIC /
/// CONSTANT / DEFINE and ENUM.
package struct HookFile: Sendable {
    package let path: String
    package let passes: [HookPass]
    package let textures: [HookTexture]
    package let parameters: [HookParameter]

    /// True when `text` has a `//!HOOK` line: a hook file rather than an ISF, ShaderToy or plain shader.
    package static func isHookFile(text: String) -> Bool {
        lines(text).contains {
            $0.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("//!HOOK")
        }
    }

    /// Reads and parses `path`.
    package static func load(path: String) throws(ShaderLoadError) -> HookFile {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ShaderLoadError(file: path, message: "cannot read the hook file: \(error.localizedDescription)")
        }
        return try parse(text: text, path: path)
    }

    /// Parses `text` as read from `path` (for messages). Errors name the file and the line.
    package static func parse(text: String, path: String) throws(ShaderLoadError) -> HookFile {
        // "\r\n" is one Character in Swift: splitting on "\n" alone leaves a CRLF file one long line.
        let lines = HookFile.lines(text)
        func isDirective(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).hasPrefix("//!") }
        guard var index = lines.firstIndex(where: isDirective) else {
            throw ShaderLoadError(file: path, message: "no //! directives: not an mpv hook file")
        }
        var passes: [HookPass] = [], textures: [HookTexture] = [], parameters: [HookParameter] = []
        while index < lines.count {
            // The block's directives, then its body up to the next directive.
            var headers: [(line: Int, text: String)] = []
            while index < lines.count, isDirective(lines[index]) {
                headers.append((index + 1, String(lines[index].trimmingCharacters(in: .whitespaces).dropFirst(3))))
                index += 1
            }
            let bodyStart = index
            while index < lines.count, !isDirective(lines[index]) { index += 1 }
            let body = lines[bodyStart..<index].joined(separator: "\n")
            let first = headers[0].text
            if first.hasPrefix("TEXTURE") {
                textures.append(try HookTexture.parse(headers, body: body, path: path))
            } else if first.hasPrefix("PARAM") {
                parameters.append(try HookParameter.parse(headers, body: body, bodyLine: bodyStart + 1, path: path))
            } else if first.hasPrefix("BUFFER") {
                throw ShaderLoadError(file: path, line: headers[0].line, message: "//!BUFFER blocks are not supported (no hook in the mpv corpora uses them)")
            } else {
                passes.append(try HookPass.parse(headers, body: body, bodyLine: bodyStart + 1, path: path))
            }
        }
        // Names must be unique among textures and parameters: the GLSL sees both as identifiers.
        var seen: [String: Int] = [:]
        for (name, line) in textures.map({ ($0.name, $0.line) }) + parameters.map({ ($0.name, $0.line) }) {
            if let earlier = seen[name] {
                throw ShaderLoadError(file: path, line: line, message: "'\(name)' is already defined at line \(earlier)")
            }
            seen[name] = line
        }
        return HookFile(path: path, passes: passes, textures: textures, parameters: parameters)
    }

    /// `text`'s lines, whatever ends them (LF, CRLF or CR, as editors count lines).
    static func lines(_ text: String) -> [String] {
        text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).map(String.init)
    }

    /// A word of a directive line (`HOOK MAIN` → "MAIN"): the text after the directive's name, stripped.
    static func argument(_ header: String, after name: String) -> String {
        String(header.dropFirst(name.count)).trimmingCharacters(in: .whitespaces)
    }
}

/// One pass of a hook file.
package struct HookPass: Sendable {
    /// The line of the pass's first directive.
    package let line: Int
    /// `//!DESC` (libplacebo's default when missing).
    package let description: String
    /// The stages it hooks (`//!HOOK`, several allowed).
    package let hooks: [String]
    /// The textures it binds, in order, with their lines.
    package let binds: [(name: String, line: Int)]
    /// `//!SAVE` target: nil overwrites the hooked stage (also `SAVE HOOKED`).
    package let save: String?
    package let width: HookExpression
    package let height: HookExpression
    package let when: HookExpression
    /// The line of each of WIDTH, HEIGHT, WHEN and COMPUTE when given (for errors found later).
    package let expressionLines: [String: Int]
    /// `//!OFFSET x y`: where the output's pixel grid sits relative to the hooked one's, in output pixels.
    package let offset: SIMD2<Double>
    /// `//!OFFSET ALIGN`: the output keeps the hooked texture's alignment with the source.
    package let alignOffset: Bool
    /// `//!COMPONENTS`: how many components of the output are meaningful.
    package let components: Int?
    /// `//!COMPUTE bw bh [tw th]`.
    package let compute: Compute?
    /// The GLSL body, and the file line it starts on.
    package let body: String
    package let bodyLine: Int

    package struct Compute: Hashable, Sendable {
        /// Output pixels one work group covers.
        package let blockWidth: Int, blockHeight: Int
        /// Threads of a work group (its local size).
        package let threadsWidth: Int, threadsHeight: Int
    }

    static func parse(_ headers: [(line: Int, text: String)], body: String, bodyLine: Int, path: String) throws(ShaderLoadError) -> HookPass {
        var description = "unknown user shader", hooks: [String] = [], binds: [(String, Int)] = [], save: String?
        var width = HookExpression(widthOf: "HOOKED"), height = HookExpression(heightOf: "HOOKED"), when = HookExpression(constant: 1)
        var lines: [String: Int] = [:]
        var offset = SIMD2<Double>(0, 0), align = false, components: Int?, compute: Compute?
        func fail(_ line: Int, _ message: String) -> ShaderLoadError { ShaderLoadError(file: path, line: line, message: message) }
        func expression(_ text: String, _ name: String, _ line: Int) throws(ShaderLoadError) -> HookExpression {
            guard let parsed = HookExpression(text), !parsed.tokens.isEmpty else {
                throw fail(line, "//!\(name): cannot read the expression '\(text)'")
            }
            do { try parsed.checkShape() } catch { throw fail(line, "//!\(name): \(error)") }
            lines[name] = line
            return parsed
        }
        for (line, text) in headers {
            let name = String(text.prefix { $0.isLetter || $0 == "_" })
            let value = HookFile.argument(text, after: name)
            switch name {
            case "HOOK":
                guard !value.isEmpty else { throw fail(line, "//!HOOK needs a stage name") }
                guard HookStage(name: value) != nil else {
                    throw fail(line, "//!HOOK \(value): unknown stage (\(HookStage.allNames.joined(separator: ", ")))")
                }
                hooks.append(value)
            case "BIND":
                guard !value.isEmpty else { throw fail(line, "//!BIND needs a texture name") }
                binds.append((value, line))
            case "SAVE":
                guard !value.isEmpty else { throw fail(line, "//!SAVE needs a texture name") }
                save = value == "HOOKED" ? nil : value
            case "DESC": description = value
            case "WIDTH": width = try expression(value, "WIDTH", line)
            case "HEIGHT": height = try expression(value, "HEIGHT", line)
            case "WHEN": when = try expression(value, "WHEN", line)
            case "OFFSET":
                if value == "ALIGN" { align = true; continue }
                // Finite and within a target's side: the numbers are written into the generated GLSL.
                let words = value.split(separator: " ", omittingEmptySubsequences: true)
                let limit = Double(HookPlan.maxSide)
                guard words.count == 2, let x = Double(words[0]), let y = Double(words[1]),
                      abs(x) <= limit, abs(y) <= limit else {
                    throw fail(line, "//!OFFSET takes two numbers within ±\(HookPlan.maxSide) or ALIGN, not '\(value)'")
                }
                offset = SIMD2(x, y)
            case "COMPONENTS":
                guard let count = Int(value), (1...4).contains(count) else { throw fail(line, "//!COMPONENTS takes 1 to 4, not '\(value)'") }
                components = count
            case "COMPUTE":
                // Bounded as a target's side, so the work-group arithmetic cannot overflow; the GPU's own limits
                // on threads are checked when the pass is compiled (`HookKernel.validate`).
                let numbers = value.split(separator: " ", omittingEmptySubsequences: true).map { Int($0) }
                guard numbers.count == 2 || numbers.count == 4, numbers.allSatisfy({ (1...HookPlan.maxSide).contains($0 ?? 0) }) else {
                    throw fail(line, "//!COMPUTE takes block width and height and optionally thread width and height, "
                               + "each 1...\(HookPlan.maxSide), not '\(value)'")
                }
                let n = numbers.map { $0! }
                compute = Compute(blockWidth: n[0], blockHeight: n[1], threadsWidth: n.count == 4 ? n[2] : n[0],
                                  threadsHeight: n.count == 4 ? n[3] : n[1])
                lines["COMPUTE"] = line
            default:
                throw fail(line, "unknown directive '//!\(text)'")
            }
        }
        if hooks.isEmpty { throw fail(headers[0].line, "the pass has no //!HOOK (libplacebo would ignore it)") }
        return HookPass(line: headers[0].line, description: description, hooks: hooks, binds: binds, save: save,
                        width: width, height: height, when: when, expressionLines: lines, offset: offset, alignOffset: align,
                        components: components, compute: compute, body: body, bodyLine: bodyLine)
    }
}

/// The points of the video pipeline a pass can hook, in the order they fire (libplacebo's `pl_hook_stage`).
package enum HookStage: Int, CaseIterable, Comparable, Sendable {
    case rgb, luma, chroma, alpha, xyz, chromaScaled, alphaScaled, native, main, linear, sigmoid, preKernel,
         postKernel, scaled, preOutput, output

    package init?(name: String) {
        guard let index = Self.names.firstIndex(of: name == "MAINPRESUB" ? "MAIN" : name) else { return nil }
        self = Self.allCases[index]
    }

    /// The texture name the stage's image has (MAINPRESUB is MAIN).
    package var name: String { Self.names[rawValue] }

    private static let names = ["RGB", "LUMA", "CHROMA", "ALPHA", "XYZ", "CHROMA_SCALED", "ALPHA_SCALED", "NATIVE", "MAIN",
                                "LINEAR", "SIGMOID", "PREKERNEL", "POSTKERNEL", "SCALED", "PREOUTPUT", "OUTPUT"]

    package static var allNames: [String] { allCases.map(\.name) }

    package static func < (a: HookStage, b: HookStage) -> Bool { a.rawValue < b.rawValue }
}

/// A `//!TEXTURE` block: an embedded lookup texture (ravu's and nnedi3's weights).
package struct HookTexture: Sendable {
    package let name: String
    package let line: Int
    /// Width, height, and depth for a 3-D texture (nil for 2-D).
    package let width: Int, height: Int, depth: Int?
    package let format: HookTextureFormat
    /// `//!FILTER LINEAR` (default NEAREST, as libplacebo's zero-initialised binding).
    package let linear: Bool
    package let border: Border
    /// The texels as the file gives them (`format.texelBytes` each, rows first).
    package let data: [UInt8]

    package enum Border: String, Sendable { case clamp = "CLAMP", `repeat` = "REPEAT", mirror = "MIRROR" }

    static func parse(_ headers: [(line: Int, text: String)], body: String, path: String) throws(ShaderLoadError) -> HookTexture {
        var name = "USER_TEX", size = [1, 1], format: HookTextureFormat?, linear = false, border = Border.clamp
        func fail(_ line: Int, _ message: String) -> ShaderLoadError { ShaderLoadError(file: path, line: line, message: message) }
        for (line, text) in headers {
            let directive = String(text.prefix { $0.isLetter })
            let value = HookFile.argument(text, after: directive)
            switch directive {
            case "TEXTURE":
                guard !value.isEmpty else { throw fail(line, "//!TEXTURE needs a name") }
                name = value
            case "SIZE":
                let numbers = value.split(separator: " ", omittingEmptySubsequences: true).map { Int($0) }
                guard (1...3).contains(numbers.count), numbers.allSatisfy({ ($0 ?? 0) >= 1 && ($0 ?? 0) <= 16384 }) else {
                    throw fail(line, "//!SIZE takes 1 to 3 sizes from 1 to 16384, not '\(value)'")
                }
                guard numbers.count > 1 else { throw fail(line, "//!SIZE \(value): 1-D textures do not exist in OpenGL ES; use SIZE \(value) 1") }
                size = numbers.map { $0! }
            case "FORMAT":
                guard let parsed = HookTextureFormat(name: value) else {
                    throw fail(line, "//!FORMAT \(value): unknown format (\(HookTextureFormat.names.joined(separator: ", ")))")
                }
                format = parsed
            case "FILTER":
                guard value == "LINEAR" || value == "NEAREST" else { throw fail(line, "//!FILTER takes LINEAR or NEAREST, not '\(value)'") }
                linear = value == "LINEAR"
            case "BORDER":
                guard let parsed = Border(rawValue: value) else { throw fail(line, "//!BORDER takes CLAMP, REPEAT or MIRROR, not '\(value)'") }
                border = parsed
            case "STORAGE":
                throw fail(line, "//!STORAGE textures are not supported")
            default:
                throw fail(line, "unknown directive '//!\(text)' in a //!TEXTURE block")
            }
        }
        let line = headers[0].line
        guard let format else { throw fail(line, "//!TEXTURE \(name) has no //!FORMAT") }
        let hex = body.filter { !$0.isWhitespace }
        guard hex.count % 2 == 0 else { throw fail(line, "//!TEXTURE \(name): the hex data has an odd number of digits") }
        var data = [UInt8](), high: UInt8?
        data.reserveCapacity(hex.count / 2)
        for c in hex.utf8 {
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw fail(line, "//!TEXTURE \(name): the data must be hexadecimal digits")
            }
            if let h = high { data.append(h << 4 | digit); high = nil } else { high = digit }
        }
        let texels = size.reduce(1, *), expected = texels * format.texelBytes
        guard data.count == expected else {
            throw fail(line, "//!TEXTURE \(name): the data is \(data.count) bytes; \(size.map(String.init).joined(separator: "x")) texels of \(format.name) need \(expected)")
        }
        return HookTexture(name: name, line: line, width: size[0], height: size[1], depth: size.count > 2 ? size[2] : nil,
                           format: format, linear: linear, border: border, data: data)
    }
}

/// The storage a `//!TEXTURE` names, by libplacebo's format names. The name says what the GPU stores and
/// what the file's hex holds: `16f` is a half-float texture whose data is given as 32-bit floats (libplacebo's
/// GL and Vulkan `rgba16f` both take float data; ravu's and nnedi3's weights are written so), `16hf` is half
/// floats in the data too, `32f` 32-bit floats, `8` and `16` unsigned normalised integers.
package struct HookTextureFormat: Hashable, Sendable {
    package enum Kind: Hashable, Sendable { case unorm8, unorm16, float16, float32 }
    package let name: String
    package let components: Int
    package let kind: Kind
    /// Bytes per component in the file's data.
    package let dataBytes: Int

    package static let names: [String] = ["r", "rg", "rgb", "rgba"].flatMap { letters in
        ["8", "16", "16f", "16hf", "32f"].map { letters + $0 }
    }

    package init?(name: String) {
        guard Self.names.contains(name) else { return nil }
        self.name = name
        let letters = name.prefix { $0.isLetter && $0 != "f" && $0 != "h" }
        components = letters.count
        switch name.dropFirst(letters.count) {
        case "8": (kind, dataBytes) = (.unorm8, 1)
        case "16": (kind, dataBytes) = (.unorm16, 2)
        case "16f": (kind, dataBytes) = (.float16, 4)
        case "16hf": (kind, dataBytes) = (.float16, 2)
        default: (kind, dataBytes) = (.float32, 4)
        }
    }

    package var texelBytes: Int { components * dataBytes }

    /// The texels as RGBA (missing components 0, alpha 1, as GL reads an R or RG texture) in 32-bit floats.
    package func rgbaFloats(_ data: [UInt8]) -> [Float] {
        let texels = data.count / texelBytes
        var out = [Float](repeating: 0, count: texels * 4)
        data.withUnsafeBytes { raw in
            for t in 0..<texels {
                for c in 0..<4 {
                    let value: Float
                    if c >= components { value = c == 3 ? 1 : 0 } else {
                        let at = t * texelBytes
                        switch kind {
                        case .unorm8: value = Float(raw[at + c]) / 255
                        case .unorm16: value = Float(raw.loadUnaligned(fromByteOffset: at + c * 2, as: UInt16.self).littleEndian) / 65535
                        case .float16 where dataBytes == 2:
                            value = Float(Float16(bitPattern: raw.loadUnaligned(fromByteOffset: at + c * 2, as: UInt16.self).littleEndian))
                        case .float16, .float32:
                            value = Float(bitPattern: raw.loadUnaligned(fromByteOffset: at + c * 4, as: UInt32.self).littleEndian)
                        }
                    }
                    out[t * 4 + c] = value
                }
            }
        }
        return out
    }
}

/// A `//!PARAM` block: a value the shader reads by name, settable from the graph (`'x.glsl'(NAME=value)`)
/// and in `prism dev`.
package struct HookParameter: Sendable {
    package enum ValueType: String, Sendable { case int, uint, float }
    /// VARIABLE (a uniform), DYNAMIC (a uniform libplacebo updates every frame: the same here), CONSTANT
    /// (a compile-time constant: changing it recompiles), DEFINE (a `#define`, int).
    package enum Mode: String, Sendable { case variable, dynamic, constant, define }
    package let name: String
    package let line: Int
    package let description: String?
    package let type: ValueType
    package let mode: Mode
    package let minimum: Double
    package let maximum: Double
    package let initial: Double
    /// For `TYPE ENUM`: the names, whose indices are the values (each is also a `#define`).
    package let names: [String]

    /// `value` as this parameter can hold it: within its range (NaN: the initial value), whole for int and
    /// uint, so a value from a live `set` or the dev page can never reach the GLSL or an Int conversion unchecked.
    package func clamped(_ value: Double) -> Double {
        guard !value.isNaN else { return initial }
        let inRange = min(max(value, minimum), maximum)
        return type == .float ? inRange : inRange.rounded()
    }

    static func parse(_ headers: [(line: Int, text: String)], body: String, bodyLine: Int, path: String) throws(ShaderLoadError) -> HookParameter {
        var name = "", description: String?, minimumText: String?, maximumText: String?, isEnum = false
        var mode = Mode.variable, type: ValueType?
        func fail(_ line: Int, _ message: String) -> ShaderLoadError { ShaderLoadError(file: path, line: line, message: message) }
        for (line, text) in headers {
            let directive = String(text.prefix { $0.isLetter })
            var value = HookFile.argument(text, after: directive)
            switch directive {
            case "PARAM":
                guard value.first.map({ $0.isLetter || $0 == "_" }) == true, value.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw fail(line, "//!PARAM needs an identifier, not '\(value)'")
                }
                name = value
            case "DESC": description = value
            case "MINIMUM": minimumText = value
            case "MAXIMUM": maximumText = value
            case "TYPE":
                if value.hasPrefix("ENUM") { isEnum = true; value = String(value.dropFirst(4)).trimmingCharacters(in: .whitespaces) }
                for candidate in [Mode.dynamic, .constant, .define] where value.hasPrefix(candidate.rawValue.uppercased()) {
                    mode = candidate
                    value = String(value.dropFirst(candidate.rawValue.count)).trimmingCharacters(in: .whitespaces)
                }
                if mode == .define {
                    guard value.isEmpty else { throw fail(line, "TYPE DEFINE takes no type, not '\(value)'") }
                    type = .int
                    continue
                }
                guard let parsed = ValueType(rawValue: value) else { throw fail(line, "//!TYPE \(value): the type must be int, uint or float") }
                if isEnum && parsed != .int { throw fail(line, "//!TYPE ENUM is only for int") }
                type = parsed
            default:
                throw fail(line, "unknown directive '//!\(text)' in a //!PARAM block")
            }
        }
        let line = headers[0].line
        guard let type else { throw fail(line, "//!PARAM \(name) has no //!TYPE") }
        let initialText = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !initialText.isEmpty else { throw fail(line, "//!PARAM \(name) has no initial value (the line after its directives)") }
        func number(_ text: String, _ what: String) throws(ShaderLoadError) -> Double {
            let value: Double?
            switch type {
            case .float: value = Double(text)
            case .int: value = Int32(text).map(Double.init)
            case .uint: value = UInt32(text).map(Double.init)
            }
            guard let value, value.isFinite else { throw fail(line, "//!PARAM \(name): \(what) '\(text)' is not a\(type == .int ? "n" : "") \(type.rawValue)") }
            return value
        }
        if isEnum {
            let names = HookFile.lines(initialText).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return HookParameter(name: name, line: line, description: description, type: .int, mode: mode, minimum: 0,
                                 maximum: Double(names.count - 1), initial: 0, names: names)
        }
        let initial = try number(initialText, "the initial value")
        let lowest: Double = type == .float ? -.infinity : type == .uint ? 0 : Double(Int32.min)
        let highest: Double = type == .float ? .infinity : type == .uint ? Double(UInt32.max) : Double(Int32.max)
        let minimum = try minimumText.map { text throws(ShaderLoadError) in try number(text, "the minimum") } ?? lowest
        let maximum = try maximumText.map { text throws(ShaderLoadError) in try number(text, "the maximum") } ?? highest
        guard initial >= minimum, initial <= maximum else {
            throw fail(line, "//!PARAM \(name): the initial value \(initialText) is outside \(minimumText ?? "-inf")...\(maximumText ?? "inf")")
        }
        return HookParameter(name: name, line: line, description: description, type: type, mode: mode, minimum: minimum,
                             maximum: maximum, initial: initial, names: [])
    }
}
