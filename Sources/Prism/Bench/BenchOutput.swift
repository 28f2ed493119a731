import Foundation

/// The readable table `prism bench` prints by default.
enum BenchTable {
    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text }
        let fill = String(repeating: " ", count: width - count)
        return right ? fill + text : text + fill
    }

    static func number(_ value: Double) -> String {
        switch value {
        case ..<0.1: return String(format: "%.4f", value)
        case ..<10: return String(format: "%.3f", value)
        case ..<100: return String(format: "%.2f", value)
        default: return String(format: "%.1f", value)
        }
    }

    static func fps(_ value: Double) -> String { value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value) }

    static func render(_ result: BenchResult) -> String {
        let h = result.header
        var lines: [String] = []
        lines.append("prism bench — \(h.date) — \(h.build) build")
        lines.append("command   \(h.command)")
        lines.append("machine   \(h.cpuModel), \(h.cpuCores) cores; load average \(h.loadAverage) at start, \(h.loadAverageAtEnd) at the end (other work skews every figure)")
        lines.append("renderer  \(h.glRenderer) — vendor \(h.glVendor); \(h.glVersion); \(h.glslVersion)")
        lines.append("driver    \(h.driverVersion)" + (h.softwareRenderer ? " — SOFTWARE renderer: the \"GPU\" stages run on the CPU" : ""))
        lines.append("EGL       \(h.eglPlatform) platform (\(h.eglDevice)); EGL \(h.eglVersion) (\(h.eglVendor))")
        lines.append("threads   GPU thread: \(h.gpuThreads); \(h.llvmpipeThreads); \(h.encoderThreads)")
        lines.append("timer     \(h.timerMethod)" + (result.suite == nil ? " (the engine's PassTimer, as `prism run --stats`; see each size)" : ""))
        lines.append((result.suite == nil ? "graph     " : "rows      ") + result.graph)
        lines.append("ffmpeg    " + (result.ffmpeg.available ? "\(result.ffmpeg.version ?? result.ffmpeg.path ?? "ffmpeg"): " : "")
                     + result.ffmpeg.message)
        if let suite = result.suite {
            lines += suiteLines(suite, quick: result.quick)
            lines.append("")
            lines.append(result.verified ? "result    VERIFIED: every row's pictures match FFmpeg's within its bound and every time is positive"
                : "result    NOT VERIFIED: " + result.failures.joined(separator: "; "))
            return lines.joined(separator: "\n")
        }
        lines.append("samples   \(result.warmup) warm-up + \(result.samples) samples per stage, median (p10–p90) in ms per frame"
                     + (result.quick ? " — QUICK mode: tiny frames, few samples, not figures to quote" : ""))
        for size in result.sizes {
            lines.append("")
            lines.append("== \(size.width)x\(size.height)" + (size.name.contains("x") ? "" : " (\(size.name))") + " — clip of \(size.clipFrames) frames; "
                         + (size.passes.isEmpty ? "\(size.clip) ==" : "\(size.passes.count) pass(es): \(size.passes.joined(separator: " | ")) =="))
            lines.append("pass timing: \(size.timerMethod) — \(size.timerNote)")
            lines.append(pad("stage", 46) + pad("Prism ms", 10, right: true) + "  " + pad("p10–p90", 17) + pad("fps", 8, right: true)
                         + pad("FFmpeg ms", 11, right: true) + pad("fps", 8, right: true) + pad("speed", 8, right: true) + "  check")
            for row in size.rows {
                var line = pad(row.label, 46) + pad(number(row.prism.medianMs), 10, right: true) + "  "
                    + pad(number(row.prism.p10Ms) + "–" + number(row.prism.p90Ms), 17) + pad(fps(row.prism.fps), 8, right: true)
                if let f = row.ffmpeg, let speed = row.speedup {
                    line += pad(number(f.medianMs), 11, right: true) + pad(fps(f.fps), 8, right: true)
                        + pad(String(format: "%.2f×", speed), 8, right: true)
                } else {
                    line += pad("—", 11, right: true) + pad("", 8) + pad("", 8)
                }
                line += "  " + (row.check ?? "")
                lines.append(line)
            }
            lines.append("checks:")
            for check in size.verifications {
                lines.append("  " + (check.passed ? "ok  " : "FAIL") + " \(check.what) vs \(check.against): \(check.detail)"
                             + (check.checksum.isEmpty ? "" : " [fnv \(check.checksum)]"))
            }
        }
        lines.append("")
        if let memory = result.memory {
            lines.append(String(format: "memory    peak RSS %.1f MiB; soak %@ %d frames: %@", memory.peakRSSMiB,
                                memory.soakSize, memory.soakFrames, memory.verdict))
        }
        lines.append("speed     FFmpeg ms / Prism ms: above 1× Prism is faster; '—': no FFmpeg equivalent (see --json 'comparison')")
        lines.append(result.verified ? "result    VERIFIED: every checked frame matches its reference and every figure is positive"
                     : "result    NOT VERIFIED: " + result.failures.joined(separator: "; "))
        return lines.joined(separator: "\n")
    }
}

extension BenchTable {
    /// `--suite`: per clip, one line per row, then each row's FFmpeg filters and what the row needs said.
    static func suiteLines(_ clips: [BenchSuiteClip], quick: Bool) -> [String] {
        var lines: [String] = []
        let runs = clips.first?.runs ?? 1
        lines.append("suite     Prism: `prism run CLIP --filter F -o - --output-format yuv420p` as a subprocess; FFmpeg: "
                     + "`ffmpeg -i CLIP -vf EQUIV -f rawvideo -pix_fmt yuv420p -`; stdout to /dev/null, wall clock launch to exit, "
                     + "median of \(runs) run(s), alternating" + (quick ? " — QUICK mode: tiny frames, not figures to quote" : ""))
        lines.append("PSNR      Prism's frames against FFmpeg's, every frame, in an untimed run of both: the worst frame's Y and CbCr; "
                     + "under the row's bound: FAIL")
        for clip in clips {
            lines.append("")
            lines.append("== \(clip.width)x\(clip.height)" + (clip.name.contains("x") ? "" : " (\(clip.name))")
                         + " — \(clip.frames) frames; \(clip.clip); \(clip.colorSpace) ==")
            lines.append(pad("row", 36) + pad("Prism s", 9, right: true) + pad("FFmpeg s", 10, right: true) + pad("speed", 8, right: true)
                         + pad("Prism fps", 11, right: true) + pad("FFmpeg fps", 11, right: true) + pad("PSNR Y", 8, right: true)
                         + pad("CbCr", 7, right: true) + pad("bound", 7, right: true) + "  check")
            for row in clip.rows {
                var line = pad(row.label, 36) + pad(String(format: "%.3f", row.prismMedianSeconds), 9, right: true)
                if let f = row.ffmpegMedianSeconds, let speed = row.speed, let ffps = row.ffmpegFPS {
                    line += pad(String(format: "%.3f", f), 10, right: true) + pad(String(format: "%.2f×", speed), 8, right: true)
                        + pad(fps(row.prismFPS), 11, right: true) + pad(fps(ffps), 11, right: true)
                } else {
                    line += pad("—", 10, right: true) + pad("—", 8, right: true) + pad(fps(row.prismFPS), 11, right: true)
                        + pad("—", 11, right: true)
                }
                if let c = row.comparison {
                    line += pad(String(format: "%.1f", c.worstLumaPSNR), 8, right: true) + pad(String(format: "%.1f", c.worstChromaPSNR), 7, right: true)
                } else {
                    line += pad("—", 8, right: true) + pad("—", 7, right: true)
                }
                line += pad(row.bound.description, 7, right: true) + "  " + row.check
                if let floor = row.bound.region, let y = row.comparison?.regionLumaPSNR, let c = row.comparison?.regionChromaPSNR {
                    line += String(format: " (in the face Y %.1f, CbCr %.1f; bound %.0f)", y, c, floor)
                }
                if let ratio = row.versusInvert, let target = row.target {
                    line += String(format: "  %.2f× invert (target ≤ %g×%@)", ratio, target, ratio <= target ? "" : ", NOT MET")
                }
                lines.append(line)
            }
            lines.append("FFmpeg side, per row:")
            for row in clip.rows {
                // The bench's temporary folder says nothing; the file names do.
                let filter = (row.ffmpegFilter ?? "—").replacingOccurrences(of: #"file='[^']*/"#, with: "file='", options: .regularExpression)
                lines.append("  " + pad(row.id, 15) + filter + (row.ffmpegTimed ? "" : " (check only)")
                             + " — " + row.note)
                if row.check == "FAIL" { lines.append("  " + pad("", 15) + "FAIL: " + row.detail) }
            }
        }
        lines.append("")
        lines.append("speed     FFmpeg s / Prism s: above 1× Prism is faster; face-blur has no FFmpeg filter: its time against invert's")
        return lines
    }
}

/// `--chart FILE.svg`: per resolution, one horizontal pair of bars per stage (Prism, FFmpeg), ms per
/// frame on a logarithmic axis (costs span four decades), frames per second written at each bar.
enum BenchChart {
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    static func svg(_ result: BenchResult) -> String {
        let prismColor = "#2f6fdf", ffmpegColor = "#f08a24"
        let width = 1100.0
        let labelWidth = 360.0, plotLeft = labelWidth + 10, plotWidth = 560.0
        let barHeight = 10.0, rowGap = 8.0
        let values = result.sizes.flatMap { $0.rows.flatMap { [$0.prism.medianMs] + ($0.ffmpeg.map { [$0.medianMs] } ?? []) } }
            .filter { $0 > 0 && $0.isFinite }
        let low = floor(log10(values.min() ?? 0.01)), high = max(ceil(log10(values.max() ?? 100)), low + 1)
        func x(_ ms: Double) -> Double { plotLeft + (log10(max(ms, pow(10, low))) - low) / (high - low) * plotWidth }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }

        var body: [String] = []
        var y = 20.0
        let h = result.header
        body.append("<text x=\"20\" y=\"\(f(y + 12))\" font-size=\"18\" font-weight=\"bold\">Prism \(escape(result.ffmpeg.available ? "vs FFmpeg: " : ""))cost per frame by stage (ms, log scale; shorter is faster)</text>")
        y += 34
        body.append("<text x=\"20\" y=\"\(f(y))\" font-size=\"12\" fill=\"#444\">\(escape("\(h.glRenderer) · \(h.driverVersion) · \(h.cpuModel), \(h.cpuCores) cores · \(h.date) · \(h.build.split(separator: " ").first.map(String.init) ?? h.build) build"))</text>")
        y += 16
        body.append("<text x=\"20\" y=\"\(f(y))\" font-size=\"12\" fill=\"#444\">\(escape("graph: \(result.graph)" + (result.ffmpeg.filterChain.map { " · FFmpeg: \($0)" } ?? "") + " · timer: \(h.timerMethod)"))</text>")
        y += 22
        // Legend.
        body.append("<rect x=\"20\" y=\"\(f(y - 10))\" width=\"14\" height=\"10\" fill=\"\(prismColor)\"/>")
        body.append("<text x=\"40\" y=\"\(f(y))\" font-size=\"12\">Prism (median; whisker p10–p90)</text>")
        body.append("<rect x=\"260\" y=\"\(f(y - 10))\" width=\"14\" height=\"10\" fill=\"\(ffmpegColor)\"/>")
        body.append("<text x=\"280\" y=\"\(f(y))\" font-size=\"12\">\(escape(result.ffmpeg.available ? "FFmpeg CPU (same clip, same run)" : "FFmpeg: \(result.ffmpeg.message)"))</text>")
        y += 20

        for size in result.sizes {
            y += 12
            body.append("<text x=\"20\" y=\"\(f(y + 12))\" font-size=\"15\" font-weight=\"bold\">\(escape("\(size.width)x\(size.height)" + (size.name.contains("x") ? "" : " (\(size.name))")))</text>")
            y += 24
            let top = y
            let rowHeight = 2 * barHeight + rowGap
            let panelHeight = Double(size.rows.count) * rowHeight
            // Grid and axis labels: every decade, lighter lines at 2× and 5×.
            var decade = low
            while decade <= high {
                let base = pow(10, decade)
                body.append("<line x1=\"\(f(x(base)))\" y1=\"\(f(top))\" x2=\"\(f(x(base)))\" y2=\"\(f(top + panelHeight))\" stroke=\"#bbb\" stroke-width=\"1\"/>")
                let label = base >= 1 ? String(format: "%.0f", base) : String(format: "%g", base)
                body.append("<text x=\"\(f(x(base)))\" y=\"\(f(top + panelHeight + 14))\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">\(label)</text>")
                if decade < high {
                    for m in [2.0, 5.0] {
                        body.append("<line x1=\"\(f(x(base * m)))\" y1=\"\(f(top))\" x2=\"\(f(x(base * m)))\" y2=\"\(f(top + panelHeight))\" stroke=\"#e4e4e4\" stroke-width=\"1\"/>")
                    }
                }
                decade += 1
            }
            body.append("<line x1=\"\(f(plotLeft))\" y1=\"\(f(top + panelHeight))\" x2=\"\(f(plotLeft + plotWidth))\" y2=\"\(f(top + panelHeight))\" stroke=\"#333\"/>")
            body.append("<line x1=\"\(f(plotLeft))\" y1=\"\(f(top))\" x2=\"\(f(plotLeft))\" y2=\"\(f(top + panelHeight))\" stroke=\"#333\"/>")
            body.append("<text x=\"\(f(plotLeft + plotWidth / 2))\" y=\"\(f(top + panelHeight + 28))\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">milliseconds per frame (log scale)</text>")
            var previousStage = ""
            for (index, row) in size.rows.enumerated() {
                let rowTop = top + Double(index) * rowHeight + rowGap / 2
                if row.stage != previousStage && index > 0 {
                    body.append("<line x1=\"20\" y1=\"\(f(rowTop - rowGap / 2))\" x2=\"\(f(plotLeft + plotWidth))\" y2=\"\(f(rowTop - rowGap / 2))\" stroke=\"#ddd\" stroke-dasharray=\"3,3\"/>")
                }
                previousStage = row.stage
                let label = row.label.count > 52 ? String(row.label.prefix(51)) + "…" : row.label
                body.append("<text x=\"\(f(labelWidth))\" y=\"\(f(rowTop + barHeight + 4))\" font-size=\"12\" text-anchor=\"end\">\(escape(label + (row.check == "FAILED" ? " ✗" : "")))</text>")
                func bar(_ figure: BenchFigure, _ top: Double, _ color: String, _ name: String) {
                    let end = x(figure.medianMs)
                    body.append("<rect x=\"\(f(plotLeft))\" y=\"\(f(top))\" width=\"\(f(max(end - plotLeft, 1)))\" height=\"\(f(barHeight))\" fill=\"\(color)\"><title>\(escape("\(name) \(row.label): \(BenchTable.number(figure.medianMs)) ms (p10 \(BenchTable.number(figure.p10Ms)), p90 \(BenchTable.number(figure.p90Ms)), \(figure.samples) samples)"))</title></rect>")
                    body.append("<line x1=\"\(f(x(figure.p10Ms)))\" y1=\"\(f(top + barHeight / 2))\" x2=\"\(f(x(figure.p90Ms)))\" y2=\"\(f(top + barHeight / 2))\" stroke=\"#111\" stroke-width=\"1\"/>")
                    body.append("<text x=\"\(f(max(end, x(figure.p90Ms)) + 4))\" y=\"\(f(top + barHeight - 1))\" font-size=\"10\" fill=\"#222\">\(escape(BenchTable.number(figure.medianMs) + " ms · " + BenchTable.fps(figure.fps) + " fps"))</text>")
                }
                bar(row.prism, rowTop, prismColor, "Prism")
                if let ffmpeg = row.ffmpeg {
                    bar(ffmpeg, rowTop + barHeight, ffmpegColor, "FFmpeg")
                    if let speed = row.speedup {
                        body.append("<text x=\"\(f(width - 20))\" y=\"\(f(rowTop + barHeight + 4))\" font-size=\"11\" text-anchor=\"end\" fill=\"\(speed >= 1 ? "#1a7f37" : "#b42318")\">\(String(format: "%.2f×", speed))</text>")
                    }
                }
            }
            y = top + panelHeight + 40
        }
        y += 4
        body.append("<text x=\"20\" y=\"\(f(y))\" font-size=\"11\" fill=\"#444\">\(escape("× = FFmpeg ms / Prism ms (green: Prism faster). " + (result.memory.map { "Memory: peak RSS \(String(format: "%.0f", $0.peakRSSMiB)) MiB; \($0.verdict). " } ?? "") + (result.verified ? "All checked frames verified." : "NOT VERIFIED.")))</text>")
        y += 16
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(y))" viewBox="0 0 \(f(width)) \(f(y))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
            <rect x="0" y="0" width="\(f(width))" height="\(f(y))" fill="white"/>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }
}
