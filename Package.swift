// swift-tools-version:6.0
import PackageDescription

// System libraries come from Debian (see .ci/run); each wrapper target is a module map plus one header.
let package = Package(
    name: "Prism",
    products: [
        .executable(name: "prism", targets: ["prism"]),
        // The engine as a library: open a source, set a graph, receive frames, write movies and stills.
        .library(name: "PrismKit", targets: ["PrismKit"]),
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
        // What Swift cannot import directly, split by what it links: libc only (thread names, ioctl),
        // EGL/GLES (extension entry points; PrismGPU only), FFmpeg/V4L2 (macros, ioctl numbers; media only).
        .target(name: "CSystemShims"),
        .target(name: "CGPUShims", dependencies: ["CEGL", "CGLES"],
                linkerSettings: [.linkedLibrary("EGL"), .linkedLibrary("GLESv2")]),
        .target(name: "CMediaShims", dependencies: ["CFFmpeg", "CV4L2"], linkerSettings: [.linkedLibrary("avutil")]),

        // Vocabulary every layer shares: time, sizes, pixel formats, colour spaces, the error protocol.
        .target(name: "PrismCore"),
        .target(name: "PrismGPU", dependencies: ["PrismCore", "CEGL", "CGLES", "CGBM", "CGPUShims", "CSystemShims"]),
        // ONNX's own library (the protobuf schema, checker, shape inference) behind a C API: Swift cannot import
        // its C++ headers. Debian's libonnx-dev ships no pkg-config file; its CMake config names these defines.
        .target(name: "CONNX",
                cxxSettings: [.define("ONNX_NAMESPACE", to: "onnx"), .define("ONNX_ML", to: "1")],
                linkerSettings: [.linkedLibrary("onnx"), .linkedLibrary("onnx_proto"), .linkedLibrary("protobuf"),
                                 .linkedLibrary("stdc++")]),
        .target(name: "PrismFilters", dependencies: ["PrismCore", "PrismGPU", "CONNX"], resources: [.copy("Shaders")]),
        .target(name: "PrismMedia", dependencies: ["PrismCore", "CFFmpeg", "CALSA", "CV4L2", "CMediaShims", "CSystemShims"]),
        // The one frame engine: source → GPU (graph, readback) → sinks, with taps and side inputs.
        .target(name: "PrismPipeline", dependencies: ["PrismCore", "PrismGPU", "PrismFilters", "PrismMedia"]),
        .target(name: "PrismKit", dependencies: ["PrismCore", "PrismGPU", "PrismFilters", "PrismMedia", "PrismPipeline", "PrismVision"]),
        // The one libmicrohttpd call Swift cannot make (a variadic function); only the HTTP server links it.
        .target(name: "CHTTPShims", dependencies: ["CMicroHTTPD"]),
        // The loopback HTTP server of `prism dev`'s preview and of live control (libmicrohttpd behind the
        // request gate), its JSON text, and the preview page it serves.
        .target(name: "PrismHTTP", dependencies: ["PrismCore", "CMicroHTTPD", "CHTTPShims"],
                resources: [.copy("Resources/preview.html")]),
        // `prism --version`'s own part: the version and the git commit (written before each build by the plugin).
        .plugin(name: "GitCommit", capability: .buildTool()),
        .target(name: "PrismBuildInfo", plugins: ["GitCommit"]),
        .target(name: "Prism", dependencies: ["PrismKit", "PrismPipeline", "PrismGPU", "PrismFilters", "PrismMedia", "PrismVision",
                                              "PrismHTTP", "CMicroHTTPD", "PrismBuildInfo"]),
        .executableTarget(name: "prism", dependencies: ["Prism"]),
        // Prints what face detection costs on a clip (BENCHMARKS.md).
        .executableTarget(name: "face-bench", dependencies: ["PrismGPU", "PrismFilters", "PrismMedia", "PrismPipeline", "PrismVision"],
                          path: "Sources/FaceBench"),
        // OpenCV's cascade face detector behind a C API (Swift cannot import its C++ headers). Debian's
        // libopencv-objdetect-dev ships no opencv4.pc (only the whole libopencv-dev does), so the include
        // directory and libraries are named here.
        .target(name: "CFaceDetect",
                cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
                linkerSettings: [.linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"),
                                 .linkedLibrary("opencv_core"), .linkedLibrary("stdc++")]),
        // OpenCV DNN's ONNX importer and CPU inference behind a C API: the segmentation side path's CPU back end,
        // and the reference the GPU lowering of networks is tested against. Like CFaceDetect, no opencv4.pc.
        .target(name: "CModelDNN",
                cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
                linkerSettings: [.linkedLibrary("opencv_dnn"), .linkedLibrary("opencv_core"), .linkedLibrary("stdc++")]),
        // Face detection on a small luma image, tracking, regions for the graph, sidecars.
        .target(name: "PrismVision", dependencies: ["PrismCore", "PrismFilters", "CFaceDetect", "CModelDNN"]),
        .target(name: "FakeV4L2", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread"),
                                                   .linkedLibrary("avcodec"), .linkedLibrary("avutil")]),

        // The test photographs' one finder (PRISM_FIXTURES, then .fixtures/ from scripts/install-deps --tests).
        .target(name: "TestFixtures", path: "Tests/TestFixtures"),
        .testTarget(name: "PrismCoreTests", dependencies: ["PrismCore"]),
        .testTarget(name: "PrismGPUTests", dependencies: ["PrismGPU"]),
        .testTarget(name: "PrismFiltersTests", dependencies: ["PrismFilters", "PrismPipeline", "PrismVision", "TestFixtures"],
                    exclude: ["ISFCorpus"]),
        .testTarget(name: "PrismMediaTests", dependencies: ["PrismMedia"]),
        .testTarget(name: "PrismPipelineTests", dependencies: ["PrismPipeline"]),
        .testTarget(name: "PrismVisionTests", dependencies: ["PrismVision", "PrismMedia", "TestFixtures"]),
        .testTarget(name: "PrismKitTests", dependencies: ["PrismKit", "TestFixtures", "CGLES"]),
        .testTarget(name: "PrismTests", dependencies: ["Prism", "TestFixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
