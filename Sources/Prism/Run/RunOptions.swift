import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline

/// Everything `prism run` was asked to do, validated: the session's description as the command line gave
/// it (parsed straight into `session`), and what only the command line has (its progress line, the
/// control channel, the hidden camera switch).
package struct RunOptions: Sendable {
    package var input: InputSpec = .pattern
    /// Every input's name for the graph, the first's first (nil: unnamed, read as `[N]` only).
    package var inputNames: [String?] = [nil]
    /// Where the frames go, each with its own settings (`-o` repeated); the first drives progress.
    package var outputs: [SessionOutput] = [SessionOutput(.movie("out.mp4"))]
    /// The first output (setting it makes it the only one).
    package var output: OutputSpec {
        get { outputs[0].spec }
        set { outputs = [SessionOutput(newValue)] }
    }
    /// Filter graph text (`invert, mono`); empty for none.
    package var filter: String = ""
    /// How the session runs: the size and rate, limits, the encoder shared by the outputs, the GPU, colour,
    /// faces and segmentation, the inputs after the first (`session.inputs`), `--audio-from`
    /// (`session.audioInput`), `--realtime` (`session.pacedToClock`), `--stats` (`session.timesPasses`).
    package var session = Session.Options()
    package var quiet = false
    /// Show the live progress line (on when stderr is a terminal and not quiet).
    package var progress = false
    /// `--progress json`: one JSON object per line for programs, instead of the terminal line.
    package var jsonProgress = false
    /// Camera input: switch to this device once this many frames have been read (a hidden flag for the
    /// end-to-end test of `FrameEngine.switchCamera`, the runtime device switch).
    package var cameraSwitch: (afterFrames: Int, path: String)?
    /// `--control`, `--watch`: the live control channel (`LiveControl`).
    package var control = ControlOptions()

    package init() {}
}
