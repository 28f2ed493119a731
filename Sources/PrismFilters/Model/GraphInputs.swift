import PrismCore
import PrismGPU

/// One of the run's inputs besides the first, as the graph reads it (`[1]`, `[2]`… or `[NAME]`): the
/// engine converts that input's current frame to an R'G'B' texture on the GPU thread and hangs it here
/// before each frame; the graph's `GraphInputKernel` node reads it. The first input is the graph's source
/// (`FilterGraph.Stream.source`), as ever.
///
/// Only the GPU thread touches `texture` and `shown` (between frames, or while rendering); `size` is set
/// before each compile, so a new size recompiles the graph (`GraphRenderer.isStale`).
package final class GraphInputSlot: @unchecked Sendable {
    /// The input's position on the command line (1 for the second input).
    package let index: Int
    /// The size of the input's frames: the node's output size.
    package var size: Size
    /// The current frame as R'G'B'A (nil before the input's first frame).
    package var texture: Texture?
    /// False while the input shows nothing: before its `--offset`, and after its end under `--end hide`.
    package var shown = false

    package init(index: Int, size: Size = Size(width: 16, height: 16)) {
        self.index = index
        self.size = size
    }
}

/// The node an input label other than the first binds to: a generator that reads its slot's texture
/// (transparent black while the input shows nothing). Point-wise, so it fuses into whatever reads it.
final class GraphInputKernel: FilterKernel {
    let inputCount = 0
    let isPointwise = true
    let slot: GraphInputSlot

    init(slot: GraphInputSlot) { self.slot = slot }

    var uniforms: [KernelUniform] {
        let slot = slot
        return [KernelUniform("$shown", .int, .computed { _ in .int(slot.shown && slot.texture != nil ? 1 : 0) })]
    }

    var textures: [KernelTexture] {
        let slot = slot
        return [KernelTexture("$image", .sampler2D) { slot.texture }]
    }

    let expression = """
        vec4 $main(vec2 p) {
            return $shown != 0 ? texelFetch($image, ivec2(p), 0) : vec4(0.0);
        }

        """

    /// The input's own size: a graph that mixes inputs of several sizes scales one of them (`[1]scale(…)`).
    func outputSize(inputSizes: [Size], sourceSize: Size) throws -> Size { slot.size }

    var compileKey: String { "input\(slot.index) \(slot.size)" }
}

extension FilterGraph {
    /// The inputs besides the first that the graph reads, one slot per input, by index.
    package var inputSlots: [GraphInputSlot] {
        var seen: Set<Int> = []
        return nodes.compactMap { ($0.kernel as? GraphInputKernel)?.slot }.filter { seen.insert($0.index).inserted }
    }

    /// Gives each input the graph reads its size (by index), so sizes are known before the first compile
    /// (a crop for the codec, a size check between inputs); throws when the graph reads an input not given.
    package func setInputSizes(_ sizes: [Int: Size]) throws {
        for slot in inputSlots {
            guard let size = sizes[slot.index] else {
                let count = sizes.count + 1
                throw InvalidRequest("the graph reads input [\(slot.index)], but the run has \(count) input\(count == 1 ? "" : "s")")
            }
            slot.size = size
        }
    }

    /// The highest input index the graph reads (0 when it reads only its source).
    public var highestInputIndex: Int { inputSlots.map(\.index).max() ?? 0 }
}
