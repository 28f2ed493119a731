import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// Where frames come from.
public enum InputSpec: Sendable, Equatable {
    /// The built-in moving test pattern.
    case pattern
    /// Anything libavformat opens: a path or a URL.
    case movie(String)
    /// Raw frames on standard input, described by `--input-format`.
    case standardInput(RawVideoFormat)
    /// A V4L2 camera (`/dev/videoN`, or any device path given as `v4l2:PATH`).
    case camera(String)

    /// An INPUT argument naming a camera: a path under /dev/video, or `v4l2:` and a device path.
    static func cameraPath(_ argument: String) -> String? {
        if argument.hasPrefix("v4l2:") { return String(argument.dropFirst(5)) }
        return argument.hasPrefix("/dev/video") ? argument : nil
    }
}

/// Where frames go.
public enum OutputSpec: Sendable, Equatable {
    /// A movie file; its extension picks the container.
    case movie(String)
    /// Raw frames on standard output in this pixel format.
    case standardOutput(PixelFormat)
    /// Frames packed in this format and read back, then dropped: the whole GPU path without an output
    /// (what benchmarks compare with FFmpeg's `-f null`).
    case discard(PixelFormat)
}

/// Everything `prism run` was asked to do, validated.
public struct RunOptions: Sendable {
    public var input: InputSpec = .pattern
    public var output: OutputSpec = .movie("out.mp4")
    /// Filter graph text (`invert, mono`); empty for none.
    public var filter: String = ""
    public var encoder = VideoEncoderSettings()
    /// Output size: the pattern's size, the size asked of a camera (and kept by a final scale if the camera
    /// gives another), or a final scale for other inputs.
    public var size: Size?
    /// The pattern's rate, the rate asked of a camera, or the constant rate a movie or raw input is converted to.
    public var frameRate: Rational?
    /// Stop after this many frames.
    public var frameLimit: Int?
    /// Stop after this much input time.
    public var durationLimit: MediaTime?
    public var gpu = GPUOptions()
    /// nil: the engine's choice for the driver.
    public var readback: ReadbackStrategy?
    public var fuse = true
    public var quiet = false
    public var stats = false
    /// Show the live progress line (on when stderr is a terminal and not quiet).
    public var progress = false
    /// Camera input: switch to this device once this many frames have been read (a hidden flag for the
    /// end-to-end test of `Pipeline.switchCamera`, the runtime device switch).
    public var cameraSwitch: (afterFrames: Int, path: String)?
    /// `--audio DEVICE`: record from this ALSA capture PCM (`default`, `hw:1,0`, any configured PCM) into
    /// the movie as AAC, on the video's time line. Only with the camera or the pattern (live sources on
    /// CLOCK_MONOTONIC); a movie or raw input is refused (its time line is not the clock's).
    public var audioDevice: String?
    /// `--face-model`, `--face-every`, `--faces-in`, `--faces-out` (see `FaceOptions`).
    public var faces = FaceOptions()

    public init() {}

    /// Frames of the pattern when nothing else bounds the run (10 s at its rate).
    static let defaultPatternSeconds = 10
}
