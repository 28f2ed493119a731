import Synchronization
import XCTest
@testable import PrismFilters

/// The filter file formats: each file a graph names is read once per bind, and the binder, the
/// description and the watched files agree on which format a file is.
final class FilterFileFormatTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func write(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private var files: [(path: String, format: String)] {
        get throws {
            var cube = "LUT_3D_SIZE 2\n"
            for b in 0..<2 { for g in 0..<2 { for r in 0..<2 { cube += "\(r) \(g) \(b)\n" } } }
            return [
                (try write("level.fs", ISFTests.simpleFilter), "user shader"),
                (try write("plain.glsl", "out vec4 o;\nvoid main() { o = vec4(1.0); }"), "user shader"),
                (try write("sharpen.glsl", "//!PARAM strength\n//!TYPE float\n0.5\n//!HOOK MAIN\n//!BIND HOOKED\n"
                           + "vec4 hook() { return HOOKED_tex(HOOKED_pos) * strength; }"), "mpv hook file"),
                (try write("same.CUBE", cube), "LUT"),
            ]
        }
    }

    /// How many times each file was read.
    private final class Reads: Sendable {
        let counts = Mutex<[String: Int]>([:])
    }

    /// The registry's formats, each counting the files it reads.
    private func countingFormats(_ reads: Reads) -> [FilterFileFormat] {
        FilterFileFormat.all.map { format in
            FilterFileFormat(name: format.name, extensions: format.extensions, describesMissingFiles: format.describesMissingFiles) { path in
                let file = try format.read(path)
                if file != nil { reads.counts.withLock { $0[path, default: 0] += 1 } }
                return file
            }
        }
    }

    func testEachFileIsReadOncePerBind() throws {
        let reads = Reads()
        var binder = GraphBinder()
        binder.fileFormats = countingFormats(reads)
        let files = try files
        for (path, _) in files {
            _ = try binder.bind("\"\(path)\"")
        }
        // Typed arguments still come from the one read.
        _ = try binder.bind("\"\(files[0].path)\"(0.25), \"\(files[2].path)\"(strength=1)")
        XCTAssertThrowsError(try binder.bind("\"\(files[0].path)\"(wobble=1)")) { error in
            XCTAssertTrue("\(error)".contains("has no parameter 'wobble' (it takes level)"), "\(error)")
        }
        reads.counts.withLock { counts in
            for (path, _) in files {
                let expected = path == files[0].path ? 3 : path == files[2].path ? 2 : 1
                XCTAssertEqual(counts[path], expected, (path as NSString).lastPathComponent)
            }
        }
    }

    func testTheBinderAndTheDescriptionAgreeOnTheFormat() throws {
        for (path, formatName) in try files {
            let file = try XCTUnwrap(FilterFileFormat.read(path), path)
            let format = try XCTUnwrap(FilterFileFormat.all.first { $0.matches(path) && (try? $0.read(path)) != nil })
            XCTAssertEqual(format.name, formatName, path)
            let kernel = try GraphBinder().bind("\"\(path)\"").nodes[0].kernel
            switch formatName {
            case "user shader": XCTAssertTrue(kernel is UserShaderKernel, path)
            case "mpv hook file": XCTAssertTrue(kernel is HookKernel, path)
            default: XCTAssertEqual(file.name, "lut")
            }
            let summary = try FilterFileFormat.describe(path)
            XCTAssertEqual(summary == nil, formatName == "LUT", path)
            XCTAssertTrue(file.watchedFiles.contains(path), path)
        }
        XCTAssertNil(try FilterFileFormat.read(directory.appendingPathComponent("notes.txt").path))
        XCTAssertNil(try FilterFileFormat.describe(directory.appendingPathComponent("missing.fs").path),
                     "a missing shader is not described: the name is looked up as a built-in")
        XCTAssertThrowsError(try GraphBinder().bind("\"\(directory.appendingPathComponent("notes.txt").path)\"")) { error in
            XCTAssertTrue("\(error)".contains("not a filter file"), "\(error)")
        }
    }
}
