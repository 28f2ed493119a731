import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismVision

/// `prism models`: the installed models (the folders searched, each model's source package, licence, size and
/// what it is for) and which of them the filters use when no model is named.
struct ModelsCommand: PrismCommand {
    static let spec = CommandSpec(name: "models", arguments: "",
                                  summary: "Lists the installed models (source, licence, size, use) and the folders searched.", options: [])

    init(arguments: [String]) throws {
        try ArgumentScanner.checkNoArguments(arguments, command: Self.spec)
    }

    /// What uses a model by default, by file name; the faces' default may be a built-in cascade (no file).
    static var defaultUses: [(model: String, use: String)] {
        [(SegmentationSettings.defaultModel, "background-blur, background-replace and segment-mask when no --segment-model or model= names one"),
         (CascadeFaceDetector.defaultModel, "face detection (face-blur, face-pixellate, face-mask…) when no --face-model names one")]
    }

    static func report(installed: [ModelLibrary.Entry], folders: [String]) -> String {
        var lines = ["Folders searched for a model named without a path, in order:"]
        if (ProcessInfo.processInfo.environment["PRISM_MODELS"] ?? "").isEmpty { lines.append("  $PRISM_MODELS (not set)") }
        for folder in folders {
            let count = installed.filter { ($0.path as NSString).deletingLastPathComponent == folder }.count
            let exists = FileManager.default.fileExists(atPath: folder)
            lines.append("  \(folder)" + (exists ? " (\(count) model\(count == 1 ? "" : "s"))" : " (absent)"))
        }
        lines.append("")
        if installed.isEmpty {
            lines.append("No models installed: scripts/install-models (run by scripts/install-deps) puts the defaults in the checkout's .models/.")
        }
        for entry in installed {
            lines.append("\(entry.file)  \(String(format: "%.1f MiB", Double(entry.bytes) / 1_048_576))  \(entry.licence ?? "licence not recorded")  "
                         + (entry.source ?? "source not recorded (no models.tsv entry)"))
            if let description = entry.description { lines.append("    \(description)") }
            if let sha256 = entry.sha256 { lines.append("    sha256 \(sha256)") }
            lines.append("    \(entry.path)")
            let uses = defaultUses.filter { $0.model == entry.file }
            for use in uses { lines.append("    default for \(use.use)") }
            if uses.isEmpty { lines.append("    no filter's default: run it with model(file=\(entry.path))") }
        }
        lines.append("")
        lines.append("Defaults when no model is named:")
        for use in defaultUses {
            let found = installed.first { $0.file == use.model }
            let state = found != nil ? "installed" : (use.model.hasSuffix(".onnx") ? "not installed: scripts/install-models" : "built in")
            lines.append("  \(use.model) (\(state)): \(use.use)")
        }
        return lines.joined(separator: "\n")
    }

    func execute() throws -> Int32 {
        print(Self.report(installed: ModelLibrary.installed(), folders: ModelLibrary.folders))
        return 0
    }
}
