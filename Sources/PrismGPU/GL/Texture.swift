import CGLES
import PrismCore

/// Storage formats Prism uses for textures.
public enum TextureFormat: Hashable, Sendable {
    /// 8-bit normalised one, two or four channels; 16-bit unsigned integer red (10-bit planes); 16-bit float RGBA.
    case r8, rg8, rgba8, r16ui, rgba16f
    /// 32-bit float RGBA (ISF FLOAT targets; rendering to it needs EXT_color_buffer_float).
    case rgba32f
    /// 32-bit float red: the one float format a GLES 3.1 compute shader may load and store in one image
    /// (`ImageAccess.readWrite`). Like rgba32f it is not filterable everywhere: make it with `linear: false`.
    case r32f

    var internalFormat: GLenum {
        switch self {
        case .r8: GLenum(GL_R8)
        case .rg8: GLenum(GL_RG8)
        case .rgba8: GLenum(GL_RGBA8)
        case .r16ui: GLenum(GL_R16UI)
        case .rgba16f: GLenum(GL_RGBA16F)
        case .rgba32f: GLenum(GL_RGBA32F)
        case .r32f: GLenum(GL_R32F)
        }
    }

    var uploadFormat: GLenum {
        switch self {
        case .r8, .r32f: GLenum(GL_RED)
        case .rg8: GLenum(GL_RG)
        case .rgba8, .rgba16f, .rgba32f: GLenum(GL_RGBA)
        case .r16ui: GLenum(GL_RED_INTEGER)
        }
    }

    var uploadType: GLenum {
        switch self {
        case .r8, .rg8, .rgba8: GLenum(GL_UNSIGNED_BYTE)
        case .r16ui: GLenum(GL_UNSIGNED_SHORT)
        case .rgba16f: GLenum(GL_HALF_FLOAT)
        case .rgba32f, .r32f: GLenum(GL_FLOAT)
        }
    }

    /// Bytes per texel as uploaded.
    public var bytesPerTexel: Int {
        switch self {
        case .r8: 1
        case .rg8, .r16ui: 2
        case .rgba8, .r32f: 4
        case .rgba16f: 8
        case .rgba32f: 16
        }
    }

    /// Integer textures cannot be filtered.
    var isInteger: Bool { self == .r16ui }

    /// Whether a compute shader may bind it as an image (`Texture.bindImage`): GLES 3.1 allows image
    /// load/store only on rgba32f, rgba16f, r32f, rgba8 and some integer formats, so r8, rg8 and r16ui
    /// are out; a pass that imageStores a one- or two-channel result picks rgba8 instead.
    package var isImageFormat: Bool {
        switch self {
        case .rgba8, .rgba16f, .rgba32f, .r32f: true
        case .r8, .rg8, .r16ui: false
        }
    }
}

/// How a compute shader uses an image (`Texture.bindImage`); must agree with the shader's `readonly`
/// / `writeonly` qualifier (a mismatch is undefined behaviour, not an error).
package enum ImageAccess: Sendable {
    case readOnly, writeOnly
    /// Loads and stores on one image: GLSL ES 3.10 allows an image without `readonly` or `writeonly`
    /// only in r32f (of Prism's formats), so in-place passes on colour go through two images.
    case readWrite

    var glAccess: GLenum {
        switch self {
        case .readOnly: GLenum(GL_READ_ONLY)
        case .writeOnly: GLenum(GL_WRITE_ONLY)
        case .readWrite: GLenum(GL_READ_WRITE)
        }
    }
}

/// An immutable-storage texture: 2D (frames, targets, images) or 3D (colour lookup tables). Made, used
/// and deleted on its context's GPU thread (checked; a last reference dropped elsewhere posts the
/// deletion there).
public final class Texture {
    let name: GLuint
    /// GL_TEXTURE_2D or GL_TEXTURE_3D: what `bind` binds it as.
    let target: GLenum
    /// Width and height (of each layer, for a 3D texture).
    public let size: Size
    /// Layers: 1 for a 2D texture, the table's dimension for a 3D one.
    public let depth: Int
    /// The texel format of the storage.
    public let format: TextureFormat
    fileprivate let home: GLObjectHome

    /// Allocates storage (glTexStorage2D); linear filtering and edge clamping unless the format is integer.
    /// `mipmapped`: a full mip chain, sampled trilinearly once `generateMipmaps` filled it; `repeating`:
    /// wrap instead of clamp (ShaderToy's texture defaults).
    public convenience init(size: Size, format: TextureFormat, linear: Bool = true, mipmapped: Bool = false,
                            repeating: Bool = false) throws {
        let mipmaps = mipmapped && linear && !format.isInteger
        let levels = mipmaps ? Int.bitWidth - max(size.width, size.height).leadingZeroBitCount : 1
        let filter = (linear && !format.isInteger) ? GL_LINEAR : GL_NEAREST
        try self.init(target: GLenum(GL_TEXTURE_2D), size: size, depth: 1, format: format,
                      minFilter: mipmaps ? GL_LINEAR_MIPMAP_LINEAR : filter, magFilter: filter,
                      wrap: repeating ? GL_REPEAT : GL_CLAMP_TO_EDGE,
                      what: "glTexStorage2D(\(size), \(format))") {
            glTexStorage2D(GLenum(GL_TEXTURE_2D), GLsizei(levels), format.internalFormat, GLsizei(size.width), GLsizei(size.height))
        }
    }

    /// A 3D RGBA32F colour table, read with texelFetch and interpolated in the shader. `rgb` holds
    /// dimension³ entries, red varying fastest, then green, then blue.
    public convenience init(dimension: Int, rgb: [SIMD3<Float>]) throws {
        precondition(rgb.count == dimension * dimension * dimension)
        var texels = [Float](repeating: 1, count: rgb.count * 4)
        for (index, value) in rgb.enumerated() {
            texels[index * 4] = value.x
            texels[index * 4 + 1] = value.y
            texels[index * 4 + 2] = value.z
        }
        // Read with texelFetch only, so nearest: a linear-filtered RGBA32F texture is incomplete (reads as
        // black, texelFetch too) on a driver without OES_texture_float_linear.
        let side = GLsizei(dimension)
        try self.init(target: GLenum(GL_TEXTURE_3D), size: Size(width: dimension, height: dimension), depth: dimension,
                      format: .rgba32f, minFilter: GL_NEAREST, magFilter: GL_NEAREST, wrap: GL_CLAMP_TO_EDGE,
                      what: "glTexStorage3D(\(dimension)³ RGBA32F)") {
            glTexStorage3D(GLenum(GL_TEXTURE_3D), 1, GLenum(GL_RGBA32F), side, side, side)
            glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 4)
            glTexSubImage3D(GLenum(GL_TEXTURE_3D), 0, 0, 0, 0, side, side, side, GLenum(GL_RGBA), GLenum(GL_FLOAT), texels)
        }
    }

    /// How a lookup texture reads outside 0...1 (mpv hooks' `//!BORDER`).
    public enum Wrap: Sendable { case clamp, repeating, mirrored }

    /// A lookup table (an mpv hook's `//!TEXTURE`): 2D, or 3D when `depth` > 1, RGBA16F or RGBA32F, filled
    /// from `rgba` (4 floats per texel, rows first, then layers).
    public convenience init(lookup size: Size, depth: Int, format: TextureFormat, linear: Bool, wrap: Wrap, rgba: [Float]) throws {
        precondition(format == .rgba16f || format == .rgba32f)
        precondition(rgba.count == size.pixelCount * depth * 4)
        let glWrap = wrap == .clamp ? GL_CLAMP_TO_EDGE : wrap == .repeating ? GL_REPEAT : GL_MIRRORED_REPEAT
        let filter = linear ? GL_LINEAR : GL_NEAREST
        let target = GLenum(depth > 1 ? GL_TEXTURE_3D : GL_TEXTURE_2D)
        let w = GLsizei(size.width), h = GLsizei(size.height), d = GLsizei(depth)
        try self.init(target: target, size: size, depth: depth, format: format, minFilter: filter, magFilter: filter,
                      wrap: glWrap, what: "lookup texture \(size)x\(depth) \(format)") {
            glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 4)
            func fill(_ pointer: UnsafeRawPointer, type: GLenum) {
                if depth > 1 {
                    glTexStorage3D(target, 1, format.internalFormat, w, h, d)
                    glTexSubImage3D(target, 0, 0, 0, 0, w, h, d, GLenum(GL_RGBA), type, pointer)
                } else {
                    glTexStorage2D(target, 1, format.internalFormat, w, h)
                    glTexSubImage2D(target, 0, 0, 0, w, h, GLenum(GL_RGBA), type, pointer)
                }
            }
            if format == .rgba16f {
                let halves = rgba.map { Float16($0) }
                halves.withUnsafeBytes { fill($0.baseAddress!, type: GLenum(GL_HALF_FLOAT)) }
            } else {
                rgba.withUnsafeBytes { fill($0.baseAddress!, type: GLenum(GL_FLOAT)) }
            }
        }
    }

    /// Makes the texture, binds it to the active unit for `storage` (which allocates and may fill it) and
    /// the sampling parameters, then binds back what was bound there: a texture made mid-draw (a kernel's
    /// per-frame audio image) must not unbind one already bound there for the draw.
    private init(target: GLenum, size: Size, depth: Int, format: TextureFormat, minFilter: Int32, magFilter: Int32,
                 wrap: Int32, what: @autoclosure () -> String, storage: () -> Void) throws {
        home = GLObjectHome(.texture)
        var name: GLuint = 0
        glGenTextures(1, &name)
        self.name = name
        self.target = target
        self.size = size
        self.depth = depth
        self.format = format
        let previous = Self.bound(target)
        defer { glBindTexture(target, previous) }
        glBindTexture(target, name)
        storage()
        glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), minFilter)
        glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), magFilter)
        var wraps = [GL_TEXTURE_WRAP_S, GL_TEXTURE_WRAP_T]
        if target == GLenum(GL_TEXTURE_3D) { wraps.append(GL_TEXTURE_WRAP_R) }
        for axis in wraps { glTexParameteri(target, GLenum(axis), wrap) }
        try GLError.check(what())
    }

    deinit {
        let name = self.name
        home.delete {
            var name = name
            glDeleteTextures(1, &name)
        }
    }

    /// The GPU thread (and so the context) the texture belongs to.
    package var thread: GPUThread { home.thread }

    /// Uploads the whole texture from CPU memory; `rowBytes` (a multiple of the texel size) may exceed
    /// the texture's row (decoder padding).
    public func upload(_ pixels: UnsafeRawPointer, rowBytes: Int) {
        home.check()
        precondition(target == GLenum(GL_TEXTURE_2D), "upload is for 2D textures")
        precondition(rowBytes % format.bytesPerTexel == 0 && rowBytes >= size.width * format.bytesPerTexel)
        // As in init: the active unit keeps the texture bound there (uploads may happen mid-draw).
        let previous = Self.bound(target)
        defer { glBindTexture(GLenum(GL_TEXTURE_2D), previous) }
        glBindTexture(GLenum(GL_TEXTURE_2D), name)
        glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(rowBytes / format.bytesPerTexel))
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), rowBytes % 4 == 0 ? 4 : (rowBytes % 2 == 0 ? 2 : 1))
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(size.width), GLsizei(size.height),
                        format.uploadFormat, format.uploadType, pixels)
        glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0)
    }

    /// Fills the mip levels below 0 from level 0 (glGenerateMipmap), after an upload.
    public func generateMipmaps() {
        home.check()
        precondition(target == GLenum(GL_TEXTURE_2D), "mipmaps are for 2D textures")
        glBindTexture(GLenum(GL_TEXTURE_2D), name)
        glGenerateMipmap(GLenum(GL_TEXTURE_2D))
    }

    /// The texture of kind `target` bound to the active unit (glGetIntegerv(GL_TEXTURE_BINDING_2D/3D)).
    private static func bound(_ target: GLenum) -> GLuint {
        var bound: GLint = 0
        glGetIntegerv(GLenum(target == GLenum(GL_TEXTURE_3D) ? GL_TEXTURE_BINDING_3D : GL_TEXTURE_BINDING_2D), &bound)
        return GLuint(bound)
    }

    /// Binds to texture unit `unit` (as a 2D or 3D texture, as it was made).
    public func bind(unit: Int) {
        home.check()
        glActiveTexture(GLenum(GL_TEXTURE0 + Int32(unit)))
        glBindTexture(target, name)
    }
}

extension Texture {
    /// Binds level 0 to image unit `unit` for a compute shader's `imageLoad`/`imageStore`
    /// (glBindImageTexture, with the texture's own format: the shader's `layout(rgba16f)` and the like
    /// must name the same). Needs an image format (`TextureFormat.isImageFormat`: rgba8, not r8 or
    /// rg8) and a context with compute; the storage is immutable (glTexStorage2D), as images require.
    package func bindImage(unit: Int, access: ImageAccess) {
        home.check()
        precondition(format.isImageFormat, "\(format) textures cannot be images in GLES 3.1 (use rgba8, rgba16f or rgba32f)")
        precondition(target == GLenum(GL_TEXTURE_2D), "bindImage is for 2D textures")
        glBindImageTexture(GLuint(unit), name, 0, GLboolean(GL_FALSE), 0, access.glAccess, format.internalFormat)
    }
}

/// Textures with a framebuffer object around them: something a pass draws into (one colour
/// attachment, or several written at once by one draw) and later samples or reads back.
public final class RenderTarget {
    /// Colour attachment 0, 1, …
    public let textures: [Texture]
    let framebuffer: GLuint
    private let home: GLObjectHome
    /// How a packed frame is read out of this target, when it is not simply all of attachment 0
    /// (set by whoever lays the frame out; see `FrameReadback`).
    package var readPlan: [ReadRegion]?

    /// Colour attachment 0: what a one-attachment pass draws into.
    public var texture: Texture { textures[0] }
    /// The size of the attachments in pixels.
    public var size: Size { texture.size }
    /// Bytes of storage, every attachment.
    package var byteCount: Int { size.width * size.height * texture.format.bytesPerTexel * textures.count }

    /// A framebuffer with `attachments` (at least one) textures of `size` and `format`; on the context's GPU thread (inside `perform`).
    public init(size: Size, format: TextureFormat = .rgba8, linear: Bool = true, attachments: Int = 1) throws {
        textures = try (0..<max(attachments, 1)).map { _ in try Texture(size: size, format: format, linear: linear) }
        home = GLObjectHome(.framebuffer)
        var fbo: GLuint = 0
        glGenFramebuffers(1, &fbo)
        framebuffer = fbo
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
        for (index, texture) in textures.enumerated() {
            glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0) + GLenum(index),
                                   GLenum(GL_TEXTURE_2D), texture.name, 0)
        }
        let buffers = textures.indices.map { GLenum(GL_COLOR_ATTACHMENT0) + GLenum($0) }
        glDrawBuffers(GLsizei(buffers.count), buffers)
        let status = glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
        guard status == GLenum(GL_FRAMEBUFFER_COMPLETE) else {
            // deinit deletes the framebuffer (every property is set by now).
            throw GLError("glCheckFramebufferStatus", code: status,
                          detail: "render target \(size) \(format) ×\(textures.count) incomplete")
        }
    }

    deinit {
        let framebuffer = self.framebuffer
        home.delete {
            var name = framebuffer
            glDeleteFramebuffers(1, &name)
        }
    }

    /// Makes this the draw target with a viewport covering it.
    public func bindForDrawing() {
        home.check()
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer)
        glViewport(0, 0, GLsizei(size.width), GLsizei(size.height))
    }

    /// Limits the draws into this target (bound with `bindForDrawing`) to `area` (texel columns and rows).
    public func setViewport(_ area: PixelRect) {
        home.check()
        glViewport(GLint(area.x.lowerBound), GLint(area.y.lowerBound), GLsizei(area.x.count), GLsizei(area.y.count))
    }

    /// Fills every attachment with transparent black.
    public func clear() {
        bindForDrawing()
        glClearColor(0, 0, 0, 0)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
    }

    /// Attachment 0 as RGBA floats, row 0 first (a float target's exact values; for checks and analysis,
    /// not the frame path, which reads back through `FrameReadback`).
    package func readRGBAFloats() -> [Float] {
        var texels = [Float](repeating: 0, count: size.pixelCount * 4)
        bindForReading()
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 4)
        glReadPixels(0, 0, GLsizei(size.width), GLsizei(size.height), GLenum(GL_RGBA), GLenum(GL_FLOAT), &texels)
        return texels
    }

    /// Binds the framebuffer for reading (readback).
    func bindForReading() {
        home.check()
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), framebuffer)
    }
}

/// One block of texels read from a render target into a packed frame buffer.
package struct ReadRegion: Hashable, Sendable {
    /// The colour attachment to read.
    package var attachment: Int
    /// The first texel column read.
    package var x: Int
    /// Texels from `x` and rows from the target's first row.
    package var width: Int
    package var rows: Int
    /// Where the first row lands in the buffer.
    package var destinationOffset: Int
    /// Bytes from one row to the next in the buffer (a multiple of 4; more than the row to interleave).
    package var destinationRowBytes: Int

    package init(attachment: Int, x: Int = 0, width: Int, rows: Int, destinationOffset: Int, destinationRowBytes: Int) {
        self.attachment = attachment
        self.x = x
        self.width = width
        self.rows = rows
        self.destinationOffset = destinationOffset
        self.destinationRowBytes = destinationRowBytes
    }
}

/// Render targets reused by size, format and attachments, so a steady-state chain allocates nothing per
/// frame and a graph compiled again takes back the targets that fit. One per GPU context
/// (`GPUResources.targets`, shared by its renderers); lives and dies on its GPU thread.
package final class TexturePool {
    private struct Key: Hashable { var size: Size; var format: TextureFormat; var attachments: Int }
    private var free: [Key: [RenderTarget]] = [:]
    /// Free targets in the order they came back, for the bound.
    private var freeOrder: [ObjectIdentifier] = []
    private var freeBytes = 0
    /// The most bytes of free targets kept: beyond it the oldest are deleted (a dev session trying many
    /// sizes would otherwise keep every one).
    package let maxFreeBytes: Int
    /// Targets ever created; stays flat once the pipeline is warm.
    package private(set) var createdCount = 0

    package init(maxFreeBytes: Int = 256 << 20) { self.maxFreeBytes = maxFreeBytes }

    /// The pool of the context current on the calling thread; stops off a GPU thread.
    package static var current: TexturePool { GPUResources.current.targets }

    /// A target of this shape: a free one (cleared to transparent black, as a new one reads) or a new one.
    package func acquire(size: Size, format: TextureFormat = .rgba8, attachments: Int = 1) throws -> RenderTarget {
        let key = Key(size: size, format: format, attachments: attachments)
        if let target = free[key]?.popLast() {
            freeBytes -= Self.bytes(key)
            freeOrder.removeAll { $0 == ObjectIdentifier(target) }
            target.clear()
            return target
        }
        createdCount += 1
        return try RenderTarget(size: size, format: format, attachments: attachments)
    }

    package func release(_ target: RenderTarget) {
        target.readPlan = nil
        let key = Key(size: target.size, format: target.texture.format, attachments: target.textures.count)
        free[key, default: []].append(target)
        freeOrder.append(ObjectIdentifier(target))
        freeBytes += Self.bytes(key)
        while freeBytes > maxFreeBytes, let oldest = freeOrder.first {
            freeOrder.removeFirst()
            for (key, targets) in free {
                guard let index = targets.firstIndex(where: { ObjectIdentifier($0) == oldest }) else { continue }
                free[key]!.remove(at: index)
                freeBytes -= Self.bytes(key)
                break
            }
        }
    }

    /// Deletes every free target.
    package func removeAll() {
        free.removeAll()
        freeOrder.removeAll()
        freeBytes = 0
    }

    private static func bytes(_ key: Key) -> Int {
        key.size.width * key.size.height * key.format.bytesPerTexel * key.attachments
    }
}
