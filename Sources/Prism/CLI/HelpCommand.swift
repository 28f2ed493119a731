import Foundation
import PrismCore

/// `prism help [TOPIC|COMMAND]`: the topics (one per guide in docs/) and the commands; a command's usage; a guide's
/// summary, from the text compiled into the binary (`HelpTopics`), so an installed `prism` without docs/ has it.
struct HelpCommand: PrismCommand {
    let name: String?

    static let spec = CommandSpec(name: "help", arguments: "[TOPIC|COMMAND]",
                                  summary: "Lists the topics and commands; prism help TOPIC summarises a guide, prism help COMMAND "
                                      + "describes a command.",
                                  options: [])

    init(arguments: [String]) throws {
        let scanner = try ArgumentScanner(arguments, command: Self.spec)
        guard scanner.positionals.count <= 1 else { throw UsageError("help takes at most one TOPIC or COMMAND") }
        name = scanner.positionals.first
        if let name, HelpTopics.named(name) == nil, !PrismCommandLine.commands.contains(where: { $0.name == name }) {
            let names = HelpTopics.all.map(\.name) + PrismCommandLine.commands.map(\.name)
            throw UsageError("no topic or command '\(name)'" + NearestName.suggestion(for: name, among: names)
                             + " (prism help lists them)")
        }
    }

    func execute() throws -> Int32 {
        print(Self.text(for: name))
        return 0
    }

    /// What `prism help NAME` prints: a command's usage, a topic's summary, or both for a name that is both
    /// (`batch`, `models`); with no name, the list.
    static func text(for name: String?) -> String {
        guard let name else { return listing }
        let command = PrismCommandLine.commands.first { $0.name == name }
        let topic = HelpTopics.named(name)
        return [command?.help, topic?.summary].compactMap { $0 }.joined(separator: "\n\n")
    }

    /// `prism help`: every topic with its guide's title, then every command with its summary.
    static var listing: String {
        let width = (HelpTopics.all.map(\.name) + PrismCommandLine.commands.map(\.name)).map(\.count).max() ?? 0
        func row(_ name: String, _ text: String) -> String {
            "  " + name + String(repeating: " ", count: width + 2 - name.count) + text
        }
        return (["usage: prism help [TOPIC|COMMAND]", "", "Topics (prism help TOPIC summarises the guide):"]
                + HelpTopics.all.map { row($0.name, $0.title) }
                + ["", "Commands (prism help COMMAND or prism COMMAND --help describes one):"]
                + PrismCommandLine.commands.map { row($0.name, $0.summary) }).joined(separator: "\n")
    }
}

extension HelpTopics {
    /// One guide: its name (docs/NAME.md) and its opening text as written (markdown: the `# ` title, the
    /// paragraphs and fenced blocks before the first `## ` heading).
    struct Topic: Sendable {
        let name: String
        let opening: String

        /// The guide's title: its first line without the `# `.
        var title: String {
            let first = opening.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return first.hasPrefix("# ") ? String(first.dropFirst(2)) : String(first)
        }

        /// What `prism help NAME` prints: the title, the opening paragraphs as written, fenced blocks as commands
        /// indented by four spaces (the fences dropped), then where the whole guide is.
        var summary: String {
            var lines = [title]
            var fenced = false
            for line in opening.components(separatedBy: "\n").dropFirst() {
                if line.hasPrefix("```") {
                    fenced.toggle()
                } else {
                    lines.append(fenced && !line.isEmpty ? "    " + line : line)
                }
            }
            return (lines + ["", "Guide: docs/\(name).md"]).joined(separator: "\n")
        }
    }

    static func named(_ name: String) -> Topic? { all.first { $0.name == name } }
}
