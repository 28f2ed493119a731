import PrismCore
import PrismMedia

/// The values of the `run` settings that batch manifests give too, each read and checked by one function:
/// `run --fps 5000`, `batch --fps 5000` and a manifest's `"fps": "5000"` meet the same check and the same
/// message. `name` is the setting as the caller's user spells it (`--crf` on a command line, `crf` in a
/// manifest line).
enum SettingValue {
    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    static let crfRange = 0...51
    static let frameCountRange = 1...100_000_000
    static let durationRange = 0.001...1e7
    /// Frame rates a command accepts: 1/1000 to 1000 frames per second.
    static let frameRates: ClosedRange<Double> = 0.001...1000

    static func wholeNumber(_ text: String, _ name: String, in range: ClosedRange<Int>) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("\(name) takes a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    static func number(_ text: String, _ name: String, in range: ClosedRange<Double>) throws -> Double {
        guard let number = Double(text), range.contains(number) else {
            throw UsageError("\(name) takes a number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }

    static func codec(_ text: String, _ name: String) throws -> VideoEncoderSettings.Codec {
        guard let codec = VideoEncoderSettings.Codec(rawValue: text.lowercased()) else {
            throw UsageError("\(name) takes h264, hevc, ffv1 or prores, not '\(text)'")
        }
        return codec
    }

    static func preset(_ text: String, _ name: String) throws -> String {
        guard presets.contains(text) else { throw UsageError("\(name) takes one of \(presets.joined(separator: ", ")), not '\(text)'") }
        return text
    }

    static func crf(_ text: String, _ name: String) throws -> Int { try wholeNumber(text, name, in: crfRange) }

    /// `4M`, `2500k`, `800000`: bits per second, up to 2 Gbit/s.
    static func bitrate(_ text: String, _ name: String) throws -> Int {
        let lowered = text.lowercased()
        var multiplier = 1.0
        var digits = Substring(lowered)
        if lowered.hasSuffix("k") { multiplier = 1e3; digits = digits.dropLast() }
        else if lowered.hasSuffix("m") { multiplier = 1e6; digits = digits.dropLast() }
        guard let value = Double(digits), value * multiplier >= 1, value * multiplier <= 2e9 else {
            throw UsageError("\(name) takes bits per second like 4M or 2500k, not '\(text)'")
        }
        return Int(value * multiplier)
    }

    static func size(_ text: String, _ name: String) throws -> Size {
        guard let size = Size(parsing: text) else { throw UsageError("\(name) takes WxH (e.g. 1280x720) or 720p, not '\(text)'") }
        return size
    }

    /// A frame rate (`30`, `29.97`, `30000/1001`) in `frameRates`.
    static func frameRate(_ text: String, _ name: String) throws -> Rational {
        guard let rate = Rational(parsing: text), rate.num > 0, rate.den > 0, frameRates.contains(rate.doubleValue) else {
            throw UsageError("\(name) takes a frame rate from 0.001 to 1000 like 30, 29.97 or 30000/1001, not '\(text)'")
        }
        return rate
    }

    static func frames(_ text: String, _ name: String) throws -> Int { try wholeNumber(text, name, in: frameCountRange) }

    /// Seconds of input time.
    static func duration(_ text: String, _ name: String) throws -> Double { try number(text, name, in: durationRange) }

    /// A checked duration as the engine's limit, to the millisecond.
    static func durationLimit(_ seconds: Double) -> MediaTime {
        MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000)
    }
}
