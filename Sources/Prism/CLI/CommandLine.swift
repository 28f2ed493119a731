import Foundation
import PrismCore
import PrismFilters
import PrismMedia

/// `prism`'s entry point: picks the command, runs it, turns any error into one line on stderr and a
/// non-zero exit status.
public enum PrismCommandLine {
    public static let usage = """
        usage: prism <command> [options]
          run [INPUT] -o OUTPUT [--filter SPEC] [--codec h264|hevc|ffv1|prores] [--preset P] [--crf N]
              [--bitrate N[k|M]] [--size WxH] [--fps RATE] [--frames N] [--duration SECONDS] [--gpu N]
              [--render-node PATH] [--input-format WxH:PIXFMT:RATE] [--output-format PIXFMT]
              [--readback sync|pbo] [--audio ALSA_PCM] [--no-fuse] [--quiet] [--stats] [--verbose]
          render --filter SPEC IN.(png|jpg) -o OUT.(png|jpg) [--face-model PATH|haar|lbp] [--faces-in F.jsonl] [--faces-out F.jsonl]
          filters [NAME]
          devices                      GPUs and V4L2 cameras
          dev SHADER [INPUT] [--port N] [--bind ADDRESS]
          bench [--sizes 480p,720p,1080p,2160p] [--filter SPEC] [--no-fuse] [--json] [--chart FILE.svg] [--compare ffmpeg] [--quick]
        INPUT is a file or URL, a V4L2 camera (/dev/videoN, or v4l2:DEVICE), `pattern` (the default) for the
        built-in test pattern, or `-` for raw frames on stdin; OUTPUT is a file whose extension picks the container, or `-` for raw frames on stdout.
        """

    /// Runs `arguments` (without the program name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") || name == "help" || name == "--help" || name == "-h" {
            print(usage)
            return 0
        }
        do {
            switch name {
            case "run": return try RunCommand(arguments: rest).execute()
            case "render": return try RenderCommand(arguments: rest).execute()
            case "filters": return try FiltersCommand(arguments: rest).execute()
            case "devices": return try DevicesCommand(arguments: rest).execute()
            case "dev": return try DevCommand(arguments: rest).execute()
            case "bench": return try BenchCommand(arguments: rest).execute()
            default:
                throw UsageError("unknown command '\(name)' (prism --help lists them)")
            }
        } catch let error as GraphInputError {
            report(error.description)
            // On a terminal, the text with a caret under the column (two more lines, for people).
            if isatty(2) != 0 {
                FileHandle.standardError.write(Data((error.error.caretDiagnostic(for: error.text) + "\n").utf8))
            }
            return 1
        } catch let error as UsageError {
            report(error.description)
            return 2
        } catch let error as PrismError {
            report(error.description)
            return 1
        } catch {
            report("\(error)")
            return 1
        }
    }


    /// The one line an error gets on stderr.
    static func report(_ message: String) {
        let line = "prism: " + message.replacingOccurrences(of: "\n", with: " ") + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func info(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// `prism filters [NAME]`.
struct FiltersCommand {
    let name: String?

    init(arguments: [String]) throws {
        let scanner = try ArgumentScanner(arguments, valueOptions: [], flags: [])
        guard scanner.positionals.count <= 1 else { throw UsageError("filters takes at most one NAME") }
        name = scanner.positionals.first
    }

    func execute() throws -> Int32 {
        if let name {
            guard let definition = BuiltinFilters.named(name) else {
                throw UsageError("unknown filter '\(name)'" + GraphBinder.suggestion(for: name))
            }
            print(Self.describe(definition, detailed: true))
            return 0
        }
        print("Filters (prism filters NAME for details; graphs: `a, b(x=1)` or `[in]a[x]; [x][in]b`):\n")
        for definition in BuiltinFilters.all { print(Self.describe(definition, detailed: false)) }
        print("\nUser shaders: name a .fs/.frag/.glsl file (ISF or ShaderToy) as a filter: 'my.fs(amount=0.3), mono'.")
        return 0
    }

    static func describe(_ definition: FilterDefinition, detailed: Bool) -> String {
        var lines: [String] = []
        let inputs = definition.inputs.count == 1 ? "" : " [inputs: " + (definition.inputs.isEmpty ? "none, a generator" : definition.inputs.joined(separator: ", ")) + "]"
        lines.append("\(definition.name) — \(definition.summary)\(inputs)")
        for parameter in definition.parameters {
            let range = parameter.kind.rangeDescription.map { " in \($0)" } ?? ""
            lines.append("    \(parameter.name): \(parameter.kind.typeName)\(range), default \(parameter.defaultValue) — \(parameter.summary)")
        }
        if detailed {
            lines.append("  maths: " + definition.maths.replacingOccurrences(of: "\n", with: "\n         "))
            lines.append("  example: prism run clip.mp4 -o out.mp4 --filter '\(definition.example)'")
        }
        return lines.joined(separator: "\n")
    }
}

/// `prism devices`.
struct DevicesCommand {
    init(arguments: [String]) throws {
        let scanner = try ArgumentScanner(arguments, valueOptions: [], flags: [])
        guard scanner.positionals.isEmpty else { throw UsageError("devices takes no arguments") }
    }

    func execute() throws -> Int32 {
        let listing = GPUDevicesReport.make()
        print(listing)
        print(CameraReport.make())
        return 0
    }
}
