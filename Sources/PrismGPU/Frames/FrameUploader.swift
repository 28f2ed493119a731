import CGLES
import PrismCore

/// A frame's planes as they sit in CPU memory (decoder output, pattern, raw input).
public struct CPUFramePlanes {
    public var format: PixelFormat
    public var size: Size
    public var colorSpace: YUVColorSpace
    public var planes: [(base: UnsafeRawPointer, rowBytes: Int)]

    public init(format: PixelFormat, size: Size, colorSpace: YUVColorSpace,
                planes: [(base: UnsafeRawPointer, rowBytes: Int)]) {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        self.planes = planes
    }
}

/// A frame's planes on the GPU, in the layout `FrameShaders.sourceFunction` samples.
public final class UploadedFrame {
    public let format: PixelFormat
    public let size: Size
    public internal(set) var colorSpace: YUVColorSpace
    public let textures: [Texture]

    init(format: PixelFormat, size: Size, colorSpace: YUVColorSpace) throws {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        textures = try UploadedFrame.textureShapes(format: format, size: size).map {
            try Texture(size: $0.size, format: $0.format, linear: $0.linear)
        }
    }

    /// Binds the plane textures to units 0... and sets the conversion uniforms of `program`.
    public func bind(to program: ShaderProgram, firstUnit: Int = 0) {
        for (index, texture) in textures.enumerated() {
            texture.bind(unit: firstUnit + index)
            program.set("prism_src\(index)", Int32(firstUnit + index))
        }
        if format.isYUV {
            let (rows, offset) = colorSpace.yuvToRGBMatrix(bitDepth: format.bitDepth)
            program.setMatrix3("prism_yuvToRgb", rows: rows)
            program.set("prism_yuvOffset", Float(offset[0]), Float(offset[1]), Float(offset[2]))
        }
    }

    /// One texture per plane: R8 samples, RG8 for interleaved CbCr, RGBA8 for packed RGB and for YUYV
    /// (one texel = Y0 Cb Y1 Cr, two pixels), R16UI for 10-bit samples (filtered by hand in the shader).
    static func textureShapes(format: PixelFormat, size: Size) -> [(size: Size, format: TextureFormat, linear: Bool)] {
        let planes = format.planes
        func planeSize(_ index: Int) -> Size {
            Size(width: planes[index].width(for: size.width), height: planes[index].height(for: size.height))
        }
        switch format {
        case .yuv420p, .yuv422p, .yuv444p:
            return [(planeSize(0), .r8, false), (planeSize(1), .r8, true), (planeSize(2), .r8, true)]
        case .yuv420p10le, .yuv422p10le:
            return [(planeSize(0), .r16ui, false), (planeSize(1), .r16ui, false), (planeSize(2), .r16ui, false)]
        case .nv12:
            return [(planeSize(0), .r8, false), (planeSize(1), .rg8, true)]
        case .yuyv422:
            return [(Size(width: (size.width + 1) / 2, height: size.height), .rgba8, false)]
        case .rgba, .bgra:
            return [(size, .rgba8, false)]
        case .gray:
            return [(size, .r8, false)]
        }
    }
}

/// Uploads CPU frames into a small ring of plane-texture sets, so a new upload never waits for the GPU
/// to finish reading the texture it would overwrite. One per pipeline, on its GPU thread.
public final class FrameUploader {
    private var ring: [UploadedFrame] = []
    private var next = 0
    public let ringSize: Int
    /// Texture sets ever created; flat once warm (a size or format change makes a new ring).
    public private(set) var createdCount = 0

    public init(ringSize: Int = 3) {
        self.ringSize = ringSize
    }

    public func upload(_ frame: CPUFramePlanes) throws -> UploadedFrame {
        if let first = ring.first, first.format != frame.format || first.size != frame.size {
            ring.removeAll()
            next = 0
        }
        let target: UploadedFrame
        if ring.count < ringSize {
            target = try UploadedFrame(format: frame.format, size: frame.size, colorSpace: frame.colorSpace)
            createdCount += 1
            ring.append(target)
        } else {
            target = ring[next]
        }
        next = (next + 1) % ringSize
        target.colorSpace = frame.colorSpace
        guard frame.planes.count == target.textures.count else {
            throw GLError("upload", detail: "\(frame.format) needs \(target.textures.count) planes, got \(frame.planes.count)")
        }
        let shapes = UploadedFrame.textureShapes(format: frame.format, size: frame.size)
        for (index, plane) in frame.planes.enumerated() {
            let texture = target.textures[index]
            texture.upload(plane.base, rowBytes: plane.rowBytes, width: shapes[index].size.width,
                           height: shapes[index].size.height)
        }
        return target
    }
}
