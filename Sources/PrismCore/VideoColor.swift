import Foundation

/// The chromaticities (CIE 1931 xy) of a set of RGB primaries and their white point.
public enum ColorPrimaries: String, Hashable, Sendable, CaseIterable {
    /// BT.709 / sRGB (HD); SMPTE 170M (525-line SD); BT.470 System B/G (625-line SD); BT.2020 (UHD, HDR);
    /// Display P3 (SMPTE EG 432-1: DCI-P3's primaries with a D65 white).
    case bt709, smpte170m, bt470bg, bt2020, p3

    /// Red, green, blue and white, xy.
    public var chromaticities: (red: SIMD2<Double>, green: SIMD2<Double>, blue: SIMD2<Double>, white: SIMD2<Double>) {
        let d65 = SIMD2(0.3127, 0.3290)
        switch self {
        case .bt709: return (SIMD2(0.640, 0.330), SIMD2(0.300, 0.600), SIMD2(0.150, 0.060), d65)
        case .smpte170m: return (SIMD2(0.630, 0.340), SIMD2(0.310, 0.595), SIMD2(0.155, 0.070), d65)
        case .bt470bg: return (SIMD2(0.640, 0.330), SIMD2(0.290, 0.600), SIMD2(0.150, 0.060), d65)
        case .bt2020: return (SIMD2(0.708, 0.292), SIMD2(0.170, 0.797), SIMD2(0.131, 0.046), d65)
        case .p3: return (SIMD2(0.680, 0.320), SIMD2(0.265, 0.690), SIMD2(0.150, 0.060), d65)
        }
    }

    /// Linear RGB in these primaries to CIE XYZ (Y = 1 for white).
    public var rgbToXYZ: Matrix3 {
        let c = chromaticities
        func xyz(_ p: SIMD2<Double>) -> SIMD3<Double> { SIMD3(p.x / p.y, 1, (1 - p.x - p.y) / p.y) }
        let primaries = Matrix3(columns: xyz(c.red), xyz(c.green), xyz(c.blue))
        let scale = primaries.inverse * xyz(c.white)
        return Matrix3(columns: primaries.column(0) * scale.x, primaries.column(1) * scale.y, primaries.column(2) * scale.z)
    }

    /// The luminance of linear RGB in these primaries: XYZ's Y row.
    public var luminanceWeights: SIMD3<Double> { rgbToXYZ.rows[1] }

    /// Linear RGB in these primaries to linear RGB in `target`'s (same white: no adaptation), unclipped.
    public func conversion(to target: ColorPrimaries) -> Matrix3 { target.rgbToXYZ.inverse * rgbToXYZ }

    /// The primaries that go with a matrix when the stream does not say (BT.601 by line count).
    public static func guess(for matrix: ColorMatrix, size: Size) -> ColorPrimaries {
        switch matrix {
        case .bt709: return .bt709
        case .bt2020: return .bt2020
        case .bt601: return size.height == 576 || size.height == 288 ? .bt470bg : .smpte170m
        }
    }

    public var displayName: String {
        switch self {
        case .bt709: return "BT.709"
        case .smpte170m: return "SMPTE 170M"
        case .bt470bg: return "BT.470 B/G"
        case .bt2020: return "BT.2020"
        case .p3: return "Display P3"
        }
    }
}

/// How a signal's non-linear values relate to light. `--input-color transfer=` takes the raw values.
public enum TransferFunction: String, Hashable, Sendable, CaseIterable {
    /// The SDR camera curves (displayed through BT.1886's gamma 2.4): BT.709, SMPTE 170M, BT.2020's.
    case bt709, smpte170m, bt2020_10 = "bt2020-10", bt2020_12 = "bt2020-12"
    /// Other SDR curves that are stated as such: gamma 2.2 (BT.470 M), gamma 2.8 (BT.470 B/G), sRGB, linear.
    case gamma22, gamma28, srgb, linear
    /// SMPTE ST 2084 perceptual quantiser (HDR10) and ARIB STD-B67 hybrid log-gamma (BT.2100).
    case pq, hlg

    /// PQ and HLG.
    public var isHDR: Bool { self == .pq || self == .hlg }

    public var displayName: String {
        switch self {
        case .bt709: return "BT.709"
        case .smpte170m: return "SMPTE 170M"
        case .bt2020_10: return "BT.2020 (10-bit)"
        case .bt2020_12: return "BT.2020 (12-bit)"
        case .gamma22: return "gamma 2.2"
        case .gamma28: return "gamma 2.8"
        case .srgb: return "sRGB"
        case .linear: return "linear"
        case .pq: return "PQ (SMPTE ST 2084)"
        case .hlg: return "HLG (ARIB STD-B67)"
        }
    }

    /// The SDR curve that goes with a matrix when the stream does not say.
    public static func guess(for matrix: ColorMatrix) -> TransferFunction {
        switch matrix {
        case .bt709: return .bt709
        case .bt601: return .smpte170m
        case .bt2020: return .bt2020_10
        }
    }
}

/// SMPTE ST 2086 mastering display colour volume: the display an HDR programme was graded on.
public struct MasteringDisplay: Hashable, Sendable {
    public var red: SIMD2<Double>, green: SIMD2<Double>, blue: SIMD2<Double>, white: SIMD2<Double>
    /// cd/m².
    public var minLuminance: Double, maxLuminance: Double

    public init(red: SIMD2<Double>, green: SIMD2<Double>, blue: SIMD2<Double>, white: SIMD2<Double>,
                minLuminance: Double, maxLuminance: Double) {
        (self.red, self.green, self.blue, self.white) = (red, green, blue, white)
        (self.minLuminance, self.maxLuminance) = (minLuminance, maxLuminance)
    }
}

/// CTA-861.3 content light level: the brightest pixel (MaxCLL) and frame average (MaxFALL), cd/m².
public struct ContentLightLevel: Hashable, Sendable {
    public var maxCLL: Int, maxFALL: Int
    public init(maxCLL: Int, maxFALL: Int) { (self.maxCLL, self.maxFALL) = (maxCLL, maxFALL) }
}

/// Everything about a video signal's colour: its Y'CbCr coding (matrix, range), primaries, transfer and
/// HDR metadata, and which of them were guessed because the stream did not say.
public struct VideoColor: Hashable, Sendable {
    public var space: YUVColorSpace
    public var primaries: ColorPrimaries
    public var transfer: TransferFunction
    public var mastering: MasteringDisplay?
    public var lightLevel: ContentLightLevel?
    /// Where 4:2:0 and 4:2:2 chroma samples sit (FFmpeg's name: `left`, `center`, `topleft`…), when tagged.
    /// Said, not used: chroma is read from its nearest sample and written as the mean of its block (`center`).
    public var chromaLocation: String?
    /// What the stream left untagged and was guessed, as said on the input line ("matrix", "primaries",
    /// "transfer", "range").
    public var guessed: [String]

    public init(space: YUVColorSpace, primaries: ColorPrimaries, transfer: TransferFunction,
                mastering: MasteringDisplay? = nil, lightLevel: ContentLightLevel? = nil, guessed: [String] = []) {
        self.space = space
        self.primaries = primaries
        self.transfer = transfer
        self.mastering = mastering
        self.lightLevel = lightLevel
        self.guessed = guessed
    }

    /// SDR with the primaries and curve that go with `space`'s matrix (what untagged video is taken for).
    public static func sdr(_ space: YUVColorSpace, size: Size) -> VideoColor {
        VideoColor(space: space, primaries: .guess(for: space.matrix, size: size), transfer: .guess(for: space.matrix))
    }

    public var isHDR: Bool { transfer.isHDR }

    /// The brightest light the signal is meant to reach, cd/m²: the mastering display's peak, else the
    /// brightest pixel, else 1000 (BT.2100's reference HLG display, and what most PQ is graded to).
    public var peakLuminance: Double {
        if let peak = mastering?.maxLuminance, peak >= 100 { return peak }
        if let cll = lightLevel?.maxCLL, cll >= 100 { return Double(cll) }
        return 1000
    }

    /// Whether `peakLuminance` comes from the stream's metadata rather than the default.
    public var peakIsFromMetadata: Bool {
        (mastering?.maxLuminance ?? 0) >= 100 || (lightLevel?.maxCLL ?? 0) >= 100
    }

    /// One line: "BT.2020 limited, BT.2020 primaries, PQ; mastering 0.005–1000 cd/m², MaxCLL 1000, MaxFALL 400".
    public var summary: String {
        let matrix: String
        switch space.matrix {
        case .bt601: matrix = "BT.601"
        case .bt709: matrix = "BT.709"
        case .bt2020: matrix = "BT.2020"
        }
        var text = "\(matrix) \(space.range == .full ? "full" : "limited") range, \(primaries.displayName) primaries, "
            + "\(transfer.displayName)"
        if let chromaLocation { text += ", chroma \(chromaLocation)" }
        var metadata: [String] = []
        if let mastering {
            metadata.append("mastering \(Self.number(mastering.minLuminance))–\(Self.number(mastering.maxLuminance)) cd/m²")
        }
        if let lightLevel { metadata.append("MaxCLL \(lightLevel.maxCLL), MaxFALL \(lightLevel.maxFALL)") }
        if !metadata.isEmpty { text += "; " + metadata.joined(separator: ", ") }
        if !guessed.isEmpty { text += " (untagged \(guessed.joined(separator: ", ")): guessed; \(Setting.inputColor) sets them)" }
        return text
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }
}

extension VideoColor {
    /// The brightest light HDR metadata can describe, cd/m²: PQ's ceiling (ST 2084), which ST 2086 and
    /// CTA-861.3 share.
    public static let metadataPeakLimit = 10000.0
    /// The darkest black a mastering display may claim to be brighter than, cd/m² (ST 2086's range for its minimum).
    public static let metadataBlackLimit = 5.0

    /// HDR metadata as files carry it is sometimes nonsense: MaxCLL 65535 (a field left at all ones), a
    /// mastering display whose black is above its peak, a peak beyond PQ's 10 000 cd/m². What no display or
    /// picture can be is dropped — the tone mapping then uses what is left, or BT.2100's default peak — and
    /// each dropped value is one line naming its tag. Returns the lines (none when all is plausible).
    public mutating func dropImplausibleHDRMetadata() -> [String] {
        var notes: [String] = []
        func cd(_ value: Double) -> String { Self.number(value) + " cd/m²" }
        if let display = mastering,
           !display.maxLuminance.isFinite || display.maxLuminance > Self.metadataPeakLimit || display.maxLuminance < 0 {
            // A display that cannot be: its black and primaries are no better than its peak.
            notes.append("the mastering display's peak (ST 2086 max_luminance) of \(cd(display.maxLuminance)) is beyond "
                         + "PQ's \(cd(Self.metadataPeakLimit)): the mastering display metadata is ignored")
            mastering = nil
        }
        if var display = mastering {
            let black = display.minLuminance
            if !black.isFinite || black < 0 || black > Self.metadataBlackLimit || (display.maxLuminance > 0 && black >= display.maxLuminance) {
                let why = display.maxLuminance > 0 && black >= display.maxLuminance
                    ? "is not below its peak of \(cd(display.maxLuminance))" : "is outside 0–\(cd(Self.metadataBlackLimit))"
                notes.append("the mastering display's black (ST 2086 min_luminance) of \(cd(black)) \(why): ignored")
                display.minLuminance = 0
            }
            mastering = display
        }
        if var level = lightLevel {
            if level.maxCLL < 0 || Double(level.maxCLL) > Self.metadataPeakLimit {
                notes.append("the content light level's MaxCLL of \(cd(Double(level.maxCLL))) is beyond PQ's \(cd(Self.metadataPeakLimit)): ignored")
                level.maxCLL = 0
            }
            if level.maxFALL < 0 || Double(level.maxFALL) > Self.metadataPeakLimit || (level.maxCLL > 0 && level.maxFALL > level.maxCLL) {
                let why = level.maxCLL > 0 && level.maxFALL > level.maxCLL
                    ? "is above its MaxCLL of \(cd(Double(level.maxCLL)))" : "is beyond PQ's \(cd(Self.metadataPeakLimit))"
                notes.append("the content light level's MaxFALL of \(cd(Double(level.maxFALL))) \(why): ignored")
                level.maxFALL = 0
            }
            // CTA-861.3: 0 is "unknown"; a level that says nothing is not carried.
            lightLevel = level.maxCLL == 0 && level.maxFALL == 0 ? nil : level
        }
        return notes
    }
}

/// A 3x3 matrix of doubles, row-major.
public struct Matrix3: Hashable, Sendable {
    public var rows: [SIMD3<Double>]

    public init(rows: [SIMD3<Double>]) { self.rows = rows }
    public init(columns a: SIMD3<Double>, _ b: SIMD3<Double>, _ c: SIMD3<Double>) {
        rows = [SIMD3(a.x, b.x, c.x), SIMD3(a.y, b.y, c.y), SIMD3(a.z, b.z, c.z)]
    }

    public func column(_ i: Int) -> SIMD3<Double> { SIMD3(rows[0][i], rows[1][i], rows[2][i]) }

    public static func * (m: Matrix3, v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((m.rows[0] * v).sum(), (m.rows[1] * v).sum(), (m.rows[2] * v).sum())
    }

    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(columns: a * b.column(0), a * b.column(1), a * b.column(2))
    }

    public var inverse: Matrix3 {
        let (r0, r1, r2) = (rows[0], rows[1], rows[2])
        func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        }
        let c0 = cross(r1, r2), c1 = cross(r2, r0), c2 = cross(r0, r1)
        let determinant = (r0 * c0).sum()
        return Matrix3(columns: c0 / determinant, c1 / determinant, c2 / determinant)
    }
}

/// The transfer functions of BT.2100 and BT.1886, in doubles: the CPU side of the GPU's colour conversion
/// (`ColorConversion`), and what the tests check against the standards' published values.
public enum TransferMaths {
    /// ST 2084's constants.
    public static let pqM1 = 2610.0 / 16384, pqM2 = 2523.0 / 4096 * 128
    public static let pqC1 = 3424.0 / 4096, pqC2 = 2413.0 / 4096 * 32, pqC3 = 2392.0 / 4096 * 32

    /// PQ signal (0...1) to display light, cd/m² (0...10000).
    public static func pqToNits(_ signal: Double) -> Double {
        let p = pow(min(max(signal, 0), 1), 1 / pqM2)
        return 10000 * pow(max(p - pqC1, 0) / (pqC2 - pqC3 * p), 1 / pqM1)
    }

    /// Display light, cd/m², to PQ signal.
    public static func nitsToPQ(_ nits: Double) -> Double {
        let y = pow(min(max(nits, 0), 10000) / 10000, pqM1)
        return pow((pqC1 + pqC2 * y) / (1 + pqC3 * y), pqM2)
    }

    /// BT.2100's HLG OETF constants.
    public static let hlgA = 0.17883277, hlgB = 1 - 4 * 0.17883277
    public static let hlgC = 0.5 - 0.17883277 * log(4 * 0.17883277)

    /// Scene light (0...1) to HLG signal.
    public static func hlgOETF(_ scene: Double) -> Double {
        let e = max(scene, 0)
        return e <= 1.0 / 12 ? (3 * e).squareRoot() : hlgA * log(12 * e - hlgB) + hlgC
    }

    /// HLG signal to scene light (0...1).
    public static func hlgInverseOETF(_ signal: Double) -> Double {
        let v = max(signal, 0)
        return v <= 0.5 ? v * v / 3 : (exp((v - hlgC) / hlgA) + hlgB) / 12
    }

    /// BT.2100's HLG system gamma for a display of `peak` cd/m² (1.2 at 1000).
    public static func hlgSystemGamma(peak: Double) -> Double { 1.2 + 0.42 * log10(peak / 1000) }

    /// BT.2100's black-level lift β for an HLG display of black `black` and peak `peak` cd/m².
    public static func hlgBlackLift(black: Double, peak: Double) -> Double {
        (3 * pow(black / peak, 1 / hlgSystemGamma(peak: peak))).squareRoot()
    }
}

/// What a signal is converted to: SDR (BT.1886 display, BT.709-family primaries), HDR in PQ or HLG, or
/// linear display light relative to SDR white (1.0 = 203 cd/m², unclipped above), for filters that work in light.
public enum ColorTarget: String, Hashable, Sendable, CaseIterable {
    case sdr, pq, hlg, linear

    /// The transfer a target signal is tagged with.
    public var transfer: TransferFunction {
        switch self {
        case .sdr: return .bt709
        case .pq: return .pq
        case .hlg: return .hlg
        case .linear: return .linear
        }
    }
}

/// One colour conversion of HDR input, as the GPU does it per pixel (`tonemap`) and the CPU reference
/// checks it: decode the signal to display light (PQ's EOTF; HLG's inverse OETF then its OOTF for a
/// display of `sourcePeak`), tone map the luminance into the target's range when the source is brighter,
/// convert the primaries (linear 3x3, then clipped), and encode for the target (BT.1886's inverse with
/// a 1000:1 display for SDR, PQ, HLG for a 1000 cd/m² display).
///
/// Light is relative to SDR reference white, 203 cd/m² (BT.2408): 1.0 is SDR white.
public struct ColorConversion: Hashable, Sendable {
    /// Tone curves for the luminance: ITU-R BT.2390's EETF (a hermite knee in PQ space, with its black-level
    /// lift), extended Reinhard (L(1 + L/peak²)/(1 + L), peak to white), and a hard clip.
    public enum Curve: String, Hashable, Sendable, CaseIterable { case bt2390, reinhard, clip }

    public var from: TransferFunction
    public var to: ColorTarget
    public var sourcePrimaries: ColorPrimaries
    public var targetPrimaries: ColorPrimaries
    /// The source's peak and black, cd/m².
    public var sourcePeak: Double
    public var sourceBlack: Double
    public var curve: Curve

    /// SDR reference white (BT.2408), cd/m²: light 1.0.
    public static let referenceWhite = 203.0
    /// The SDR display: reference white at 1000:1 contrast. HDR black, 0.005 cd/m².
    public static let sdrBlack = 0.203, hdrBlack = 0.005
    /// The HLG display HDR output is meant for (BT.2100's reference).
    public static let hlgDisplayPeak = 1000.0

    public init(from: TransferFunction, to: ColorTarget, sourcePrimaries: ColorPrimaries, targetPrimaries: ColorPrimaries,
                sourcePeak: Double, sourceBlack: Double = ColorConversion.hdrBlack, curve: Curve = .bt2390) {
        self.from = from
        self.to = to
        self.sourcePrimaries = sourcePrimaries
        self.targetPrimaries = targetPrimaries
        self.sourcePeak = sourcePeak
        self.sourceBlack = sourceBlack
        self.curve = curve
    }

    /// The target's peak and black, cd/m².
    public var targetPeak: Double {
        switch to {
        case .sdr: return Self.referenceWhite
        case .pq, .linear: return 10000
        case .hlg: return Self.hlgDisplayPeak
        }
    }
    public var targetBlack: Double { to == .sdr ? Self.sdrBlack : Self.hdrBlack }

    /// The peak the luminance is brought to: the target's, or the source's when that is dimmer.
    public var mappedPeak: Double { min(sourcePeak, targetPeak) }
    /// The luminance is tone mapped (the source reaches above the target).
    public var mapsTones: Bool { sourcePeak > targetPeak * 1.0001 }

    /// The HLG source's system gamma and black lift, for a display of `sourcePeak`.
    public var sourceHLGGamma: Double { TransferMaths.hlgSystemGamma(peak: sourcePeak) }
    public var sourceHLGLift: Double { TransferMaths.hlgBlackLift(black: sourceBlack, peak: sourcePeak) }
    public var targetHLGGamma: Double { TransferMaths.hlgSystemGamma(peak: Self.hlgDisplayPeak) }
    public var targetHLGLift: Double { TransferMaths.hlgBlackLift(black: Self.hdrBlack, peak: Self.hlgDisplayPeak) }
    /// BT.1886 for the SDR display: L = a · max(V + b, 0)^2.4 (light relative to white).
    public var sdrDisplay: (a: Double, b: Double) {
        let lw = 1.0, lb = pow(Self.sdrBlack / Self.referenceWhite, 1 / 2.4)
        return (pow(lw - lb, 2.4), lb / (lw - lb))
    }

    /// The BT.2390 EETF's constants in PQ space: the source's black and peak, the target's black and peak
    /// relative to them, and where the knee starts (1.5 maxLum - 0.5).
    public var eetf: (sourceBlack: Double, sourcePeak: Double, minLum: Double, maxLum: Double, kneeStart: Double) {
        let lb = TransferMaths.nitsToPQ(sourceBlack), lw = TransferMaths.nitsToPQ(sourcePeak)
        let minLum = (TransferMaths.nitsToPQ(targetBlack) - lb) / (lw - lb)
        let maxLum = (TransferMaths.nitsToPQ(mappedPeak) - lb) / (lw - lb)
        return (lb, lw, max(minLum, 0), maxLum, 1.5 * maxLum - 0.5)
    }

    /// The tone curve on luminance, cd/m².
    public func toneMap(nits y: Double) -> Double {
        let peak = mappedPeak
        switch curve {
        case .clip:
            return min(y, peak)
        case .reinhard:
            let x = y / peak, white = sourcePeak / peak
            return peak * x * (1 + x / (white * white)) / (1 + x)
        case .bt2390:
            let k = eetf
            let e1 = min(max((TransferMaths.nitsToPQ(y) - k.sourceBlack) / (k.sourcePeak - k.sourceBlack), 0), 1)
            var e2 = e1
            if e1 > k.kneeStart && k.kneeStart < 1 {
                let t = (e1 - k.kneeStart) / (1 - k.kneeStart), t2 = t * t, t3 = t2 * t
                e2 = (2 * t3 - 3 * t2 + 1) * k.kneeStart + (t3 - 2 * t2 + t) * (1 - k.kneeStart) + (-2 * t3 + 3 * t2) * k.maxLum
            }
            let e3 = e2 + k.minLum * pow(1 - e2, 4)
            return TransferMaths.pqToNits(e3 * (k.sourcePeak - k.sourceBlack) + k.sourceBlack)
        }
    }

    /// One pixel's R'G'B' signal (0...1) in the source's coding to the target's.
    public func apply(_ signal: SIMD3<Double>) -> SIMD3<Double> {
        // Linear light may be above SDR white; a signal is 0...1.
        let e = from == .linear ? signal.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: .infinity))
            : signal.clamped(lowerBound: .zero, upperBound: .one)
        // Display light, cd/m².
        var light: SIMD3<Double>
        switch from {
        case .linear:
            light = e * Self.referenceWhite
        case .pq:
            light = SIMD3(TransferMaths.pqToNits(e.x), TransferMaths.pqToNits(e.y), TransferMaths.pqToNits(e.z))
        default:  // HLG: scene light through the OOTF of a `sourcePeak` display
            let beta = sourceHLGLift
            let lifted = (1 - beta) * e + SIMD3(repeating: beta)
            let scene = SIMD3(TransferMaths.hlgInverseOETF(lifted.x), TransferMaths.hlgInverseOETF(lifted.y),
                              TransferMaths.hlgInverseOETF(lifted.z))
            let ys = max((sourcePrimaries.luminanceWeights * scene).sum(), 0)
            light = sourcePeak * pow(ys, sourceHLGGamma - 1) * scene
        }
        light = light.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: sourcePeak))
        if mapsTones {
            let y = (sourcePrimaries.luminanceWeights * light).sum()
            if y > 1e-6 { light *= toneMap(nits: y) / y }
        }
        light = (sourcePrimaries.conversion(to: targetPrimaries) * light)
            .clamped(lowerBound: .zero, upperBound: SIMD3(repeating: mappedPeak))
        switch to {
        case .sdr:
            let (a, b) = sdrDisplay
            let relative = light / Self.referenceWhite
            let v = SIMD3(pow(relative.x / a, 1 / 2.4), pow(relative.y / a, 1 / 2.4), pow(relative.z / a, 1 / 2.4)) - b
            return v.clamped(lowerBound: .zero, upperBound: .one)
        case .pq:
            return SIMD3(TransferMaths.nitsToPQ(light.x), TransferMaths.nitsToPQ(light.y), TransferMaths.nitsToPQ(light.z))
        case .linear:
            return light / Self.referenceWhite
        case .hlg:
            let display = light / Self.hlgDisplayPeak
            let yd = max((targetPrimaries.luminanceWeights * display).sum(), 1e-9)
            let scene = display * pow(yd, (1 - targetHLGGamma) / targetHLGGamma)
            let beta = targetHLGLift
            let v = SIMD3(TransferMaths.hlgOETF(scene.x), TransferMaths.hlgOETF(scene.y), TransferMaths.hlgOETF(scene.z))
            return ((v - SIMD3(repeating: beta)) / (1 - beta)).clamped(lowerBound: .zero, upperBound: .one)
        }
    }
}

/// `--input-color`: what to take the input's colour for, field by field, instead of its tags (or guesses).
public struct ColorOverride: Hashable, Sendable {
    public var matrix: ColorMatrix?
    public var range: ColorRange?
    public var primaries: ColorPrimaries?
    public var transfer: TransferFunction?
    /// The HDR peak, cd/m² (instead of the mastering metadata's).
    public var peak: Double?

    public init() {}

    /// `matrix=bt2020,primaries=bt2020,transfer=pq,range=limited,peak=1000`, or a preset: `bt709`, `bt601`,
    /// `hdr10` (BT.2020 PQ), `hlg` (BT.2020 HLG), optionally followed by fields.
    public init(parsing text: String) throws {
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !item.isEmpty {
            // Empty sides kept (`=`, `peak=`, `=5`): each is refused by name below, never indexed past.
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2, parts[0].isEmpty {
                throw InvalidRequest("\(Setting.inputColor): '\(item)' names no field (matrix=, primaries=, transfer=, range=, peak=)")
            }
            if parts.count == 1 {
                switch parts[0] {
                case "bt709": (matrix, primaries, transfer) = (.bt709, .bt709, .bt709)
                case "bt601": (matrix, primaries, transfer) = (.bt601, .smpte170m, .smpte170m)
                case "hdr10", "pq": (matrix, primaries, transfer) = (.bt2020, .bt2020, .pq)
                case "hlg": (matrix, primaries, transfer) = (.bt2020, .bt2020, .hlg)
                default:
                    throw InvalidRequest("\(Setting.inputColor): unknown preset '\(parts[0])' (bt709, bt601, hdr10, hlg, or "
                                     + "matrix=, primaries=, transfer=, range=, peak=)")
                }
                continue
            }
            let (key, value) = (parts[0], parts[1])
            func bad(_ choices: [String]) -> InvalidRequest {
                InvalidRequest("\(Setting.inputColor): \(key)=\(value) is not one of \(choices.joined(separator: ", "))")
            }
            switch key {
            case "matrix":
                guard let m = ColorMatrix(rawValue: value) else { throw bad(ColorMatrix.allCases.map(\.rawValue)) }
                matrix = m
            case "range":
                guard let r = ColorRange(rawValue: value == "tv" ? "limited" : value == "pc" ? "full" : value) else {
                    throw bad(["limited", "full"])
                }
                range = r
            case "primaries":
                guard let p = ColorPrimaries(rawValue: value) else { throw bad(ColorPrimaries.allCases.map(\.rawValue)) }
                primaries = p
            case "transfer":
                guard let t = TransferFunction(rawValue: value) else { throw bad(TransferFunction.allCases.map(\.rawValue)) }
                transfer = t
            case "peak":
                guard let nits = Double(value), nits >= 100, nits <= 10000 else {
                    throw InvalidRequest("\(Setting.inputColor): peak=\(value) is not a peak in cd/m² (100 to 10000)")
                }
                peak = nits
            default:
                throw InvalidRequest("\(Setting.inputColor): unknown field '\(key)' (matrix, range, primaries, transfer, peak)")
            }
        }
    }

    /// `color` with these fields in place of its own (no longer counted as guesses).
    public func applied(to color: VideoColor) -> VideoColor {
        var result = color
        if let matrix { result.space.matrix = matrix; result.guessed.removeAll { $0 == "matrix" } }
        if let range { result.space.range = range; result.guessed.removeAll { $0 == "range" } }
        if let primaries { result.primaries = primaries; result.guessed.removeAll { $0 == "primaries" } }
        if let transfer { result.transfer = transfer; result.guessed.removeAll { $0 == "transfer" } }
        if let peak {
            let m = result.mastering
            result.mastering = MasteringDisplay(red: m?.red ?? .zero, green: m?.green ?? .zero, blue: m?.blue ?? .zero,
                                                white: m?.white ?? .zero, minLuminance: m?.minLuminance ?? ColorConversion.hdrBlack,
                                                maxLuminance: peak)
        }
        return result
    }

    /// A frame's matrix and range with these fields in place of its own.
    public func applied(to space: YUVColorSpace) -> YUVColorSpace {
        YUVColorSpace(matrix: matrix ?? space.matrix, range: range ?? space.range)
    }
}
