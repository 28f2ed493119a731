import Foundation
import PrismCore
import PrismBuildInfo
import PrismFilters

/// `prism completions bash|zsh|fish`: a completion script printed from the same command tables the parser reads,
/// so a new option completes the day it is declared.
struct CompletionsCommand: PrismCommand {
    enum Shell: String, CaseIterable { case bash, zsh, fish }
    let shell: Shell

    static let spec = CommandSpec(
        name: "completions", arguments: "bash|zsh|fish",
        summary: "Prints a completion script for the shell (commands, options, filter names and choices).",
        options: [],
        notes: ["bash: prism completions bash > ~/.local/share/bash-completion/completions/prism",
                "zsh:  prism completions zsh > \"${fpath[1]}/_prism\"   fish: prism completions fish > ~/.config/fish/completions/prism.fish"])

    init(arguments: [String]) throws {
        let scanner = try ArgumentScanner(arguments, command: Self.spec)
        let names = Shell.allCases.map(\.rawValue)
        guard scanner.positionals.count == 1, let shell = Shell(rawValue: scanner.positionals[0]) else {
            let given = scanner.positionals.first.map { ", not '\($0)'" } ?? ""
            throw UsageError("completions takes one of \(names.joined(separator: ", "))\(given)")
        }
        self.shell = shell
    }

    func execute() throws -> Int32 {
        let commands = PrismCommandLine.commands
        switch shell {
        case .bash: print(ShellCompletions.bash(commands))
        case .zsh: print(ShellCompletions.zsh(commands))
        case .fish: print(ShellCompletions.fish(commands))
        }
        return 0
    }
}

/// The completion scripts, built from the command tables.
enum ShellCompletions {
    /// The names `--filter` completes to (files complete too: shaders, hooks and models are filters).
    static var filterNames: [String] { BuiltinFilters.all.map(\.name) }

    /// The choices an option's value shows as `a|b|c` (lowercase words only: `N[k|M]` is not a choice list).
    static func choices(_ option: OptionSpec) -> [String]? {
        guard let value = option.value, value.contains("|") else { return nil }
        let words = value.split(separator: "|").map(String.init)
        guard words.allSatisfy({ $0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" } && !$0.isEmpty }) else { return nil }
        return words
    }

    static func visible(_ command: CommandSpec) -> [OptionSpec] { command.options.filter { !$0.hidden } }

    /// What `prism help` completes to: the topics (one per guide), then the commands.
    static func helpNames(_ commands: [CommandSpec]) -> [String] {
        HelpTopics.all.map(\.name) + commands.map(\.name).filter { name in !HelpTopics.all.contains { $0.name == name } }
    }

    static func bash(_ commands: [CommandSpec]) -> String {
        var lines = ["# bash completion for prism, from prism \(BuildInfo.version) (prism completions bash)",
                     "_prism() {",
                     "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
                     "    if [ \"$COMP_CWORD\" -eq 1 ]; then",
                     "        COMPREPLY=($(compgen -W \"\(commands.map(\.name).joined(separator: " ")) \(PrismCommandLine.Key.help.name) \(PrismCommandLine.Key.version.name)\" -- \"$cur\"))",
                     "        return",
                     "    fi",
                     // prism help TOPIC|COMMAND.
                     "    if [ \"$COMP_CWORD\" -eq 2 ] && [ \"${COMP_WORDS[1]}\" = help ]; then",
                     "        COMPREPLY=($(compgen -W \"\(helpNames(commands).joined(separator: " "))\" -- \"$cur\"))",
                     "        return",
                     "    fi",
                     "    case \"$prev\" in",
                     "        --filter|--filters)",
                     "            COMPREPLY=($(compgen -W \"\(filterNames.joined(separator: " "))\" -- \"$cur\") $(compgen -f -- \"$cur\"))",
                     "            return ;;"]
        // Options whose value is a choice: the same spelling has the same choices in every command.
        var seen = Set<String>()
        for command in commands {
            for option in visible(command) where !seen.contains(option.name) {
                guard let choices = choices(option) else { continue }
                seen.insert(option.name)
                lines.append("        \(option.names.joined(separator: "|")))")
                lines.append("            COMPREPLY=($(compgen -W \"\(choices.joined(separator: " "))\" -- \"$cur\"))")
                lines.append("            return ;;")
            }
        }
        lines += ["    esac",
                  "    local options=\"\"",
                  "    case \"${COMP_WORDS[1]}\" in"]
        for command in commands {
            let names = visible(command).flatMap(\.names) + [PrismCommandLine.Key.help.name]
            lines.append("        \(command.name)) options=\"\(names.joined(separator: " "))\" ;;")
        }
        lines += ["    esac",
                  "    if [[ \"$cur\" == -* ]]; then",
                  "        COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))",
                  "    else",
                  "        COMPREPLY=($(compgen -f -- \"$cur\"))",
                  "    fi",
                  "}",
                  "complete -o filenames -F _prism prism"]
        return lines.joined(separator: "\n")
    }

    /// zsh runs the bash function through its own bashcompinit, so both shells complete the same words.
    static func zsh(_ commands: [CommandSpec]) -> String {
        ["#compdef prism",
         "# zsh completion for prism, from prism \(BuildInfo.version) (prism completions zsh)",
         "autoload -U +X bashcompinit && bashcompinit",
         bash(commands)].joined(separator: "\n")
    }

    static func fish(_ commands: [CommandSpec]) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
        let names = commands.map(\.name).joined(separator: " ")
        var lines = ["# fish completion for prism, from prism \(BuildInfo.version) (prism completions fish)",
                     "complete -c prism -f"]
        for command in commands {
            lines.append("complete -c prism -n \"not __fish_seen_subcommand_from \(names)\" -a \(command.name) -d \(quoted(command.summary))")
        }
        lines.append("complete -c prism -n \"__fish_seen_subcommand_from help\" -a \(quoted(helpNames(commands).joined(separator: " ")))")
        for command in commands {
            for option in visible(command) {
                var line = "complete -c prism -n \"__fish_seen_subcommand_from \(command.name)\""
                for name in option.names {
                    line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
                }
                if option.takesValue {
                    line += " -r"
                    if let choices = choices(option) {
                        line += " -a \(quoted(choices.joined(separator: " ")))"
                    } else if option.name == RunCommand.Key.filter.name {
                        line += " -F -a \(quoted(filterNames.joined(separator: " ")))"
                    } else {
                        line += " -F"
                    }
                }
                lines.append(line + " -d \(quoted(String(option.help.prefix(80))))")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// `prism manual`: the man page (roff), from the command tables; `prism manual > prism.1 && man ./prism.1`.
struct ManualCommand: PrismCommand {
    static let spec = CommandSpec(name: "manual", arguments: "",
                                  summary: "Prints the manual page (roff): prism manual > prism.1; man ./prism.1", options: [])

    init(arguments: [String]) throws {
        try ArgumentScanner.checkNoArguments(arguments, command: Self.spec)
    }

    func execute() throws -> Int32 {
        print(ManualPage.roff(PrismCommandLine.commands))
        return 0
    }
}

/// What each exit status means: the man page's table, and what `main` returns.
enum ExitStatus {
    static let table: [(code: Int32, meaning: String)] = [
        (0, "success (a run that skipped damaged packets also exits 0 and says what it skipped)"),
        (1, "a runtime failure: a device, encoder, server or disk failed while working"),
        (2, "a usage error or bad input: an unknown command, option or filter, a value out of range, "
            + "a missing, unreadable or malformed file (movie, shader, LUT, model)"),
        (3, "prism batch: at least one job failed (the results file says which)"),
        (130, "interrupted with nothing finished: a third Ctrl-C abandoned a run (the first finishes the output and exits 0), "
              + "or a batch was stopped (finished jobs are kept)"),
    ]
}

enum ManualPage {
    /// Roff text with its special characters escaped: a leading '.' or '\'' would be a request, '\' an escape;
    /// characters beyond ASCII as groff's `\[uXXXX]`, so the page needs no input encoding.
    static func escaped(_ text: String) -> String {
        var body = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": body += "\\e"
            case "-": body += "\\-"
            case _ where scalar.value > 0x7F: body += String(format: "\\[u%04X]", scalar.value)
            default: body.unicodeScalars.append(scalar)
            }
        }
        return body.hasPrefix(".") || body.hasPrefix("'") ? "\\&" + body : body
    }

    static func roff(_ commands: [CommandSpec]) -> String {
        var lines = [".TH PRISM 1 \"\" \"prism \(BuildInfo.version)\" \"User Commands\"",
                     ".SH NAME",
                     "prism \\- headless GPU video filter engine",
                     ".SH SYNOPSIS"]
        for command in commands {
            lines += [".B prism", escaped(command.synopsis(indent: "", width: 100).replacingOccurrences(of: "\n", with: " ")), ".br"]
        }
        lines += [".SH DESCRIPTION",
                  escaped("Prism filters camera frames, movie files, images and network streams with graphs of GLSL passes on the GPU "
                          + "(built-in looks, ISF and ShaderToy shaders, mpv hook shaders, ONNX models, faces) and encodes, "
                          + "streams or shows the result. prism COMMAND --help describes one command."),
                  ".SH COMMANDS"]
        for command in commands {
            lines += [".SS \(escaped(command.name + (command.arguments.isEmpty ? "" : " " + command.arguments)))",
                      escaped(command.summary)]
            for option in command.options where !option.hidden {
                lines += [".TP", "\\fB" + escaped(option.names.joined(separator: ", ")) + "\\fR"
                            + (option.value.map { " \\fI" + escaped($0) + "\\fR" } ?? ""),
                          escaped(option.help)]
            }
            for note in command.notes { lines += [".PP", escaped(note)] }
        }
        lines += [".SH TOPICS",
                  escaped("prism help TOPIC prints the summary of a guide: its title, its opening paragraphs and where "
                          + "the whole guide is in the source tree (docs/TOPIC.md).")]
        for topic in HelpTopics.all { lines += [".TP", "\\fB" + escaped(topic.name) + "\\fR", escaped(topic.title)] }
        lines += [".SH EXIT STATUS"]
        for (code, meaning) in ExitStatus.table { lines += [".TP", "\\fB\(code)\\fR", escaped(meaning)] }
        lines += [".SH ENVIRONMENT",
                  ".TP", "\\fBPRISM_MODELS\\fR", escaped("a folder of installed models, looked in before ~/.local/share/prism/models"),
                  ".SH SEE ALSO",
                  "ffmpeg(1)"]
        return lines.joined(separator: "\n")
    }
}
