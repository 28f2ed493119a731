import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lines of a JSON Lines file (manifests, results files), found with `memchr`: a huge line costs one
/// scan before its length is checked, not a split into copies.
enum JSONLines {
    /// `value` as one line: sorted keys, slashes as they are, and the newline.
    static func line(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value) + [0x0A]
    }

    /// Calls `body` with each line's number (from 1) and bytes (without the newline; a last line without
    /// one counts), valid during the call only.
    static func forEach(in data: Data, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> Void in
            guard let base = bytes.baseAddress else { return }
            var start = 0, number = 0
            while start < bytes.count {
                number += 1
                var end = bytes.count
                if let newline = memchr(base + start, 0x0A, bytes.count - start) {
                    end = base.distance(to: UnsafeRawPointer(newline))
                }
                try body(number, UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end + 1
            }
        }
    }
}
