import Foundation
import PrismCore
import PrismFilters

/// Parameter values to and from JSON, validated against the declared specs: what `set` commands and the
/// dev page's `/param` take, and what replies and both `/state`s show.
enum ParameterJSON {
    /// Text and size parameters (file paths, output sizes) are not settable by a command (nor from a browser).
    static func isSettable(_ kind: ParameterKind) -> Bool {
        switch kind {
        case .text, .size: return false
        default: return true
        }
    }

    static func json(_ value: ParameterValue) -> String {
        switch value {
        case .float(let v): return JSONText.number(v)
        case .int(let v): return String(v)
        case .bool(let v): return v ? "true" : "false"
        case .color(let c): return "[\(JSONText.number(c.x)),\(JSONText.number(c.y)),\(JSONText.number(c.z)),\(JSONText.number(c.w))]"
        case .point(let p): return "[\(JSONText.number(p.x)),\(JSONText.number(p.y))]"
        case .size(let s): return JSONText.string(s.description)
        case .choice(let s), .text(let s): return JSONText.string(s)
        }
    }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The typed value of a decoded JSON value for `spec`, range-checked; throws `Invalid` with the reason.
    static func value(from json: JSONValue, for spec: ParameterSpec) throws -> ParameterValue {
        guard isSettable(spec.kind) else { throw Invalid("\(spec.name) cannot be set from the preview") }
        func numbers(_ counts: Set<Int>) throws -> [Double] {
            guard case .array(let items) = json, counts.contains(items.count) else {
                throw Invalid("\(spec.name) takes an array of \(counts.sorted().map(String.init).joined(separator: " or ")) numbers")
            }
            return try items.map {
                guard case .number(let v) = $0, v.isFinite else { throw Invalid("\(spec.name) takes numbers") }
                return v
            }
        }
        let candidate: ParameterValue
        switch spec.kind {
        case .float, .int:
            guard case .number(let number) = json, number.isFinite else { throw Invalid("\(spec.name) takes a number") }
            if case .int = spec.kind {
                guard number == number.rounded(), abs(number) < 1e15 else { throw Invalid("\(spec.name) takes a whole number") }
                candidate = .int(Int(number))
            } else {
                candidate = .float(number)
            }
        case .bool:
            guard case .bool(let flag) = json else { throw Invalid("\(spec.name) takes true or false") }
            candidate = .bool(flag)
        case .color:
            var rgba: [Double]
            if case .string(let text) = json {
                guard let parsed = HexColor.parse(text).map({ [$0.x, $0.y, $0.z, $0.w] }) else { throw Invalid("\(spec.name) takes #rrggbb[aa] or [r,g,b,a]") }
                rgba = parsed
            } else {
                rgba = try numbers([3, 4])
                if rgba.count == 3 { rgba.append(1) }
            }
            guard rgba.allSatisfy({ (0...1).contains($0) }) else { throw Invalid("\(spec.name): components must be in 0...1") }
            candidate = .color(SIMD4(rgba[0], rgba[1], rgba[2], rgba[3]))
        case .point:
            let xy = try numbers([2])
            candidate = .point(SIMD2(xy[0], xy[1]))
        case .choice:
            guard case .string(let word) = json else { throw Invalid("\(spec.name) takes one of its options as a string") }
            candidate = .choice(word)
        case .text, .size:
            throw Invalid("\(spec.name) cannot be set from the preview")
        }
        do { return try spec.validate(candidate) } catch { throw Invalid("\(error)") }
    }

    /// Whether two kinds are the same type (ranges and option lists may differ), for carrying values over
    /// a reload.
    static func sameType(_ a: ParameterKind, _ b: ParameterKind) -> Bool {
        switch (a, b) {
        case (.float, .float), (.int, .int), (.bool, .bool), (.color, .color), (.point, .point), (.size, .size),
             (.choice, .choice), (.text, .text):
            return true
        default:
            return false
        }
    }
}
