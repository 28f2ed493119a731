import Foundation
import PrismCore
import XCTest
@testable import Prism

/// Every option whose usage lists its values (`--tonemap bt2390|reinhard|clip|none`) is parsed from the same
/// list: each value the usage shows is taken, and anything else is refused by a message listing exactly those
/// values. Read from every command's table, so an option added with a list is checked without a line here.
final class ChoiceListTests: XCTestCase {
    let dir = ScratchDirectory()

    /// The arguments each command needs before an option can be parsed.
    func leadingArguments(_ command: String) throws -> [String] {
        switch command {
        case "batch":
            let manifest = dir.path("jobs.jsonl")
            try "{\"input\": \"in.mp4\", \"output\": \"out.mp4\"}\n".write(toFile: manifest, atomically: true, encoding: .utf8)
            return [manifest]
        case "record":
            try FileManager.default.createDirectory(atPath: dir.path("takes"), withIntermediateDirectories: true)
            return [dir.path("takes")]
        case "dev":
            try "void main() { gl_FragColor = IMG_THIS_PIXEL(inputImage); }\n".write(toFile: dir.path("shader.fs"), atomically: true, encoding: .utf8)
            return [dir.path("shader.fs")]
        case "render": return [dir.path("in.png"), "-o", dir.path("out.png")]
        default: return []
        }
    }

    /// A placeholder that is a list of values (`a|b|c`), not a shape (`N`, `FILE`, `WxH`).
    static func choices(in placeholder: String) -> [String]? {
        let parts = placeholder.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLowercase || $0.isNumber } }) else { return nil }
        return parts
    }

    func testEveryListedValueIsTakenAndNothingElse() throws {
        var checked: [String] = []
        for type in PrismCommandLine.commandTypes {
            let spec = type.spec
            for option in spec.options where !option.hidden {
                guard let placeholder = option.value, let choices = Self.choices(in: placeholder) else { continue }
                let lead = try leadingArguments(spec.name)
                let refusal = "\(option.name) takes \(choices.dropLast().joined(separator: ", ")) or \(choices.last!), not 'bogus'"
                XCTAssertThrowsError(try type.init(arguments: lead + [option.name, "bogus"]), "\(spec.name) \(option.name) bogus") { error in
                    XCTAssertTrue("\(error)".hasPrefix(refusal), "\(spec.name): \(error) — expected \(refusal)")
                }
                for value in choices {
                    do {
                        _ = try type.init(arguments: lead + [option.name, value])
                    } catch {
                        // Other checks may refuse the combination; never the value itself.
                        XCTAssertFalse("\(error)".contains("\(option.name) takes"), "\(spec.name) \(option.name) \(value): \(error)")
                    }
                }
                checked.append("\(spec.name) \(option.name)")
            }
        }
        // The lists are found: a change to how options are declared must not leave this test checking nothing.
        for expected in ["run --tonemap", "run --dynamic-range", "run --playlist", "run --rtsp-transport", "batch --progress",
                         "run --segment-backend", "run --end", "run --readback"] {
            XCTAssertTrue(checked.contains(expected), "\(expected) not found among \(checked)")
        }
    }
}
