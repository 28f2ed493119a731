import CMicroHTTPD
import PrismBuildInfo
import PrismGPU
import PrismMedia
import PrismVision

/// What `prism --version` prints: Prism's version and commit, then each library's version as loaded.
/// The GL line comes from a context made for the purpose (cheap, no frames); without one it says why.
enum VersionReport {
    static func make() -> String {
        var lines = ["prism \(BuildInfo.version) (commit \(BuildInfo.commit))"]
        let ffmpeg = MediaLibraries.ffmpeg
        lines.append("FFmpeg \(ffmpeg.release): " + ffmpeg.libraries.map { "\($0.name) \($0.version)" }.joined(separator: ", "))
        do {
            let gpu = try GPUContext()
            let info = gpu.info
            gpu.close()
            lines.append("GL: \(info.renderer); \(info.version); \(info.shadingLanguageVersion); vendor \(info.vendor)")
            lines.append("EGL \(info.eglVersion) (\(info.eglVendor), \(info.platform.rawValue) platform)")
        } catch {
            lines.append("GL: unavailable (\(error))")
        }
        lines.append("OpenCV \(CascadeFaceDetector.openCVVersion)")
        lines.append("libmicrohttpd \(String(cString: MHD_get_version()))")
        lines.append("alsa-lib \(MediaLibraries.alsa)")
        return lines.joined(separator: "\n")
    }
}
