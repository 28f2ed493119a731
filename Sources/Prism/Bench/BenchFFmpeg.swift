import Foundation
import PrismCore
import PrismFilters

/// What the run knows about the `ffmpeg` it compares with.
struct BenchFFmpegInfo: Codable, Sendable {
    var requested: Bool
    var available: Bool
    var path: String?
    var version: String?
    /// The CPU filter chain equivalent to the graph, when there is one.
    var filterChain: String?
    /// Why there is no comparison, or none for the filter rows.
    var message: String
}

/// Runs `ffmpeg` as a subprocess and times it.
struct BenchFFmpeg {
    let path: String

    /// `ffmpeg` on `searchPath` (PATH when nil), or an explicit executable.
    static func locate(explicit: String?, searchPath: String?) -> String? {
        guard let explicit else {
            return SlurmScript.which("ffmpeg", searchPath: searchPath ?? ProcessInfo.processInfo.environment["PATH"] ?? "")
        }
        return FileManager.default.isExecutableFile(atPath: explicit) ? explicit : nil
    }

    func version() -> String? {
        guard let result = try? run(["-hide_banner", "-version"], captureStdout: true) else { return nil }
        let first = result.output.split(separator: "\n").first.map(String.init) ?? ""
        return first.isEmpty ? nil : first
    }

    /// Runs ffmpeg with `arguments` (after `-hide_banner -nostdin -y -benchmark`); the seconds of transcoding,
    /// `-benchmark`'s rtime when printed, else the subprocess's wall time. Throws on failure with the last
    /// lines of its stderr.
    func time(_ arguments: [String]) throws -> Double {
        let result = try run(["-hide_banner", "-nostdin", "-y", "-benchmark"] + arguments, captureStdout: false)
        guard result.status == 0 else {
            let tail = result.output.split(separator: "\n").suffix(3).joined(separator: " | ")
            throw BenchError("ffmpeg \(arguments.joined(separator: " ")) exited with \(result.status): \(tail)")
        }
        return Self.rtime(in: result.output) ?? result.wall
    }

    /// `bench: utime=0.1s stime=0.0s rtime=0.25s` → 0.25.
    static func rtime(in text: String) -> Double? {
        guard let range = text.range(of: "rtime=", options: .backwards) else { return nil }
        let number = text[range.upperBound...].prefix { $0.isNumber || $0 == "." }
        return Double(number).flatMap { $0 > 0 ? $0 : nil }
    }

    private func run(_ arguments: [String], captureStdout: Bool) throws -> (status: Int32, output: String, wall: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        if captureStdout { process.standardOutput = pipe } else { process.standardOutput = FileHandle.nullDevice }
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let start = benchNow()
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let wall = Double(benchNow() - start) / 1e9
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), wall)
    }

    /// FFmpeg's CPU filter chain for a linear graph of filters it has equivalents for, or why not: the suite's
    /// equivalents (gblur for blur; a look's own 33³ table through lut3d, written into `cubeDirectory`).
    static func filterChain(for graph: FilterGraph, cubeDirectory: String? = nil) -> Result<String, BenchError> {
        var parts: [String] = []
        var previous: FilterGraph.Stream = .source
        var unmapped: [String] = []
        for node in graph.nodes {
            guard node.inputs == [previous] else {
                return .failure(BenchError("the graph is not a simple chain; no FFmpeg equivalent is built for it"))
            }
            previous = .node(node.id)
            let values = node.parameters
            switch node.name {
            case "invert":
                parts.append("negate")
            case "mono":
                if let intensity = values?["intensity"]?.doubleValue, intensity < 1 {
                    parts.append(String(format: "hue=s=%.3g", 1 - intensity))
                } else {
                    parts.append("hue=s=0")
                }
            case "pixellate":
                let scale = max(1, Int((values?.double("scale") ?? 8).rounded()))
                parts.append("pixelize=w=\(scale):h=\(scale)")
            case "color":
                let b = values?.double("brightness") ?? 0, c = values?.double("contrast") ?? 1
                let s = values?.double("saturation") ?? 1
                parts.append(String(format: "eq=brightness=%.4g:contrast=%.4g:saturation=%.4g", b, c, s))
            case "blur":
                parts.append(String(format: "gblur=sigma=%.4g", (values?.double("radius") ?? 10) / 2))
            case let name where ColorLook.all.contains { $0.name == name } && cubeDirectory != nil:
                let look = ColorLook.all.first { $0.name == name }!
                let intensity = values?.double("intensity") ?? 1
                let cube = cubeDirectory! + "/\(name).cube"
                do {
                    try BenchSuite.writeCube(cube, title: name) { intensity * look.apply($0) + (1 - intensity) * $0 }
                } catch {
                    return .failure(BenchError("cannot write \(cube) for FFmpeg's lut3d: \(error)"))
                }
                parts.append("lut3d=file='\(cube)':interp=tetrahedral")
            case "scale":
                if let size = values?.size("size") { parts.append("scale=\(size.width):\(size.height)") }
                else { unmapped.append(node.name) }
            default:
                unmapped.append(node.name)
            }
        }
        guard graph.output == previous else {
            return .failure(BenchError("the graph's output is not the end of its chain; no FFmpeg equivalent is built for it"))
        }
        if !unmapped.isEmpty {
            return .failure(BenchError("no FFmpeg equivalent for: \(unmapped.joined(separator: ", "))"))
        }
        return .success(parts.isEmpty ? "null" : parts.joined(separator: ","))
    }
}

/// A benchmark failure: one line, and the bench exits non-zero.
struct BenchError: PrismError {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { "bench: " + message }
}
