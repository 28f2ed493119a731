import XCTest
@testable import PrismMedia
import PrismCore

/// The tables that map Prism's formats and colour tags to FFmpeg's: every value has a tag it is written as,
/// and reading that tag back gives the value (a value left out of its table would otherwise fail only at
/// run time, when a frame in it is first written).
final class FormatMappingTests: XCTestCase {
    func testEveryValueIsWrittenAsATagThatReadsBackAsIt() {
        checkRoundTrip(PixelFormat.self)
        checkRoundTrip(ColorMatrix.self)
        checkRoundTrip(ColorPrimaries.self)
        checkRoundTrip(TransferFunction.self)
    }

    private func checkRoundTrip<T: AVTagged>(_ type: T.Type, file: StaticString = #filePath, line: UInt = #line) {
        for value in T.allCases {
            let entries = T.avTags.filter { $0.value == value }
            XCTAssertEqual(entries.count, 1, "\(value) is listed \(entries.count) times in \(T.self)'s table", file: file, line: line)
            guard let entry = entries.first, let written = entry.tags.first else { continue }
            XCTAssertEqual(T(av: written), value, "\(value) is written as a tag that reads back as something else", file: file, line: line)
        }
        // No tag names two values.
        let tags = T.avTags.flatMap(\.tags)
        for (index, tag) in tags.enumerated() {
            XCTAssertFalse(tags[(index + 1)...].contains(tag), "a tag of \(T.self) is listed twice", file: file, line: line)
        }
    }
}
