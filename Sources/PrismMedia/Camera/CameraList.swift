import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// One V4L2 video capture node, as `prism devices` lists it.
public struct CameraDescription: Sendable, CustomStringConvertible {
    /// One pixel format the node offers (VIDIOC_ENUM_FMT), with its sizes and rates.
    public struct Format: Sendable {
        /// The V4L2 pixel format code (`YUYV`, `MJPG`, `NV12`…).
        package var fourcc: FourCC
        /// The driver's description of the format.
        public var name: String
        /// Discrete sizes, or for a range its smallest and largest (`isRange`).
        public var sizes: [Size]
        /// True when the driver gives a continuous or stepwise range of sizes: `sizes` is then its smallest and largest.
        public var isRange: Bool
        /// Rates offered at the first size, when the driver lists them.
        public var frameRates: [Rational]
        /// Prism takes this format: uploads it as it is, or (MJPG) decodes it first.
        public var isUsable: Bool { fourcc.pixelFormat != nil || fourcc == .mjpeg }
    }

    /// The device node, e.g. /dev/video0.
    public var path: String
    /// The card name the driver reports (VIDIOC_QUERYCAP), e.g. the camera's model.
    public var card: String
    /// The kernel driver's name, e.g. "uvcvideo".
    public var driver: String
    /// Where the device sits (the driver's `bus_info`, e.g. "usb-0000:00:14.0-1"); may be empty.
    public var busInfo: String
    /// The capture formats the node offers, in the driver's order.
    public var formats: [Format]
    /// Why the node cannot be used for capture (nil when it can).
    public var problem: String?

    public var description: String {
        var lines = ["\(path): \(card) (driver \(driver)\(busInfo.isEmpty ? "" : ", \(busInfo)"))"]
        if let problem { lines.append("    unusable: \(problem)") }
        for format in formats {
            let sizes = format.isRange
                ? format.sizes.map(\.description).joined(separator: " to ")
                : format.sizes.map(\.description).joined(separator: ", ")
            var line = "    \(format.fourcc) (\(format.name)): \(sizes.isEmpty ? "sizes not listed" : sizes)"
            if !format.frameRates.isEmpty { line += "; " + format.frameRates.map { "\($0)" }.joined(separator: "/") + " fps" }
            line += format.isUsable ? "" : " [not taken by Prism]"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

extension CameraSource {
    /// The highest N `list()` probes in /dev/videoN.
    package static let probedNodes = 0..<64

    /// The video capture devices at /dev/video0 … /dev/video63: each node is opened (the same `open` a
    /// capture makes; absent nodes are skipped), asked VIDIOC_QUERYCAP, and for capture nodes
    /// VIDIOC_ENUM_FMT, VIDIOC_ENUM_FRAMESIZES and VIDIOC_ENUM_FRAMEINTERVALS. Nodes that are not video
    /// capture (a UVC camera's metadata node, codecs) are left out; nodes that cannot be opened (busy,
    /// no permission) are listed with the reason.
    package static func list() -> [CameraDescription] {
        var cameras: [CameraDescription] = []
        for number in probedNodes {
            let path = "/dev/video\(number)"
            let device: V4L2Device
            do {
                device = try V4L2Device(path: path)
            } catch {
                if error.code == ENOENT || error.code == ENODEV || error.code == ENXIO { continue }
                cameras.append(CameraDescription(path: path, card: "?", driver: "?", busInfo: "", formats: [],
                                                 problem: "\(error.call): \(String(cString: strerror(error.code)))"))
                continue
            }
            guard let capabilities = try? device.capabilities(), capabilities.canCapture else { continue }
            var formats: [CameraDescription.Format] = []
            for entry in (try? device.formats()) ?? [] {
                let (sizes, isRange) = device.frameSizes(entry.fourcc)
                let rates = sizes.first.map { device.frameRates(entry.fourcc, $0) } ?? []
                formats.append(.init(fourcc: entry.fourcc, name: entry.description, sizes: sizes, isRange: isRange,
                                     frameRates: rates))
            }
            let problem = capabilities.canStream ? nil : "no streaming I/O (it offers: \(capabilities.summary))"
            cameras.append(CameraDescription(path: path, card: capabilities.card, driver: capabilities.driver,
                                             busInfo: capabilities.busInfo, formats: formats, problem: problem))
        }
        return cameras
    }
}
