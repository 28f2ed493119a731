/// A frame or texture size in pixels.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size of `width` × `height` pixels; not validated (see `init(parsing:)` for checked sizes).
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
    /// Number of pixels, `width * height`.
    public var pixelCount: Int { width * height }

    /// Parses "1280x720" and the names 480p, 720p, 1080p, 2160p (4k).
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "480p": self.init(width: 640, height: 480); return
        case "720p": self.init(width: 1280, height: 720); return
        case "1080p": self.init(width: 1920, height: 1080); return
        case "2160p", "4k": self.init(width: 3840, height: 2160); return
        default: break
        }
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (1...16384).contains(w), (1...16384).contains(h) else { return nil }
        self.init(width: w, height: h)
    }
}

/// A rectangle of whole pixels (or texels): columns `x`, rows `y`, y down.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    /// Columns covered (column 0 is the left), upper bound exclusive.
    public var x: Range<Int>
    /// Rows covered (row 0 is the top), upper bound exclusive.
    public var y: Range<Int>

    /// The rectangle of columns `x` and rows `y`.
    public init(x: Range<Int>, y: Range<Int>) {
        self.x = x
        self.y = y
    }

    /// True when it covers no pixel (either range is empty).
    public var isEmpty: Bool { x.isEmpty || y.isEmpty }
    public var description: String { "x \(x.lowerBound)..<\(x.upperBound), y \(y.lowerBound)..<\(y.upperBound)" }

    /// The smallest rectangle holding both (an empty one holds nothing).
    public func union(_ other: PixelRect) -> PixelRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        return PixelRect(x: min(x.lowerBound, other.x.lowerBound)..<max(x.upperBound, other.x.upperBound),
                         y: min(y.lowerBound, other.y.lowerBound)..<max(y.upperBound, other.y.upperBound))
    }

    /// True when the two rectangles share at least one pixel.
    public func intersects(_ other: PixelRect) -> Bool { x.overlaps(other.x) && y.overlaps(other.y) }
}
