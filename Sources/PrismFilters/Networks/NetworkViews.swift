import PrismCore

/// How a tensor the ONNX graph names lies in a feature's atlas, so that layout operators (Transpose,
/// Reshape, Flatten, Squeeze/Unsqueeze, Slice, Split, Expand) cost nothing where they only rename axes, and
/// one gather pass where they really move values (a channel shuffle, a crop at a stride).
///
/// A feature stores physical coordinates (c, y, x). Each logical axis of the tensor is a mixed-radix number
/// whose digits (outermost first) each add `index · stride` to one physical coordinate; a stride of 0 is a
/// broadcast (Expand). `offset` is where index 0 lies. NCHW `[1, C, H, W]` is `[[], [c·1], [y·1], [x·1]]`;
/// NHWC is the same digits in the order `[[], [y], [x], [c]]`; a channel shuffle's `[1, g, C/g, H, W]`
/// splits the channel digit in two.
package struct TensorView: Sendable, Equatable {
    package enum Role: Int, Sendable, Equatable { case c = 0, y = 1, x = 2 }

    package struct Digit: Sendable, Equatable {
        package var role: Role
        package var stride: Int
        package var extent: Int
    }

    /// Per logical axis, its digits, outermost first (an axis of extent 1 has none).
    package var axes: [[Digit]]
    /// The physical (c, y, x) of logical index 0.
    package var offset: SIMD3<Int> = .zero

    package var rank: Int { axes.count }
    package var dims: [Int] { axes.map { $0.reduce(1) { $0 * $1.extent } } }

    package init(axes: [[Digit]], offset: SIMD3<Int> = .zero) {
        self.axes = axes.map(Self.normalised)
        self.offset = offset
    }

    /// A feature of `channels` at `size` as a rank-`rank` tensor: [1, C, H, W], [C, H, W], [1, C] or [C].
    package static func canonical(channels: Int, size: Size, rank: Int = 4) -> TensorView {
        let c = [Digit(role: .c, stride: 1, extent: channels)], y = [Digit(role: .y, stride: 1, extent: size.height)]
        let x = [Digit(role: .x, stride: 1, extent: size.width)]
        switch rank {
        case 1: return TensorView(axes: [c])
        case 2: return TensorView(axes: [[], c])
        case 3: return TensorView(axes: [c, y, x])
        default: return TensorView(axes: [[Digit]](repeating: [], count: max(0, rank - 4)) + [[], c, y, x])
        }
    }

    /// Digits of extent 1 dropped; neighbours that form one run of the same coordinate merged.
    static func normalised(_ digits: [Digit]) -> [Digit] {
        var out: [Digit] = []
        for d in digits where d.extent != 1 {
            if let last = out.last, last.role == d.role || (last.stride == 0 && d.stride == 0),
               last.stride == d.stride * d.extent {
                out[out.count - 1] = Digit(role: d.role, stride: d.stride, extent: last.extent * d.extent)
            } else {
                out.append(d)
            }
        }
        return out
    }

    /// Each coordinate in at most one axis, as one digit of stride 1 covering the feature: the tensor is the
    /// feature with its axes named in some order (NCHW, NHWC, HWC …), no offset, no broadcast.
    package func isPlain(channels: Int, size: Size) -> Bool {
        guard offset == .zero else { return false }
        var seen = Set<Role>()
        for axis in axes {
            guard axis.count <= 1 else { return false }
            if let d = axis.first {
                guard d.stride == 1, !seen.contains(d.role) else { return false }
                seen.insert(d.role)
                let full = d.role == .c ? channels : d.role == .y ? size.height : size.width
                guard d.extent == full else { return false }
            }
        }
        return (channels == 1 || seen.contains(.c)) && (size.height == 1 || seen.contains(.y)) && (size.width == 1 || seen.contains(.x))
    }

    /// NCHW with the feature's own sizes (rank 4; higher ranks with leading 1s).
    package func isCanonical(channels: Int, size: Size) -> Bool {
        rank >= 4 && self == TensorView.canonical(channels: channels, size: size, rank: rank)
    }

    /// The logical axis that holds coordinate `role` in a plain view (nil when none: extent 1).
    package func axis(of role: Role) -> Int? {
        axes.firstIndex { $0.first?.role == role && $0.first?.stride != 0 }
    }

    /// The channel axis of a plain view: the axis holding c, or, when there is one channel, the one unit axis
    /// that is neither the batch axis of a rank-4 tensor nor holds y or x.
    package func channelAxis() -> Int? {
        if let a = axis(of: .c) { return a }
        let free = axes.indices.filter { axes[$0].isEmpty && !(rank == 4 && $0 == 0) }
        if rank == 4, free.count == 2, free.contains(1) { return 1 }  // [1, 1, 1, W] or [1, 1, H, 1]
        return free.count == 1 ? free[0] : nil
    }

    package func transposed(_ perm: [Int]) -> TensorView? {
        guard perm.count == rank, Set(perm) == Set(0..<rank) else { return nil }
        return TensorView(axes: perm.map { axes[$0] }, offset: offset)
    }

    /// The same values as a tensor of `shape` (row-major order kept), when the digits can be regrouped so;
    /// nil when a new axis would cut a digit at other than a divisor.
    package func reshaped(_ shape: [Int]) -> TensorView? {
        guard shape.allSatisfy({ $0 >= 1 }), shape.reduce(1, *) == dims.reduce(1, *) else { return nil }
        var queue = axes.flatMap { $0 }
        var result: [[Digit]] = []
        for extent in shape {
            var axis: [Digit] = [], product = 1
            while product < extent {
                guard !queue.isEmpty else { return nil }
                let d = queue.removeFirst()
                let wanted = extent / product
                guard extent % product == 0 else { return nil }
                if d.extent <= wanted {
                    guard wanted % d.extent == 0 else { return nil }
                    axis.append(d)
                    product *= d.extent
                } else {
                    guard d.extent % wanted == 0 else { return nil }
                    let inner = d.extent / wanted
                    axis.append(Digit(role: d.role, stride: d.stride * inner, extent: wanted))
                    queue.insert(Digit(role: d.role, stride: d.stride, extent: inner), at: 0)
                    product *= wanted
                }
            }
            result.append(axis)
        }
        guard queue.isEmpty else { return nil }
        return TensorView(axes: result, offset: offset)
    }

    /// `count` indices of axis `axis` from `start` every `step` (nil: the axis is several digits and the
    /// slice does not keep whole ones).
    package func sliced(axis: Int, start: Int, count: Int, step: Int) -> TensorView? {
        let extent = dims[axis]
        if start == 0 && count == extent && step == 1 { return self }
        guard axes[axis].count == 1, count >= 1, step >= 1 else { return nil }
        let d = axes[axis][0]
        var view = self
        view.offset[d.role.rawValue] += start * d.stride
        view.axes[axis] = Self.normalised([Digit(role: d.role, stride: d.stride * step, extent: count)])
        return view
    }

    /// Axis `axis` broadcast to `extent` (it has extent 1).
    package func expanded(axis: Int, to extent: Int) -> TensorView {
        var view = self
        view.axes[axis] = [Digit(role: .c, stride: 0, extent: extent)]
        return view
    }

    package func removing(axis: Int) -> TensorView {
        var view = self
        view.axes.remove(at: axis)
        return view
    }

    package func inserting(axis: Int) -> TensorView {
        var view = self
        view.axes.insert([], at: axis)
        return view
    }

    /// The digits ignoring broadcasts, per axis: what an operand read at the same physical position shares.
    var stored: [[Digit]] { axes.map { $0.filter { $0.stride != 0 } } }
}

/// Which logical axes of a tensor become a new feature's c, y and x when a view is written out (`gather`).
package struct GatherPlan: Sendable, Equatable {
    /// The source view, read digit by digit.
    package var source: TensorView
    /// The logical axes stored as the new feature's channels, rows and columns (nil: extent 1).
    package var channelAxis: Int?
    package var rowAxis: Int?
    package var columnAxis: Int?

    /// The plan storing `view` with `channelAxis` as channels and the last two other axes as rows and
    /// columns; nil when another axis has an extent above 1 (the tensor is not an image).
    package static func make(_ view: TensorView, channelAxis: Int?) -> GatherPlan? {
        let dims = view.dims
        let others = view.axes.indices.filter { $0 != channelAxis }
        let row = others.count >= 2 ? others[others.count - 2] : nil
        let column = others.last
        for a in others where a != row && a != column && dims[a] != 1 { return nil }
        return GatherPlan(source: view, channelAxis: channelAxis, rowAxis: row, columnAxis: column)
    }

    package var channels: Int { channelAxis.map { source.dims[$0] } ?? 1 }
    package var size: Size {
        Size(width: columnAxis.map { source.dims[$0] } ?? 1, height: rowAxis.map { source.dims[$0] } ?? 1)
    }

    /// The view of the gathered feature: the same logical shape, now plain.
    package var result: TensorView {
        var axes = [[TensorView.Digit]](repeating: [], count: source.rank)
        if let a = channelAxis { axes[a] = [.init(role: .c, stride: 1, extent: channels)] }
        if let a = rowAxis { axes[a] = [.init(role: .y, stride: 1, extent: size.height)] }
        if let a = columnAxis { axes[a] = [.init(role: .x, stride: 1, extent: size.width)] }
        return TensorView(axes: axes)
    }
}
