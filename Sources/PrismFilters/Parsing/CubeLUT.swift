import Foundation
import PrismCore

/// A colour lookup table read from a Resolve/Adobe `.cube` file.
///
/// Keywords: `TITLE "name"`, `LUT_1D_SIZE n` (2...65536), `LUT_3D_SIZE n` (2...256),
/// `DOMAIN_MIN r g b`, `DOMAIN_MAX r g b` (and Resolve's `LUT_1D_INPUT_RANGE` / `LUT_3D_INPUT_RANGE min max`),
/// `#` comments, blank lines, LF or CRLF. Data rows are three numbers; in a 3D table red varies
/// fastest, then green, then blue. Unknown keywords (e.g. `LUT_IN_VIDEO_RANGE`) are ignored.
///
/// `apply` and `applyTetrahedral` are the CPU references the GPU path is tested against.
package struct CubeLUT: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        /// One curve per channel, `size` entries.
        case oneD(size: Int)
        /// A `size`³ lattice.
        case threeD(size: Int)

        package var size: Int {
            switch self {
            case .oneD(let n), .threeD(let n): return n
            }
        }

        /// How many data rows the table holds.
        package var entryCount: Int {
            switch self {
            case .oneD(let n): return n
            case .threeD(let n): return n * n * n
            }
        }
    }

    package static let sizeRange1D = 2...65536
    package static let sizeRange3D = 2...256

    package var title: String?
    package var kind: Kind
    package var domainMin: SIMD3<Float>
    package var domainMax: SIMD3<Float>
    /// The rows in file order (3D: index `r + g·n + b·n²`).
    package var values: [SIMD3<Float>]

    package init(title: String? = nil, kind: Kind, domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one,
                values: [SIMD3<Float>]) {
        self.title = title
        self.kind = kind
        self.domainMin = domainMin
        self.domainMax = domainMax
        self.values = values
    }

    /// An identity table, for tests and as a neutral default.
    package static func identity(_ kind: Kind) -> CubeLUT {
        let n = kind.size
        let step = 1 / Float(n - 1)
        switch kind {
        case .oneD:
            return CubeLUT(kind: kind, values: (0..<n).map { SIMD3(repeating: Float($0) * step) })
        case .threeD:
            var values: [SIMD3<Float>] = []
            values.reserveCapacity(n * n * n)
            for b in 0..<n { for g in 0..<n { for r in 0..<n {
                values.append(SIMD3(Float(r) * step, Float(g) * step, Float(b) * step))
            } } }
            return CubeLUT(kind: kind, values: values)
        }
    }

    // MARK: Evaluation

    /// The input mapped into lattice coordinates 0...(size-1), clamped at the domain's edges.
    private func latticeCoordinate(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        let span = domainMax - domainMin
        var t = (rgb - domainMin) / span
        t = t.replacing(with: 0, where: .!(t .>= 0)) // also catches NaN
        t = t.replacing(with: 1, where: t .> 1)
        return t * Float(kind.size - 1)
    }

    /// 1D: per-channel linear interpolation; 3D: trilinear interpolation.
    package func apply(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        let x = latticeCoordinate(rgb)
        let n = kind.size
        switch kind {
        case .oneD:
            var out = SIMD3<Float>()
            for c in 0..<3 {
                let i0 = min(Int(x[c]), n - 2)
                let f = x[c] - Float(i0)
                out[c] = values[i0][c] * (1 - f) + values[i0 + 1][c] * f
            }
            return out
        case .threeD:
            let (base, f) = cell(x)
            func v(_ dr: Int, _ dg: Int, _ db: Int) -> SIMD3<Float> { values[base + dr + dg * n + db * n * n] }
            let c00 = v(0, 0, 0) * (1 - f.x) + v(1, 0, 0) * f.x
            let c10 = v(0, 1, 0) * (1 - f.x) + v(1, 1, 0) * f.x
            let c01 = v(0, 0, 1) * (1 - f.x) + v(1, 0, 1) * f.x
            let c11 = v(0, 1, 1) * (1 - f.x) + v(1, 1, 1) * f.x
            let c0 = c00 * (1 - f.y) + c10 * f.y
            let c1 = c01 * (1 - f.y) + c11 * f.y
            return c0 * (1 - f.z) + c1 * f.z
        }
    }

    /// 3D: tetrahedral interpolation (the cell is split into six tetrahedra along its main
    /// diagonal; the one holding the point is chosen by ordering the fractions). 1D: same as `apply`.
    package func applyTetrahedral(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        guard case .threeD(let n) = kind else { return apply(rgb) }
        let x = latticeCoordinate(rgb)
        let (base, f) = cell(x)
        func v(_ dr: Int, _ dg: Int, _ db: Int) -> SIMD3<Float> { values[base + dr + dg * n + db * n * n] }
        let c000 = v(0, 0, 0), c111 = v(1, 1, 1)
        let (r, g, b) = (f.x, f.y, f.z)
        if r >= g {
            if g >= b { // r ≥ g ≥ b
                return c000 * (1 - r) + v(1, 0, 0) * (r - g) + v(1, 1, 0) * (g - b) + c111 * b
            } else if r >= b { // r ≥ b > g
                return c000 * (1 - r) + v(1, 0, 0) * (r - b) + v(1, 0, 1) * (b - g) + c111 * g
            } else { // b > r ≥ g
                return c000 * (1 - b) + v(0, 0, 1) * (b - r) + v(1, 0, 1) * (r - g) + c111 * g
            }
        } else {
            if b >= g { // b ≥ g > r
                return c000 * (1 - b) + v(0, 0, 1) * (b - g) + v(0, 1, 1) * (g - r) + c111 * r
            } else if b >= r { // g > b ≥ r
                return c000 * (1 - g) + v(0, 1, 0) * (g - b) + v(0, 1, 1) * (b - r) + c111 * r
            } else { // g > r > b
                return c000 * (1 - g) + v(0, 1, 0) * (g - r) + v(1, 1, 0) * (r - b) + c111 * b
            }
        }
    }

    /// The index of the lattice cell's lowest corner and the fractions inside it.
    private func cell(_ x: SIMD3<Float>) -> (Int, SIMD3<Float>) {
        let n = kind.size
        let i = SIMD3<Int>(min(Int(x.x), n - 2), min(Int(x.y), n - 2), min(Int(x.z), n - 2))
        let f = x - SIMD3<Float>(Float(i.x), Float(i.y), Float(i.z))
        return (i.x + i.y * n + i.z * n * n, f)
    }
}

/// A `.cube` file that cannot be read, with the 1-based line at fault (0 when it concerns the whole file).
public struct CubeLUTError: PrismError, Equatable {
    /// The file's path, when the LUT came from a file.
    public let file: String?
    /// 1-based line at fault; 0 when the error concerns the whole file.
    public let line: Int
    /// What is wrong, without the place.
    public let message: String

    /// An error at `line` (0: the whole file) of `file` (nil for text not read from a file).
    public init(file: String? = nil, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        let name = file ?? "cube LUT"
        return line > 0 ? "\(name), line \(line): \(message)" : "\(name): \(message)"
    }

    /// One diagnostic at the line when the LUT came from a file; none otherwise.
    public var diagnostics: [Diagnostic] {
        file.map { [Diagnostic(file: $0, line: line > 0 ? line : nil, message: message)] } ?? []
    }
}

extension CubeLUT {
    /// Reads a `.cube` file from disk; errors name the file.
    package init(contentsOfFile path: String) throws(CubeLUTError) {
        let text = try Self.readText(path)
        do { self = try CubeLUT(parsing: text) } catch {
            throw CubeLUTError(file: path, line: error.line, message: error.message)
        }
    }

    /// The largest `.cube` read: a 256³ table of "0.123456 0.123456 0.123456" rows is about 420 MB; nothing
    /// real comes near that, and a device or a huge file must not be read whole.
    static let maximumFileBytes = 512 << 20

    /// The file's text, with what is wrong said in the user's terms: not a regular file (a device, a FIFO),
    /// missing, unreadable, too large, or not text.
    private static func readText(_ path: String) throws(CubeLUTError) -> String {
        let bytes: [UInt8]
        do { bytes = try RegularFile.read(path, what: "a .cube file", maximumBytes: maximumFileBytes) } catch {
            throw CubeLUTError(file: path, line: 0, message: error.message)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CubeLUTError(file: path, line: 0, message: "is not text (not UTF-8): not a .cube file")
        }
        return text
    }

    /// Parses the text of a `.cube` file.
    package init(parsing text: String) throws(CubeLUTError) {
        var title: String?
        var size1D: (Int, Int)? // size, line
        var size3D: (Int, Int)?
        var domainMin = SIMD3<Float>.zero
        var domainMax = SIMD3<Float>.one
        var values: [SIMD3<Float>] = []
        var firstDataLine = 0
        var rowLines: [Int] = [] // the line of each data row, for "too many rows"

        func fail(_ line: Int, _ message: String) -> CubeLUTError { CubeLUTError(line: line, message: message) }

        func parseFloat(_ token: Substring, line: Int) throws(CubeLUTError) -> Float {
            guard let value = GraphParser.number(from: String(token)).map(Float.init), value.isFinite else {
                throw fail(line, "'\(token)' is not a number")
            }
            return value
        }

        func parseSize(_ tokens: [Substring], keyword: String, range: ClosedRange<Int>, line: Int) throws(CubeLUTError) -> Int {
            guard tokens.count == 2 else { throw fail(line, "\(keyword) takes one number") }
            guard let n = Int(tokens[1]) else { throw fail(line, "\(keyword) '\(tokens[1])' is not a whole number") }
            guard range.contains(n) else {
                throw fail(line, "\(keyword) \(n) is out of range \(range.lowerBound)...\(range.upperBound)")
            }
            return n
        }

        func parseTriple(_ tokens: ArraySlice<Substring>, keyword: String, line: Int) throws(CubeLUTError) -> SIMD3<Float> {
            guard tokens.count == 3 else { throw fail(line, "\(keyword) takes three numbers") }
            let t = Array(tokens)
            return SIMD3(try parseFloat(t[0], line: line), try parseFloat(t[1], line: line), try parseFloat(t[2], line: line))
        }

        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            lineNumber += 1
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = tokens.first else { continue }

            if let c = first.first, c.isNumber || c == "-" || c == "+" || c == "." {
                if values.isEmpty { firstDataLine = lineNumber }
                guard tokens.count == 3 else {
                    throw fail(lineNumber, "a data row needs three numbers, found \(tokens.count)")
                }
                rowLines.append(lineNumber)
                values.append(SIMD3(try parseFloat(tokens[0], line: lineNumber),
                                    try parseFloat(tokens[1], line: lineNumber),
                                    try parseFloat(tokens[2], line: lineNumber)))
                continue
            }
            if !values.isEmpty {
                throw fail(lineNumber, "'\(first)' after the data rows: expected a row of three numbers")
            }
            switch first.uppercased() {
            case "TITLE":
                let rest = line.drop { $0 != " " && $0 != "\t" }.trimmingCharacters(in: .whitespaces)
                title = rest.count >= 2 && rest.hasPrefix("\"") && rest.hasSuffix("\"") ? String(rest.dropFirst().dropLast()) : rest
            case "LUT_1D_SIZE":
                if let other = size3D { throw fail(lineNumber, "LUT_1D_SIZE after LUT_3D_SIZE (line \(other.1)): a file holds one table") }
                if size1D != nil { throw fail(lineNumber, "LUT_1D_SIZE given twice") }
                size1D = (try parseSize(tokens, keyword: "LUT_1D_SIZE", range: CubeLUT.sizeRange1D, line: lineNumber), lineNumber)
            case "LUT_3D_SIZE":
                if let other = size1D { throw fail(lineNumber, "LUT_3D_SIZE after LUT_1D_SIZE (line \(other.1)): a file holds one table") }
                if size3D != nil { throw fail(lineNumber, "LUT_3D_SIZE given twice") }
                size3D = (try parseSize(tokens, keyword: "LUT_3D_SIZE", range: CubeLUT.sizeRange3D, line: lineNumber), lineNumber)
            case "DOMAIN_MIN":
                domainMin = try parseTriple(tokens.dropFirst(), keyword: "DOMAIN_MIN", line: lineNumber)
            case "DOMAIN_MAX":
                domainMax = try parseTriple(tokens.dropFirst(), keyword: "DOMAIN_MAX", line: lineNumber)
            case "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE":
                guard tokens.count == 3 else { throw fail(lineNumber, "\(first) takes two numbers") }
                domainMin = SIMD3(repeating: try parseFloat(tokens[1], line: lineNumber))
                domainMax = SIMD3(repeating: try parseFloat(tokens[2], line: lineNumber))
            default:
                if first.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" }) {
                    continue // a keyword this reader does not use, e.g. LUT_IN_VIDEO_RANGE
                }
                // Quoted short: enough to spot a typo, not a way to print another file's contents.
                let shown = first.count > 16 ? first.prefix(16) + "…" : Substring(first)
                throw fail(lineNumber, "'\(shown)' is neither a keyword nor a number")
            }
        }

        let kind: Kind
        if let (n, _) = size3D { kind = .threeD(size: n) }
        else if let (n, _) = size1D { kind = .oneD(size: n) }
        else { throw fail(firstDataLine, "missing LUT_1D_SIZE or LUT_3D_SIZE before the data") }

        for c in 0..<3 where !(domainMin[c] < domainMax[c]) {
            throw fail(0, "DOMAIN_MIN must be below DOMAIN_MAX in every channel")
        }
        guard values.count == kind.entryCount else {
            let what: String
            switch kind {
            case .oneD(let n): what = "LUT_1D_SIZE \(n) needs \(n) rows"
            case .threeD(let n): what = "LUT_3D_SIZE \(n) needs \(n)×\(n)×\(n) = \(n * n * n) rows"
            }
            throw fail(values.count > kind.entryCount ? rowLines[kind.entryCount] : (rowLines.last ?? lineNumber),
                       "\(what), found \(values.count)")
        }
        self.init(title: title, kind: kind, domainMin: domainMin, domainMax: domainMax, values: values)
    }
}
