import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

extension FrameEngine {
    /// Runs `graph` once on a still image: an engine run of a one-frame source (`FrameListSource`) into
    /// an RGBA sink, so a still goes through the same frame path as a movie (`prism render`, photos' faces,
    /// the filter tests). Returns the output at the graph's output size.
    ///
    /// - Parameters:
    ///   - sideInputs: per-frame data for the graph (a face detector for `face-pixellate`).
    ///   - frame: the frame's context as given (time, regions, sound), in place of what the run would set:
    ///     for tests that pin a shader's inputs. It counts as the graph's face, segmentation and audio side input.
    public static func renderStill(_ graph: FilterGraph, image: RGBAImage, gpu: GPUContext,
                                   configuration: EngineConfiguration = .init(), sideInputs: [any SideInput] = [],
                                   frame: FrameContext? = nil) throws -> RGBAImage {
        let output = Locked<RGBAImage?>(nil)
        let sink = CallbackSink(format: .rgba) { processed, _ in
            let image = processed.buffer.rgbaImage()
            output.withLock { $0 = image }
            return true
        }
        let engine = try FrameEngine(source: try FrameListSource(image: image), graph: graph, sinks: [sink],
                                     configuration: configuration, gpu: gpu,
                                     sideInputs: sideInputs + (frame.map { [FixedFrameContext($0)] } ?? []))
        _ = try engine.run()
        guard let result = output.withLock({ $0 }) else { throw InvalidRequest("the still gave no frame") }
        return result
    }
}

/// A frame context given whole (tests): replaces what the run computed for each frame.
final class FixedFrameContext: SideInput {
    let context: FrameContext
    init(_ context: FrameContext) { self.context = context }
    var supplies: SideData { .all }
    func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        context = self.context
    }
}
