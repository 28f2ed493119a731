import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// `prism`'s entry point: picks the command, runs it, turns any error into one line on stderr and a
/// non-zero exit status.
package enum PrismCommandLine {
    /// Every command, in the order the usage lists them.
    static var commandTypes: [any PrismCommand.Type] { [RunCommand.self, RenderCommand.self, FiltersCommand.self,
                                                        ModelsCommand.self,
                                                        DevicesCommand.self, DevCommand.self, BenchCommand.self,
                                                        RecordCommand.self, BatchCommand.self,
                                                        CompletionsCommand.self, ManualCommand.self, HelpCommand.self] }
    /// Their declarations.
    static var commands: [CommandSpec] { commandTypes.map { $0.spec } }

    /// What `prism` takes besides a command: `--help` (after a command too) and `--version`.
    enum Key {
        static let help = FlagKey("--help", "-h", help: "describes prism, or the command it follows")
        static let version = FlagKey("--version", help: "the version, the libraries and the GPU")
    }

    /// `prism --help`: each command's synopsis, printed from the same declarations the parser uses.
    package static var usage: String {
        (["usage: prism <command> [options]   (prism COMMAND --help describes one; prism help TOPIC summarises a guide; "
          + "prism --version)"]
         + commands.map { $0.synopsis() }
         + [""] + RunCommand.spec.notes).joined(separator: "\n")
    }

    /// Runs `arguments` (without the program name); returns the exit status.
    package static func main(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        ProcessSignals.installForTool()
        // The library's messages name settings as the flags that set them.
        Setting.spell(SettingFlags.names)
        // A FIFO input with no writer yet is waited on; the wait is said, so the run does not look hung.
        FIFOInput.announce.withLock { $0 = { PrismCommandLine.info("prism: " + $0) } }
        let rest = Array(arguments.dropFirst())
        if Key.help.spec.names.contains(name) {
            print(usage)
            return 0
        }
        if name == Key.version.name {
            print(VersionReport.make())
            return 0
        }
        if rest.contains(where: Key.help.spec.names.contains) {
            print(commands.first { $0.name == name }?.help ?? usage)
            return 0
        }
        do {
            guard let command = commandTypes.first(where: { $0.spec.name == name }) else {
                throw UsageError("unknown command '\(name)'"
                                 + NearestName.suggestion(for: name, among: commandTypes.map { $0.spec.name })
                                 + " (prism --help lists them)")
            }
            // Parse and validate (one line naming any mistake), then run.
            return try command.init(arguments: rest).execute()
        } catch let error as GraphInputError {
            report(error.description)
            // On a terminal, the text with a caret under the column (two more lines, for people).
            if isatty(2) != 0 {
                FileHandle.standardError.write(Data((terminalSafe(error.error.caretDiagnostic(for: error.text)) + "\n").utf8))
            }
            // What the user typed is wrong (unknown filter, a value out of range): a usage error, like a bad option.
            return 2
        } catch let error as UsageError {
            report(error.description)
            return 2
        } catch let error as InvalidRequest {
            report(error.description)
            return 2
        } catch let error as ShaderLoadError {
            // A shader file that is missing or malformed is bad input, as a missing or malformed LUT is.
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


    /// The one line an error gets on stderr. Messages may quote what was read from files (a LUT's first
    /// word, a shader's line): control characters are escaped so no file can drive the terminal.
    static func report(_ message: String) {
        let line = "prism: " + terminalSafe(message.replacingOccurrences(of: "\n", with: " ")) + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// `text` with control characters (C0 but newline, DEL, C1, and the Unicode bidi overrides) written as
    /// `\x1b` / `\u{202e}`; everything else, non-ASCII letters included, as it is. `keepingNewlines: false`
    /// escapes newlines too, for a value shown inside one line (a job's id, a file name).
    static func terminalSafe(_ text: String, keepingNewlines: Bool = true) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A where keepingNewlines:
                result.unicodeScalars.append(scalar)
            case 0x00..<0x20, 0x7F:
                result += String(format: "\\x%02x", scalar.value)
            case 0x80..<0xA0, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                result += String(format: "\\u{%x}", scalar.value)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func info(_ message: String) {
        FileHandle.standardError.write(Data((terminalSafe(message) + "\n").utf8))
    }
}

/// A `prism` command as a type (swift-argument-parser's model): its declaration, parsing and
/// validation in `init`, then `execute`.
protocol PrismCommand {
    /// The command's name, arguments and options: the parser and the usage read this one table.
    static var spec: CommandSpec { get }
    /// Parses and validates `arguments` (those after the command's name); throws one clear error.
    init(arguments: [String]) throws
    /// Runs the command; returns the exit status.
    func execute() throws -> Int32
}

/// `prism filters [NAME]`.
struct FiltersCommand: PrismCommand {
    let name: String?

    static let spec = CommandSpec(name: "filters", arguments: "[NAME]",
                                  summary: "Lists the built-in filters and their parameters, or describes one.", options: [])

    init(arguments: [String]) throws {
        let scanner = try ArgumentScanner(arguments, command: Self.spec)
        guard scanner.positionals.count <= 1 else { throw UsageError("filters takes at most one NAME") }
        name = scanner.positionals.first
    }

    func execute() throws -> Int32 {
        if let name {
            // A filter file: what it takes (ISF: which images, what an unconnected one holds; an ONNX
            // model: its input and output, operators, weights, and the passes it runs as).
            if let summary = try FilterFileFormat.describe(name) {
                print(summary)
                return 0
            }
            guard let definition = BuiltinFilters.named(name) else {
                throw UsageError("unknown filter '\(name)'" + GraphBinder.suggestion(for: name))
            }
            print(Self.describe(definition, detailed: true))
            return 0
        }
        print("Filters (prism filters NAME for details; graphs: `a, b(x=1)` or `[in]a[x]; [x][in]b`):\n")
        for definition in BuiltinFilters.all { print(Self.describe(definition, detailed: false)) }
        print("\nUser shaders: name a .fs/.frag/.glsl file (ISF or ShaderToy) as a filter: 'my.fs(amount=0.3), mono'; mpv hook files (.glsl/.hook with //!HOOK: Anime4K, ravu) too, consecutive ones as one group.")
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
struct DevicesCommand: PrismCommand {
    static let spec = CommandSpec(name: "devices", arguments: "",
                                  summary: "Lists what EGL sees (GPUs, renderers) and the V4L2 cameras.", options: [])

    init(arguments: [String]) throws {
        try ArgumentScanner.checkNoArguments(arguments, command: Self.spec)
    }

    func execute() throws -> Int32 {
        let listing = GPUDevicesReport.make()
        print(listing)
        print(CameraReport.make())
        return 0
    }
}
