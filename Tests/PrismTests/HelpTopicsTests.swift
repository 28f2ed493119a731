import XCTest
import PrismCore
@testable import Prism

/// `prism help TOPIC`: the guides' summaries compiled into the binary agree with docs/*.md, and the command prints
/// topics, summaries and commands' usage.
final class HelpTopicsTests: XCTestCase {
    let dir = ScratchDirectory()

    /// A guide's opening as `scripts/help-topics` takes it: the lines before its first `## ` heading outside a
    /// fenced block.
    static func opening(of text: String) -> String {
        var lines: [String] = []
        var fenced = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                fenced.toggle()
            } else if !fenced && line.hasPrefix("## ") {
                break
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func normalised(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// What is wrong between the guides in `folder` and `topics`: a guide without a topic, a topic without a
    /// guide, an opening that differs, an opening too long to be a summary.
    static func problems(docs folder: URL, topics: [HelpTopics.Topic]) throws -> [String] {
        let guides = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".md") }.map { String($0.dropLast(3)) }.sorted()
        var problems: [String] = []
        for name in guides {
            let text = try String(contentsOf: folder.appendingPathComponent(name + ".md"), encoding: .utf8)
            let opening = normalised(Self.opening(of: text))
            guard let topic = topics.first(where: { $0.name == name }) else {
                problems.append("docs/\(name).md has no topic in HelpTopics")
                continue
            }
            if normalised(topic.opening) != opening {
                problems.append("the topic \(name)'s summary differs from the opening of docs/\(name).md")
            }
            if opening.count > 3000 {
                problems.append("docs/\(name).md opens with \(opening.count) characters before its first ## heading: "
                                + "too long for a summary (3000 at most)")
            }
        }
        for topic in topics where !guides.contains(topic.name) {
            problems.append("the topic \(topic.name) has no guide docs/\(topic.name).md")
        }
        return problems
    }

    func testEveryGuideIsATopicWithItsOpeningText() throws {
        let problems = try Self.problems(docs: Tools.repositoryRoot.appendingPathComponent("docs"), topics: HelpTopics.all)
        XCTAssertEqual(problems, [], "scripts/help-topics rewrites Sources/Prism/CLI/HelpTopics.swift from docs/*.md")
        XCTAssertEqual(Set(HelpTopics.all.map(\.name)).count, HelpTopics.all.count, "a topic is listed twice")
        XCTAssertGreaterThanOrEqual(HelpTopics.all.count, 18)
    }

    /// The check above fails when a guide is added without a topic, when a guide's opening changes and when a
    /// guide is removed; edits after the first `##` heading and reflowed lines do not matter.
    func testTheCheckCatchesAMissingTopicAndADriftedSummary() throws {
        let docs = dir.url.appendingPathComponent("docs")
        try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
        func write(_ name: String, _ text: String) throws {
            try text.write(to: docs.appendingPathComponent(name + ".md"), atomically: true, encoding: .utf8)
        }
        let topics = [HelpTopics.Topic(name: "a", opening: "# A\n\nFirst words\nof A.\n\n```sh\nprism run\n```"),
                      HelpTopics.Topic(name: "b", opening: "# B\n\nB.")]
        try write("a", "# A\n\nFirst words of A.\n\n```sh\nprism run\n## not a heading in a block\n```\n\n## More\n\nAnything.\n")
        try write("b", "# B\n\nB.\n")
        XCTAssertEqual(try Self.problems(docs: docs, topics: topics),
                       ["the topic a's summary differs from the opening of docs/a.md"],
                       "a heading-like line inside a fenced block is not the end of the opening")
        try write("a", "# A\n\nFirst words\n  of A.\n\n```sh\nprism run\n```\n\n## More\n\nAnything else.\n")
        XCTAssertEqual(try Self.problems(docs: docs, topics: topics), [])
        try write("b", "# B\n\nB, changed.\n")
        try write("c", "# C\n\nA new guide.\n")
        XCTAssertEqual(try Self.problems(docs: docs, topics: topics),
                       ["the topic b's summary differs from the opening of docs/b.md", "docs/c.md has no topic in HelpTopics"])
        try FileManager.default.removeItem(at: docs.appendingPathComponent("b.md"))
        try write("c", "# C\n\n" + String(repeating: "word ", count: 700))
        XCTAssertEqual(try Self.problems(docs: docs, topics: topics + [HelpTopics.Topic(name: "c", opening: "# C\n\n" + String(repeating: "word ", count: 700))]),
                       ["docs/c.md opens with 3503 characters before its first ## heading: too long for a summary (3000 at most)",
                        "the topic b has no guide docs/b.md"])
    }

    func testTheSummaryIsTheTitleTheOpeningAndTheGuide() throws {
        let topic = HelpTopics.Topic(name: "x", opening: "# X: a title\n\nWords `code`.\n\n```sh runnable\nprism run -o a.mp4\n\nprism filters\n```\n\nMore.")
        XCTAssertEqual(topic.title, "X: a title")
        XCTAssertEqual(topic.summary, "X: a title\n\nWords `code`.\n\n    prism run -o a.mp4\n\n    prism filters\n\nMore.\n\nGuide: docs/x.md")
    }

    private func prism(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: [String]) {
        let result = try Tools.run(Tools.prism, arguments)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderrLines)
    }

    func testHelpListsTopicsAndCommands() throws {
        let help = try prism(["help"])
        XCTAssertEqual(help.status, 0, help.stderr.joined(separator: "\n"))
        XCTAssertEqual(help.stderr, [])
        for topic in HelpTopics.all {
            XCTAssertTrue(help.stdout.contains(topic.name) && help.stdout.contains(topic.title), topic.name)
        }
        for command in PrismCommandLine.commands {
            XCTAssertTrue(help.stdout.contains("  " + command.name + " ") && help.stdout.contains(command.summary), command.name)
        }
        XCTAssertTrue(help.stdout.contains("  faces") && help.stdout.contains("Faces: privacy filters and what they promise"))
        // prism --help names it.
        XCTAssertTrue(try prism(["--help"]).stdout.contains("prism help TOPIC"))
    }

    func testHelpTopicPrintsTheGuidesSummary() throws {
        let faces = try prism(["help", "faces"])
        XCTAssertEqual(faces.status, 0, faces.stderr.joined(separator: "\n"))
        let lines = faces.stdout.components(separatedBy: "\n")
        XCTAssertEqual(lines.first, "Faces: privacy filters and what they promise")
        XCTAssertTrue(faces.stdout.contains("A privacy filter is judged by its worst frame"))
        XCTAssertTrue(lines.contains("    prism run interview.mp4 --filter face-pixellate -o anonymous.mp4     # blocks sized to each face"))
        XCTAssertFalse(faces.stdout.contains("```"))
        XCTAssertFalse(faces.stdout.contains("## "), "only the opening, up to the first ## heading")
        XCTAssertEqual(lines.filter { !$0.isEmpty }.last, "Guide: docs/faces.md")
        for topic in HelpTopics.all {
            let result = try prism(["help", topic.name])
            XCTAssertEqual(result.status, 0, topic.name)
            XCTAssertTrue(result.stdout.hasPrefix(topic.title + "\n") || result.stdout.hasPrefix("usage: prism " + topic.name), topic.name)
            XCTAssertTrue(result.stdout.contains("Guide: docs/\(topic.name).md"), topic.name)
        }
    }

    func testHelpCommandIsTheCommandsUsage() throws {
        for command in ["run", "completions", "help"] {
            let help = try prism(["help", command])
            XCTAssertEqual(help.status, 0, command)
            XCTAssertEqual(help.stdout, try prism([command, "--help"]).stdout, command)
            XCTAssertTrue(help.stdout.hasPrefix("usage: prism " + command), command)
        }
        // A name that is a command and a topic: the usage, then the guide's summary.
        let batch = try prism(["help", "batch"])
        XCTAssertEqual(batch.status, 0)
        XCTAssertTrue(batch.stdout.hasPrefix(try prism(["batch", "--help"]).stdout.trimmingCharacters(in: .newlines) + "\n\nBatch, Slurm and Kubernetes\n"),
                      batch.stdout)
        XCTAssertTrue(batch.stdout.contains("Guide: docs/batch.md"))
    }

    func testAnUnknownTopicIsOneLineWithTheNearestName() throws {
        let cases: [([String], String)] = [
            (["help", "facs"], "prism: no topic or command 'facs'; did you mean 'faces'? (prism help lists them)"),
            (["help", "isf-convention"], "prism: no topic or command 'isf-convention'; did you mean 'isf-conventions'? (prism help lists them)"),
            (["help", "rnu"], "prism: no topic or command 'rnu'; did you mean 'run'? (prism help lists them)"),
            (["help", "xyzzyplugh"], "prism: no topic or command 'xyzzyplugh' (prism help lists them)"),
            (["help", "faces", "hdr"], "prism: help takes at most one TOPIC or COMMAND"),
        ]
        for (arguments, line) in cases {
            let result = try prism(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderr, [line])
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
    }
}
