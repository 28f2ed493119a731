import PrismKit

/// `prism_frame`: one frame of a run, copied out of the run's buffer into memory of its own (stable for C,
/// freed with it), so the run's few buffers go back to it at once.
final class CFrame: @unchecked Sendable {  // its memory is written once, in init, then only read
    let layout: PackedFrameLayout
    let index: Int
    let pts: MediaTime
    let bytes: UnsafeMutableRawBufferPointer

    init(_ frame: ProcessedFrame, layout: PackedFrameLayout) {
        self.layout = layout
        index = frame.index
        pts = frame.pts
        bytes = .allocate(byteCount: max(1, layout.byteCount), alignment: 64)
        bytes.baseAddress!.copyMemory(from: frame.buffer.data, byteCount: layout.byteCount)
    }

    deinit { bytes.deallocate() }
}

private func frame(_ pointer: OpaquePointer?) -> CFrame? {
    pointer.map { Unmanaged<CFrame>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

@_cdecl("prism_frame_width")
public func prism_frame_width(_ pointer: OpaquePointer?) -> Int32 { Int32(frame(pointer)?.layout.size.width ?? 0) }

@_cdecl("prism_frame_height")
public func prism_frame_height(_ pointer: OpaquePointer?) -> Int32 { Int32(frame(pointer)?.layout.size.height ?? 0) }

@_cdecl("prism_frame_format")
public func prism_frame_format(_ pointer: OpaquePointer?) -> Int32 { frame(pointer).map { CPixelFormat.code($0.layout.format) } ?? -1 }

@_cdecl("prism_frame_index")
public func prism_frame_index(_ pointer: OpaquePointer?) -> Int64 { Int64(frame(pointer)?.index ?? -1) }

@_cdecl("prism_frame_pts_ns")
public func prism_frame_pts_ns(_ pointer: OpaquePointer?) -> Int64 {
    frame(pointer)?.pts.ticks(in: Rational(1, 1_000_000_000)) ?? 0
}

@_cdecl("prism_frame_pts")
public func prism_frame_pts(_ pointer: OpaquePointer?, _ value: UnsafeMutablePointer<Int64>?, _ timescale: UnsafeMutablePointer<Int32>?) {
    guard let frame = frame(pointer) else { return }
    value?.pointee = frame.pts.value
    timescale?.pointee = frame.pts.timescale
}

@_cdecl("prism_frame_plane_count")
public func prism_frame_plane_count(_ pointer: OpaquePointer?) -> Int32 { Int32(frame(pointer)?.layout.planes.count ?? 0) }

@_cdecl("prism_frame_plane")
public func prism_frame_plane(_ pointer: OpaquePointer?, _ index: Int32, _ stride: UnsafeMutablePointer<Int32>?) -> UnsafePointer<UInt8>? {
    guard let frame = frame(pointer), frame.layout.planes.indices.contains(Int(index)) else { return nil }
    let plane = frame.layout.planes[Int(index)]
    stride?.pointee = Int32(plane.rowBytes)
    return UnsafePointer(frame.bytes.baseAddress!.advanced(by: plane.offset).assumingMemoryBound(to: UInt8.self))
}

@_cdecl("prism_frame_data")
public func prism_frame_data(_ pointer: OpaquePointer?, _ size: UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>? {
    guard let frame = frame(pointer) else { return nil }
    size?.pointee = frame.layout.byteCount
    return UnsafePointer(frame.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
}

@_cdecl("prism_frame_free")
public func prism_frame_free(_ pointer: OpaquePointer?) { release(pointer) }
