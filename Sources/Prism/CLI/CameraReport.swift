import PrismMedia

/// The camera half of `prism devices`: every V4L2 video capture node with its formats and sizes.
enum CameraReport {
    static func make() -> String {
        let cameras = CameraSource.list()
        guard !cameras.isEmpty else { return "cameras: none (no video capture device at /dev/video0 … /dev/video63)" }
        return (["cameras (prism run /dev/videoN …; Prism takes YUYV, NV12 and YU12):"] + cameras.map(\.description))
            .joined(separator: "\n")
    }
}
