import Foundation
import PrismCore
import PrismFilters
import PrismMedia
import PrismVision

// `prism bench --suite`: one row per built-in filter against its FFmpeg equivalent. Each row times whole runs
// of the two commands a user would type — `prism run CLIP --filter F -o - --output-format yuv420p` and
// `ffmpeg -i CLIP -vf EQUIV -f rawvideo -pix_fmt yuv420p -`, standard output discarded — as subprocesses, wall
// clock from launch to exit (start-up, GPU context and shader compilation included on Prism's side, as FFmpeg's
// start-up is on its side), and checks, in an untimed run of both, that the two wrote the same picture.

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

/// The suite's rows, what each runs on both sides, and how each is judged.
enum BenchSuite {
    /// Every row, in the order the table prints them.
    static let rowIDs = ["invert", "mono", "blur-2", "blur-10", "blur-50", "lut", "transfer", "chrome", "noir",
                         "pixellate", "chain", "face-blur-none", "face-blur-one"]

    /// `--rows`: each name an id, or the start of ids up to a '-' ("blur" → blur-2, blur-10, blur-50;
    /// "face-blur" → both face rows). The face rows are measured against `invert`, so they bring it along.
    static func select(_ names: [String]) throws -> [String] {
        var chosen = Set<String>()
        for name in names.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !name.isEmpty {
            let matches = rowIDs.filter { $0 == name || $0.hasPrefix(name + "-") }
            guard !matches.isEmpty else {
                throw UsageError("--rows: no suite row '\(name)' (rows: \(rowIDs.joined(separator: ", ")))")
            }
            chosen.formUnion(matches)
        }
        guard !chosen.isEmpty else { throw UsageError("--rows needs at least one row") }
        if chosen.contains(where: { $0.hasPrefix("face-blur") }) { chosen.insert("invert") }
        return rowIDs.filter(chosen.contains)
    }

    /// σ of each blur row (Prism's radius is 2σ).
    static let blurSigmas: [String: Int] = ["blur-2": 2, "blur-10": 10, "blur-50": 50]

    /// Each row's floor, chosen from the worst-frame PSNRs measured on Prism's test pattern (320x180 BT.601, 720p
    /// and 1080p BT.709) and on FFmpeg's testsrc2 (320x180), a few dB under the lowest and, on Y, above what the
    /// unfiltered input scores against FFmpeg's output (so a filter that did nothing fails). BENCHMARKS.md,
    /// "The suite", has the figures.
    ///
    /// A clip in another layout than 8-bit 4:2:0 (`converted`) is made yuv420p differently by the two — swscale on
    /// FFmpeg's side, Prism through its R'G'B' route — before any filter (4:2:2 with no filter at all: Y 46.4,
    /// CbCr 41.9 dB), so no row asks more than 40 / 36 there.
    static func bound(_ id: String, converted: Bool = false) -> BenchPSNRBound {
        var bound = formatBound(id)
        if converted {
            bound.luma = min(bound.luma, 40)
            bound.chroma = min(bound.chroma, 36)
        }
        return bound
    }

    private static func formatBound(_ id: String) -> BenchPSNRBound {
        switch id {
        // The same maths in both: equal but for GPU rounding (one code value everywhere is 48 dB). Measured
        // 99 dB (invert), 53.5–58.2 (pixellate).
        case "invert", "pixellate": return BenchPSNRBound(luma: 45, chroma: 45)
        // Through 8-bit R'G'B' on FFmpeg's side (swscale, bicubic chroma) against float on Prism's: measured
        // Y 46.4–52.8, CbCr 42.7–53.2 for the colour tables (saturated colours lowest), where a table not
        // applied scores Y 20–30 on the pattern but 38.6 for chrome on testsrc2; the grey ones (Y 43.8–48.0;
        // CbCr 99: both neutral) lose more to FFmpeg's 8-bit R'G'B' at BT.601, and there a look not applied
        // fails on chroma (the picture's colour against neutral grey).
        case "lut", "transfer", "chrome": return BenchPSNRBound(luma: 43, chroma: 38)
        case "mono", "noir", "chain": return BenchPSNRBound(luma: 40, chroma: 36)
        // gblur is an IIR approximation of the Gaussian (steps=1 by default), and on yuv420p it blurs the chroma
        // planes by σ of their own (half-size) pixels: twice Prism's σ in the picture. So these bounds check
        // "the same amount of blur", not equality (Prism's blur is checked against the exact Gaussian by its own
        // tests), and the CbCr ones only that chroma is there at all. Measured Y 34.4–42.6, CbCr 33.4–46.3
        // at σ = 2; Y 35.6–37.6, CbCr 26.6–38.3 at σ = 10; Y 28.0–36.1, CbCr 25.8–31.6 at σ = 50; the
        // unblurred input scores Y 22.2–30.2 at σ = 2, 17.7–22.2 at σ = 10, 13.7–18.1 at σ = 50.
        case "blur-2": return BenchPSNRBound(luma: 32, chroma: 28)
        case "blur-10": return BenchPSNRBound(luma: 30, chroma: 22)
        case "blur-50": return BenchPSNRBound(luma: 24, chroma: 20)
        // With no face the clip itself on 4:2:0 clips (Y'CbCr route: 99 dB); through R'G'B' (other clips,
        // --rgb-route) the gamut clamps what lies outside it: measured 46.4–72.7 dB (BT.601 320x180 lowest).
        case "face-blur-none": return BenchPSNRBound(luma: 40, chroma: 40)
        // One face against FFmpeg's near-Gaussian blur merged through the same disc: over the frame as above,
        // and inside the disc (where the work is): measured Y 50.4–59.5, CbCr 48.4–56.2 there, while an
        // unblurred face scores Y 36–38, CbCr 24–31 — over the whole frame it would pass.
        case "face-blur-one": return BenchPSNRBound(luma: 40, chroma: 40, region: 42)
        default: return BenchPSNRBound(luma: 40, chroma: 40)
        }
    }

    /// The verdict on one row's comparison: every frame on both sides, and the worst frame at or above the bound.
    static func verdict(_ comparison: BenchStreamComparison, bound: BenchPSNRBound) -> (passed: Bool, detail: String) {
        var problems: [String] = []
        if comparison.prismFrames != comparison.expectedFrames || comparison.ffmpegFrames != comparison.expectedFrames {
            problems.append("Prism wrote \(comparison.prismFrames), FFmpeg \(comparison.ffmpegFrames) of \(comparison.expectedFrames) frames")
        }
        if comparison.frames == 0 { problems.append("no frame to compare") }
        if comparison.worstLumaPSNR < bound.luma {
            problems.append(String(format: "Y %.1f dB < %.0f", comparison.worstLumaPSNR, bound.luma))
        }
        if comparison.worstChromaPSNR < bound.chroma {
            problems.append(String(format: "CbCr %.1f dB < %.0f", comparison.worstChromaPSNR, bound.chroma))
        }
        if let floor = bound.region {
            if let y = comparison.regionLumaPSNR, let c = comparison.regionChromaPSNR {
                if min(y, c) < floor { problems.append(String(format: "in the face Y %.1f, CbCr %.1f dB < %.0f", y, c, floor)) }
            } else {
                problems.append("no region compared")
            }
        }
        let detail = comparison.summary + "; bound \(bound.description) dB" + (bound.region.map { String(format: ", in the face %.0f", $0) } ?? "")
        return problems.isEmpty ? (true, detail) : (false, detail + " — FAILED: " + problems.joined(separator: "; "))
    }

    /// The `.cube` the `lut` row applies: a split tone (orange highlights, teal shadows), an S-curve and a
    /// channel mix — far from affine (so no fast path skips the table) and far from the identity (an
    /// unapplied table scores under 30 dB).
    static func benchLook(_ c: SIMD3<Double>) -> SIMD3<Double> {
        func clamp(_ v: SIMD3<Double>) -> SIMD3<Double> {
            v.clamped(lowerBound: SIMD3<Double>(repeating: 0), upperBound: SIMD3<Double>(repeating: 1))
        }
        let y = (ColorLook.lumaWeights * c).sum()
        let toned = clamp(c + SIMD3(0.12, 0.03, -0.12) * y + SIMD3(-0.10, 0.02, 0.12) * (1 - y))
        let curved = toned + (toned * toned * (3 - 2 * toned) - toned) * 0.6
        return clamp(SIMD3(0.85 * curved.x + 0.15 * curved.y,
                           0.05 * curved.x + 0.85 * curved.y + 0.10 * curved.z,
                           0.20 * curved.y + 0.80 * curved.z))
    }

    /// A 33³ Resolve/Adobe .cube of `f` (red fastest), the layout `ColorLook.table` samples.
    static func writeCube(_ path: String, title: String, _ f: (SIMD3<Double>) -> SIMD3<Double>) throws {
        var text = "TITLE \"\(title)\"\nLUT_3D_SIZE 33\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n"
        for entry in ColorLook.table(dimension: 33, f) {
            text += String(format: "%.6f %.6f %.6f\n", entry.x, entry.y, entry.z)
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The suite's stand-in face on a frame of `size`: a square box, whole pixels, centred at (0.5, 0.45) of the
    /// frame and 0.24 of its width across (the region the stage rows' `stageContext` uses).
    static func standInFace(_ size: Size) -> FaceBox {
        let width = Double(2 * Int((0.12 * Double(size.width)).rounded()))
        let top = (0.45 * Double(size.height)).rounded() - width / 2
        return FaceBox(x: (Double(size.width) - width) / 2, y: top, width: width, height: width)
    }

    /// face-mask's documented maths for one face (size 1.5, feather 0.15: face-blur's defaults) as a yuv420p
    /// frame: the mask in every plane (chroma: the mean of its 2×2 pixels), for FFmpeg's `maskedmerge`.
    static func faceMaskFrame(_ size: Size, face: FaceBox, scale: Double = 1.5, feather: Double = 0.15) -> [UInt8] {
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let r1 = scale * face.width / 2, r0 = r1 * (1 - feather)
        let cx = face.x + face.width / 2, cy = face.y + face.height / 2
        func mask(_ x: Int, _ y: Int) -> Double {
            let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
            let t = min(max(((dx * dx + dy * dy).squareRoot() - r0) / max(r1 - r0, 1e-6), 0), 1)
            return 1 - t
        }
        func code(_ m: Double) -> UInt8 { UInt8(max(0, min(255, (m * 255).rounded()))) }
        var frame = [UInt8](repeating: 0, count: w * h + 2 * cw * ch)
        for y in 0..<h { for x in 0..<w { frame[y * w + x] = code(mask(x, y)) } }
        for y in 0..<ch {
            for x in 0..<cw {
                var sum = 0.0
                for dy in 0..<2 { for dx in 0..<2 { sum += mask(min(2 * x + dx, w - 1), min(2 * y + dy, h - 1)) } }
                frame[w * h + y * cw + x] = code(sum / 4)
                frame[w * h + cw * ch + y * cw + x] = code(sum / 4)
            }
        }
        return frame
    }
}

/// One clip of the suite: its rows.
struct BenchSuiteClip: Codable, Sendable {
    var name: String
    var width: Int
    var height: Int
    var frames: Int
    var clip: String
    var colorSpace: String
    var runs: Int
    var rows: [BenchSuiteRow]
}

/// One suite row: Prism's command and FFmpeg's, their times, and the check of the pictures.
struct BenchSuiteRow: Codable, Sendable {
    var id: String
    /// The filter as a user writes it (`blur(radius=4)`); `prismCommand` has the exact graph run.
    var label: String
    var prismCommand: String
    /// FFmpeg's filters, as given to -vf (or -filter_complex for face-blur's check).
    var ffmpegFilter: String?
    var ffmpegCommand: String?
    /// Whether FFmpeg's command was timed (face-blur has no FFmpeg filter: its FFmpeg graph is only the check).
    var ffmpegTimed: Bool
    /// Wall seconds of each run, in the order run (Prism and FFmpeg alternate).
    var prismSeconds: [Double]
    var ffmpegSeconds: [Double]?
    var prismMedianSeconds: Double
    var ffmpegMedianSeconds: Double?
    /// FFmpeg's median seconds / Prism's: above 1, Prism is faster.
    var speed: Double?
    var prismFPS: Double
    var ffmpegFPS: Double?
    var comparison: BenchStreamComparison?
    var bound: BenchPSNRBound
    /// verified, FAIL, or unchecked (no ffmpeg).
    var check: String
    var detail: String
    /// face-blur: Prism's median seconds / the invert row's, and the issue's target for it.
    var versusInvert: Double?
    var target: Double?
    var note: String
}

/// What each row runs on one clip: the Prism graph and options, FFmpeg's arguments, the region its check also
/// looks at; and the inputs the rows need (tables, sidecars, the mask), in a folder removed with the plan.
final class BenchSuitePlan {
    /// What one row runs.
    struct Row {
        var label: String
        var prismFilter: String
        var prismExtra: [String] = []
        /// FFmpeg's arguments after `-i CLIP` up to the output (a -vf or -filter_complex and maps).
        var ffmpegArguments: [String]
        var ffmpegFilter: String
        /// face-blur has no FFmpeg filter: its FFmpeg graph is the check, not timed.
        var ffmpegTimed = true
        var note: String
        /// The bytes of a frame the check also takes a PSNR over (face-blur: the face's disc).
        var region: [Bool]? = nil
    }

    let clip: String
    let input: MediaReport
    let size: Size
    private(set) var rows: [String: Row] = [:]
    let matrix: String
    /// The clip is not 8-bit 4:2:0: both sides convert it first (`BenchSuite.bound`).
    let converted: Bool
    private let folder: String

    init(clip path: String, rows ids: [String], directory: String) throws {
        let input = try MediaInspector.inspect(path)
        let size = input.size
        guard input.videoFrameCount > 0 else { throw BenchError("\(path): no video frames to time") }
        guard size.width % 2 == 0, size.height % 2 == 0 else {
            throw BenchError("\(path): \(size) is odd; the suite compares yuv420p frames of even sizes")
        }
        let space = input.colorSpace
        let matrix = space.matrix == .bt709 ? "bt709" : "bt601"
        let folder = directory + "/suite-\(size.width)x\(size.height)-\(UInt32.random(in: 0...UInt32.max))"
        let converted = !["yuv420p", "yuvj420p"].contains(input.pixelFormat)
        (clip, self.input, self.size, self.matrix, self.folder, self.converted) = (path, input, size, matrix, folder, converted)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func file(_ name: String) -> String { folder + "/" + name }
        var plans: [String: Row] = [:]

        // FFmpeg's side: frames of another layout are made yuv420p first (nothing for yuv420p, as a
        // conversion the Prism side does too); R'G'B' filters get the clip's own matrix and range both ways
        // (swscale's defaults would write BT.601 back), through rgb24 (what lut3d negotiates by itself).
        let prefix = converted ? "format=yuv420p," : ""
        let range = space.range == .full ? "pc" : "tv"
        func lut3d(_ cube: String) -> String {
            "scale=in_color_matrix=\(matrix):in_range=\(range),format=rgb24,lut3d=file='\(cube)':interp=tetrahedral,"
                + "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p"
        }
        func vf(_ chain: String) -> [String] { ["-map", "0:v:0", "-vf", prefix + chain] }
        // Invert in Y'CbCr: 1 - R'G'B' is Y' → 251 - Y' in limited range (255 - Y' in full), Cb, Cr → 256 - C.
        // FFmpeg's `negate` flips the whole 0…255 code range (255 - Y'), 4 codes off on limited-range video.
        let invert = "lutyuv=y=\(space.range == .full ? 255 : 251)-val:u=256-val:v=256-val"
        // Prism's mono is Rec.709 luma of R'G'B'; that is the clip's own Y' (so `hue=s=0`) only for BT.709.
        var monoCube: String?
        func mono() throws -> String {
            if space.matrix == .bt709 { return "hue=s=0" }
            if monoCube == nil {
                monoCube = file("mono.cube")
                try BenchSuite.writeCube(monoCube!, title: "mono") { ColorLook.all.first { $0.name == "mono" }!.apply($0) }
            }
            return lut3d(monoCube!)
        }
        // Prism's pixellate grid is centred on `center` (default: the frame's centre); FFmpeg's starts at the top
        // left corner. The suite puts a block corner at Prism's top left too (same cost, same blocks).
        let corner = String(format: "center=%.9g:%.9g", 8 / Double(size.width), 8 / Double(size.height))
        let monoNote = space.matrix == .bt709 ? "hue=s=0 keeps Y' (BT.709 clip: Prism's Rec.709 luma is Y')"
            : "a BT.601 clip: Prism's Rec.709 luma is not the clip's Y', so FFmpeg applies mono's table (lut3d), not hue=s=0"

        for id in ids {
            switch id {
            case "invert":
                plans[id] = Row(label: "invert", prismFilter: "invert", ffmpegArguments: vf(invert), ffmpegFilter: invert,
                                note: "lutyuv, not negate: negate flips 0…255, 4 codes off on limited-range Y'")
            case "mono":
                let chain = try mono()
                plans[id] = Row(label: "mono", prismFilter: "mono", ffmpegArguments: vf(chain), ffmpegFilter: chain, note: monoNote)
            case "blur-2", "blur-10", "blur-50":
                let sigma = BenchSuite.blurSigmas[id]!
                let chain = "gblur=sigma=\(sigma)"
                plans[id] = Row(label: "blur(radius=\(2 * sigma))", prismFilter: "blur(radius=\(2 * sigma))",
                                ffmpegArguments: vf(chain), ffmpegFilter: chain,
                                note: "σ = \(sigma); gblur: IIR, steps=1, chroma planes blurred by σ of their half-size pixels")
            case "lut":
                let cube = file("look.cube")
                try BenchSuite.writeCube(cube, title: "prism bench look", BenchSuite.benchLook)
                plans[id] = Row(label: "lut(file=look.cube)", prismFilter: "lut(file=\"\(cube)\")", ffmpegArguments: vf(lut3d(cube)),
                                ffmpegFilter: lut3d(cube), note: "a 33³ non-affine .cube written by the bench; tetrahedral both")
            case "transfer", "chrome", "noir":
                let look = ColorLook.all.first { $0.name == id }!
                let cube = file(id + ".cube")
                // The very table Prism's look samples (33³ of `ColorLook.apply`), as a .cube for lut3d.
                try BenchSuite.writeCube(cube, title: id, look.apply)
                plans[id] = Row(label: id, prismFilter: id, ffmpegArguments: vf(lut3d(cube)), ffmpegFilter: lut3d(cube),
                                note: id == "noir"
                                   ? "noir's 33³ table through lut3d; hue=s=0,curves=strong_contrast is another picture (≈ 31 dB)"
                                   : "the look's 33³ table exported as a .cube; tetrahedral both")
            case "pixellate":
                let chain = "pixelize=w=16:h=16"
                plans[id] = Row(label: "pixellate(scale=16)", prismFilter: "pixellate(scale=16, \(corner))",
                                ffmpegArguments: vf(chain), ffmpegFilter: chain, note: "Prism's grid moved to FFmpeg's (\(corner))")
            case "chain":
                let chain = "\(invert),\(try mono()),pixelize=w=16:h=16"
                plans[id] = Row(label: BenchOptions.defaultFilter, prismFilter: "invert, mono, pixellate(scale=16, \(corner))",
                                ffmpegArguments: vf(chain), ffmpegFilter: chain, note: "the default graph; " + monoNote)
            case "face-blur-none", "face-blur-one":
                let one = id == "face-blur-one"
                let face = BenchSuite.standInFace(size)
                let sidecar = file(one ? "one-face.jsonl" : "no-face.jsonl")
                let lines = input.videoPTS.enumerated().map { index, pts in
                    FaceSidecar.line(for: FaceFrame(frameIndex: index, pts: pts, frameSize: size,
                                                    faces: one ? [TrackedFace(id: 1, box: face, score: 1)] : [], age: 0))
                }
                try (lines.joined(separator: "\n") + "\n").write(toFile: sidecar, atomically: true, encoding: .utf8)
                var arguments: [String], filter: String
                var region: [Bool]?
                if one {
                    // FFmpeg has no face-blur; the same picture from its filters, for the check only: the clip
                    // blurred merged over it through face-mask's disc. The blur is the Gaussian as closely as gblur
                    // gets it (steps=6; σ = 6, face-blur's radius 12, on Y and 3 on the half-size chroma planes):
                    // the default gblur differs from a Gaussian about as much as the unblurred face does.
                    let mask = file("mask.yuv")
                    let maskFrame = BenchSuite.faceMaskFrame(size, face: face)
                    try Data(maskFrame).write(to: URL(fileURLWithPath: mask))
                    region = maskFrame.map { $0 > 0 }
                    filter = "[0:v:0]\(prefix)split[a][b];[b]gblur=sigma=6:steps=6:planes=1,gblur=sigma=3:steps=6:planes=6[fx];"
                        + "[a][fx][1:v]maskedmerge[out]"
                    arguments = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(size.width)x\(size.height)", "-i", mask,
                                 "-filter_complex", filter, "-map", "[out]"]
                } else {
                    filter = "null"
                    arguments = vf("null")
                }
                let box = String(format: "%.0fx%.0f at (%.0f, %.0f)", face.width, face.height, face.x, face.y)
                // A radius in pixels (the check's gblur is fixed), not one sized to the face.
                plans[id] = Row(label: one ? "face-blur, one face" : "face-blur, no face", prismFilter: "face-blur(radius=12)",
                                prismExtra: ["--faces-in", sidecar], ffmpegArguments: arguments, ffmpegFilter: filter,
                                ffmpegTimed: false,
                                note: (one ? "one face (\(box)) every frame" : "no face in any frame")
                                   + " from a --faces-in sidecar, so no detector in the figure; FFmpeg has no face-blur: "
                                   + (one ? "its gblur + maskedmerge graph is the check, not timed" : "checked against the clip itself (-vf null)"),
                                region: region)
            default:
                throw BenchError("no suite row '\(id)'")
            }
        }

        rows = plans
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }
}

/// Runs the suite's rows on one clip.
final class BenchSuiteRunner {
    let prism: String
    let ffmpeg: String?
    let runs: Int
    let directory: String
    /// Options passed on to every `prism run` (--gpu, --no-fuse, --rgb-route).
    let prismOptions: [String]
    private let log: (String) -> Void

    init(prism: String, ffmpeg: String?, runs: Int, directory: String, prismOptions: [String], log: @escaping (String) -> Void) {
        self.prism = prism
        self.ffmpeg = ffmpeg
        self.runs = runs
        self.directory = directory
        self.prismOptions = prismOptions
        self.log = log
    }

    /// The rows `rows` on the clip at `path`; `name` and `description` head its section of the table.
    func run(clip path: String, name: String, description: String, rows: [String]) throws -> BenchSuiteClip {
        let plan = try BenchSuitePlan(clip: path, rows: rows, directory: directory)
        let input = plan.input, size = plan.size, space = input.colorSpace, matrix = plan.matrix
        var results: [BenchSuiteRow] = []
        for id in rows {
            guard let row = plan.rows[id] else { continue }
            log("bench: suite \(name): \(id)…")
            results.append(try measure(id: id, plan: row, clip: path, size: size, frames: input.videoFrameCount,
                                       bound: BenchSuite.bound(id, converted: plan.converted)))
        }
        // face-blur against invert: the masked filter's cost beside the cheapest filter's (the issue's target).
        if let invert = results.first(where: { $0.id == "invert" }) {
            for index in results.indices where results[index].id.hasPrefix("face-blur") {
                results[index].versusInvert = results[index].prismMedianSeconds / invert.prismMedianSeconds
                results[index].target = results[index].id == "face-blur-none" ? 1.2 : 2
            }
        }
        return BenchSuiteClip(name: name, width: size.width, height: size.height, frames: input.videoFrameCount, clip: description,
                              colorSpace: "\(matrix) \(space.range == .full ? "full" : "limited") range, \(input.pixelFormat)",
                              runs: runs, rows: results)
    }

    /// `prism run CLIP --filter F … -o - --output-format yuv420p -q`, as arguments.
    func prismArguments(_ plan: BenchSuitePlan.Row, clip: String) -> [String] {
        ["run", clip, "--filter", plan.prismFilter] + plan.prismExtra + ["-o", "-", "--output-format", "yuv420p", "-q"] + prismOptions
    }

    /// `ffmpeg -i CLIP … -f rawvideo -pix_fmt yuv420p -`, as arguments.
    func ffmpegArguments(_ plan: BenchSuitePlan.Row, clip: String) -> [String] {
        ["-hide_banner", "-nostdin", "-loglevel", "error", "-i", clip] + plan.ffmpegArguments + ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
    }

    /// One untimed run of both commands of `plan` at once, their pictures compared (needs ffmpeg).
    func check(_ plan: BenchSuitePlan.Row, clip: String, size: Size, frames: Int) throws -> BenchStreamComparison {
        guard let ffmpeg else { throw BenchError("the suite's checks need ffmpeg") }
        return try compare((prism, prismArguments(plan, clip: clip)), (ffmpeg, ffmpegArguments(plan, clip: clip)),
                           size: size, expected: frames, region: plan.region)
    }

    private func measure(id: String, plan: BenchSuitePlan.Row, clip: String, size: Size, frames: Int,
                         bound: BenchPSNRBound) throws -> BenchSuiteRow {
        let prismArguments = prismArguments(plan, clip: clip)
        let ffmpegArguments = ffmpegArguments(plan, clip: clip)
        var comparison: BenchStreamComparison?
        var check = "unchecked", detail = "ffmpeg not found: nothing compared"
        if ffmpeg != nil {
            // The check comes first: an untimed run of both at once, which also warms the file cache and
            // the drivers for the timed runs.
            let compared = try self.check(plan, clip: clip, size: size, frames: frames)
            let verdict = BenchSuite.verdict(compared, bound: bound)
            comparison = compared
            check = verdict.passed ? "verified" : "FAIL"
            detail = verdict.detail
        }
        var prismSeconds: [Double] = [], ffmpegSeconds: [Double] = []
        for _ in 0..<runs {
            // Alternating, so drifting load on the machine falls on both sides alike.
            prismSeconds.append(try timed(prism, prismArguments))
            if let ffmpeg, plan.ffmpegTimed { ffmpegSeconds.append(try timed(ffmpeg, ffmpegArguments)) }
        }
        let prismMedian = Self.median(prismSeconds)
        let ffmpegMedian = ffmpegSeconds.isEmpty ? nil : Self.median(ffmpegSeconds)
        let quotedPrism = (["prism"] + prismArguments).map(BenchCommand.quoted).joined(separator: " ")
        let quotedFFmpeg = (["ffmpeg"] + ffmpegArguments).map(BenchCommand.quoted).joined(separator: " ")
        return BenchSuiteRow(
            id: id, label: plan.label, prismCommand: quotedPrism, ffmpegFilter: plan.ffmpegFilter,
            ffmpegCommand: quotedFFmpeg, ffmpegTimed: plan.ffmpegTimed,
            prismSeconds: prismSeconds, ffmpegSeconds: ffmpegSeconds.isEmpty ? nil : ffmpegSeconds,
            prismMedianSeconds: prismMedian, ffmpegMedianSeconds: ffmpegMedian,
            speed: ffmpegMedian.map { $0 / prismMedian }, prismFPS: Double(frames) / prismMedian,
            ffmpegFPS: ffmpegMedian.map { Double(frames) / $0 }, comparison: comparison, bound: bound, check: check,
            detail: detail, versusInvert: nil, target: nil, note: plan.note)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let n = sorted.count
        guard n > 0 else { return .nan }
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    // MARK: Processes

    /// Wall seconds of one run, standard output to /dev/null, from launch to exit (`waitpid`: Foundation's
    /// `Process.waitUntilExit` notices an exit only at its run loop's next 50 ms tick).
    private func timed(_ executable: String, _ arguments: [String]) throws -> Double {
        let start = benchNow()
        let child = try BenchChild(executable, arguments, directory: directory, stdoutToPipe: false)
        let status = child.wait()
        let seconds = Double(benchNow() - start) / 1e9
        try child.check(status)
        return seconds
    }

    /// Runs both commands at once, each writing yuv420p frames of `size` to standard output, and compares the two
    /// streams frame by frame as they come (no frame is stored: a long clip costs no memory).
    private func compare(_ a: (String, [String]), _ b: (String, [String]), size: Size, expected: Int,
                         region: [Bool]?) throws -> BenchStreamComparison {
        var comparer = BenchStreamComparer(size: size, region: region)
        let frameBytes = comparer.frameBytes
        let childA = try BenchChild(a.0, a.1, directory: directory, stdoutToPipe: true)
        let childB = try BenchChild(b.0, b.1, directory: directory, stdoutToPipe: true)
        var bufferA = [UInt8](repeating: 0, count: frameBytes), bufferB = [UInt8](repeating: 0, count: frameBytes)
        var framesA = 0, framesB = 0
        var openA = true, openB = true
        // Alternating whole frames: a side that runs ahead blocks on its full pipe until the other catches up.
        while openA || openB {
            let gotA = openA && Self.readFrame(childA.output, into: &bufferA)
            let gotB = openB && Self.readFrame(childB.output, into: &bufferB)
            if gotA { framesA += 1 } else { openA = false }
            if gotB { framesB += 1 } else { openB = false }
            if gotA && gotB { comparer.add(bufferA, bufferB) }
        }
        let statusA = childA.wait(), statusB = childB.wait()
        try childA.check(statusA)
        try childB.check(statusB)
        return comparer.result(prismFrames: framesA, ffmpegFrames: framesB, expectedFrames: expected)
    }

    /// Reads one whole frame; false at the end of the stream (a partial last frame counts as none).
    private static func readFrame(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var filled = 0
        let count = buffer.count
        return buffer.withUnsafeMutableBytes { bytes in
            while filled < count {
                let n = read(fd, bytes.baseAddress! + filled, count - filled)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                filled += n
            }
            return true
        }
    }
}

extension BenchResult {
    /// The suite as stage-style sections, for `--chart`: per clip one bar pair per row, milliseconds per frame of
    /// whole runs (Prism's runs against FFmpeg's).
    func suiteAsStages() -> BenchResult {
        var copy = self
        copy.sizes = (suite ?? []).map { clip in
            let rows: [BenchRow] = clip.rows.compactMap { row in
                let perFrame = { (seconds: [Double]) in BenchFigure(milliseconds: seconds.map { $0 * 1000 / Double(clip.frames) }) }
                guard let prism = perFrame(row.prismSeconds) else { return nil }
                var stage = BenchRow(id: "suite." + row.id, stage: "suite", label: row.label, prism: prism,
                                     comparison: row.ffmpegFilter ?? "", check: row.check == "FAIL" ? "FAILED" : row.check)
                if let seconds = row.ffmpegSeconds, let ffmpeg = perFrame(seconds) {
                    stage.ffmpeg = ffmpeg
                    stage.speedup = ffmpeg.medianMs / prism.medianMs
                }
                return stage
            }
            return BenchSizeResult(name: clip.name, width: clip.width, height: clip.height, clipFrames: clip.frames, clip: clip.clip,
                                   passes: [], timerMethod: header.timerMethod, timerNote: header.timerNote, rows: rows,
                                   verifications: [])
        }
        return copy
    }
}

/// A child process started with `posix_spawn`: standard input /dev/null, standard output /dev/null or a pipe
/// this process reads, standard error a file (read back for the message when it fails). Every descriptor this
/// process opens for it is close-on-exec, so two children never hold each other's pipes open.
final class BenchChild {
    let executable: String
    let arguments: [String]
    let pid: pid_t
    /// The read end of the child's standard output (-1 when it goes to /dev/null).
    let output: Int32
    private let errorPath: String

    init(_ executable: String, _ arguments: [String], directory: String, stdoutToPipe: Bool) throws {
        self.executable = executable
        self.arguments = arguments
        errorPath = directory + "/child-\(UInt32.random(in: 0...UInt32.max)).stderr"
        let errorFD = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errorFD >= 0 else { throw SystemError("open", code: errno, context: errorPath) }
        defer { close(errorFD) }
        var pipeFDs: [Int32] = [-1, -1]
        if stdoutToPipe {
            guard pipe(&pipeFDs) == 0 else { throw SystemError("pipe", code: errno, context: executable) }
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if stdoutToPipe {
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, errorFD, 2)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv + [nil], environ)
        if stdoutToPipe { close(pipeFDs[1]) }
        guard result == 0 else {
            if stdoutToPipe { close(pipeFDs[0]) }
            try? FileManager.default.removeItem(atPath: errorPath)
            throw SystemError("posix_spawn", code: result, context: executable)
        }
        pid = child
        output = stdoutToPipe ? pipeFDs[0] : -1
    }

    private var status: Int32?

    deinit {
        if output >= 0 { close(output) }
        // A child left behind by an error elsewhere: with its pipe closed it ends (EPIPE) and is reaped here.
        if status == nil { _ = wait() }
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// Waits for the child to end; its wait status.
    func wait() -> Int32 {
        if let status { return status }
        var result: Int32 = 0
        while waitpid(pid, &result, 0) < 0 && errno == EINTR {}
        status = result
        return result
    }

    /// Throws with the end of the child's standard error unless it exited with 0.
    func check(_ status: Int32) throws {
        // WIFEXITED and WEXITSTATUS, spelt out (the C macros are not imported).
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        guard !exited || code != 0 else { return }
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(3).joined(separator: " | ")
        let how = exited ? "exited with \(code)" : "was killed by signal \(status & 0x7f)"
        throw BenchError("\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) \(how): \(tail)")
    }
}
