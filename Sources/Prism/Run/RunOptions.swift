import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline

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
    /// `--rgb-route`: every graph through R'G'B' (see `CompileOptions.yuvRoute`).
    public var yuvRoute = true
    public var quiet = false
    public var stats = false
    /// Show the live progress line (on when stderr is a terminal and not quiet).
    public var progress = false
    /// Camera input: switch to this device once this many frames have been read (a hidden flag for the
    /// end-to-end test of `FrameEngine.switchCamera`, the runtime device switch).
    public var cameraSwitch: (afterFrames: Int, path: String)?
    /// `--audio DEVICE`: record from this ALSA capture PCM (`default`, `hw:1,0`, any configured PCM) into
    /// the movie as AAC, on the video's time line. Only with the camera or the pattern (live sources on
    /// CLOCK_MONOTONIC); a movie or raw input is refused (its time line is not the clock's).
    public var audioDevice: String?
    /// `--max-size`, `--min-free`: limits that end a recording cleanly.
    public var limits = RecordingLimits()
    /// `--progress json`: one JSON object per line for programs, instead of the terminal line.
    public var jsonProgress = false
    /// Turn a movie upright by its display matrix (off: `--no-autorotate`, frames as stored).
    public var autorotate = true
    /// `--mirror`: swap left and right (a front-facing camera shown as a mirror shows it).
    public var mirror = false
    /// `--face-model`, `--face-every`, `--faces-in`, `--faces-out` (see `FaceOptions`).
    public var faces = FaceOptions()

    public init() {}

    /// Frames of the pattern when nothing else bounds the run (10 s at its rate).
    static let defaultPatternSeconds = 10
}
