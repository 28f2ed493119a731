import Foundation
import PrismKit

/// `prism_pixel_format` (prism.h): the C names' numbers, fixed by the header (not PixelFormat's case order).
enum CPixelFormat {
    static let table: [(code: Int32, format: PixelFormat)] = [
        (0, .rgba), (1, .bgra), (2, .yuv420p), (3, .nv12), (4, .yuyv422), (5, .yuv422p), (6, .yuv444p),
        (7, .yuv420p10le), (8, .gray),
    ]

    static func format(_ code: Int32) throws -> PixelFormat {
        guard let entry = table.first(where: { $0.code == code }) else {
            throw CAPIError.argument("unknown pixel format \(code) (prism.h's PRISM_FORMAT_* are 0...\(table.count - 1))")
        }
        return entry.format
    }

    static func code(_ format: PixelFormat) -> Int32 { table.first { $0.format == format }?.code ?? -1 }
}

/// `prism_options`: a run's settings by name, checked as they are set and applied when a session opens.
final class COptions {
    private(set) var session = Session.Options()
    /// `params`: `[NODE.]NAME=VALUE`, set on the graph once it is bound.
    private(set) var parameters: [GraphParameters.Assignment] = []
    /// Frames the run may be ahead of the consumer (`Session.frames(buffered:)`).
    private(set) var buffered = 2
    // Pushed frames only.
    private(set) var colorMatrix: ColorMatrix?
    private(set) var colorRange: ColorRange?
    private(set) var timeBase: Rational?
    private(set) var queue = 3

    init() {}

    func copy() -> COptions {
        let copy = COptions()
        copy.session = session
        copy.parameters = parameters
        copy.buffered = buffered
        copy.colorMatrix = colorMatrix
        copy.colorRange = colorRange
        copy.timeBase = timeBase
        copy.queue = queue
        return copy
    }

    /// The names `prism_options_set` takes, in prism.h's order.
    static let names = ["size", "fps", "frames", "duration", "gpu", "params", "mirror", "autorotate", "face-model",
                        "face-every", "faces-in", "codec", "crf", "preset", "buffered", "color-matrix", "color-range",
                        "time-base", "queue"]

    /// How the library's messages spell the settings that are options here (`autorotate=0`); the others
    /// are spelt as `Session.Options` names them, the C API having no option of its own for them.
    static let settingNames: [Setting: String] = [.size: "size", .codec: "codec", .facesIn: "faces-in",
                                                  .noAutorotate: "autorotate=0"]

    func set(_ name: String, _ value: String) throws {
        func bad(_ expected: String) -> CAPIError { .argument("option \(name): '\(value)' is not \(expected)") }
        func count(_ range: ClosedRange<Int>) throws -> Int {
            guard let number = Int(value), range.contains(number) else { throw bad("a whole number in \(range.lowerBound)...\(range.upperBound)") }
            return number
        }
        func flag() throws -> Bool {
            switch value.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw bad("0 or 1")
            }
        }
        switch name {
        case "size":
            guard let size = Size(parsing: value), size.width > 0, size.height > 0 else { throw bad("a size WxH") }
            session.size = size
        case "fps":
            guard let rate = Rational(frameRate: value) else { throw bad("a frame rate (30, 29.97, 30000/1001)") }
            session.frameRate = rate
        case "frames": session.frameLimit = try count(1...Int(Int32.max))
        case "duration":
            guard let seconds = Double(value), seconds > 0, seconds < 1e9 else { throw bad("a positive number of seconds") }
            session.durationLimit = MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000)
        case "gpu": session.gpu.deviceIndex = try count(0...255)
        case "params": parameters = try GraphParameters.parse(value)
        case "mirror": session.mirror = try flag()
        case "autorotate": session.autorotate = try flag()
        case "face-model": session.faces.model = value
        case "face-every": session.faces.every = try count(1...100_000)
        case "faces-in": session.faces.sidecarIn = value
        case "codec":
            guard let codec = VideoEncoderSettings.Codec(rawValue: value) else {
                throw bad("a codec (\(VideoEncoderSettings.Codec.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            session.encoder.codec = codec
        case "crf": session.encoder.crf = try count(0...63)
        case "preset": session.encoder.preset = value
        case "buffered": buffered = try count(1...64)
        case "color-matrix":
            guard let matrix = ColorMatrix(rawValue: value) else { throw bad("bt601, bt709 or bt2020") }
            colorMatrix = matrix
        case "color-range":
            guard let range = ColorRange(rawValue: value) else { throw bad("limited or full") }
            colorRange = range
        case "time-base":
            guard let base = Rational(parsing: value), base.num > 0, base.den > 0 else { throw bad("a time base N/D, e.g. 1/1000000000") }
            timeBase = base
        case "queue": queue = try count(1...64)
        default:
            throw CAPIError.argument("unknown option '\(name)' (options: \(Self.names.joined(separator: ", ")))")
        }
    }

    /// The colour of pushed frames: what was set, the rest as for an untagged movie of `size`.
    func colorSpace(for size: Size) -> YUVColorSpace? {
        guard colorMatrix != nil || colorRange != nil else { return nil }
        return YUVColorSpace(matrix: colorMatrix ?? .defaultFor(size), range: colorRange ?? .limited)
    }
}

@_cdecl("prism_options_new")
public func prism_options_new() -> OpaquePointer? { retained(COptions()) }

@_cdecl("prism_options_set")
public func prism_options_set(_ options: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    cCall {
        try handle(options, COptions.self, "options").set(try string(name, "name"), try string(value, "value"))
        return .ok
    }
}

@_cdecl("prism_options_free")
public func prism_options_free(_ options: OpaquePointer?) { release(options) }
