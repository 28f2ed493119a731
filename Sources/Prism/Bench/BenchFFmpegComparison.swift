import Foundation
import PrismCore

/// FFmpeg beside each row it has an equivalent for: decode, the graph's CPU chain, the encoders, end to end.
extension BenchRunner {
    /// Times FFmpeg on the same clip and puts its figure (or why there is none) beside each row.
    func compare(_ rows: inout [BenchRow], ffmpeg: BenchFFmpeg, size: Size, clip: Clip) throws {
        let runs = options.endToEndRuns
        /// One run's milliseconds per frame of the clip.
        func msPerFrame(_ arguments: [String]) throws -> Double {
            try ffmpeg.time(arguments) * 1000 / Double(clip.frames)
        }
        func perFrame(_ arguments: [String]) throws -> BenchFigure {
            try figure((0..<runs).map { _ in try msPerFrame(arguments) }, "ffmpeg")
        }
        let output = directory + "/ffmpeg-\(size).mp4"
        let input = ["-i", clip.path, "-map", "0:v"]
        let decodeOnly = input + ["-f", "null", "-"]
        let decode = try perFrame(decodeOnly)
        var results: [String: (BenchFigure, String)] = [
            "decode": (decode, "ffmpeg -i clip.mkv -f null - (its rtime includes opening the file and decoder)"),
        ]
        if let chain = ffmpegInfo.filterChain {
            let chainOnly = input + ["-vf", chain, "-f", "null", "-"]
            let filtered = try perFrame(chainOnly)
            results["e2e.discard"] = (filtered, "ffmpeg -i clip.mkv -vf '\(chain)' -f null -")
            let encoded = try perFrame(input + ["-vf", chain, "-c:v", "libx264", "-preset", "ultrafast", output])
            results["e2e.h264.ultrafast"] = (encoded, "ffmpeg -i clip.mkv -vf '\(chain)' -c:v libx264 -preset ultrafast out.mp4")
            // The filter chain alone: with the chain minus without it (same decode, same null output). The
            // two runs alternate a few times and the fastest of each counts, so a busy moment on the machine
            // cannot make the difference vanish (at small sizes the chain costs less than one load spike).
            var withChain: [Double] = [filtered.medianMs], without: [Double] = [decode.medianMs]
            for _ in 0..<max(0, 3 - runs) {
                without.append(try msPerFrame(decodeOnly))
                withChain.append(try msPerFrame(chainOnly))
            }
            let difference = withChain.min()! - without.min()!
            if difference > 0.001, let chainFigure = BenchFigure(milliseconds: [difference]) {
                results["gpu.frame"] = (chainFigure, "FFmpeg chain '\(chain)': (decode + chain) − decode, fastest of \(withChain.count) alternating runs each")
            }
        }
        let raw = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(size.width)x\(size.height)", "-r", "30", "-i", clip.rawPath]
        for index in rows.indices where rows[index].id.hasPrefix("encode.h264") || rows[index].id.hasPrefix("encode.hevc") {
            let parts = rows[index].id.split(separator: ".")
            let encoder = parts[1] == "h264" ? "libx264" : "libx265"
            let preset = String(parts[2])
            var arguments = raw + ["-c:v", encoder, "-preset", preset]
            if encoder == "libx265" { arguments += ["-x265-params", "log-level=error"] }
            results[rows[index].id] = (try perFrame(arguments + [output]), "ffmpeg -f rawvideo … -c:v \(encoder) -preset \(preset) out.mp4 (raw frames in)")
        }
        try? FileManager.default.removeItem(atPath: output)
        for index in rows.indices {
            if let (figure, what) = results[rows[index].id] {
                rows[index].ffmpeg = figure
                rows[index].speedup = figure.medianMs / rows[index].prism.medianMs
                rows[index].comparison = what
            } else {
                switch rows[index].stage {
                case "upload", "convert", "readback": rows[index].comparison = "no FFmpeg equivalent (GPU transfer; FFmpeg's chain stays on the CPU)"
                case "filter": rows[index].comparison = ffmpegInfo.filterChain == nil ? ffmpegInfo.message
                    : "compared as a whole in the 'GPU per frame' row"
                case "encode": rows[index].comparison = "not compared (FFmpeg would convert the pixel format first)"
                default: rows[index].comparison = ffmpegInfo.message
                }
            }
        }
    }
}
