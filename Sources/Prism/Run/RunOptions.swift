import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline

/// Everything `prism run` was asked to do, validated.
package struct RunOptions: Sendable {
    package var input: InputSpec = .pattern
    /// The inputs after the first (INPUT repeated, `--input`), each with its own offset and end.
    package var extraInputs: [ExtraInput] = []
    /// Every input's name for the graph, the first's first (nil: unnamed, read as `[N]` only).
    package var inputNames: [String?] = [nil]
    /// `--audio-from N|NAME`: whose sound the outputs carry (0: the first input's).
    package var audioInput = 0
    /// Where the frames go, each with its own settings (`-o` repeated); the first drives progress.
    package var outputs: [SessionOutput] = [SessionOutput(.movie("out.mp4"))]
    /// The first output (setting it makes it the only one).
    package var output: OutputSpec {
        get { outputs[0].spec }
        set { outputs = [SessionOutput(newValue)] }
    }
    /// `--realtime`: release the input's frames at their timestamps (FFmpeg's `-re`), as a live source.
    package var realtime = false
    /// `--reconnect-output SECONDS`: how long a lost network output tries to connect again (its `seconds`).
    package var outputReconnect = ReconnectPolicy()
    /// Told at once what happens to an output while the run goes on (a stream lost, reconnected, given up).
    package var messages: (@Sendable (String) -> Void)?
    /// Filter graph text (`invert, mono`); empty for none.
    package var filter: String = ""
    package var encoder = VideoEncoderSettings()
    /// Output size: the pattern's size, the size asked of a camera (and kept by a final scale if the camera
    /// gives another), or a final scale for other inputs.
    package var size: Size?
    /// The pattern's rate, the rate asked of a camera, or the constant rate a movie or raw input is converted to.
    package var frameRate: Rational?
    /// Stop after this many frames.
    package var frameLimit: Int?
    /// Stop after this much input time.
    package var durationLimit: MediaTime?
    package var gpu = GPUOptions()
    /// nil: the engine's choice for the driver.
    package var readback: ReadbackStrategy?
    package var fuse = true
    /// `--rgb-route`: every graph through R'G'B' (see `CompileOptions.yuvRoute`).
    package var yuvRoute = true
    package var quiet = false
    package var stats = false
    /// Show the live progress line (on when stderr is a terminal and not quiet).
    package var progress = false
    /// Camera input: switch to this device once this many frames have been read (a hidden flag for the
    /// end-to-end test of `FrameEngine.switchCamera`, the runtime device switch).
    package var cameraSwitch: (afterFrames: Int, path: String)?
    /// `--audio DEVICE`: record from this ALSA capture PCM (`default`, `hw:1,0`, any configured PCM) into
    /// the movie as AAC, on the video's time line. Only with the camera or the pattern (live sources on
    /// CLOCK_MONOTONIC); a movie or raw input is refused (its time line is not the clock's).
    package var audioDevice: String?
    /// `--max-size`, `--min-free`: limits that end a recording cleanly.
    package var limits = RecordingLimits()
    /// `--progress json`: one JSON object per line for programs, instead of the terminal line.
    package var jsonProgress = false
    /// Turn a movie upright by its display matrix (off: `--no-autorotate`, frames as stored).
    package var autorotate = true
    /// `--mirror`: swap left and right (a front-facing camera shown as a mirror shows it).
    package var mirror = false
    /// `--strict-decode`: a damaged packet or a truncated file fails the run (see `Session.Options`).
    package var strictDecoding = false
    /// `--face-model`, `--face-every`, `--faces-in`, `--faces-out` (see `FaceOptions`).
    package var faces = FaceOptions()
    /// `--segment-model` and its settings (see `SegmentationSettings`).
    package var segmentation = SegmentationSettings()
    /// `--input-color`, `--dynamic-range`, `--tonemap`, `--output-transfer` (see `Session.Options`).
    package var inputColor: ColorOverride?
    package var dynamicRange = DynamicRange.auto
    package var toneCurve: ColorConversion.Curve? = .bt2390
    package var outputTransfer: TransferFunction?
    /// `--control`, `--watch`: the live control channel (`LiveControl`).
    package var control = ControlOptions()
    /// `--input-timeout`, `--reconnect`, `--reconnect-for`, `--no-reconnect`, `--rtsp-transport`, `--listen`.
    package var network = NetworkInputOptions()
    /// Raw output in a 10-bit format carries HDR; a still never does; nil: the encoder says.
    package var outputIsDeep: Bool? {
        switch output {
        case .standardOutput(let format), .discard(let format): return format.bitDepth > 8
        case .still, .virtualCamera: return false
        case .movie: return nil
        }
    }

    package init() {}

    /// Frames of the pattern when nothing else bounds the run (10 s at its rate).
    static let defaultPatternSeconds = 10
}
