import Foundation
import PrismCore

/// A PSNR floor for one row, on Y and on CbCr (dB, worst frame).
struct BenchPSNRBound: Codable, Sendable, Equatable {
    var luma: Double
    var chroma: Double
    /// A floor inside the comparison's region too (face-blur: the face's disc, where the work is), on Y and CbCr.
    var region: Double?
    /// "45" or "32/33" (Y/CbCr); the region's floor is written beside the check.
    var description: String { luma == chroma ? String(format: "%.0f", luma) : String(format: "%.0f/%.0f", luma, chroma) }
}

/// How close two streams of yuv420p frames are: every frame compared, PSNR per plane of the worst frame and of
/// all frames together, and how many frames each side wrote.
struct BenchStreamComparison: Codable, Sendable, Equatable {
    /// Frames compared (the shorter stream's count).
    var frames: Int
    var prismFrames: Int
    var ffmpegFrames: Int
    /// Frames the clip holds: both streams must have exactly these.
    var expectedFrames: Int
    /// PSNR of the frame with the lowest Y PSNR, and of the frame with the lowest CbCr PSNR (99: identical).
    var worstLumaPSNR: Double
    var worstChromaPSNR: Double
    /// Index of the frame with the lowest Y PSNR.
    var worstFrame: Int
    /// PSNR over all frames' pixels.
    var lumaPSNR: Double
    var chromaPSNR: Double
    var maxError: Int
    /// Inside the region only (its worst frame), when the comparison has one.
    var regionLumaPSNR: Double?
    var regionChromaPSNR: Double?

    var summary: String {
        String(format: "worst frame PSNR Y %.1f dB, CbCr %.1f dB (all frames Y %.1f, CbCr %.1f; max error %d)",
               worstLumaPSNR, worstChromaPSNR, lumaPSNR, chromaPSNR, maxError)
            + (regionLumaPSNR.map { y in String(format: "; in the face Y %.1f, CbCr %.1f", y, regionChromaPSNR ?? 99) } ?? "")
            + "; \(frames)/\(expectedFrames) frames"
    }
}

/// Accumulates `BenchStreamComparison` frame by frame, so neither stream is ever held whole.
struct BenchStreamComparer {
    let size: Size
    private var frames = 0
    private var lumaSquares = 0.0, chromaSquares = 0.0
    private var worstLuma = 99.0, worstChroma = 99.0, worstFrame = 0
    private var maxError = 0
    /// Per byte of a frame: inside the region (true) or not; nil: no region.
    private let region: [Bool]?
    private var regionCounts = (luma: 0, chroma: 0)
    private var worstRegionLuma = 99.0, worstRegionChroma = 99.0

    /// `region`: a frame's worth of flags, the bytes (of each plane) a second PSNR is taken over.
    init(size: Size, region: [Bool]? = nil) {
        self.size = size
        self.region = region
        if let region {
            let luma = size.width * size.height
            regionCounts = (region[..<luma].filter { $0 }.count, region[luma...].filter { $0 }.count)
        }
    }

    var frameBytes: Int { size.width * size.height + 2 * ((size.width + 1) / 2) * ((size.height + 1) / 2) }

    static func psnr(squares: Double, count: Int) -> Double {
        BenchComparison.psnr(mse: squares / Double(max(count, 1)))
    }

    /// Adds one pair of tightly packed yuv420p frames (`frameBytes` each).
    mutating func add(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) {
        precondition(a.count >= frameBytes && b.count >= frameBytes, "two whole yuv420p frames of \(size) expected")
        let luma = size.width * size.height
        var squares = (luma: 0, chroma: 0), inside = (luma: 0, chroma: 0)
        var largest = 0
        for index in 0..<frameBytes {
            let d = Int(a[index]) - Int(b[index])
            let square = d * d
            if index < luma { squares.luma += square } else { squares.chroma += square }
            if let region, region[index] {
                if index < luma { inside.luma += square } else { inside.chroma += square }
            }
            if square > largest { largest = square }
        }
        if region != nil {
            worstRegionLuma = min(worstRegionLuma, Self.psnr(squares: Double(inside.luma), count: regionCounts.luma))
            worstRegionChroma = min(worstRegionChroma, Self.psnr(squares: Double(inside.chroma), count: regionCounts.chroma))
        }
        let y = Self.psnr(squares: Double(squares.luma), count: luma)
        let c = Self.psnr(squares: Double(squares.chroma), count: frameBytes - luma)
        if y < worstLuma { worstLuma = y; worstFrame = frames }
        worstChroma = min(worstChroma, c)
        lumaSquares += Double(squares.luma)
        chromaSquares += Double(squares.chroma)
        maxError = max(maxError, Int(Double(largest).squareRoot().rounded()))
        frames += 1
    }

    mutating func add(_ a: [UInt8], _ b: [UInt8]) {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in add(a, b) } }
    }

    func result(prismFrames: Int, ffmpegFrames: Int, expectedFrames: Int) -> BenchStreamComparison {
        let luma = size.width * size.height
        return BenchStreamComparison(
            frames: frames, prismFrames: prismFrames, ffmpegFrames: ffmpegFrames, expectedFrames: expectedFrames,
            worstLumaPSNR: worstLuma, worstChromaPSNR: worstChroma, worstFrame: worstFrame,
            lumaPSNR: Self.psnr(squares: lumaSquares, count: frames * luma),
            chromaPSNR: Self.psnr(squares: chromaSquares, count: frames * (frameBytes - luma)), maxError: maxError,
            regionLumaPSNR: region == nil ? nil : worstRegionLuma, regionChromaPSNR: region == nil ? nil : worstRegionChroma)
    }
}
