import Foundation
import PrismCore

/// `--control` and `--watch` of `run` and `record`: where live commands come from, and whether the
/// graph's shader files are watched.
package struct ControlOptions: Sendable, Equatable {
    /// JSON commands on stdin, one per line (`record` reads stdin anyway).
    package var standardInput = false
    /// `POST /control` on this loopback port (0: any free port; the URL printed says which).
    package var port: Int?
    /// Recompile between frames when a shader file the graph reads changes.
    package var watch = false

    package init() {}

    /// Whether any of it was asked for.
    var isEnabled: Bool { standardInput || port != nil || watch }

    /// `--control` and `--watch`, declared once: the table below and the parser read them.
    enum Key {
        static let control = OptionKey<String>("--control", value: "stdin|PORT|stdin,PORT", help: "live control: JSON commands ({\"set\": …}, {\"graph\": …}, "
               + "{\"snapshot\": …}, {\"quit\": true}) one per line on stdin, and/or POST /control on 127.0.0.1:PORT (0: any free port)")
        static let watch = FlagKey("--watch", help: "recompile between frames when a shader file of the graph changes (a broken edit keeps the last good graph)")
    }

    static let commandLine: [OptionSpec] = [Key.control.spec, Key.watch.spec]

    static func parse(_ scanner: inout ArgumentScanner) throws -> ControlOptions {
        var options = ControlOptions()
        options.watch = scanner.flag(Key.watch)
        guard let text = try scanner.value(Key.control) else { return options }
        for part in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if part == "stdin" || part == "-" {
                guard !options.standardInput else { throw UsageError("--control names stdin twice") }
                options.standardInput = true
            } else if let port = Int(part), (0...65535).contains(port) {
                guard options.port == nil else { throw UsageError("--control takes one PORT") }
                options.port = port
            } else {
                throw UsageError("--control takes stdin, a port (0...65535) or both (stdin,PORT), not '\(part)'")
            }
        }
        return options
    }
}
