/// `#rrggbb` and `#rrggbbaa` colours, read and written in one place: graph text, parameter values, the
/// dev page's colour controls. Components are 0...1, alpha 1 when the text has none.
public enum HexColor {
    /// The colour `text` spells (`#rrggbb` or `#rrggbbaa`, either case); nil for anything else.
    public static func parse(_ text: some StringProtocol) -> SIMD4<Double>? {
        guard text.hasPrefix("#") else { return nil }
        let digits = Array(text.utf8.dropFirst())
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var components: [Double] = []
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[pair]), let low = nibble(digits[pair + 1]) else { return nil }
            components.append(Double(high * 16 + low) / 255)
        }
        return SIMD4(components[0], components[1], components[2], components.count == 4 ? components[3] : 1)
    }

    /// `#rrggbb`, with `aa` appended when `alpha` is `.always` or the colour is translucent. Components
    /// are clamped to 0...1 and rounded to the nearest byte.
    public static func format(_ color: SIMD4<Double>, alpha: AlphaStyle = .whenTranslucent) -> String {
        let withAlpha = alpha == .always || color.w < 1
        return "#" + (withAlpha ? [color.x, color.y, color.z, color.w] : [color.x, color.y, color.z]).map(byte).joined()
    }

    /// Whether `format` writes the alpha byte always or only for translucent colours.
    public enum AlphaStyle: Sendable { case always, whenTranslucent }

    private static func byte(_ v: Double) -> String {
        let value = Int((min(max(v, 0), 1) * 255).rounded())
        let digits = Array("0123456789abcdef")
        return String([digits[value / 16], digits[value % 16]])
    }

    private static func nibble(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(c - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(c - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
