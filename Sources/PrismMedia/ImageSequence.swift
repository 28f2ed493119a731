import Foundation

/// A numbered run of still images named by a printf-style pattern (`img%03d.png`, `frame%d.jpg`), as
/// libavformat's image2 demuxer reads them: one `%d` or `%0Nd`, `%%` for a literal percent sign.
package enum ImageSequence {
    /// Numbers the first image may have (image2 looks at 0…4 by default; so does this).
    package static let firstNumbers = 0...4

    /// Whether `path` is a pattern (exactly one `%d`/`%0Nd`) rather than a file name.
    package static func isPattern(_ path: String) -> Bool {
        guard !path.contains("://") else { return false }
        return numberSpec(in: path) != nil
    }

    /// `pattern` with `number` put in, e.g. (`img%03d.png`, 7) → `img007.png`; nil when it is no pattern.
    package static func path(_ pattern: String, number: Int) -> String? {
        guard let spec = numberSpec(in: pattern) else { return nil }
        var digits = String(number)
        if digits.count < spec.width { digits = String(repeating: "0", count: spec.width - digits.count) + digits }
        let before = pattern[..<spec.range.lowerBound].replacingOccurrences(of: "%%", with: "%")
        let after = pattern[spec.range.upperBound...].replacingOccurrences(of: "%%", with: "%")
        return before + digits + after
    }

    /// The first image of the sequence that exists, trying `firstNumbers` in order; nil when none does.
    package static func firstFile(_ pattern: String) -> String? {
        firstNumbers.lazy.compactMap { path(pattern, number: $0) }.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The one `%d` / `%0Nd` in `text` (its range and zero-padded width); nil for none, or for two.
    private static func numberSpec(in text: String) -> (range: Range<String.Index>, width: Int)? {
        var found: (Range<String.Index>, Int)?
        var index = text.startIndex
        while index < text.endIndex {
            guard text[index] == "%" else { index = text.index(after: index); continue }
            let start = index
            index = text.index(after: index)
            guard index < text.endIndex else { return nil }
            if text[index] == "%" { index = text.index(after: index); continue }
            var digits = ""
            while index < text.endIndex, text[index].isASCII, text[index].isNumber {
                digits.append(text[index])
                index = text.index(after: index)
            }
            // libavformat zero-pads to the width whether or not it starts with 0 (av_get_frame_filename).
            guard index < text.endIndex, text[index] == "d" else { return nil }  // another conversion: no pattern
            guard found == nil else { return nil }
            index = text.index(after: index)
            found = (start..<index, Int(digits) ?? 0)
        }
        return found.map { (range: $0.0, width: $0.1) }
    }
}
