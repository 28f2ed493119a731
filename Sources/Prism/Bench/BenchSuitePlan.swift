import Foundation
import PrismCore
import PrismFilters
import PrismMedia
import PrismVision

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
        var maker = RowMaker(input: input, folder: folder, matrix: matrix, converted: converted)
        var plans: [String: Row] = [:]
        for id in ids { plans[id] = try maker.row(id) }
        rows = plans
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }
}

/// What each row runs, made from the clip's layout; writes the inputs the rows need into the plan's folder.
private struct RowMaker {
    typealias Row = BenchSuitePlan.Row
    let input: MediaReport
    let folder: String
    let matrix: String
    let converted: Bool
    /// mono's table for a BT.601 clip, written once for the rows that need it.
    private var monoCube: String?

    init(input: MediaReport, folder: String, matrix: String, converted: Bool) {
        self.input = input
        self.folder = folder
        self.matrix = matrix
        self.converted = converted
    }

    private var size: Size { input.size }
    private var space: YUVColorSpace { input.colorSpace }
    private func file(_ name: String) -> String { folder + "/" + name }

    // FFmpeg's side: frames of another layout are made yuv420p first (nothing for yuv420p, as a
    // conversion the Prism side does too); R'G'B' filters get the clip's own matrix and range both ways
    // (swscale's defaults would write BT.601 back), through rgb24 (what lut3d negotiates by itself).
    private var prefix: String { converted ? "format=yuv420p," : "" }
    private func lut3d(_ cube: String) -> String {
        let range = space.range == .full ? "pc" : "tv"
        return "scale=in_color_matrix=\(matrix):in_range=\(range),format=rgb24,lut3d=file='\(cube)':interp=tetrahedral,"
            + "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p"
    }
    private func vf(_ chain: String) -> [String] { ["-map", "0:v:0", "-vf", prefix + chain] }
    // Invert in Y'CbCr: 1 - R'G'B' is Y' → 251 - Y' in limited range (255 - Y' in full), Cb, Cr → 256 - C.
    // FFmpeg's `negate` flips the whole 0…255 code range (255 - Y'), 4 codes off on limited-range video.
    private var invert: String { "lutyuv=y=\(space.range == .full ? 255 : 251)-val:u=256-val:v=256-val" }
    // Prism's mono is Rec.709 luma of R'G'B'; that is the clip's own Y' (so `hue=s=0`) only for BT.709.
    private mutating func mono() throws -> String {
        if space.matrix == .bt709 { return "hue=s=0" }
        if monoCube == nil {
            monoCube = file("mono.cube")
            try BenchSuite.writeCube(monoCube!, title: "mono") { ColorLook.all.first { $0.name == "mono" }!.apply($0) }
        }
        return lut3d(monoCube!)
    }
    // Prism's pixellate grid is centred on `center` (default: the frame's centre); FFmpeg's starts at the top
    // left corner. The suite puts a block corner at Prism's top left too (same cost, same blocks).
    private var corner: String { String(format: "center=%.9g:%.9g", 8 / Double(size.width), 8 / Double(size.height)) }
    private var monoNote: String {
        space.matrix == .bt709 ? "hue=s=0 keeps Y' (BT.709 clip: Prism's Rec.709 luma is Y')"
            : "a BT.601 clip: Prism's Rec.709 luma is not the clip's Y', so FFmpeg applies mono's table (lut3d), not hue=s=0"
    }

    /// The row `id`, with the files it reads.
    mutating func row(_ id: String) throws -> Row {
        switch id {
        case "invert":
            return Row(label: "invert", prismFilter: "invert", ffmpegArguments: vf(invert), ffmpegFilter: invert,
                       note: "lutyuv, not negate: negate flips 0…255, 4 codes off on limited-range Y'")
        case "mono":
            let chain = try mono()
            return Row(label: "mono", prismFilter: "mono", ffmpegArguments: vf(chain), ffmpegFilter: chain, note: monoNote)
        case "blur-2", "blur-10", "blur-50":
            let sigma = BenchSuite.blurSigmas[id]!
            let chain = "gblur=sigma=\(sigma)"
            return Row(label: "blur(radius=\(2 * sigma))", prismFilter: "blur(radius=\(2 * sigma))",
                       ffmpegArguments: vf(chain), ffmpegFilter: chain,
                       note: "σ = \(sigma); gblur: IIR, steps=1, chroma planes blurred by σ of their half-size pixels")
        case "lut":
            let cube = file("look.cube")
            try BenchSuite.writeCube(cube, title: "prism bench look", BenchSuite.benchLook)
            return Row(label: "lut(file=look.cube)", prismFilter: "lut(file=\"\(cube)\")", ffmpegArguments: vf(lut3d(cube)),
                       ffmpegFilter: lut3d(cube), note: "a 33³ non-affine .cube written by the bench; tetrahedral both")
        case "transfer", "chrome", "noir":
            let look = ColorLook.all.first { $0.name == id }!
            let cube = file(id + ".cube")
            // The very table Prism's look samples (33³ of `ColorLook.apply`), as a .cube for lut3d.
            try BenchSuite.writeCube(cube, title: id, look.apply)
            return Row(label: id, prismFilter: id, ffmpegArguments: vf(lut3d(cube)), ffmpegFilter: lut3d(cube),
                       note: id == "noir"
                          ? "noir's 33³ table through lut3d; hue=s=0,curves=strong_contrast is another picture (≈ 31 dB)"
                          : "the look's 33³ table exported as a .cube; tetrahedral both")
        case "pixellate":
            let chain = "pixelize=w=16:h=16"
            return Row(label: "pixellate(scale=16)", prismFilter: "pixellate(scale=16, \(corner))",
                       ffmpegArguments: vf(chain), ffmpegFilter: chain, note: "Prism's grid moved to FFmpeg's (\(corner))")
        case "chain":
            let chain = "\(invert),\(try mono()),pixelize=w=16:h=16"
            return Row(label: BenchOptions.defaultFilter, prismFilter: "invert, mono, pixellate(scale=16, \(corner))",
                       ffmpegArguments: vf(chain), ffmpegFilter: chain, note: "the default graph; " + monoNote)
        case "face-blur-none", "face-blur-one":
            return try faceBlur(one: id == "face-blur-one")
        default:
            throw BenchError("no suite row '\(id)'")
        }
    }

    /// face-blur with no face or one, from a sidecar; FFmpeg's side is the check only.
    private func faceBlur(one: Bool) throws -> Row {
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
        return Row(label: one ? "face-blur, one face" : "face-blur, no face", prismFilter: "face-blur(radius=12)",
                   prismExtra: ["--faces-in", sidecar], ffmpegArguments: arguments, ffmpegFilter: filter,
                   ffmpegTimed: false,
                   note: (one ? "one face (\(box)) every frame" : "no face in any frame")
                      + " from a --faces-in sidecar, so no detector in the figure; FFmpeg has no face-blur: "
                      + (one ? "its gblur + maskedmerge graph is the check, not timed" : "checked against the clip itself (-vf null)"),
                   region: region)
    }
}
