// prism-kit-example OUTPUT.mp4 [FRAMES]
//
// The seeds' VideoCapture class, headless: a source (the built-in test pattern; a movie or a camera work
// the same way), a filter graph, and two consumers — a movie file, and a closure that receives every
// processed frame as CPU memory (here: the mean brightness of each frame, printed as it arrives).
import Foundation
import PrismKit

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: prism-kit-example OUTPUT.mp4 [FRAMES]\n".utf8))
    exit(2)
}
let frames = arguments.count > 2 ? Int(arguments[2]) ?? 30 : 30

FFmpegLog.setLevel(.error)
do {
    let gpu = try GPUContext()
    let source = SourceSpec(input: .pattern, size: Size(width: 320, height: 180), frameRate: Rational(30, 1),
                            patternFrames: frames)
    let graph = try GraphBinder().bind("invert, mono")
    let movie = MovieSink(path: arguments[1], settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast"))
    // Frames as RGBA bytes, on the sink's own thread.
    let brightness = CallbackSink(format: .rgba) { frame, stream in
        let (base, rowBytes) = frame.buffer.plane(0)
        var sum = 0
        for row in 0..<stream.layout.size.height {
            let pixels = (base + row * rowBytes).assumingMemoryBound(to: UInt8.self)
            for x in 0..<stream.layout.size.width { sum += Int(pixels[x * 4]) }
        }
        let mean = Double(sum) / Double(stream.layout.size.width * stream.layout.size.height)
        print(String(format: "frame %d at %.3f s: mean %.1f", frame.index, frame.pts.seconds, mean))
        return true
    }
    let engine = try FrameEngine(source: source, graph: graph, sinks: [movie, brightness], gpu: gpu)
    let report = try engine.run()
    print("wrote \(report.framesOut) frames to \(arguments[1]) on \(engine.gpuInfo.renderer)")
} catch {
    FileHandle.standardError.write(Data("prism-kit-example: \(error)\n".utf8))
    exit(1)
}
