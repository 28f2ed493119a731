/// "Did you mean": the known name nearest to what was typed, when it is a plausible typo of it (edit distance at
/// most `max(2, length / 3)`). One rule for commands, options, filters and manifest keys.
public enum NearestName {
    /// The name in `names` nearest to `typed` (case-insensitive), nil when none is close enough.
    public static func nearest(to typed: String, among names: some Sequence<String>) -> String? {
        let lowered = Array(typed.lowercased())
        var best: (name: String, distance: Int)?
        for name in names {
            let distance = editDistance(lowered, Array(name.lowercased()))
            if distance < best?.distance ?? .max { best = (name, distance) }
        }
        guard let best, best.distance <= max(2, lowered.count / 3), best.distance < lowered.count else { return nil }
        return best.name
    }

    /// "; did you mean 'x'?" or "".
    public static func suggestion(for typed: String, among names: some Sequence<String>, quote: String = "'") -> String {
        nearest(to: typed, among: names).map { "; did you mean \(quote)\($0)\(quote)?" } ?? ""
    }

    /// Levenshtein distance: insertions, deletions and substitutions of one character each.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for i in a.indices {
            var next = [i + 1]
            for j in b.indices { next.append(min(row[j + 1] + 1, next[j] + 1, row[j] + (a[i] == b[j] ? 0 : 1))) }
            row = next
        }
        return row[b.count]
    }
}
