// swift-tools-version:6.0
import PackageDescription

// System libraries come from Debian (see .ci/run); each wrapper target is a module map plus one header.
let package = Package(
    name: "Prism",
    products: [
        .executable(name: "prism", targets: ["prism"]),
        // Test support, never linked into prism: an emulated V4L2 camera the camera tests LD_PRELOAD into the tool.
        .library(name: "FakeV4L2", type: .dynamic, targets: ["FakeV4L2"]),
    ],
    targets: [
        .systemLibrary(name: "CEGL", pkgConfig: "egl", providers: [.apt(["libegl-dev", "libegl-mesa0"])]),
        .systemLibrary(name: "CGLES", pkgConfig: "glesv2", providers: [.apt(["libgles-dev", "libgl1-mesa-dri"])]),
        .systemLibrary(name: "CGBM", pkgConfig: "gbm", providers: [.apt(["libgbm-dev"])]),
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "libswscale-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CV4L2", providers: [.apt(["linux-libc-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // What Swift cannot import directly: EGL extension entry points, FFmpeg macros, ioctl numbers.
        .target(name: "CShims", dependencies: ["CEGL", "CGLES", "CFFmpeg", "CV4L2"],
                linkerSettings: [.linkedLibrary("EGL"), .linkedLibrary("GLESv2"), .linkedLibrary("avutil")]),

        // Vocabulary every layer shares: time, sizes, pixel formats, colour spaces, the error protocol.
        .target(name: "PrismCore"),
        .target(name: "PrismGPU", dependencies: ["PrismCore", "CEGL", "CGLES", "CGBM", "CShims"]),
        .target(name: "PrismFilters", dependencies: ["PrismCore", "PrismGPU"], resources: [.copy("Shaders")]),
        .target(name: "PrismMedia", dependencies: ["PrismCore", "CFFmpeg", "CALSA", "CV4L2", "CShims"]),
        .target(name: "Prism", dependencies: ["PrismGPU", "PrismFilters", "PrismMedia", "PrismVision", "CMicroHTTPD", "CShims"]),
        .executableTarget(name: "prism", dependencies: ["Prism"]),
        // Prints what face detection costs on a clip (BENCHMARKS.md), until `prism bench` measures it.
        .executableTarget(name: "face-bench", dependencies: ["PrismGPU", "PrismFilters", "PrismMedia", "PrismVision"],
                          path: "Sources/FaceBench"),
        // OpenCV's cascade face detector behind a C API (Swift cannot import its C++ headers). Debian's
        // libopencv-objdetect-dev ships no opencv4.pc (only the whole libopencv-dev does), so the include
        // directory and libraries are named here.
        .target(name: "CFaceDetect",
                cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
                linkerSettings: [.linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"),
                                 .linkedLibrary("opencv_core"), .linkedLibrary("stdc++")]),
        // Face detection on a small luma image, tracking, regions for the graph, sidecars.
        .target(name: "PrismVision", dependencies: ["PrismCore", "PrismFilters", "CFaceDetect"]),
        .target(name: "FakeV4L2", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),

        .testTarget(name: "PrismCoreTests", dependencies: ["PrismCore"]),
        .testTarget(name: "PrismGPUTests", dependencies: ["PrismGPU"]),
        .testTarget(name: "PrismFiltersTests", dependencies: ["PrismFilters"]),
        .testTarget(name: "PrismMediaTests", dependencies: ["PrismMedia"]),
        .testTarget(name: "PrismVisionTests", dependencies: ["PrismVision", "PrismMedia"]),
        .testTarget(name: "PrismTests", dependencies: ["Prism"]),
    ],
    swiftLanguageModes: [.v6]
)
