import Foundation
import XCTest
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// Playlist names against the files already in their folder, under a seeded fuzzer: folders filled with
/// files whose names are segments of this playlist or of others (regular files, links to a file outside,
/// folders, FIFOs, a list of written files that is garbage), some of them the run's inputs, other outputs
/// or sidecars; then the checks a run makes (`checkSegmentNames`) and the HLS or DASH writer itself, run
/// to its end or aborted, once or twice. Whatever happens, nothing Prism did not write is deleted or
/// changed, and every refusal is one line. Deterministic (`PRISM_FUZZ_SEED`), bounded (`PRISM_FUZZ_SECONDS`).
final class PlaylistNameFuzzTests: XCTestCase {
    static let names = ["live", "live0", "show", "a", "a-0", "x y", "l"]
    static let kinds = ["m3u8", "m3u8 fmp4", "mpd"]

    /// What a folder entry is, to compare before and after.
    struct Fingerprint: Equatable {
        let type: mode_t, inode: ino_t, bytes: Data?, link: String?

        init?(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            type = info.st_mode & S_IFMT
            inode = info.st_ino
            bytes = type == S_IFREG ? FileManager.default.contents(atPath: path) : nil
            link = type == S_IFLNK ? try? FileManager.default.destinationOfSymbolicLink(atPath: path) : nil
        }
    }

    func testFuzzPlaylistNamesAgainstExistingFiles() throws {
        var random = Fuzzer.Generator(state: Fuzzer(corpus: [], dictionary: []).seed)
        let budget = Fuzzer(corpus: [], dictionary: []).seconds
        let root = ScratchDirectory()
        let victim = root.path("victim.ts")
        try Data("outside the folder".utf8).write(to: URL(fileURLWithPath: victim))
        let start = Date()
        var runs = 0, refusals = 0, rounds = 0
        while rounds < 6 || Date().timeIntervalSince(start) < budget {
            if rounds >= 200 { break }
            rounds += 1
            let folder = root.path("round\(rounds)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let name = Self.names.randomElement(using: &random)!, kind = Self.kinds.randomElement(using: &random)!
            let playlistExtension = String(kind.prefix { $0 != " " })
            let playlist = folder + "/" + name + "." + playlistExtension
            // An earlier run of this playlist, sometimes: its files are the ones a later run may delete.
            var ours = Set<String>()
            if Bool.random(using: &random), (try? write(playlist, kind: kind, frames: 4, abort: false)) != nil {
                ours = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
            }
            // Other files: names of this playlist's segments and of others', of several kinds.
            var others: [(what: String, path: String)] = []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let other = Self.names.randomElement(using: &random)!
                let suffixes: [String] = ["0.ts", "7.ts", "-init.mp4", "3.m4s", "-init-0.m4s", "-0-00002.m4s", "5.ts.tmp", ".m3u8", "stock.ts"]
                let entries: [String] = suffixes.map { other + $0 } + ["." + name + ".m3u8.written", "." + name + ".mpd.written", "notes.txt"]
                let entry = entries.randomElement(using: &random)!
                let path = folder + "/" + entry
                guard path != playlist else { continue }  // the output itself (a run refuses it as its input or twice)
                guard Fingerprint(path) == nil else {
                    // An earlier run's file as this run's input or other output.
                    if Bool.random(using: &random) { others.append(("-o", path)) }
                    continue
                }
                switch Int.random(in: 0..<6, using: &random) {
                case 0: _ = symlink(victim, path)
                case 1: _ = mkdir(path, 0o755)
                case 2: _ = mkfifo(path, 0o644)
                default: try Data("someone's \(entry)".utf8).write(to: URL(fileURLWithPath: path))
                }
                if Bool.random(using: &random) { others.append((["the input", "-o", "--faces-out"].randomElement(using: &random)!, path)) }
            }
            if Bool.random(using: &random) { others.append(("-o", folder + "/" + Self.names.randomElement(using: &random)! + "1.ts")) }
            let before = try snapshot(folder)
            let victimBefore = Fingerprint(victim)

            // The run's checks, then the writer: refused in one line, or written (and maybe aborted).
            var refused = false
            let destination = try MovieDestination(playlist)
            for other in others {
                do { try destination.checkSegmentNames(against: other.path, as: other.what) } catch {
                    assertOneLine(error, playlist)
                    refused = true
                    break
                }
            }
            if !refused {
                do {
                    try write(playlist, kind: kind, frames: Int.random(in: 1...6, using: &random), abort: Bool.random(using: &random))
                    runs += 1
                } catch {
                    assertOneLine(error, playlist)
                    refused = true
                }
            }
            if refused { refusals += 1 }

            // Nothing that was there, except an earlier run's own files, changed or went; the named others
            // (inputs, outputs, sidecars) not at all; nothing outside the folder.
            let after = try snapshot(folder)
            for (entry, print) in before {
                let named = others.contains { ($0.path as NSString).lastPathComponent == entry }
                if ours.contains(entry) && !named {
                    // An earlier run's own file: replaced or deleted by a run, untouched by a refused one.
                    if refused { XCTAssertEqual(after[entry], print, "round \(rounds): \(entry), an earlier run's, changed in a refused run") }
                } else {
                    XCTAssertEqual(after[entry], print, "round \(rounds) (\(playlist)): \(entry) was touched; others \(others)")
                }
            }
            XCTAssertEqual(Fingerprint(victim), victimBefore, "round \(rounds): written through a link")
        }
        XCTAssertGreaterThan(runs, 0)
        XCTAssertGreaterThan(refusals, 0)
        print("fuzz playlist names: \(rounds) folders, \(runs) runs, \(refusals) refused")
    }

    private func snapshot(_ folder: String) throws -> [String: Fingerprint] {
        var result: [String: Fingerprint] = [:]
        for entry in try FileManager.default.contentsOfDirectory(atPath: folder) { result[entry] = Fingerprint(folder + "/" + entry) }
        return result
    }

    /// The playlist written by the writer itself: `frames` 64x48 frames, each a keyframe and a segment.
    private func write(_ playlist: String, kind: String, frames: Int, abort: Bool) throws {
        var settings = VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 30)
        settings.gopSize = 1
        var cut = PlaylistSettings()
        cut.segmentSeconds = 0.03
        cut.kind = .event
        cut.fragmentedMP4 = kind != "m3u8"
        let size = Size(width: 64, height: 48)
        let pattern = try TestPatternSource(size: size, frameRate: Rational(30, 1), frameCount: frames)
        let pool = FrameBufferPool(format: settings.pixelFormat, size: size, capacity: 2)!
        let writer = try MovieWriter(path: playlist, video: VideoStreamConfig(size: size, timeBase: pattern.info.timeBase,
                                                                               frameRate: Rational(30, 1), colorSpace: pattern.info.colorSpace),
                                     settings: settings, playlist: cut)
        while let frame = pattern.nextFrame() {
            let buffer = try pool.acquire(timeout: 10)
            try frame.copy(into: buffer)
            try writer.writeVideo(buffer, pts: frame.pts, duration: frame.duration)
        }
        if abort { writer.abort() } else { try writer.finish() }
    }
}
