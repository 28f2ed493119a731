/// A rational number, used for frame rates and time bases (`num/den`), like FFmpeg's AVRational.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    /// Numerator, e.g. 30000 in 30000/1001.
    public var num: Int32
    /// Denominator, e.g. 1001 in 30000/1001; 0 only in a degenerate value (`doubleValue` is then 0).
    public var den: Int32

    /// The fraction `num/den`, stored as given (not reduced).
    public init(_ num: Int32, _ den: Int32) {
        self.num = num
        self.den = den
    }

    /// The value as a Double; 0 when `den` is 0.
    public var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
    public var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }

    /// Parses "30", "29.97", "30000/1001".
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let n = Int32(parts[0]), let d = Int32(parts[1]), n > 0, d > 0 {
            self.init(n, d)
        } else if parts.count == 1, let n = Int32(text), n > 0 {
            self.init(n, 1)
        } else if parts.count == 1, let value = Double(text), value > 0, value < 10_000 {
            // Decimal rates: 29.97 and 59.94 mean the NTSC rationals, others are taken to 1/1000.
            if abs(value - 29.97) < 0.001 { self.init(30000, 1001) }
            else if abs(value - 59.94) < 0.001 { self.init(60000, 1001) }
            else if abs(value - 23.976) < 0.001 { self.init(24000, 1001) }
            else {
                // Below 1/2000 the thousandths round to zero: not a rate.
                let thousandths = Int32((value * 1000).rounded())
                guard thousandths > 0 else { return nil }
                self.init(thousandths, 1000)
            }
        } else {
            return nil
        }
    }
}

/// A timestamp or duration as `value / timescale` seconds (the CMTime idea). Never a float.
public struct MediaTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Ticks of 1/`timescale` seconds; may be negative.
    public var value: Int64
    /// Ticks per second; always positive.
    public var timescale: Int32

    /// `value / timescale` seconds; `timescale` must be positive (a precondition).
    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    /// `value` ticks of `timeBase` (an FFmpeg-style time base, e.g. 1/90000).
    public init(value: Int64, timeBase: Rational) {
        // ticks * num / den seconds; kept exact when num == 1, rescaled otherwise.
        if timeBase.num == 1 {
            self.init(value: value, timescale: timeBase.den)
        } else {
            self.init(value: value * Int64(timeBase.num), timescale: timeBase.den)
        }
    }

    /// Time zero (timescale 1).
    public static let zero = MediaTime(value: 0, timescale: 1)

    /// The time in seconds, as a Double (for display and arithmetic that may be inexact).
    public var seconds: Double { Double(value) / Double(timescale) }

    /// This time expressed in ticks of `timeBase`, rounded to nearest (ties away from zero).
    public func ticks(in timeBase: Rational) -> Int64 {
        // value / timescale = t * num / den  =>  t = value * den / (timescale * num)
        let numerator = Int128(value) * Int128(timeBase.den)
        let denominator = Int128(timescale) * Int128(timeBase.num)
        let half = denominator / 2
        let rounded = numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator
        return Int64(rounded)
    }

    /// The same time in ticks of 1/`timescale` s, rounded to the nearest tick (ties away from zero).
    public func converted(to timescale: Int32) -> MediaTime {
        MediaTime(value: ticks(in: Rational(1, timescale)), timescale: timescale)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        // Equal times with different timescales must hash alike: hash the reduced fraction.
        let divisor = gcd(abs(value), Int64(timescale))
        hasher.combine(value / max(divisor, 1))
        hasher.combine(Int64(timescale) / max(divisor, 1))
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + MediaTime(value: -rhs.value, timescale: rhs.timescale)
    }

    /// Exact when the least common multiple of the two timescales fits in Int32, else rounded to the finer one.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        if lhs.timescale == rhs.timescale { return MediaTime(value: lhs.value + rhs.value, timescale: lhs.timescale) }
        let lcm = Int64(lhs.timescale) / gcd(Int64(lhs.timescale), Int64(rhs.timescale)) * Int64(rhs.timescale)
        let scale = lcm <= Int64(Int32.max) ? Int32(lcm) : max(lhs.timescale, rhs.timescale)
        return MediaTime(value: lhs.converted(to: scale).value + rhs.converted(to: scale).value, timescale: scale)
    }

    /// "1:02:03.250" style, for progress lines.
    public var clockDescription: String {
        let totalMillis = Int64((seconds * 1000).rounded())
        let sign = totalMillis < 0 ? "-" : ""
        let ms = abs(totalMillis)
        let h = ms / 3_600_000, m = (ms / 60_000) % 60, s = (ms / 1000) % 60, f = ms % 1000
        let mmss = String(format2(m)) + ":" + String(format2(s)) + "." + String(format3(f))
        return sign + (h > 0 ? "\(h):" : "") + mmss
    }

    public var description: String { "\(value)/\(timescale)" }
}

private func gcd(_ a: Int64, _ b: Int64) -> Int64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

private func format2(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
private func format3(_ v: Int64) -> String { v < 10 ? "00\(v)" : v < 100 ? "0\(v)" : "\(v)" }

extension Rational {
    /// The frame rates Prism accepts from anyone (`--fps`, a manifest's `fps`, raw input's `WxH:PIXFMT:RATE`):
    /// 1/1000 to 1000 frames per second, so every frame has a duration the engine's clock can time.
    public static let frameRates: ClosedRange<Double> = 0.001...1000

    /// A frame rate (`30`, `29.97`, `30000/1001`): positive and in `frameRates`, at most `ceiling`; nil
    /// otherwise. The one frame-rate check; callers word the refusal for their user.
    public init?(frameRate text: String, upTo ceiling: Double = Rational.frameRates.upperBound) {
        guard let rate = Rational(parsing: text), rate.num > 0, rate.den > 0,
              (Self.frameRates.lowerBound...min(ceiling, Self.frameRates.upperBound)).contains(rate.doubleValue) else { return nil }
        self = rate
    }
}
