import PrismCore

/// The built-in moving test pattern, generated on the CPU straight into yuv420p.
///
/// Colour bars (75%), a grey ramp, a white box sweeping across the bottom band, and a clock
/// (HH:MM:SS.FF) plus a frame counter in seven-segment digits. The static parts are rendered once;
/// each frame copies that background and draws only what moves, into recycled memory.
/// BT.709 limited range for 720 rows and more, BT.601 limited below. Timestamps count frames in
/// the time base 1/fps. Use from one thread at a time.
package final class TestPatternSource: MediaSource {
    package let info: SourceInfo
    package let frameRate: Rational
    package let frameCount: Int?
    package private(set) var frameIndex: Int = 0

    private let size: Size
    private let colorSpace: YUVColorSpace
    private let background: [UInt8]
    private let recycler: FrameMemoryRecycler
    private let geometry: Geometry

    struct Geometry {
        var bandTop: Int, bandHeight: Int, boxSize: Int
        var textX: Int, textY: Int, digitWidth: Int, digitHeight: Int, thickness: Int, advance: Int, lineGap: Int
        var textBox: (x: Int, y: Int, width: Int, height: Int)
    }

    /// `frameCount` nil: endless.
    package init(size: Size, frameRate: Rational, frameCount: Int? = nil) throws(InvalidRequest) {
        guard size.width >= 16, size.height >= 16, size.width <= 16384, size.height <= 16384 else {
            throw InvalidRequest("test pattern: size \(size) is out of range (16x16 to 16384x16384)")
        }
        guard frameRate.num > 0, frameRate.den > 0 else {
            throw InvalidRequest("test pattern: frame rate \(frameRate) must be positive")
        }
        if let frameCount, frameCount < 0 { throw InvalidRequest("test pattern: negative frame count \(frameCount)") }
        self.size = size
        self.frameRate = frameRate
        self.frameCount = frameCount
        colorSpace = YUVColorSpace(matrix: size.height >= 720 ? .bt709 : .bt601, range: .limited)
        recycler = FrameMemoryRecycler(byteCount: PixelFormat.yuv420p.frameBytes(for: size))

        func even(_ value: Int) -> Int { value & ~1 }
        let digitHeight = max(10, even(size.height / 12))
        let digitWidth = max(6, even(digitHeight / 2 + 1))
        let thickness = max(2, even(digitHeight / 8))
        let bandTop = even(size.height * 5 / 6)
        let bandHeight = size.height - bandTop
        let advance = digitWidth + max(2, even(digitWidth / 2))
        let lineGap = max(2, even(digitHeight / 3))
        let textX = max(2, even(size.width / 24)), textY = max(2, even(size.height / 24))
        let margin = max(2, even(thickness))
        let boxWidth = min(size.width - textX + margin, 11 * advance + 2 * margin)
        geometry = Geometry(bandTop: bandTop, bandHeight: bandHeight, boxSize: max(2, even(bandHeight * 3 / 4)),
                            textX: textX, textY: textY, digitWidth: digitWidth, digitHeight: digitHeight,
                            thickness: thickness, advance: advance, lineGap: lineGap,
                            textBox: (textX - margin, textY - margin, boxWidth,
                                      2 * digitHeight + lineGap + 2 * margin))
        background = TestPatternSource.renderBackground(size: size, colorSpace: colorSpace, geometry: geometry)

        let timeBase = Rational(frameRate.den, frameRate.num)
        let duration = frameCount.map { MediaTime(value: Int64($0), timeBase: timeBase) }
        info = SourceInfo(size: size, pixelFormat: .yuv420p, frameRate: frameRate, timeBase: timeBase,
                          duration: duration, estimatedFrameCount: frameCount, isLive: false, audio: nil,
                          colorSpace: colorSpace,
                          summary: "test pattern \(size) yuv420p \(frameRate) fps"
                            + (frameCount.map { ", \($0) frames" } ?? ""))
    }

    package func next() throws -> SourceEvent? {
        guard let frame = nextFrame() else { return nil }
        return .video(frame)
    }

    /// The next pattern frame, nil after `frameCount` frames.
    package func nextFrame() -> VideoFrame? {
        if let frameCount, frameIndex >= frameCount { return nil }
        let index = frameIndex
        frameIndex += 1
        let memory = recycler.take()
        background.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        drawMovingParts(into: memory.assumingMemoryBound(to: UInt8.self), index: index)
        let timeBase = info.timeBase
        return VideoFrame(packedMemory: memory, recycler: recycler, format: .yuv420p, size: size,
                          colorSpace: colorSpace, pts: MediaTime(value: Int64(index), timeBase: timeBase),
                          duration: MediaTime(value: 1, timeBase: timeBase))
    }

    // MARK: drawing

    /// 8-bit code values of an R'G'B' colour in this pattern's colour space.
    private static func codes(_ space: YUVColorSpace, _ r: Double, _ g: Double, _ b: Double) -> (UInt8, UInt8, UInt8) {
        let (y, cb, cr) = space.yuv(fromRGB: r, g, b)
        func code(_ v: Double) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        return (code(y), code(cb), code(cr))
    }

    private static func renderBackground(size: Size, colorSpace: YUVColorSpace, geometry: Geometry) -> [UInt8] {
        let width = size.width, height = size.height
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        var bytes = [UInt8](repeating: 0, count: PixelFormat.yuv420p.frameBytes(for: size))
        let black = codes(colorSpace, 0, 0, 0)
        let bars: [(UInt8, UInt8, UInt8)] = [(0.75, 0.75, 0.75), (0.75, 0.75, 0), (0, 0.75, 0.75), (0, 0.75, 0),
                                             (0.75, 0, 0.75), (0.75, 0, 0), (0, 0, 0.75)]
            .map { codes(colorSpace, $0.0, $0.1, $0.2) }
        let barsBottom = (height * 2 / 3) & ~1
        let rampBottom = geometry.bandTop
        bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            let cbPlane = base + width * height
            let crPlane = cbPlane + chromaWidth * chromaHeight
            for y in 0..<height {
                let row = base + y * width
                for x in 0..<width {
                    if y < barsBottom {
                        row[x] = bars[min(6, x * 7 / width)].0
                    } else if y < rampBottom {
                        row[x] = UInt8(16 + (219 * x) / max(1, width - 1))
                    } else {
                        row[x] = black.0
                    }
                }
            }
            for cy in 0..<chromaHeight {
                for cx in 0..<chromaWidth {
                    let y = cy * 2, x = cx * 2
                    let value: (UInt8, UInt8) = y < barsBottom ? (bars[min(6, x * 7 / width)].1, bars[min(6, x * 7 / width)].2)
                        : (black.1, black.2)
                    cbPlane[cy * chromaWidth + cx] = value.0
                    crPlane[cy * chromaWidth + cx] = value.1
                }
            }
            // The black panel behind the clock and counter (its chroma is neutral, like the digits').
            let box = geometry.textBox
            fillLuma(base, width: width, height: height, x: box.x, y: box.y, w: box.width, h: box.height, value: black.0)
            for cy in max(0, box.y / 2)..<min(chromaHeight, (box.y + box.height + 1) / 2) {
                for cx in max(0, box.x / 2)..<min(chromaWidth, (box.x + box.width + 1) / 2) {
                    cbPlane[cy * chromaWidth + cx] = black.1
                    crPlane[cy * chromaWidth + cx] = black.2
                }
            }
        }
        return bytes
    }

    /// Fills a rectangle of the luma plane, clipped to the frame.
    private static func fillLuma(_ plane: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
                                 x: Int, y: Int, w: Int, h: Int, value: UInt8) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x0, y1 > y0 else { return }
        for row in y0..<y1 {
            (plane + row * width + x0).update(repeating: value, count: x1 - x0)
        }
    }

    /// The box and the digits are white on black, both neutral in chroma: only luma changes per frame.
    private func drawMovingParts(into plane: UnsafeMutablePointer<UInt8>, index: Int) {
        let width = size.width, height = size.height
        let g = geometry
        let white: UInt8 = 235
        // The sweeping box: crosses the frame in two seconds (nominal rate), then starts again.
        let framesPerSweep = max(2, Int((2 * Int64(frameRate.num)) / Int64(frameRate.den)))
        let travel = max(1, width - g.boxSize)
        let boxX = (index % framesPerSweep) * travel / (framesPerSweep - 1) & ~1
        let boxY = g.bandTop + (g.bandHeight - g.boxSize) / 2
        Self.fillLuma(plane, width: width, height: height, x: boxX, y: boxY, w: g.boxSize, h: g.boxSize, value: white)

        // HH:MM:SS.FF from the frame index: seconds = index * den / num.
        let ticks = Int64(index) * Int64(frameRate.den)
        let seconds = ticks / Int64(frameRate.num)
        let subFrame = (ticks % Int64(frameRate.num)) / Int64(frameRate.den)
        var x = g.textX
        func put(_ glyph: UInt8) { // 0-9, 10 = ':', 11 = '.'
            drawGlyph(glyph, plane: plane, x: x, y: g.textY, value: white)
            x += g.advance
        }
        func two(_ v: Int64) { put(UInt8(v / 10 % 10)); put(UInt8(v % 10)) }
        two(seconds / 3600 % 100); put(10); two(seconds / 60 % 60); put(10)
        two(seconds % 60); put(11); two(subFrame)
        var counter = index
        var digits = 6
        while digits < 19 && index >= Self.powersOfTen[digits] { digits += 1 }
        x = g.textX + (digits - 1) * g.advance
        for _ in 0..<digits {
            drawGlyph(UInt8(counter % 10), plane: plane, x: x, y: g.textY + g.digitHeight + g.lineGap, value: white)
            counter /= 10
            x -= g.advance
        }
    }

    private static let powersOfTen: [Int] = (0...18).map { n in (0..<n).reduce(1) { acc, _ in acc * 10 } }

    /// Seven-segment masks for 0-9 (bits: a b c d e f g = top, top-right, bottom-right, bottom,
    /// bottom-left, top-left, middle).
    private static let segments: [UInt8] = [0b0111111, 0b0000110, 0b1011011, 0b1001111, 0b1100110,
                                            0b1101101, 0b1111101, 0b0000111, 0b1111111, 0b1101111]

    private func drawGlyph(_ glyph: UInt8, plane: UnsafeMutablePointer<UInt8>, x: Int, y: Int, value: UInt8) {
        let g = geometry
        let w = g.digitWidth, h = g.digitHeight, t = g.thickness
        let half = (h / 2) & ~1
        func fill(_ rx: Int, _ ry: Int, _ rw: Int, _ rh: Int) {
            Self.fillLuma(plane, width: size.width, height: size.height, x: x + rx, y: y + ry, w: rw, h: rh, value: value)
        }
        switch glyph {
        case 10: // ':'
            fill((w - t) / 2 & ~1, h / 4 & ~1, t, t)
            fill((w - t) / 2 & ~1, (3 * h / 4) & ~1, t, t)
        case 11: // '.'
            fill((w - t) / 2 & ~1, h - t, t, t)
        default:
            let mask = Self.segments[Int(glyph)]
            if mask & 1 != 0 { fill(0, 0, w, t) }                     // a
            if mask & 2 != 0 { fill(w - t, 0, t, half + t / 2) }      // b
            if mask & 4 != 0 { fill(w - t, half, t, h - half) }       // c
            if mask & 8 != 0 { fill(0, h - t, w, t) }                 // d
            if mask & 16 != 0 { fill(0, half, t, h - half) }          // e
            if mask & 32 != 0 { fill(0, 0, t, half + t / 2) }         // f
            if mask & 64 != 0 { fill(0, half - t / 2, w, t) }         // g
        }
    }
}
