import CFFmpeg
import PrismCore

/// What a source delivers: video frames, and for movies the first audio stream's compressed packets.
package enum SourceEvent: Sendable {
    /// A decoded (or captured) video frame.
    case video(VideoFrame)
    /// A compressed packet of the first audio stream, passed through untouched.
    case audio(AudioPacket)
}

/// A producer of frames (movie file or stream, test pattern, raw pipe, camera). Pull-based: call
/// `next()` until it returns nil (end of stream). Sources are used from one thread at a time.
package protocol MediaSource: AnyObject {
    /// What the source produces: size, pixel format, rate, time base, audio, colours.
    var info: SourceInfo { get }
    /// The next frame or audio packet; nil at the end of the stream. Throws on unreadable input (and, under
    /// `--strict-decode`, on damaged input; otherwise damage is skipped and counted in `decodeDamage`).
    func next() throws -> SourceEvent?
    /// What the source's decoders skipped (nil: a source that decodes nothing that can be damaged).
    var decodeDamage: DecodeDamage? { get }
}

extension MediaSource {
    /// By default a source has no decoder whose input can be damaged.
    package var decodeDamage: DecodeDamage? { nil }
}

/// What a source produces.
public struct SourceInfo: Sendable, CustomStringConvertible {
    /// Frame size in pixels, as stored (before any `orientation` is applied).
    public var size: Size
    /// The format of the `VideoFrame`s `next()` returns.
    public var pixelFormat: PixelFormat
    /// Nominal frame rate, when the source declares one (variable-rate movies may still have one).
    public var frameRate: Rational?
    /// The time base video timestamps are counted in (the stream's, for movies).
    public var timeBase: Rational
    /// The length of the input, when known (nil for cameras and other inputs of unknown length).
    public var duration: MediaTime?
    /// How many frames to expect, when it can be told (for progress); nil when unknown.
    public var estimatedFrameCount: Int?
    /// `estimatedFrameCount` is the stream header's own count, not duration × rate (which a variable
    /// frame rate makes wrong).
    public var frameCountFromHeader = false
    /// True for sources that run in real time and may drop frames (cameras, network streams).
    public var isLive: Bool
    /// The audio stream whose packets `next()` passes through, if any.
    public var audio: AudioStreamInfo?
    /// The Y'CbCr matrix and range of the frames (as tagged, or guessed for untagged video).
    public var colorSpace: YUVColorSpace {
        get { color.space }
        set { color.space = newValue }
    }
    /// All of the signal's colour: coding, primaries, transfer, HDR metadata, and what was guessed.
    public var color: VideoColor
    /// One line for logs: what the source is.
    public var summary: String
    /// How the frames must be turned to be shown upright (a phone movie's display matrix); `.upright`
    /// for everything else.
    public var orientation = DisplayOrientation.upright
    /// A display matrix turned by an angle that is not a quarter turn (clockwise degrees): not applied.
    public var unsupportedRotation: Double?
    /// What the source found worth a line before the run, one line each (HDR metadata it ignored).
    public var notes: [String] = []

    /// The description of a source; `colorSpace` nil guesses limited range with the size's usual matrix.
    public init(size: Size, pixelFormat: PixelFormat, frameRate: Rational?, timeBase: Rational,
                duration: MediaTime?, estimatedFrameCount: Int?, isLive: Bool, audio: AudioStreamInfo? = nil,
                colorSpace: YUVColorSpace? = nil, summary: String) {
        self.size = size
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.timeBase = timeBase
        self.duration = duration
        self.estimatedFrameCount = estimatedFrameCount
        self.isLive = isLive
        self.audio = audio
        color = .sdr(colorSpace ?? YUVColorSpace(matrix: .defaultFor(size), range: .limited), size: size)
        self.summary = summary
    }

    public var description: String { summary }
}

/// How a stored picture is meant to be shown: turned clockwise by a quarter-turn multiple, then mirrored
/// (left and right swapped) when `mirrored` — the two transforms any display matrix of right angles and
/// flips reduces to.
public struct DisplayOrientation: Sendable, Equatable, CustomStringConvertible {
    /// Clockwise degrees: 0, 90, 180 or 270.
    public var clockwiseDegrees: Int
    /// Then left and right swapped.
    public var mirrored: Bool
    /// An orientation; `clockwiseDegrees` is normalised into 0..<360 and rounded down to a quarter turn.
    public init(clockwiseDegrees: Int, mirrored: Bool = false) {
        let quarter = ((clockwiseDegrees % 360) + 360) % 360
        self.clockwiseDegrees = quarter / 90 * 90
        self.mirrored = mirrored
    }
    /// No turn and no mirror: the picture as stored.
    public static let upright = DisplayOrientation(clockwiseDegrees: 0)
    /// True when the picture is shown as stored.
    public var isUpright: Bool { clockwiseDegrees == 0 && !mirrored }
    public var description: String {
        switch (clockwiseDegrees, mirrored) {
        case (0, false): return "upright"
        case (0, true): return "mirrored"
        case (let degrees, false): return "rotated \(degrees)° clockwise"
        case (let degrees, true): return "rotated \(degrees)° clockwise and mirrored"
        }
    }

    /// A display matrix (`AV_PKT_DATA_DISPLAYMATRIX`: nine 32-bit values, 16.16 fixed point but the last
    /// column) read as FFmpeg's command-line autorotation reads it: the angle of `av_display_rotation_get`
    /// (counter-clockwise, so negated), and the signs of the matrix's entries for the flips (a 180° angle
    /// with only the first column negative is a horizontal flip, not a turn). An angle that is not a
    /// quarter turn is returned as `unsupportedDegrees` with the picture left upright.
    public static func from(displayMatrix matrix: UnsafePointer<Int32>) -> (orientation: DisplayOrientation, unsupportedDegrees: Double?) {
        var theta = -av_display_rotation_get(matrix).rounded()
        guard theta.isFinite else { return (.upright, nil) }
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        func near(_ degrees: Double) -> Bool { abs(theta - degrees) < 1 }
        if near(90) { return (DisplayOrientation(clockwiseDegrees: 90, mirrored: matrix[3] > 0), nil) }
        if near(270) { return (DisplayOrientation(clockwiseDegrees: 270, mirrored: matrix[3] < 0), nil) }
        if near(180) {
            // hflip when the first column is negative, vflip when the second is: both make a half turn,
            // a vflip alone is a half turn and a mirror.
            switch (matrix[0] < 0, matrix[4] < 0) {
            case (true, true): return (DisplayOrientation(clockwiseDegrees: 180), nil)
            case (true, false): return (DisplayOrientation(clockwiseDegrees: 0, mirrored: true), nil)
            case (false, true): return (DisplayOrientation(clockwiseDegrees: 180, mirrored: true), nil)
            case (false, false): return (.upright, nil)
            }
        }
        if near(0) || near(360) {
            return (matrix[4] < 0 ? DisplayOrientation(clockwiseDegrees: 180, mirrored: true) : .upright, nil)
        }
        return (.upright, theta)
    }
}
