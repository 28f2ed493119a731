import PrismCore

/// Deterministic test planes: gradients, hard edges and noise, in every plane.
enum TestPlanes {
    static func make(format: PixelFormat, size: Size, seed: UInt64) -> [[UInt8]] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func noise() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % 41) - 20
        }
        return format.planes.enumerated().map { index, plane in
            let w = plane.width(for: size.width), h = plane.height(for: size.height)
            let bytesPerSample = format.bitDepth > 8 ? 2 : 1
            let samplesPerRow = plane.minimumRowBytes(for: size.width) / bytesPerSample
            var bytes = [UInt8](repeating: 0, count: plane.minimumRowBytes(for: size.width) * h)
            let maxCode = (1 << format.bitDepth) - 1
            for y in 0..<h {
                for s in 0..<samplesPerRow {
                    let x = s * w / max(samplesPerRow, 1)
                    let gradient = (x * maxCode / max(w - 1, 1) + y * maxCode / max(h - 1, 1) * (index + 1)) % (maxCode + 1)
                    let edge = (x / 5 + y / 3) % 2 == 0 ? maxCode / 4 : 0
                    let value = Swift.max(0, Swift.min(maxCode, gradient / 2 + edge + noise() * (maxCode / 255)))
                    if bytesPerSample == 2 {
                        bytes[(y * samplesPerRow + s) * 2] = UInt8(value & 0xFF)
                        bytes[(y * samplesPerRow + s) * 2 + 1] = UInt8(value >> 8)
                    } else {
                        bytes[y * samplesPerRow + s] = UInt8(value)
                    }
                }
            }
            return bytes
        }
    }
}

/// The CPU side of the conversions, written from `YUVColorSpace` and the documented siting.
enum CPUConversion {
    static func rgba(from planes: [[UInt8]], format: PixelFormat, size: Size, colorSpace: YUVColorSpace) -> [UInt8] {
        let layout = PackedFrameLayout(format: .rgba, size: size)!
        var out = [UInt8](repeating: 0, count: layout.byteCount)
        let maxCode = Double((1 << format.bitDepth) - 1)
        let layouts = format.planes
        func sample(_ plane: Int, _ x: Int, _ y: Int, component: Int = 0) -> Double {
            let p = layouts[plane]
            let w = p.width(for: size.width), h = p.height(for: size.height)
            let cx = min(max(x, 0), w - 1), cy = min(max(y, 0), h - 1)
            let rowBytes = p.minimumRowBytes(for: size.width)
            if format.bitDepth > 8 {
                let i = cy * rowBytes + cx * 2
                return Double(Int(planes[plane][i]) | Int(planes[plane][i + 1]) << 8) / maxCode
            }
            return Double(planes[plane][cy * rowBytes + cx * p.bytesPerPixel + component]) / maxCode
        }
        for y in 0..<size.height {
            for x in 0..<size.width {
                var rgba: (Double, Double, Double, Double)
                switch format {
                case .rgba:
                    rgba = (sample(0, x, y, component: 0), sample(0, x, y, component: 1), sample(0, x, y, component: 2),
                            sample(0, x, y, component: 3))
                case .bgra:
                    rgba = (sample(0, x, y, component: 2), sample(0, x, y, component: 1), sample(0, x, y, component: 0),
                            sample(0, x, y, component: 3))
                case .gray:
                    let g = sample(0, x, y)
                    rgba = (g, g, g, 1)
                default:
                    // Sample-and-hold chroma: the sample whose block holds the pixel.
                    let yv: Double, cb: Double, cr: Double
                    let hs = layouts.count > 1 ? layouts[1].horizontalShift : 1
                    let vs = layouts.count > 1 ? layouts[1].verticalShift : 0
                    switch format {
                    case .yuyv422:
                        let pair = x / 2 * 2
                        let row = layouts[0].minimumRowBytes(for: size.width)
                        yv = Double(planes[0][y * row + x * 2]) / 255
                        cb = Double(planes[0][y * row + pair * 2 + 1]) / 255
                        cr = Double(planes[0][y * row + pair * 2 + 3]) / 255
                    case .nv12:
                        yv = sample(0, x, y)
                        cb = sample(1, x >> hs, y >> vs, component: 0); cr = sample(1, x >> hs, y >> vs, component: 1)
                    default:
                        yv = sample(0, x, y); cb = sample(1, x >> hs, y >> vs); cr = sample(2, x >> hs, y >> vs)
                    }
                    let rgb = colorSpace.rgb(fromY: yv, cb: cb, cr: cr, bitDepth: format.bitDepth)
                    rgba = (rgb.r, rgb.g, rgb.b, 1)
                }
                let i = y * layout.rowBytes + x * 4
                out[i] = quantize(rgba.0); out[i + 1] = quantize(rgba.1)
                out[i + 2] = quantize(rgba.2); out[i + 3] = quantize(rgba.3)
            }
        }
        return out
    }

    static func quantize(_ v: Double) -> UInt8 { UInt8((min(max(v, 0), 1) * 255).rounded()) }

    /// RGBA8 (tightly packed) into a packed layout; chroma is the mean of the covered pixels.
    static func pack(rgba: [UInt8], size: Size, layout: PackedFrameLayout, colorSpace: YUVColorSpace) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: layout.byteCount)
        let format = layout.format
        func pixel(_ x: Int, _ y: Int) -> (Double, Double, Double, Double) {
            let i = (min(y, size.height - 1) * size.width + min(x, size.width - 1)) * 4
            return (Double(rgba[i]) / 255, Double(rgba[i + 1]) / 255, Double(rgba[i + 2]) / 255, Double(rgba[i + 3]) / 255)
        }
        var space = colorSpace
        if format == .gray { space.range = .full }
        let bits = format.bitDepth
        let maxCode = Double((1 << bits) - 1)
        func put(_ plane: PackedFrameLayout.Plane, _ x: Int, _ y: Int, _ value: Double, stride: Int = 1, slot: Int = 0) {
            let code = Int((min(max(value, 0), 1) * maxCode).rounded())
            if bits > 8 {
                let i = plane.offset + y * plane.rowBytes + x * 2
                out[i] = UInt8(code & 0xFF); out[i + 1] = UInt8(code >> 8)
            } else {
                out[plane.offset + y * plane.rowBytes + x * stride + slot] = UInt8(code)
            }
        }
        switch format {
        case .rgba, .bgra:
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let p = pixel(x, y)
                    let ordered = format == .rgba ? [p.0, p.1, p.2, p.3] : [p.2, p.1, p.0, p.3]
                    for c in 0..<4 { out[y * layout.rowBytes + x * 4 + c] = quantize(ordered[c]) }
                }
            }
            return out
        default: break
        }
        for y in 0..<size.height {
            for x in 0..<size.width {
                let p = pixel(x, y)
                put(layout.planes[0], x, y, space.yuv(fromRGB: p.0, p.1, p.2, bitDepth: bits).y)
            }
        }
        guard format.planes.count > 1 else { return out }
        let chroma = format.planes[1]
        let sx = 1 << chroma.horizontalShift, sy = 1 << chroma.verticalShift
        for cy in 0..<chroma.height(for: size.height) {
            for cx in 0..<chroma.width(for: size.width) {
                var sum = (0.0, 0.0, 0.0)
                for dy in 0..<sy { for dx in 0..<sx {
                    let p = pixel(cx * sx + dx, cy * sy + dy)
                    sum.0 += p.0; sum.1 += p.1; sum.2 += p.2
                } }
                let n = Double(sx * sy)
                let yuv = space.yuv(fromRGB: sum.0 / n, sum.1 / n, sum.2 / n, bitDepth: bits)
                if layout.planes.count == 2 {
                    put(layout.planes[1], cx, cy, yuv.cb, stride: 2, slot: 0)
                    put(layout.planes[1], cx, cy, yuv.cr, stride: 2, slot: 1)
                } else {
                    put(layout.planes[1], cx, cy, yuv.cb)
                    put(layout.planes[2], cx, cy, yuv.cr)
                }
            }
        }
        return out
    }
}
