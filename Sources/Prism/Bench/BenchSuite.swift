import Foundation
import PrismCore
import PrismFilters
import PrismVision

// `prism bench --suite`: one row per built-in filter against its FFmpeg equivalent. Each row times whole runs
// of the two commands a user would type — `prism run CLIP --filter F -o - --output-format yuv420p` and
// `ffmpeg -i CLIP -vf EQUIV -f rawvideo -pix_fmt yuv420p -`, standard output discarded — as subprocesses, wall
// clock from launch to exit (start-up, GPU context and shader compilation included on Prism's side, as FFmpeg's
// start-up is on its side), and checks, in an untimed run of both, that the two wrote the same picture.

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
        let y = (ColorLook.lumaWeights * c).sum()
        let toned = BenchReference.clamp(c + SIMD3(0.12, 0.03, -0.12) * y + SIMD3(-0.10, 0.02, 0.12) * (1 - y))
        let curved = toned + (toned * toned * (3 - 2 * toned) - toned) * 0.6
        return BenchReference.clamp(SIMD3(0.85 * curved.x + 0.15 * curved.y,
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
