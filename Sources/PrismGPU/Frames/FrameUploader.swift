import CGLES
import PrismCore

/// A frame's planes as they sit in CPU memory (decoder output, pattern, raw input).
package struct CPUFramePlanes {
    package var format: PixelFormat
    package var size: Size
    package var colorSpace: YUVColorSpace
    package var planes: [(base: UnsafeRawPointer, rowBytes: Int)]

    package init(format: PixelFormat, size: Size, colorSpace: YUVColorSpace,
                planes: [(base: UnsafeRawPointer, rowBytes: Int)]) {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        self.planes = planes
    }
}

/// A frame's planes on the GPU, in the layout `FrameShaders.sourceFunction` samples.
public final class UploadedFrame {
    /// The pixel format the planes hold.
    public let format: PixelFormat
    /// The frame size in pixels (the plane textures may be smaller: subsampled, several samples per texel).
    public let size: Size
    /// How Y'CbCr planes convert to RGB when sampled; set by the uploader from each frame.
    public internal(set) var colorSpace: YUVColorSpace {
        didSet { if colorSpace != oldValue { conversion = Self.conversion(colorSpace, format) } }
    }
    /// The Y'CbCr → R'G'B' matrix and offsets for `colorSpace`, computed when it changes, not per frame.
    private var conversion: (rows: [[Double]], offset: SIMD3<Float>)
    private static let planeUniforms = ["prism_src0", "prism_src1", "prism_src2"]

    private static func conversion(_ space: YUVColorSpace, _ format: PixelFormat) -> (rows: [[Double]], offset: SIMD3<Float>) {
        let (rows, offset) = space.yuvToRGBMatrix(bitDepth: format.bitDepth)
        return (rows, SIMD3(Float(offset[0]), Float(offset[1]), Float(offset[2])))
    }
    /// One texture per plane in FFmpeg plane order, owned by the frame (and its context's GPU thread).
    public let textures: [Texture]

    init(format: PixelFormat, size: Size, colorSpace: YUVColorSpace) throws {
        self.format = format
        self.size = size
        self.colorSpace = colorSpace
        conversion = Self.conversion(colorSpace, format)
        textures = try UploadedFrame.textureShapes(format: format, size: size).map {
            try Texture(size: $0.size, format: $0.format, linear: $0.linear)
        }
    }

    /// Binds the plane textures to units 0... and sets the conversion uniforms of `program`.
    package func bind(to program: ShaderProgram, firstUnit: Int = 0) {
        for (index, texture) in textures.enumerated() {
            texture.bind(unit: firstUnit + index)
            program.set(Self.planeUniforms[index], Int32(firstUnit + index))
        }
        if format.isYUV {
            program.setMatrix3("prism_yuvToRgb", rows: conversion.rows)
            program.set("prism_yuvOffset", conversion.offset.x, conversion.offset.y, conversion.offset.z)
        }
    }

    /// One texture per plane. 8-bit samples are packed four to an RGBA8 texel ("wide" planes: one
    /// fetch returns four neighbouring samples, which the packing pass uses to convert four pixels at a
    /// time); NV12's CbCr plane holds two pairs per texel; YUYV holds one Y0 Cb Y1 Cr group (two
    /// pixels) per texel; RGB is one pixel per texel; 10-bit samples are R16UI.
    static func textureShapes(format: PixelFormat, size: Size) -> [(size: Size, format: TextureFormat, linear: Bool)] {
        let planes = format.planes
        func planeSize(_ index: Int, samplesPerTexel: Int = 1) -> Size {
            Size(width: (planes[index].width(for: size.width) + samplesPerTexel - 1) / samplesPerTexel,
                 height: planes[index].height(for: size.height))
        }
        switch format {
        case .yuv420p, .yuv422p, .yuv444p:
            return (0..<3).map { (planeSize($0, samplesPerTexel: 4), .rgba8, false) }
        case .gray:
            return [(planeSize(0, samplesPerTexel: 4), .rgba8, false)]
        case .yuv420p10le, .yuv422p10le, .yuv420p16le, .yuv444p16le:
            return (0..<3).map { (planeSize($0), .r16ui, false) }
        case .nv12:
            return [(planeSize(0, samplesPerTexel: 4), .rgba8, false), (planeSize(1, samplesPerTexel: 2), .rgba8, false)]
        case .yuyv422:
            return [(planeSize(0, samplesPerTexel: 2), .rgba8, false)]
        case .rgba, .bgra:
            return [(size, .rgba8, false)]
        }
    }
}

extension UploadedFrame {
    /// An RGBA still (`size.width * 4` bytes a row, top row first) on the GPU, for work beside the frame path
    /// (a model's input, a calibration card): uploaded into `previous`'s texture when it has this size, else
    /// into a new one, which lives as long as the frame returned. On the GPU thread.
    package static func rgba(_ pixels: [UInt8], size: Size, reusing previous: UploadedFrame? = nil) throws -> UploadedFrame {
        precondition(pixels.count >= size.pixelCount * 4, "an RGBA still of \(size) needs \(size.pixelCount * 4) bytes")
        let frame = try previous.flatMap { $0.format == .rgba && $0.size == size ? $0 : nil }
            ?? UploadedFrame(format: .rgba, size: size, colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full))
        pixels.withUnsafeBytes { frame.textures[0].upload($0.baseAddress!, rowBytes: size.width * 4) }
        return frame
    }
}

/// Uploads CPU frames into a small ring of plane-texture sets, so a new upload never waits for the GPU
/// to finish reading the texture it would overwrite. One per pipeline, on its GPU thread.
package final class FrameUploader {
    private var ring: [UploadedFrame] = []
    private var next = 0
    /// Row-padded copies for planes whose rows do not cover whole texels (odd widths of packed input).
    private var staging: [[UInt8]] = []
    package let ringSize: Int
    /// Texture sets ever created; flat once warm (a size or format change makes a new ring).
    package private(set) var createdCount = 0

    package init(ringSize: Int = 3) {
        self.ringSize = ringSize
    }

    package func upload(_ frame: CPUFramePlanes) throws -> UploadedFrame {
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
        let layouts = frame.format.planes
        for (index, plane) in frame.planes.enumerated() {
            let texture = target.textures[index]
            let texelBytes = texture.size.width * texture.format.bytesPerTexel
            if plane.rowBytes >= texelBytes && plane.rowBytes % texture.format.bytesPerTexel == 0 {
                texture.upload(plane.base, rowBytes: plane.rowBytes)
            } else {
                // The last texel of a row would read past the row: copy into rows padded to whole texels.
                let rows = texture.size.height
                let used = min(layouts[index].minimumRowBytes(for: frame.size.width), plane.rowBytes)
                while staging.count <= index { staging.append([]) }
                if staging[index].count != texelBytes * rows {
                    staging[index] = [UInt8](repeating: 0, count: texelBytes * rows)
                }
                staging[index].withUnsafeMutableBytes { padded in
                    for row in 0..<rows {
                        (padded.baseAddress! + row * texelBytes).copyMemory(from: plane.base + row * plane.rowBytes,
                                                                            byteCount: used)
                    }
                    texture.upload(padded.baseAddress!, rowBytes: texelBytes)
                }
            }
        }
        return target
    }
}
