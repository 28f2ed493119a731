import Foundation
import PrismCore
import PrismPipeline

#if canImport(Glibc)
import Glibc
#endif

/// Lines read from a file descriptor (`record`'s stdin), each held only up to `limit` bytes: a longer
/// line is read on and dropped as it comes (memory stays bounded whatever arrives) and reported by its
/// length and a short prefix.
struct BoundedLineReader {
    enum Line: Equatable {
        case text(String)
        /// A line over the limit: its first bytes and its whole length.
        case overlong(prefix: String, bytes: Int)
    }

    /// A command line's longest: a `camera` command with a path of PATH_MAX bytes fits.
    static let defaultLimit = 8192

    let descriptor: Int32
    let limit: Int
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private var atEnd = false

    init(descriptor: Int32, limit: Int = defaultLimit) {
        self.descriptor = descriptor
        self.limit = limit
    }

    /// The next line (without its newline; a last line without one counts), nil at the end of input.
    mutating func next() -> Line? {
        var skipped = 0  // bytes of an overlong line dropped so far
        var prefix = ""
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if skipped > 0 { return .overlong(prefix: prefix, bytes: skipped + line.count) }
                guard line.count <= limit else { return .overlong(prefix: Self.prefix(line), bytes: line.count) }
                return .text(String(decoding: line, as: UTF8.self))
            }
            if buffer.count > limit {
                // No newline within the limit: keep the start for the message, drop the rest as it comes.
                if skipped == 0 { prefix = Self.prefix(buffer) }
                skipped += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            if atEnd {
                if skipped > 0 { return .overlong(prefix: prefix, bytes: skipped + buffer.count) }
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return .text(String(decoding: buffer, as: UTF8.self))
            }
            let count = retryingEINTR { chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
            } else {
                atEnd = true  // the end, or an error reading: either way no more commands
            }
        }
    }

    /// The first bytes of a line, for a message.
    private static func prefix(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(RecordInput.echoLimit), as: UTF8.self)
    }
}

/// What a line of `record`'s stdin asks for.
enum RecordInput: Equatable {
    case command(TakeController.Command)
    case empty
    /// Not a command: the message to show (bounded, escaped by the printer).
    case refused(String)

    /// How much of a line a message quotes.
    static let echoLimit = 80
    static let commands = "start, stop, toggle, snap, camera DEVICE, quit"

    init(_ line: BoundedLineReader.Line) {
        switch line {
        case .overlong(let prefix, let bytes):
            self = .refused("line of \(bytes) bytes skipped (a command is at most \(BoundedLineReader.defaultLimit) bytes): "
                            + "'\(prefix)…'")
        case .text(let text):
            let words = text.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            switch words.first?.lowercased() {
            case "start": self = .command(.start)
            case "stop": self = .command(.stop)
            case "toggle": self = .command(.toggle)
            case "snap", "photo": self = .command(.snap)
            case "camera" where words.count == 2: self = .command(.camera(InputSpec.cameraPath(words[1]) ?? words[1]))
            case "quit", "exit": self = .command(.quit)
            case nil: self = .empty
            default:
                let quoted = text.count > Self.echoLimit ? String(text.prefix(Self.echoLimit)) + "…" : text
                self = .refused("unknown command '\(quoted)' (\(Self.commands))")
            }
        }
    }
}
