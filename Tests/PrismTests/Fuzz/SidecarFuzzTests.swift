import Foundation
import PrismCore
import PrismVision
import XCTest

/// The faces sidecar (`--faces-in`) under the seeded mutation fuzzer: every input either reads or fails
/// with one line that names the file and line; nothing traps.
final class SidecarFuzzTests: XCTestCase {
    static let corpus = [
        #"{"frame":0,"pts":"0/1","size":[512,512],"faces":[{"id":1,"box":[120,80,96,96],"score":24}]}"#,
        #"{"frame":0,"pts":"0/1","faces":[]}"# + "\n" + #"{"frame":1,"pts":"1/30","faces":[{"id":2,"box":[1,2,3,4]}]}"#,
        #"{"pts":"1001/30000","size":[640,360],"faces":[{"id":7,"box":[0,0,640,360],"score":1e308}]}"#,
        // Regression inputs: huge, negative, non-finite and missing values; a duplicate pts.
        #"{"pts":"1/0","faces":[]}"#,
        #"{"pts":"0/1","faces":[{"id":-1,"box":[1e309,-5,0,0]}]}"#,
        #"{"pts":"0/1","faces":[{"box":[1,2,3]}]}"# + "\n" + #"{"pts":"0/1","faces":[]}"#,
        #"{"pts":"99999999999999999999/1","faces":null}"#,
    ]
    static let dictionary = ["{", "}", "[", "]", ":", ",", "\"pts\"", "\"faces\"", "\"box\"", "\"id\"", "\"score\"",
                             "\"size\"", "1e309", "-1", "0/0", "NaN", "null", "\n", "9223372036854775808"]

    func testFuzzFaceSidecars() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sidecar-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("faces.jsonl").path
        var read = 0
        let tried = Fuzzer(corpus: Self.corpus, dictionary: Self.dictionary).run("sidecar") { text in
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
            do {
                _ = try FaceSidecar.read(path: path)
                read += 1
            } catch {
                assertOneLine(error, text)
                XCTAssert("\(error)".contains(path), "errors name the file: \(error)")
            }
        }
        XCTAssertGreaterThan(read, 1, "the valid corpus entries read")
        print("fuzz sidecar: \(tried) inputs, \(read) read")
    }
}
