import CMediaShims
import CSystemShims
import CV4L2
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// A failing V4L2 call on a device: the call (`open`, `VIDIOC_QUERYCAP`, `mmap`, `poll`…), the device
/// path and the system's message for errno, or Prism's own explanation when the call succeeded but the
/// answer is unusable (`code` 0). Said of a "camera" unless `subject` names the device's role otherwise
/// ("virtual camera" for an output device).
public struct V4L2Error: PrismError {
    /// The device path, e.g. /dev/video0.
    public let device: String
    /// The call or ioctl that failed, e.g. "VIDIOC_S_FMT".
    public let call: String
    /// errno, or 0 when the problem is not a failing system call.
    public let code: Int32
    /// What went wrong beyond errno (or instead of it when `code` is 0).
    public let detail: String
    /// What the device is to Prism, first in the message: "camera", "virtual camera".
    public let subject: String

    /// The failure of `call` on `device` with errno `code` (0: not a failing system call, `detail` says why).
    public init(device: String, call: String, code: Int32, subject: String = "camera", detail: String = "") {
        self.device = device
        self.call = call
        self.code = code
        self.subject = subject
        self.detail = detail
    }

    public var description: String {
        var text = "\(subject) \(device): \(call): "
        if code != 0 {
            text += String(cString: strerror(code))
            if !detail.isEmpty { text += " (\(detail))" }
        } else {
            text += detail
        }
        return text
    }
}

/// A V4L2 pixel format code (`v4l2_fourcc`): four ASCII characters, first in the lowest byte.
package struct FourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From four characters, e.g. "YUYV".
    package init(_ code: StaticString) {
        precondition(code.utf8CodeUnitCount == 4, "a fourcc has four characters")
        let bytes = code.utf8Start
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    package static let yuyv = FourCC("YUYV")
    package static let nv12 = FourCC("NV12")
    /// Planar Y, Cb, Cr 4:2:0 (FFmpeg's yuv420p, "I420").
    package static let yu12 = FourCC("YU12")
    package static let mjpeg = FourCC("MJPG")

    /// The Prism pixel format with this memory layout, for the formats Prism uploads.
    package var pixelFormat: PixelFormat? {
        switch self {
        case .yuyv: return .yuyv422
        case .nv12: return .nv12
        case .yu12: return .yuv420p
        default: return nil
        }
    }

    package init?(_ format: PixelFormat) {
        switch format {
        case .yuyv422: self = .yuyv
        case .nv12: self = .nv12
        case .yuv420p: self = .yu12
        default: return nil
        }
    }

    package var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
        let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        return printable ? String(decoding: bytes, as: UTF8.self).trimmingTrailingSpaces : "0x" + String(rawValue, radix: 16)
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// An open V4L2 device node. Owns the file descriptor (`close` in deinit) and wraps, one method each,
/// the ioctls Prism issues, turning failures into `V4L2Error`s that name the call and the device.
/// The descriptor never changes, and the kernel serialises ioctls on it, so the object may be shared.
final class V4L2Device {
    let path: String
    let fd: Int32

    /// `open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)`: non-blocking, so VIDIOC_DQBUF never sleeps and
    /// waiting is `poll`'s job (with a timeout).
    init(path: String) throws(V4L2Error) {
        self.path = path
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw V4L2Error(device: path, call: "open", code: code,
                            detail: code == EACCES ? "is the user in the video group?" : "")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// `ioctl(fd, request, &argument)` (EINTR retried); errno on failure, 0 on success.
    func call<Argument>(_ request: UInt, _ argument: inout Argument) -> Int32 {
        withUnsafeMutablePointer(to: &argument) { pointer in
            prism_ioctl(fd, request, UnsafeMutableRawPointer(pointer)) == 0 ? 0 : errno
        }
    }

    /// `ioctl(fd, request, &argument)`, throwing a `V4L2Error` named `name` on failure.
    func check<Argument>(_ request: UInt, _ name: String, _ argument: inout Argument, detail: String = "") throws(V4L2Error) {
        let code = call(request, &argument)
        if code != 0 { throw V4L2Error(device: path, call: name, code: code, detail: detail) }
    }

    func error(_ call: String, _ detail: String) -> V4L2Error {
        V4L2Error(device: path, call: call, code: 0, detail: detail)
    }

    // MARK: queries

    /// VIDIOC_QUERYCAP.
    func capabilities() throws(V4L2Error) -> DeviceCapabilities {
        var capability = v4l2_capability()
        let code = call(prism_vidioc_querycap(), &capability)
        if code != 0 {
            throw V4L2Error(device: path, call: "VIDIOC_QUERYCAP", code: code,
                            detail: code == ENOTTY || code == EINVAL ? "not a V4L2 device" : "")
        }
        return DeviceCapabilities(capability)
    }

    /// VIDIOC_ENUM_FMT for video capture (or `type`), until EINVAL ends the list.
    func formats(_ type: v4l2_buf_type = V4L2_BUF_TYPE_VIDEO_CAPTURE) throws(V4L2Error)
        -> [(fourcc: FourCC, description: String, compressed: Bool)] {
        var result: [(FourCC, String, Bool)] = []
        for index in UInt32(0)..<64 {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = type.rawValue
            let code = call(prism_vidioc_enum_fmt(), &description)
            if code == EINVAL { break }
            if code != 0 { throw V4L2Error(device: path, call: "VIDIOC_ENUM_FMT", code: code) }
            let name = withUnsafeBytes(of: description.description) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            result.append((FourCC(rawValue: description.pixelformat), name,
                           description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0))
        }
        return result
    }

    /// VIDIOC_ENUM_FRAMESIZES for a format: the discrete sizes, or for stepwise/continuous ranges their
    /// smallest and largest sizes (`isRange` true). Empty when the driver does not enumerate sizes.
    func frameSizes(_ fourcc: FourCC) -> (sizes: [Size], isRange: Bool) {
        var sizes: [Size] = []
        for index in UInt32(0)..<256 {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourcc.rawValue
            guard call(prism_vidioc_enum_framesizes(), &size) == 0 else { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append(Size(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            } else {
                let range = size.stepwise
                return ([Size(width: Int(range.min_width), height: Int(range.min_height)),
                         Size(width: Int(range.max_width), height: Int(range.max_height))], true)
            }
        }
        return (sizes, false)
    }

    /// VIDIOC_ENUM_FRAMEINTERVALS: the discrete rates offered for a format and size (empty when the
    /// driver gives ranges or nothing).
    func frameRates(_ fourcc: FourCC, _ size: Size) -> [Rational] {
        var rates: [Rational] = []
        for index in UInt32(0)..<64 {
            var interval = v4l2_frmivalenum()
            interval.index = index
            interval.pixel_format = fourcc.rawValue
            interval.width = UInt32(size.width)
            interval.height = UInt32(size.height)
            guard call(prism_vidioc_enum_frameintervals(), &interval) == 0,
                  interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue else { break }
            let fraction = interval.discrete
            guard fraction.numerator > 0, fraction.denominator > 0,
                  let rate = Rational(exactly: fraction.denominator, fraction.numerator) else { continue }
            rates.append(rate)
        }
        return rates
    }

    /// VIDIOC_G_FMT (single-planar video capture).
    func format() throws(V4L2Error) -> v4l2_pix_format {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try check(prism_vidioc_g_fmt(), "VIDIOC_G_FMT", &format)
        return format.fmt.pix
    }

    /// VIDIOC_S_FMT; returns what the driver chose (it adjusts rather than fails).
    @discardableResult
    func setFormat(_ fourcc: FourCC, _ size: Size) throws(V4L2Error) -> v4l2_pix_format {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.pixelformat = fourcc.rawValue
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try check(prism_vidioc_s_fmt(), "VIDIOC_S_FMT", &format, detail: "\(fourcc) \(size)")
        return format.fmt.pix
    }

    /// VIDIOC_G_PARM: the current frame rate, nil when the driver cannot set one (no V4L2_CAP_TIMEPERFRAME)
    /// or reports none.
    func frameRate() -> (rate: Rational?, settable: Bool) {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        guard call(prism_vidioc_g_parm(), &parameters) == 0 else { return (nil, false) }
        let capture = parameters.parm.capture
        let settable = capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0
        let period = capture.timeperframe
        return (Rational(exactly: period.denominator, period.numerator), settable)
    }

    /// VIDIOC_S_PARM with `timeperframe` = 1/rate; returns the rate the driver chose.
    func setFrameRate(_ rate: Rational) throws(V4L2Error) -> Rational? {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: UInt32(rate.den), denominator: UInt32(rate.num))
        try check(prism_vidioc_s_parm(), "VIDIOC_S_PARM", &parameters, detail: "\(rate) fps")
        let period = parameters.parm.capture.timeperframe
        return Rational(exactly: period.denominator, period.numerator)
    }
}

/// What VIDIOC_QUERYCAP says about one device node.
struct DeviceCapabilities: Sendable {
    var driver: String
    var card: String
    var busInfo: String
    /// The node's own capabilities (`device_caps` when V4L2_CAP_DEVICE_CAPS is set, else `capabilities`).
    var flags: UInt32

    init(_ capability: v4l2_capability) {
        func text<T>(_ tuple: T) -> String {
            withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        driver = text(capability.driver)
        card = text(capability.card)
        busInfo = text(capability.bus_info)
        flags = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    }

    var canCapture: Bool { flags & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
    var canStream: Bool { flags & UInt32(V4L2_CAP_STREAMING) != 0 }

    /// The capabilities in words, for error messages.
    var summary: String {
        let names: [(Int32, String)] = [
            (V4L2_CAP_VIDEO_CAPTURE, "video capture"), (V4L2_CAP_VIDEO_CAPTURE_MPLANE, "multi-planar video capture"),
            (V4L2_CAP_VIDEO_OUTPUT, "video output"), (V4L2_CAP_VIDEO_OUTPUT_MPLANE, "multi-planar video output"),
            (V4L2_CAP_VIDEO_M2M, "memory-to-memory"), (V4L2_CAP_VIDEO_M2M_MPLANE, "multi-planar memory-to-memory"),
            (V4L2_CAP_META_CAPTURE, "metadata capture"), (V4L2_CAP_VBI_CAPTURE, "VBI capture"),
            (V4L2_CAP_RADIO, "radio"), (V4L2_CAP_READWRITE, "read/write I/O"), (V4L2_CAP_STREAMING, "streaming I/O"),
        ]
        let present = names.filter { flags & UInt32($0.0) != 0 }.map(\.1)
        return present.isEmpty ? "none" : present.joined(separator: ", ")
    }
}

extension Rational {
    /// `num/den` from unsigned driver values; nil when zero or too large for Int32.
    init?(exactly num: UInt32, _ den: UInt32) {
        guard num > 0, den > 0, num <= UInt32(Int32.max), den <= UInt32(Int32.max) else { return nil }
        var a = num, b = den
        while b != 0 { (a, b) = (b, a % b) }
        self.init(Int32(num / a), Int32(den / a))
    }
}
