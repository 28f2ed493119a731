/// One plane of a pixel format: how many bytes a sample group takes and how the plane is subsampled.
public struct PlaneLayout: Hashable, Sendable {
    /// Bytes per plane "pixel" (one sample group: 1 for Y, 2 for interleaved CbCr, 4 for RGBA, 2 for 10-bit Y).
    public var bytesPerPixel: Int
    /// Plane width = ceil(frame width / 2^horizontalShift).
    public var horizontalShift: Int
    /// Plane height = ceil(frame height / 2^verticalShift).
    public var verticalShift: Int

    /// Plane width in samples for a frame `frameWidth` pixels wide (rounded up).
    public func width(for frameWidth: Int) -> Int { (frameWidth + (1 << horizontalShift) - 1) >> horizontalShift }
    /// Plane height in rows for a frame `frameHeight` pixels high (rounded up).
    public func height(for frameHeight: Int) -> Int { (frameHeight + (1 << verticalShift) - 1) >> verticalShift }
    /// Bytes of one unpadded plane row for a frame `frameWidth` pixels wide.
    public func minimumRowBytes(for frameWidth: Int) -> Int { width(for: frameWidth) * bytesPerPixel }
}

/// The pixel formats Prism uploads, reads back and passes to encoders. Names follow FFmpeg's.
public enum PixelFormat: String, CaseIterable, Hashable, Sendable {
    /// Planar and semi-planar Y'CbCr (8-, 10- and 16-bit; 16-bit also holds 12-bit samples, scaled), packed YUYV,
    /// 8-bit RGBA/BGRA, 8-bit gray.
    case yuv420p, nv12, yuyv422, rgba, bgra, yuv420p10le, yuv422p, yuv444p, yuv422p10le, gray, yuv420p16le, yuv444p16le

    /// Looks a format up by FFmpeg name, case-insensitively, also taking the aliases yuvj420p and i420, yuy2 and yuyv, gray8; nil if unknown.
    public init?(name: String) {
        let lowered = name.lowercased()
        if lowered == "yuvj420p" || lowered == "i420" { self = .yuv420p; return }
        if lowered == "yuy2" || lowered == "yuyv" { self = .yuyv422; return }
        if lowered == "gray8" { self = .gray; return }
        self.init(rawValue: lowered)
    }

    /// The format's planes in FFmpeg order (one for packed formats, two for NV12, three for planar YUV).
    public var planes: [PlaneLayout] {
        func plane(_ bytes: Int, _ horizontalShift: Int = 0, _ verticalShift: Int = 0) -> PlaneLayout {
            PlaneLayout(bytesPerPixel: bytes, horizontalShift: horizontalShift, verticalShift: verticalShift)
        }
        switch self {
        case .yuv420p: return [plane(1), plane(1, 1, 1), plane(1, 1, 1)]
        case .yuv420p10le, .yuv420p16le: return [plane(2), plane(2, 1, 1), plane(2, 1, 1)]
        case .yuv422p: return [plane(1), plane(1, 1), plane(1, 1)]
        case .yuv422p10le: return [plane(2), plane(2, 1), plane(2, 1)]
        case .yuv444p: return [plane(1), plane(1), plane(1)]
        case .yuv444p16le: return [plane(2), plane(2), plane(2)]
        case .nv12: return [plane(1), plane(2, 1, 1)]
        // One plane; a 4-byte group Y0 U Y1 V covers two pixels, so 2 bytes per pixel.
        case .yuyv422: return [plane(2)]
        case .rgba, .bgra: return [plane(4)]
        case .gray: return [plane(1)]
        }
    }

    /// True for the Y'CbCr formats, false for RGBA, BGRA and gray.
    public var isYUV: Bool { !(self == .rgba || self == .bgra || self == .gray) }
    /// Bits per sample: 10 for the `…10le` formats, 16 for the `…16le` ones (both in 16-bit little-endian words),
    /// else 8.
    public var bitDepth: Int {
        switch self {
        case .yuv420p10le, .yuv422p10le: return 10
        case .yuv420p16le, .yuv444p16le: return 16
        default: return 8
        }
    }

    /// Bytes of one tightly packed frame.
    public func frameBytes(for size: Size) -> Int {
        planes.reduce(0) { $0 + $1.minimumRowBytes(for: size.width) * $1.height(for: size.height) }
    }
}

/// The Y'CbCr matrix (Kr, Kb) of a video signal.
public enum ColorMatrix: String, Hashable, Sendable, CaseIterable {
    /// ITU-R BT.601 (standard definition), BT.709 (HD), BT.2020 non-constant luminance (UHD, HDR).
    case bt601, bt709, bt2020

    /// The red luma coefficient Kr (0.299 for BT.601, 0.2126 for BT.709, 0.2627 for BT.2020).
    public var kr: Double {
        switch self {
        case .bt601: return 0.299
        case .bt709: return 0.2126
        case .bt2020: return 0.2627
        }
    }
    /// The blue luma coefficient Kb (0.114 for BT.601, 0.0722 for BT.709, 0.0593 for BT.2020).
    public var kb: Double {
        switch self {
        case .bt601: return 0.114
        case .bt709: return 0.0722
        case .bt2020: return 0.0593
        }
    }

    /// The usual guess for untagged video: BT.709 for HD and above, BT.601 for SD.
    public static func defaultFor(_ size: Size) -> ColorMatrix { size.height >= 600 ? .bt709 : .bt601 }
}

/// Limited ("TV", 16–235 / 16–240) or full ("PC", 0–255) quantisation range.
public enum ColorRange: String, Hashable, Sendable {
    /// Limited: Y 16–235 and Cb/Cr 16–240 (scaled for 10-bit); full: 0–255.
    case limited, full
}

/// The colour description of a Y'CbCr signal, with the maths to and from non-linear R'G'B' in 0...1.
/// The GPU shaders and the CPU references both derive their coefficients from here.
public struct YUVColorSpace: Hashable, Sendable {
    /// The Y'CbCr matrix (Kr, Kb).
    public var matrix: ColorMatrix
    /// Limited or full quantisation range.
    public var range: ColorRange

    /// The colour space of `matrix` in `range`.
    public init(matrix: ColorMatrix, range: ColorRange) {
        self.matrix = matrix
        self.range = range
    }

    /// The one rule for what packed output frames are written in: a Y'CbCr source's own description,
    /// or for an RGB source BT.709 / BT.601 (by the output's size), limited range.
    public static func packing(sourceFormat: PixelFormat, sourceColorSpace: YUVColorSpace, outputSize: Size) -> YUVColorSpace {
        sourceFormat.isYUV ? sourceColorSpace : YUVColorSpace(matrix: .defaultFor(outputSize), range: .limited)
    }

    /// Scale and offset from normalised Y (0...1) to code values / (2^bits - 1).
    public func lumaScaleOffset(bitDepth: Int = 8) -> (scale: Double, offset: Double) {
        let maxCode = Double((1 << bitDepth) - 1)
        let unit = Double(1 << (bitDepth - 8))
        switch range {
        case .full: return (1, 0)
        case .limited: return (219 * unit / maxCode, 16 * unit / maxCode)
        }
    }

    /// Scale and offset from normalised Cb/Cr (-0.5...0.5) to code values / (2^bits - 1).
    public func chromaScaleOffset(bitDepth: Int = 8) -> (scale: Double, offset: Double) {
        let maxCode = Double((1 << bitDepth) - 1)
        let unit = Double(1 << (bitDepth - 8))
        switch range {
        case .full: return (1, 128 * unit / maxCode)
        case .limited: return (224 * unit / maxCode, 128 * unit / maxCode)
        }
    }

    /// R'G'B' (0...1) to Y'CbCr code values normalised by 2^bits - 1 (what a UNORM texture holds).
    public func yuv(fromRGB r: Double, _ g: Double, _ b: Double, bitDepth: Int = 8) -> (y: Double, cb: Double, cr: Double) {
        let kr = matrix.kr, kb = matrix.kb, kg = 1 - kr - kb
        let y = kr * r + kg * g + kb * b
        let cb = (b - y) / (2 * (1 - kb))
        let cr = (r - y) / (2 * (1 - kr))
        let (ys, yo) = lumaScaleOffset(bitDepth: bitDepth)
        let (cs, co) = chromaScaleOffset(bitDepth: bitDepth)
        return (y * ys + yo, cb * cs + co, cr * cs + co)
    }

    /// Y'CbCr code values normalised by 2^bits - 1 to R'G'B' (unclamped).
    public func rgb(fromY y: Double, cb: Double, cr: Double, bitDepth: Int = 8) -> (r: Double, g: Double, b: Double) {
        let (ys, yo) = lumaScaleOffset(bitDepth: bitDepth)
        let (cs, co) = chromaScaleOffset(bitDepth: bitDepth)
        let yn = (y - yo) / ys, pb = (cb - co) / cs, pr = (cr - co) / cs
        let kr = matrix.kr, kb = matrix.kb, kg = 1 - kr - kb
        let r = yn + 2 * (1 - kr) * pr
        let b = yn + 2 * (1 - kb) * pb
        let g = (yn - kr * r - kb * b) / kg
        return (r, g, b)
    }

    /// Rows of the 3x3 matrix taking R'G'B' to normalised Y'CbCr code values, plus the offsets;
    /// `yuv = M * rgb + offset`. Row-major.
    public func rgbToYUVMatrix(bitDepth: Int = 8) -> (rows: [[Double]], offset: [Double]) {
        let kr = matrix.kr, kb = matrix.kb, kg = 1 - kr - kb
        let (ys, yo) = lumaScaleOffset(bitDepth: bitDepth)
        let (cs, co) = chromaScaleOffset(bitDepth: bitDepth)
        let yRow = [kr, kg, kb].map { $0 * ys }
        let cbRow = [-kr, -kg, 1 - kb].map { $0 / (2 * (1 - kb)) * cs }
        let crRow = [1 - kr, -kg, -kb].map { $0 / (2 * (1 - kr)) * cs }
        return ([yRow, cbRow, crRow], [yo, co, co])
    }

    /// Rows of the 3x3 matrix taking normalised Y'CbCr code values (minus offsets) to R'G'B';
    /// `rgb = M * (yuv - offset)`. Row-major.
    public func yuvToRGBMatrix(bitDepth: Int = 8) -> (rows: [[Double]], offset: [Double]) {
        let kr = matrix.kr, kb = matrix.kb, kg = 1 - kr - kb
        let (ys, yo) = lumaScaleOffset(bitDepth: bitDepth)
        let (cs, co) = chromaScaleOffset(bitDepth: bitDepth)
        let rRow = [1 / ys, 0, 2 * (1 - kr) / cs]
        let gRow = [1 / ys, -2 * (1 - kb) * kb / kg / cs, -2 * (1 - kr) * kr / kg / cs]
        let bRow = [1 / ys, 2 * (1 - kb) / cs, 0]
        return ([rRow, gRow, bRow], [yo, co, co])
    }
}
