import Foundation
import PrismCore
import PrismMedia
import PrismPipeline

/// Where a session's frames go when it writes them.
public enum OutputSpec: Sendable, Equatable {
    /// A movie file; its extension picks the container.
    case movie(String)
    /// One frame as a PNG or JPEG photo (the seed's "take photo").
    case still(String)
    /// Raw frames on standard output in this pixel format.
    case standardOutput(PixelFormat)
    /// Frames packed in this format and read back, then dropped: the whole GPU path without an output
    /// (what benchmarks compare with FFmpeg's `-f null`).
    case discard(PixelFormat)
    /// A V4L2 output device (v4l2loopback): a virtual camera other programs capture the frames from.
    case virtualCamera(String)

    /// A file path as `prism run -o` reads it: a photo for .png/.jpg/.jpeg, otherwise a movie.
    public static func file(_ path: String) -> OutputSpec {
        ["png", "jpg", "jpeg"].contains((path as NSString).pathExtension.lowercased()) ? .still(path) : .movie(path)
    }

    /// An OUTPUT argument naming a V4L2 device, as INPUT names a camera: `v4l2:` and a device path, a path
    /// under /dev/video, or another path to a character device of the video4linux major (81; a udev link
    /// such as /dev/v4l/by-id/…). Nothing is opened here: whether it is an output device is the sink's check.
    public static func virtualCameraPath(_ argument: String) -> String? {
        if let path = InputSpec.cameraPath(argument) { return path }
        var info = stat()
        guard argument.hasPrefix("/"), stat(argument, &info) == 0, info.st_mode & S_IFMT == S_IFCHR else { return nil }
        // glibc's major(): bits 8-19 and 32-63 of the device number (a macro Swift cannot call).
        let major = (info.st_rdev >> 8) & 0xfff | (info.st_rdev >> 32) & ~0xfff
        return major == 81 ? argument : nil
    }
}

/// One of a session's outputs with the settings that are its own (`prism run -o A -o B`, options before
/// an `-o` scoped to it).
public struct SessionOutput: Sendable {
    /// Where the frames go. A `.movie` is a file, a pipe (`pipe:1`), a network URL (`rtmp://…`, `srt://…`)
    /// or an HLS/DASH playlist (`.m3u8`, `.mpd`).
    public var spec: OutputSpec { didSet { destination = nil } }
    /// The container's muxer name (`--format`); nil: from the extension or the URL's scheme.
    public var format: String? { didSet { destination = nil } }
    /// A movie output's place and container once `resolve()` has found them (the session resolves what is
    /// not resolved yet); nil for other outputs.
    public private(set) var destination: MovieDestination?
    /// This output's encoder; nil: the session's (`Session.Options.encoder`).
    public var encoder: VideoEncoderSettings?
    /// How an HLS or DASH output is cut and kept.
    public var playlist = PlaylistSettings()

    public init(_ spec: OutputSpec, format: String? = nil, encoder: VideoEncoderSettings? = nil) {
        self.spec = spec
        self.format = format
        self.encoder = encoder
    }

    /// Finds a movie output's place and container once (a bad extension, scheme or `format` fails here):
    /// what the checks and the sink then read.
    public mutating func resolve() throws {
        guard case .movie(let path) = spec, destination == nil else { return }
        destination = try MovieDestination(path, format: format)
    }

    /// A movie output's place and container: the one `resolve()` found, or found now.
    public func movieDestination(_ path: String) throws -> MovieDestination {
        try destination ?? MovieDestination(path, format: format)
    }

    /// An HLS or DASH playlist (by `format`, or the name's extension).
    public var isPlaylist: Bool {
        guard case .movie(let path) = spec, let destination = try? movieDestination(path) else { return false }
        if case .playlist = destination.kind { return true }
        return false
    }
}

extension OutputSpec {
    /// Whether frames written here can carry HDR and 10 bits: raw frames in a 10-bit format can, a still
    /// never can; nil: a movie, whose encoder says.
    public var isDeep: Bool? {
        switch self {
        case .standardOutput(let format), .discard(let format): return format.bitDepth > 8
        case .still, .virtualCamera: return false
        case .movie: return nil
        }
    }
}
