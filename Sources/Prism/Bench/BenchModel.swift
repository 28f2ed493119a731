import Foundation
import PrismCore
import PrismGPU

/// What `prism bench` was asked to do.
struct BenchOptions: Sendable {
    static let defaultFilter = "invert, mono, pixellate(scale=16)"

    var sizes: [Size] = ["480p", "720p", "1080p", "2160p"].compactMap { Size(parsing: $0) }
    /// `--sizes` was given (`--suite` chooses its own sizes otherwise).
    var sizesGiven = false
    var filter = BenchOptions.defaultFilter
    /// `prism bench CLIP`: the user's own input, timed end to end with `userEncoder` beside the synthetic rows.
    var userClip: String?
    /// The encoder options given for the user's clip, over the encoder's defaults (as `prism run` takes them).
    var userEncoder = EncoderChoice()
    /// Fuse the graph's filters into as few passes as possible (off: one pass per filter, to measure
    /// what fusion buys).
    var fuse = true
    var yuvRoute = true
    var json = false
    var chartPath: String?
    var compareFFmpeg = false
    /// `--suite`: one row per built-in filter against its FFmpeg equivalent, whole `prism run`s and `ffmpeg`
    /// runs timed in the same bench, instead of the stage rows.
    var suite = false
    /// `--rows`: the suite's rows to run (ids or their prefixes, `BenchSuite.select`); nil: all of them.
    var suiteRows: [String]?
    /// The `prism` executable the suite times (`prism run …`); nil: this process's own executable.
    var prismPath: String?
    var quick = false
    /// Warm-up iterations and samples per micro-measurement.
    var warmup = 3
    var samples = 20
    /// Whole-pipeline runs per configuration.
    var endToEndRuns = 3
    /// Frames of the soak run that watches memory.
    var soakFrames = 600
    var gpu = GPUOptions()
    /// An explicit ffmpeg executable (tests); nil searches `searchPath`.
    var ffmpegPath: String?
    /// Directories searched for ffmpeg instead of $PATH (tests simulate a machine without it).
    var searchPath: String?
    /// The command line, for the header.
    var commandLine = "prism bench"

    /// Short runs on tiny frames: seconds on llvmpipe (tests, CI).
    mutating func makeQuick() {
        quick = true
        warmup = 1
        samples = 4
        endToEndRuns = 1
        soakFrames = 60
    }

    /// Frames in the generated clip (what decode and the end-to-end runs go through).
    func clipFrames(for size: Size) -> Int {
        if quick { return 12 }
        switch size.pixelCount {
        case ..<1_000_000: return 120
        case ..<2_500_000: return 60
        default: return 30
        }
    }

    static func sizeName(_ size: Size) -> String {
        switch (size.width, size.height) {
        case (640, 480): return "480p"
        case (1280, 720): return "720p"
        case (1920, 1080): return "1080p"
        case (3840, 2160): return "2160p"
        default: return size.description
        }
    }
}

/// One row of the table: a stage at one size, Prism's figure and FFmpeg's when there is an equivalent.
struct BenchRow: Codable, Sendable {
    /// Stable key: decode, upload.yuv420p, convert.yuv420p-rgba, pass.1, graph.total, readback.sync,
    /// gpu.frame, encode.h264.ultrafast, e2e.h264.ultrafast, e2e.discard.
    var id: String
    /// decode, upload, convert, filter, readback, encode, end-to-end.
    var stage: String
    var label: String
    var prism: BenchFigure
    var ffmpeg: BenchFigure?
    /// FFmpeg ms per frame / Prism ms per frame: above 1, Prism is faster.
    var speedup: Double?
    /// What FFmpeg ran for this row, or why it has no FFmpeg figure.
    var comparison: String
    /// How the row's work was checked, when it was.
    var check: String?
    var note: String?
}

/// A check that the GPU produced the right frames.
struct BenchVerification: Codable, Sendable {
    var what: String
    var against: String
    var comparison: BenchComparison?
    var checksum: String
    var passed: Bool
    var detail: String
}

struct BenchSizeResult: Codable, Sendable {
    var name: String
    var width: Int
    var height: Int
    var clipFrames: Int
    var clip: String
    var passes: [String]
    var timerMethod: String
    /// Why that method: timer queries are checked against fenced wall time at every size.
    var timerNote: String
    var rows: [BenchRow]
    var verifications: [BenchVerification]
}

struct BenchResult: Codable, Sendable {
    var tool = "prism bench"
    var header: BenchHeader
    var graph: String
    var quick: Bool
    var warmup: Int
    var samples: Int
    var ffmpeg: BenchFFmpegInfo
    var sizes: [BenchSizeResult]
    /// The soak run's verdict; nil for `--suite`, which runs no soak.
    var memory: BenchMemory?
    /// `--suite`: per clip, one row per built-in filter against FFmpeg; nil otherwise.
    var suite: [BenchSuiteClip]?
    /// Every verification passed and every figure is positive and finite.
    var verified: Bool
    var failures: [String]

    func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .throw
        return try encoder.encode(self)
    }
}
