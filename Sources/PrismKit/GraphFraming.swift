import PrismCore
import PrismFilters
import PrismMedia
import PrismPipeline

/// What a `Session` puts around the user's graph — the orientation remaps and the colour conversion in
/// front, a final scale behind — kept so that a graph swapped in while the run goes on (a live control,
/// a reloaded shader) is framed exactly as the first one was and writes frames the output can take.
package struct GraphFraming: Sendable {
    /// The upright/mirror remaps in front of everything.
    let orientation: [(name: String, parameters: [String: ParameterValue])]
    let source: SourceInfo
    let options: Session.Options
    /// What the first graph's colour plan made of the output; a new graph must make the same, since the
    /// output's stream (depth, tags) was opened for it.
    let outputColor: VideoColor?
    let bitDepth: Int
    let linearLight: Bool
    /// Nodes in front of the user's first node in the running graph (orientation and colour filters).
    package let userNodeOffset: Int

    /// `userGraph` framed for the running output: the same remaps and colour conversion in front, and a
    /// final scale to `outputSize` when its output would be another size (an output keeps its size).
    /// Returns the graph and where the user's nodes begin in it. `userGraph`'s kernels move into the result.
    package func frame(_ userGraph: FilterGraph, outputSize: Size) throws -> (graph: FilterGraph, userNodeOffset: Int) {
        let plan = try ColorPlan(source: source, graph: userGraph, options: options)
        guard plan.outputColor == outputColor, plan.bitDepth == bitDepth, plan.linearLight == linearLight else {
            throw InvalidRequest("this graph changes the output's colour (its own tonemap or linear light), which the "
                             + "output was opened without; it cannot replace the running graph")
        }
        let prefix = orientation + plan.filters
        let graph = try userGraph.readingSource(through: prefix)
        if try graph.outputSize(forSource: source.size) != outputSize { try graph.appendScale(to: outputSize) }
        return (graph, prefix.count)
    }
}
