import Foundation
import PrismCore
import PrismMedia

/// A frame on the live loop's time line: timestamps keep increasing across file loops.
struct LiveFrame: @unchecked Sendable {
    let frame: VideoFrame
    let pts: MediaTime
}

/// An endless source for the live loop: the test pattern, a camera, or a file reopened at its end with
/// its timestamps continued. Audio is dropped (the preview is video only). Used from one thread.
final class LiveSource: @unchecked Sendable {
    let info: SourceInfo
    private let input: DevInput
    private let patternSize: Size
    private let frameRate: Rational
    private var source: MediaSource
    /// Added to the current pass's timestamps.
    private var offset = MediaTime.zero
    private var lastPTS: MediaTime?
    private var lastDuration: MediaTime?
    private var framesThisPass = 0

    init(input: DevInput, patternSize: Size, frameRate: Rational) throws {
        self.input = input
        self.patternSize = patternSize
        self.frameRate = frameRate
        source = try Self.open(input, patternSize: patternSize, frameRate: frameRate)
        info = source.info
    }

    private static func open(_ input: DevInput, patternSize: Size, frameRate: Rational) throws -> MediaSource {
        switch input {
        case .pattern: return try TestPatternSource(size: patternSize, frameRate: frameRate, frameCount: nil)
        case .file(let path): return try MovieSource(url: path)
        case .camera(let path):
            return try CameraSource(path: path, configuration: .init(size: patternSize, frameRate: frameRate))
        }
    }

    /// The camera device in use; nil when the input is not a camera.
    var cameraPath: String? { (source as? CameraSource)?.path }

    /// Switches the camera between two frames (`CameraSource.switchDevice`: the new device is started
    /// before the old one stops, so a failure keeps the current one). Returns what changed and the new
    /// input's summary. The time line goes on: camera timestamps stay on one clock across the switch.
    func switchCamera(to path: String) throws -> (change: CameraSwitch, summary: String) {
        guard let camera = source as? CameraSource else { throw UsageError("the input is not a camera") }
        let change = try camera.switchDevice(to: path)
        return (change, camera.info.summary)
    }

    /// The next frame; loops files. Throws when a file cannot be reopened or holds no frames.
    func next() throws -> LiveFrame? {
        while true {
            guard let event = try source.next() else {
                guard case .file = input else { return nil }
                guard framesThisPass > 0 else { throw UsageError("\(info.summary): no video frames to loop") }
                // End of the file: continue the time line one frame after the last frame.
                let step = lastDuration ?? frameRate.inverted.asMediaTime
                offset = (lastPTS ?? .zero) + step
                source = try Self.open(input, patternSize: patternSize, frameRate: frameRate)
                framesThisPass = 0
                passStart = nil
                continue
            }
            guard case .video(let frame) = event else { continue }
            let first = passStart ?? frame.pts
            passStart = first
            let pts = offset + (frame.pts - first)
            if let lastPTS, pts <= lastPTS { continue }
            lastDuration = lastPTS.map { pts - $0 } ?? frame.duration
            lastPTS = pts
            framesThisPass += 1
            return LiveFrame(frame: frame, pts: pts)
        }
    }

    private var passStart: MediaTime?
}

extension Rational {
    /// One unit of this rational as a time (a frame period from an inverted rate).
    var asMediaTime: MediaTime { MediaTime(value: Int64(num), timescale: den) }
}
