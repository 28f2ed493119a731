import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// Which URLs are network inputs, which schemes FFmpeg reads, and how messages show a URL with a password.
final class NetworkURLTests: XCTestCase {
    func testNetworkURLsAreTold() {
        for url in ["rtsp://127.0.0.1:8554/x", "RTMP://127.0.0.1/live/x", "srt://127.0.0.1:9000?mode=caller",
                    "udp://127.0.0.1:5000", "rtp://127.0.0.1:5004", "tcp://127.0.0.1:9000", "https://127.0.0.1/live.m3u8"] {
            XCTAssertTrue(NetworkURL.isNetwork(url), url)
        }
        for url in ["clip.mp4", "file:///tmp/clip.mp4", "pipe:0", "pipe://0", "/dev/video0", "img%03d.png"] {
            XCTAssertFalse(NetworkURL.isNetwork(url), url)
        }
        XCTAssertEqual(NetworkURL.scheme("RTMP://host/x"), "rtmp")
        XCTAssertNil(NetworkURL.scheme("://host"))
    }

    func testPasswordsAreNotShown() {
        XCTAssertEqual(NetworkURL.redacted("rtsp://admin:hunter2@127.0.0.1:554/stream?user=x"), "rtsp://admin:***@127.0.0.1:554/stream?user=x")
        XCTAssertEqual(NetworkURL.redacted("rtsp://admin@127.0.0.1/x"), "rtsp://admin@127.0.0.1/x")
        XCTAssertEqual(NetworkURL.redacted("http://127.0.0.1/a@b:c"), "http://127.0.0.1/a@b:c", "an @ after the host is not a user")
        XCTAssertEqual(NetworkURL.redacted("clip.mp4"), "clip.mp4")
    }

    func testSchemesFFmpegCannotReadAreRefusedBeforeOpening() {
        XCTAssertNoThrow(try NetworkURL.checkScheme("rtmp://127.0.0.1/live/x"))
        XCTAssertNoThrow(try NetworkURL.checkScheme("rtsp://127.0.0.1/x"))
        XCTAssertNoThrow(try NetworkURL.checkScheme("file:///tmp/x.mp4"))
        XCTAssertThrowsError(try NetworkURL.checkScheme("rtps://127.0.0.1/x")) { XCTAssertTrue("\($0)".contains("unknown protocol 'rtps'"), "\($0)") }
        XCTAssertThrowsError(try NetworkURL.checkScheme("srt://")) { XCTAssertTrue("\($0)".contains("no host"), "\($0)") }
    }
}
