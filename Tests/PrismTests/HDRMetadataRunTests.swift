import Foundation
import XCTest
import PrismCore
import PrismMedia

/// HDR10 files whose metadata no display can have (as encoders and muxers do write it): the run goes on,
/// the value is ignored with a line naming its tag, and the tone mapping is the one for the metadata left.
final class HDRMetadataRunTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Three frames of 10-bit HEVC tagged BT.2020 PQ, with these x265 HDR10 parameters.
    func pqClip(_ name: String, _ metadata: String) throws -> String {
        let path = dir.path(name)
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30", "-vf", "format=yuv420p10le", "-frames:v", "3",
                          "-c:v", "libx265", "-x265-params", "log-level=error:hdr10=1:" + metadata,
                          "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-pix_fmt", "yuv420p10le", path])
        return path
    }

    func decoded(_ path: String) throws -> Data {
        let result = try Tools.run(try XCTUnwrap(Tools.which("ffmpeg")), ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    /// MaxCLL 65535 and no mastering display: ignored, said, and the picture is tone mapped exactly as for
    /// the default 1000 cd/m² peak (`--input-color peak=1000`); kept HDR, the value is not carried on.
    func testMaxCLL65535IsIgnoredNotARefusal() throws {
        let clip = try pqClip("cll.mp4", "max-cll=65535,400")
        let out = dir.path("cll-sdr.mp4"), reference = dir.path("reference.mp4")
        let run = try Tools.run(Tools.prism, ["run", clip, "-o", out])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("prism: \(clip): the content light level's MaxCLL of 65535 cd/m² is beyond PQ's 10000 cd/m²: ignored"),
                      run.stderr)
        XCTAssertTrue(run.stderr.contains("peak 1000 cd/m² assumed"), run.stderr)
        XCTAssertFalse(run.stderr.contains("from its metadata"), run.stderr)
        XCTAssertFalse(run.stderr.contains("peak must be"), run.stderr)
        let assumed = try Tools.run(Tools.prism, ["run", clip, "--input-color", "peak=1000", "-o", reference, "--quiet"])
        XCTAssertEqual(assumed.status, 0, assumed.stderr)
        XCTAssertEqual(try decoded(out), try decoded(reference), "tone mapped for the default peak")

        let kept = dir.path("cll-hdr.mkv")
        let hdr = try Tools.run(Tools.prism, ["run", clip, "--codec", "hevc", "-o", kept, "--quiet"])
        XCTAssertEqual(hdr.status, 0, hdr.stderr)
        let side = try Tools.run(try XCTUnwrap(Tools.which("ffprobe")), ["-v", "error", "-show_frames", "-read_intervals", "%+#1", kept])
        XCTAssertFalse(String(decoding: side.stdout, as: UTF8.self).contains("max_content=65535"), "the bogus MaxCLL is not written on")
    }

    /// A mastering display whose black (5000 cd/m²) is above its peak (1000): the black is ignored, the
    /// peak still comes from the metadata — and the message says so, naming no option the user did not set.
    func testAMasteringBlackAboveItsPeakIsIgnored() throws {
        let clip = try pqClip("black.mp4", "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50000000)")
        let run = try Tools.run(Tools.prism, ["run", clip, "-o", dir.path("black-sdr.mp4")])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("prism: \(clip): the mastering display's black (ST 2086 min_luminance) of 5000 cd/m² "
                                          + "is not below its peak of 1000 cd/m²: ignored"), run.stderr)
        XCTAssertTrue(run.stderr.contains("peak 1000 cd/m² from its metadata"), run.stderr)
        XCTAssertFalse(run.stderr.contains("black must be"), run.stderr)
        XCTAssertEqual(try MediaInspector.inspect(dir.path("black-sdr.mp4")).videoFrameCount, 3)
    }
}
