import Foundation
import XCTest
import PrismCore

/// The commands the documentation shows, run, so the docs cannot rot.
///
/// The marker: a fenced block whose info string is exactly `sh runnable` in README.md or docs/*.md
///
///     ```sh runnable
///     prism run --frames 30 --size 320x180 -o clip.mp4
///     ```
///
/// is run as a bash script (`set -euo pipefail`) with the built `prism` first on PATH, in one scratch folder per
/// document, the document's runnable blocks in order (a later block may read what an earlier one wrote, as a reader
/// following the page would). Each block must exit 0, and every file it names after `-o`/`--output` must exist
/// and decode again (ffprobe counts its video frames); files named after `--faces-out`, `--chart` and `--results`
/// must exist and not be empty. Mark only commands that work offline on a CPU-only box within seconds: the
/// built-in pattern or a clip an earlier block made, `--frames` small. Cameras are there: `/dev/video0` is an
/// emulated capture device and `/dev/video10` an emulated v4l2loopback (Sources/FakeV4L2, preloaded: Prism makes
/// the system calls it makes on real ones), and a block writing to `v4l2:/dev/video10` must have delivered frames
/// to it. Network servers are the ones a block starts itself on 127.0.0.1 (FFmpeg's, as a reader would). Blocks
/// that need a model file the tests do not install, a remote server, or that run until stopped (`prism dev`)
/// stay plain `sh`.
final class DocCommandsTests: XCTestCase {
    static let marker = "sh runnable"

    struct Block {
        var document: String
        var line: Int
        var text: String
    }

    /// The documents whose commands are run: README.md and every docs/*.md.
    static var documents: [URL] {
        let root = Tools.repositoryRoot
        let docs = root.appendingPathComponent("docs")
        let pages = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
        return [root.appendingPathComponent("README.md")] + pages
    }

    /// Every fenced block of `markdown`, with its info string and the line its first body line is on.
    static func fencedBlocks(_ markdown: String, document: String) -> [(info: String, block: Block)] {
        var result: [(info: String, block: Block)] = []
        var open: (info: String, fence: String, line: Int, body: [String])?
        for (index, line) in markdown.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var current = open {
                if trimmed == current.fence {
                    result.append((current.info, Block(document: document, line: current.line, text: current.body.joined(separator: "\n"))))
                    open = nil
                } else {
                    current.body.append(line)
                    open = current
                }
            } else if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                let fence = String(trimmed.prefix { $0 == "`" || $0 == "~" })
                let info = trimmed.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
                open = (info, fence, index + 2, [])
            }
        }
        return result
    }

    /// The runnable blocks of `markdown`.
    static func runnableBlocks(_ markdown: String, document: String) -> [Block] {
        fencedBlocks(markdown, document: document).filter { $0.info == marker }.map(\.block)
    }

    /// The words of a shell command line, quotes removed (enough to find the files a command names; it is not a shell).
    static func words(_ text: String) -> [String] {
        var words: [String] = [], word = "", quote: Character?, inWord = false
        let characters = Array(text.replacingOccurrences(of: "\\\n", with: " "))
        var index = 0
        while index < characters.count {
            let c = characters[index]
            if let open = quote {
                if c == open { quote = nil } else { word.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == "#" && !inWord {
                while index < characters.count && characters[index] != "\n" { index += 1 }
                continue
            } else if c == " " || c == "\t" || c == "\n" || c == ";" || c == "|" || c == "&" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(c)
                inWord = true
            }
            index += 1
        }
        if inWord { words.append(word) }
        return words
    }

    /// Files the block says it writes: (path, must decode as a movie or picture).
    static func namedOutputs(_ text: String) -> [(path: String, decodes: Bool)] {
        let words = words(text)
        var outputs: [(path: String, decodes: Bool)] = []
        for (index, word) in words.enumerated() where index + 1 < words.count {
            let value = words[index + 1]
            if word == "-o" || word == "--output" {
                guard value != "-", !value.contains("://"), !value.hasPrefix("pipe:"), !value.hasPrefix("v4l2:"),
                      !value.hasPrefix("/dev/") else { continue }
                outputs.append((value, true))
            } else if ["--faces-out", "--chart", "--results"].contains(word) {
                outputs.append((value, false))
            }
        }
        return outputs
    }

    /// Runs one block in `folder` and returns what is wrong with it (nothing: it works as the docs say).
    static func problems(running block: Block, in folder: URL, binFolder: URL) throws -> [String] {
        let script = folder.appendingPathComponent(".doc-block.sh")
        try ("set -euo pipefail\n" + block.text + "\n").write(to: script, atomically: true, encoding: .utf8)
        let path = binFolder.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let virtualCamera = folder.appendingPathComponent(".video10.yuv").path
        try? FileManager.default.removeItem(atPath: virtualCamera + ".txt")
        let result = try Tools.run("/bin/bash", ["--noprofile", "--norc", "-c", "cd \"$1\" && exec bash --noprofile --norc \"$2\"",
                                                 "bash", folder.path, script.path],
                                   environment: try emulatedCameras(recordingTo: virtualCamera).merging(["PATH": path]) { $1 },
                                   timeout: 300)
        let place = "\(block.document):\(block.line)"
        guard result.status == 0 else {
            return ["\(place): exit status \(result.status)\n\(block.text)\n\(result.stderr.suffix(2000))"]
        }
        var found: [String] = []
        if words(block.text).contains("v4l2:/dev/video10") {
            let report = (try? String(contentsOfFile: virtualCamera + ".txt", encoding: .utf8)) ?? ""
            let frames = report.split(separator: "\n").first { $0.hasPrefix("frames ") }.flatMap { Int($0.dropFirst(7)) } ?? 0
            if frames < 1 { found.append("\(place): no frame reached the virtual camera /dev/video10") }
        }
        for output in namedOutputs(block.text) {
            let file = output.path.hasPrefix("/") ? output.path : folder.appendingPathComponent(output.path).path
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            guard let size = attributes?[.size] as? Int, size > 0 else {
                found.append("\(place): \(output.path) was not written")
                continue
            }
            guard output.decodes else { continue }
            let frames = try decodedFrames(file)
            if frames < 1 { found.append("\(place): \(output.path) does not decode (ffprobe read \(frames) video frames)") }
        }
        return found
    }

    /// The environment that gives a block a camera at /dev/video0 and a v4l2loopback at /dev/video10, whose
    /// frames are appended to `recordingTo` (and counted in its `.txt`).
    static func emulatedCameras(recordingTo record: String) throws -> [String: String] {
        let library = try CameraTests.fakeLibrary()
        return ["LD_PRELOAD": library, "PRISM_FAKE_V4L2": "/dev/video0",
                "PRISM_FAKE_V4L2_1": "/dev/video10", "PRISM_FAKE_V4L2_1_CAPS": "loopback", "PRISM_FAKE_V4L2_1_RECORD": record]
    }

    /// Video frames ffprobe decodes from `file` (0 when it cannot read it).
    static func decodedFrames(_ file: String) throws -> Int {
        guard let ffprobe = Tools.which("ffprobe") else { throw InvalidRequest("this test needs ffprobe (scripts/install-deps --tests)") }
        let probe = try Tools.run(ffprobe, ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                            "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file])
        guard probe.status == 0 else { return 0 }
        // MPEG-TS and HLS list the stream under their program too: one count a line, the same count.
        let counts = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int($0) }
        return counts.first ?? 0
    }

    /// A folder holding `prism`, a link to the build under test, to put first on PATH.
    static func binFolder(in scratch: ScratchDirectory) throws -> URL {
        let bin = scratch.url.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("prism").path, withDestinationPath: Tools.prism)
        return bin
    }

    // MARK: The documentation's commands

    func testEveryRunnableCommandInTheDocsWorks() throws {
        let scratch = ScratchDirectory()
        let bin = try Self.binFolder(in: scratch)
        var ran = 0
        for document in Self.documents {
            let name = document.path.replacingOccurrences(of: Tools.repositoryRoot.path + "/", with: "")
            let blocks = Self.runnableBlocks(try String(contentsOf: document, encoding: .utf8), document: name)
            guard !blocks.isEmpty else { continue }
            let folder = scratch.url.appendingPathComponent(name.replacingOccurrences(of: "/", with: "-"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for block in blocks {
                for problem in try Self.problems(running: block, in: folder, binFolder: bin) { XCTFail(problem) }
                ran += 1
            }
        }
        // The marker is found: a rename of it must not turn this test into one that runs nothing.
        XCTAssertGreaterThanOrEqual(ran, 15, "only \(ran) runnable blocks found in README.md and docs/*.md")
    }

    /// A misspelt marker would leave a block silently unchecked.
    func testNoBlockHasAMisspeltMarker() throws {
        for document in Self.documents {
            let name = document.lastPathComponent
            for (info, block) in Self.fencedBlocks(try String(contentsOf: document, encoding: .utf8), document: name)
            where info != Self.marker && info.lowercased().contains("run") {
                XCTFail("\(name):\(block.line): fence info '\(info)' — the marker is '\(Self.marker)'")
            }
        }
    }

    // MARK: The checker itself can fail

    func testABrokenCommandIsReported() throws {
        let scratch = ScratchDirectory()
        let bin = try Self.binFolder(in: scratch)
        let markdown = """
            ```sh runnable
            prism run --frames 2 --size 64x36 -o ok.mp4
            ```

            ```sh runnable
            prism run --frames 2 --size 64x36 --filter 'sparkle' -o broken.mp4
            ```

            ```sh runnable
            prism run --frames 2 --size 64x36 -o written.mp4 # and a claim of a file it never writes:
            true -o never.mp4
            ```

            ```sh runnable
            printf 'not a movie' > fake.mp4; true -o fake.mp4
            ```

            ```sh runnable
            true -o v4l2:/dev/video10
            ```
            """
        let blocks = Self.runnableBlocks(markdown, document: "sample.md")
        XCTAssertEqual(blocks.map(\.line), [2, 6, 10, 15, 19])
        let results = try blocks.map { try Self.problems(running: $0, in: scratch.url, binFolder: bin) }
        XCTAssertEqual(results[0], [])
        XCTAssertTrue(results[1].first?.contains("exit status 2") == true, "\(results[1])")
        XCTAssertEqual(results[2], ["sample.md:10: never.mp4 was not written"])
        XCTAssertTrue(results[3].first?.contains("fake.mp4 does not decode") == true, "\(results[3])")
        XCTAssertEqual(results[4], ["sample.md:19: no frame reached the virtual camera /dev/video10"])
    }

    func testOutputsAreFoundInCommandLines() {
        let outputs = Self.namedOutputs("""
            prism run clip.mp4 -o 'my out.mp4' --faces-out faces.jsonl \\
                -o rtmp://127.0.0.1/live/x -o - --output-format nv12 | cat   # -o ignored.mp4
            prism run --frames 3 -o v4l2:/dev/video10; prism bench --chart "chart.svg"
            """)
        XCTAssertEqual(outputs.map(\.path), ["my out.mp4", "faces.jsonl", "chart.svg"])
        XCTAssertEqual(outputs.map(\.decodes), [true, false, false])
    }

    // MARK: What the docs may say

    /// docs/command-line.md's exit status table says what `prism manual` says (both from `ExitStatus.table`).
    func testTheExitStatusTableMatchesTheManualPage() throws {
        let manual = try Tools.run(Tools.prism, ["manual"])
        XCTAssertEqual(manual.status, 0, manual.stderr)
        var fromManual: [String] = []
        var inSection = false, lines: [String] = []
        for line in String(decoding: manual.stdout, as: UTF8.self).components(separatedBy: "\n") {
            if line.hasPrefix(".SH") { inSection = line == ".SH EXIT STATUS"; continue }
            if inSection && line != ".TP" { lines.append(Self.plainRoff(line)) }
        }
        for pair in stride(from: 0, to: lines.count - 1, by: 2) { fromManual.append("\(lines[pair]) \(lines[pair + 1])") }
        let page = try String(contentsOf: Tools.repositoryRoot.appendingPathComponent("docs/command-line.md"), encoding: .utf8)
        let fromDocs = page.components(separatedBy: "\n").compactMap { line -> String? in
            guard let row = line.wholeMatch(of: /\| (\d+) \| (.+) \|/) else { return nil }
            return "\(row.1) \(row.2.replacingOccurrences(of: "`", with: ""))"
        }
        XCTAssertFalse(fromManual.isEmpty, "no EXIT STATUS section in prism manual")
        XCTAssertEqual(fromDocs, fromManual)
    }

    /// Roff text as a reader sees it: fonts, escapes and groff's `\[uXXXX]` undone.
    static func plainRoff(_ text: String) -> String {
        var plain = text.replacingOccurrences(of: "\\fB", with: "").replacingOccurrences(of: "\\fR", with: "")
            .replacingOccurrences(of: "\\fI", with: "").replacingOccurrences(of: "\\-", with: "-")
            .replacingOccurrences(of: "\\&", with: "").replacingOccurrences(of: "\\e", with: "\\")
        while let match = plain.firstMatch(of: /\\\[u([0-9A-F]{4,6})\]/) {
            let scalar = UInt32(match.1, radix: 16).flatMap(Unicode.Scalar.init).map(String.init) ?? "?"
            plain.replaceSubrange(match.range, with: scalar)
        }
        return plain
    }

    /// Relative links resolve to files in the checkout (a user's clone has nothing beside it).
    func testLinksStayInsideTheCheckout() throws {
        let root = Tools.repositoryRoot.standardizedFileURL.path
        for document in Self.documents + [Tools.repositoryRoot.appendingPathComponent("BENCHMARKS.md")] {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in text.matches(of: /\]\(([^)\s#]+)(#[^)]*)?\)/) {
                let target = String(match.1)
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                let resolved = document.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL.path
                XCTAssertTrue(resolved.hasPrefix(root + "/"), "\(document.lastPathComponent): \(target) leaves the checkout")
                XCTAssertTrue(FileManager.default.fileExists(atPath: resolved), "\(document.lastPathComponent): \(target) does not exist")
            }
            XCTAssertFalse(text.contains("../shared"), "\(document.lastPathComponent) names ../shared")
        }
    }

    func testTheReadmeIsShortAndBenchmarksNameNoTicket() throws {
        let readme = try String(contentsOf: Tools.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThan(readme.components(separatedBy: "\n").count, 250)
        let benchmarks = try String(contentsOf: Tools.repositoryRoot.appendingPathComponent("BENCHMARKS.md"), encoding: .utf8)
        XCTAssertNil(benchmarks.firstMatch(of: /(?i)\bissues? \d+/).map { String($0.0) }, "BENCHMARKS.md names an issue")
    }
}
