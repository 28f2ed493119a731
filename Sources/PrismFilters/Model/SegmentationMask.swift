import PrismCore

/// One frame's foreground mask from the segmentation side input: the model's output at its own
/// resolution, smoothed over time, 0 (background) to 1 (foreground). The graph's `segment-mask`
/// upsamples and feathers it on the GPU.
public struct SegmentationMask: Sendable, Equatable {
    /// The mask's size in pixels (the model's output, not the frame's).
    public let size: Size
    /// `size.pixelCount` values in 0...1, row by row from the top.
    public let values: [Float]
    /// Changes whenever `values` do (a new model result): a kernel that uploads the mask uploads it once per
    /// generation, however many passes and frames show it.
    public let generation: Int

    public init(size: Size, values: [Float], generation: Int) {
        precondition(values.count == size.pixelCount, "a mask of \(size) needs \(size.pixelCount) values")
        self.size = size
        self.values = values
        self.generation = generation
    }

    /// The mask blurred with a box of `radius` pixels, twice (close to a Gaussian of σ ≈ 0.8·radius): the
    /// feathered edge. Edges clamp. `radius` < 0.5 returns the values as they are.
    public func feathered(radius: Double) -> [Float] {
        let r = Int(radius.rounded())
        guard r >= 1, size.pixelCount > 0 else { return values }
        var a = values, b = values
        let w = size.width, h = size.height
        // A running sum along a row or column, clamped at the ends, so the cost does not grow with the radius.
        func pass(_ from: [Float], _ to: inout [Float], count: Int, lines: Int, at: (Int, Int) -> Int) {
            let scale = 1 / Float(2 * r + 1)
            for line in 0..<lines {
                var sum: Float = 0
                for k in -r...r { sum += from[at(line, min(max(k, 0), count - 1))] }
                for i in 0..<count {
                    to[at(line, i)] = sum * scale
                    sum += from[at(line, min(i + r + 1, count - 1))] - from[at(line, max(i - r, 0))]
                }
            }
        }
        for _ in 0..<2 {
            pass(a, &b, count: w, lines: h) { y, x in y * w + x }
            pass(b, &a, count: h, lines: w) { x, y in y * w + x }
        }
        return a
    }
}
