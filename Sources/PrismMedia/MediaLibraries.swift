import CALSA
import CFFmpeg

/// The media libraries' versions as loaded at run time (`prism --version`), which may differ from the
/// headers Prism was built against.
package enum MediaLibraries {
    /// FFmpeg's release (`av_version_info`) and each library's `*_version()` as major.minor.micro.
    package static var ffmpeg: (release: String, libraries: [(name: String, version: String)]) {
        func dotted(_ packed: UInt32) -> String { "\(packed >> 16).\((packed >> 8) & 0xff).\(packed & 0xff)" }
        return (String(cString: av_version_info()),
                [("libavcodec", dotted(avcodec_version())), ("libavformat", dotted(avformat_version())),
                 ("libavutil", dotted(avutil_version()))])
    }

    /// alsa-lib's version (`snd_asoundlib_version`).
    package static var alsa: String { String(cString: snd_asoundlib_version()) }
}
