import Foundation
import XCTest
import PrismCore
import TestFixtures

/// The C library and the GStreamer element as `scripts/install-lib` installs them (from the debug build the
/// tests run against), once per test run, into `.build/library-tests/prefix`; and what the library tests share:
/// `prism run`'s frames to compare with, an ISF shader, a short clip of OpenCV's footage.
enum InstalledLibrary {
    static let folder = Tools.repositoryRoot.appendingPathComponent(".build/library-tests")

    /// The installation's prefix; installed at first use (a failure fails every test that needs it).
    static let prefix: Result<String, any Error> = Result {
        let prefix = folder.appendingPathComponent("prefix").path
        try? FileManager.default.removeItem(atPath: prefix)
        let install = try Tools.run(Tools.repositoryRoot.appendingPathComponent("scripts/install-lib").path,
                                    ["--debug", "--no-build", prefix], timeout: 300)
        guard install.status == 0 else {
            throw InvalidRequest("scripts/install-lib failed: \(install.stderr) \(String(decoding: install.stdout, as: UTF8.self))")
        }
        return prefix
    }

    /// The environment a user's program runs in: PKG_CONFIG_PATH and GST_PLUGIN_PATH into the prefix, and no
    /// LD_LIBRARY_PATH (the library finds its Swift runtime by itself).
    static func environment() throws -> [String: String] {
        let prefix = try prefix.get()
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = nil
        environment["PKG_CONFIG_PATH"] = prefix + "/lib/pkgconfig"
        environment["GST_PLUGIN_PATH"] = prefix + "/lib/gstreamer-1.0"
        // A registry of the tests' own, so an element built by another checkout is never taken from a cache.
        environment["GST_REGISTRY"] = folder.appendingPathComponent("registry.bin").path
        return environment
    }

    /// Runs `executable` in `environment()` (nothing of this process's LD_LIBRARY_PATH).
    static func run(_ executable: String, _ arguments: [String], extra: [String: String] = [:], timeout: TimeInterval = 600) throws -> ProcessResult {
        let environment = try environment().merging(extra) { $1 }
        return try Tools.run("/usr/bin/env", ["-i"] + environment.map { "\($0.key)=\($0.value)" }.sorted() + [executable] + arguments,
                             timeout: timeout)
    }

    /// `prism_frames` (Tests/Library/prism_frames.c) compiled as a user compiles against the installed
    /// library: `cc … $(pkg-config --cflags --libs prism)`.
    static let cProgram: Result<String, any Error> = Result {
        _ = try prefix.get()
        let output = folder.appendingPathComponent("prism_frames").path
        let source = Tools.repositoryRoot.appendingPathComponent("Tests/Library/prism_frames.c").path
        let build = try run("/bin/sh", ["-c", "cc -Wall -Wextra -Werror -o '\(output)' '\(source)' $(pkg-config --cflags --libs prism) -lpthread"
                                        + " -Wl,-rpath,$(pkg-config --variable=libdir prism)"])
        guard build.status == 0 else { throw InvalidRequest("prism_frames does not build: \(build.stderr)") }
        return output
    }

    /// A short clip of OpenCV's Megamind.avi (720x528, faces): its first `frames` frames in H.264 at 25 fps.
    /// Re-encoded because the AVI's packed B-frames get other timestamps (and an extra frame) from GStreamer's
    /// demuxer than from FFmpeg's; at 25 fps every timestamp is whole milliseconds, so a TIME-driven shader sees
    /// the same times whether they count nanoseconds (GStreamer) or the file's ticks.
    static func megamind(frames: Int, in directory: ScratchDirectory) throws -> String {
        let clip = directory.path("megamind.mp4")
        try Tools.ffmpeg(["-i", try TestFixtures.opencv("Megamind.avi"), "-map", "0:v", "-frames:v", String(frames),
                          "-vf", "setpts=N/25/TB", "-r", "25", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "18",
                          "-pix_fmt", "yuv420p", clip])
        return clip
    }

    /// An ISF shader that reads TIME (so frames must keep their timestamps to agree) and a parameter.
    static func isfShader(in directory: ScratchDirectory) throws -> String {
        let path = directory.path("ripple.fs")
        try """
        /*{ "DESCRIPTION": "a ripple whose phase follows TIME, tinted", "CATEGORIES": ["Distortion"],
            "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" },
                        { "NAME": "amount", "TYPE": "float", "DEFAULT": 0.01, "MIN": 0.0, "MAX": 0.05 },
                        { "NAME": "tint", "TYPE": "color", "DEFAULT": [1.0, 0.9, 0.8, 1.0] } ] }*/
        void main() {
            vec2 uv = isf_FragNormCoord;
            uv.x += amount * sin(uv.y * 40.0 + TIME * 6.0);
            gl_FragColor = IMG_NORM_PIXEL(inputImage, uv) * tint;
        }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `prism run INPUT --filter GRAPH … -o - --output-format FORMAT`'s frames: the reference every way in is
    /// compared with.
    static func prismRun(_ input: String, _ graph: String, _ options: [String] = [], format: String = "rgba",
                         stdin: Data? = nil) throws -> Data {
        let run = try Tools.run(Tools.prism, ["run", input, "--filter", graph] + options + ["-o", "-", "--output-format", format, "--quiet"],
                                stdin: stdin, timeout: 600)
        guard run.status == 0 else { throw InvalidRequest("prism run failed: \(run.stderr)") }
        return run.stdout
    }

    /// Asserts two runs' frames are the same bytes, naming the first frame and pixel that differ.
    static func assertSameFrames(_ got: Data, _ expected: Data, frameBytes: Int, _ what: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThan(expected.count, 0, "\(what): the reference is empty", file: file, line: line)
        XCTAssertEqual(got.count, expected.count, "\(what): \(got.count / max(1, frameBytes)) frames, prism run gave "
                       + "\(expected.count / max(1, frameBytes))", file: file, line: line)
        guard got.count == expected.count, got != expected else { return }
        var differing = 0, largest = 0, first: Int?
        let a = [UInt8](got), b = [UInt8](expected)
        for index in a.indices where a[index] != b[index] {
            differing += 1
            largest = max(largest, abs(Int(a[index]) - Int(b[index])))
            if first == nil { first = index }
        }
        XCTFail("\(what): \(differing) bytes differ (up to \(largest)); the first in frame \(first! / frameBytes), "
                + "byte \(first! % frameBytes)", file: file, line: line)
    }
}
