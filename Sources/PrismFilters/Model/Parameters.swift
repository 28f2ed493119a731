import PrismCore

/// The type of a filter parameter, with its range where it has one.
public enum ParameterKind: Hashable, Sendable {
    /// A finite number within the range.
    case float(ClosedRange<Double>)
    /// A whole number within the range.
    case int(ClosedRange<Int>)
    /// `true` or `false` (also 1 or 0).
    case bool
    /// RGBA, each 0...1; written `#rrggbb[aa]` or `r:g:b[:a]`.
    case color
    /// Two numbers, written `x:y`.
    case point
    /// A size `WxH`.
    case size
    /// One of a fixed set of words.
    case choice([String])
    /// Free text: a file path, a label.
    case text

    /// The name shown in help and errors (`float`, `int`, …; a choice lists its words joined by `|`).
    public var typeName: String {
        switch self {
        case .float: "float"
        case .int: "int"
        case .bool: "bool"
        case .color: "color"
        case .point: "point"
        case .size: "size"
        case .choice(let options): options.joined(separator: "|")
        case .text: "text"
        }
    }

    /// The range as `low...high` for numeric kinds, nil for the others.
    public var rangeDescription: String? {
        switch self {
        case .float(let range): "\(Self.trim(range.lowerBound))...\(Self.trim(range.upperBound))"
        case .int(let range): "\(range.lowerBound)...\(range.upperBound)"
        default: nil
        }
    }

    static func trim(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }
}

/// A parameter's value. The kind it must match is in its `ParameterSpec`.
public enum ParameterValue: Hashable, Sendable, CustomStringConvertible {
    /// A number (finite once validated).
    case float(Double)
    /// A whole number.
    case int(Int)
    /// A flag.
    case bool(Bool)
    /// RGBA, each component 0...1.
    case color(SIMD4<Double>)
    /// Two numbers, x and y.
    case point(SIMD2<Double>)
    /// A size in pixels.
    case size(Size)
    /// One of a `choice` parameter's words.
    case choice(String)
    /// Free text: a path, a label, or a word not yet validated against a choice.
    case text(String)

    public var description: String {
        switch self {
        case .float(let v): ParameterKind.trim(v)
        case .int(let v): String(v)
        case .bool(let v): String(v)
        case .color(let c): HexColor.format(c)
        case .point(let p): "\(ParameterKind.trim(p.x)):\(ParameterKind.trim(p.y))"
        case .size(let s): s.description
        case .choice(let s), .text(let s): s
        }
    }

    /// The value as a number (bools as 0 or 1); nil for non-numeric values.
    public var doubleValue: Double? {
        switch self {
        case .float(let v): v
        case .int(let v): Double(v)
        case .bool(let v): v ? 1 : 0
        default: nil
        }
    }
}

/// A declared parameter: name, type, default, documentation.
public struct ParameterSpec: Hashable, Sendable {
    /// The name used in graph text (`amount` in `mono(amount=0.5)`).
    public var name: String
    /// Type and range a value must match.
    public var kind: ParameterKind
    /// The value used when the graph gives none.
    public var defaultValue: ParameterValue
    /// One line of documentation, for `prism filters` and the dev page's controls.
    public var summary: String

    /// A parameter `name` of `kind`, defaulting to `defaultValue` (not validated here).
    public init(_ name: String, _ kind: ParameterKind, default defaultValue: ParameterValue, _ summary: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
    }

    /// Checks and normalises a value for this parameter (ints for floats are fine, ranges enforced).
    public func validate(_ value: ParameterValue) throws -> ParameterValue {
        switch (kind, value) {
        case (.float(let range), _):
            guard let v = value.doubleValue, !(value.isBool) else { throw mismatch(value) }
            // Infinities and NaN reach sizes and loop bounds in shaders; no parameter means them.
            guard v.isFinite else { throw InvalidRequest("\(name) takes a finite number, not \(value)") }
            guard range.contains(v) else { throw outOfRange(value) }
            return .float(v)
        case (.int(let range), .int(let v)):
            guard range.contains(v) else { throw outOfRange(value) }
            return value
        case (.int(let range), .float(let v)) where v.isFinite && v == v.rounded():
            // `Int(exactly:)` is nil beyond Int's range, where `Int(v)` would trap (1e19).
            guard let whole = Int(exactly: v), range.contains(whole) else { throw outOfRange(value) }
            return .int(whole)
        case (.bool, .bool): return value
        case (.bool, .int(let v)) where v == 0 || v == 1: return .bool(v == 1)
        case (.bool, .float(let v)) where v == 0 || v == 1: return .bool(v == 1)
        case (.color, .color): return value
        case (.point, .point): return value
        case (.size, .size): return value
        case (.choice(let options), .choice(let word)), (.choice(let options), .text(let word)):
            guard options.contains(word) else {
                throw InvalidRequest("\(name) must be one of \(options.joined(separator: ", ")), not '\(word)'")
            }
            return .choice(word)
        // A choice whose words read as numbers or sizes (an ISF long labelled "1"…"10", or "2x2") takes the
        // value as written.
        case (.choice(let options), _) where options.contains(value.description):
            return .choice(value.description)
        case (.text, .text(let s)), (.text, .choice(let s)): return .text(s)
        // A number where text is taken (a model's `mean=0.5`): its literal, as the text would hold it.
        case (.text, .float(let v)): return .text("\(v)")
        case (.text, .int(let v)): return .text("\(v)")
        default: throw mismatch(value)
        }
    }

    private func mismatch(_ value: ParameterValue) -> InvalidRequest {
        InvalidRequest("\(name) takes a \(kind.typeName), not '\(value)'")
    }

    private func outOfRange(_ value: ParameterValue) -> InvalidRequest {
        InvalidRequest("\(name) must be in \(kind.rangeDescription ?? "range"), not \(value)")
    }
}

extension Int {
    /// The nearest Int to `value` rounded toward zero, saturating at Int's bounds; NaN gives 0.
    /// (`Int(_: Double)` traps on NaN, infinities and magnitudes past 2⁶³.)
    public init(clamping value: Double) {
        if value.isNaN { self = 0 }
        else if value >= 9_223_372_036_854_775_807.0 { self = .max }  // 2⁶³ as a Double
        else if value <= -9_223_372_036_854_775_808.0 { self = .min }
        else { self = Int(value) }
    }
}

extension ParameterValue {
    var isBool: Bool { if case .bool = self { return true } else { return false } }
}

/// The values of one filter instance's parameters, all present and valid.
public struct ParameterValues: Hashable, Sendable {
    /// Every parameter's value by name; set only through `init` and `set`, so always validated.
    public private(set) var values: [String: ParameterValue]
    /// The declarations the values were checked against.
    public let specs: [ParameterSpec]

    /// Defaults, overridden by `given` (validated).
    public init(specs: [ParameterSpec], given: [String: ParameterValue] = [:]) throws {
        self.specs = specs
        var values: [String: ParameterValue] = [:]
        for spec in specs { values[spec.name] = spec.defaultValue }
        for (name, value) in given {
            guard let spec = specs.first(where: { $0.name == name }) else {
                let known = specs.map(\.name).joined(separator: ", ")
                throw InvalidRequest("unknown parameter '\(name)'" + (known.isEmpty ? " (it takes none)" : " (it takes \(known))"))
            }
            values[name] = try spec.validate(value)
        }
        self.values = values
    }

    /// Sets one value after validation (live controls, hot reload).
    public mutating func set(_ name: String, _ value: ParameterValue) throws {
        guard let spec = specs.first(where: { $0.name == name }) else { throw InvalidRequest("unknown parameter '\(name)'") }
        values[name] = try spec.validate(value)
    }

    /// The value of parameter `name`, or nil if there is no such parameter.
    public subscript(_ name: String) -> ParameterValue? { values[name] }

    /// The value as a number; 0 for an unknown or non-numeric parameter.
    public func double(_ name: String) -> Double { values[name]?.doubleValue ?? 0 }
    /// The value as an Int (floats truncated and clamped); 0 for an unknown or non-numeric parameter.
    public func int(_ name: String) -> Int {
        if case .int(let v) = values[name] { return v }
        return Int(clamping: double(name))
    }
    /// The value as a Bool (numbers: non-zero is true); false for an unknown parameter.
    public func bool(_ name: String) -> Bool {
        if case .bool(let v) = values[name] { return v }
        return double(name) != 0
    }
    /// The value of a point parameter; zero when `name` is not one.
    public func point(_ name: String) -> SIMD2<Double> {
        if case .point(let v) = values[name] { return v }
        return .zero
    }
    /// The RGBA (0...1) value of a colour parameter; opaque black when `name` is not one.
    public func color(_ name: String) -> SIMD4<Double> {
        if case .color(let v) = values[name] { return v }
        return SIMD4(0, 0, 0, 1)
    }
    /// The value of a size parameter; nil when `name` is not one.
    public func size(_ name: String) -> Size? {
        if case .size(let v) = values[name] { return v }
        return nil
    }
    /// The word of a choice or text parameter; "" when `name` is neither.
    public func word(_ name: String) -> String {
        switch values[name] {
        case .choice(let s), .text(let s): return s
        default: return ""
        }
    }
}
