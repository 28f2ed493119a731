// prism-kit-example [INPUT] OUTPUT.mp4 [FRAMES]
//
// The seeds' VideoCapture class, headless, on PrismKit's `Session`: every face in INPUT (a movie, a photo,
// a camera such as /dev/video0; the built-in test pattern when none is given) pixellated into OUTPUT, then
// the same frames again as CPU memory, as they are made (here: the mean red of each frame, printed).
// The session carries what `prism run` does around the graph: the detector for a graph that draws faces,
// a movie turned upright, an odd size cropped for H.264, the input's sound copied along.
import Foundation
import PrismKit

let arguments = Array(CommandLine.arguments.dropFirst())
guard (1...3).contains(arguments.count) else {
    FileHandle.standardError.write(Data("usage: prism-kit-example [INPUT] OUTPUT.mp4 [FRAMES]\n".utf8))
    exit(2)
}
let frameLimit = arguments.count == 3 ? Int(arguments[2]) : (arguments.count == 2 ? Int(arguments[1]) : nil)
let named = arguments.count == 3 || (arguments.count == 2 && frameLimit == nil)
let input: InputSpec = named ? InputSpec.cameraPath(arguments[0]).map { .camera($0) } ?? .movie(arguments[0]) : .pattern
let output = named ? arguments[1] : arguments[0]

FFmpegLog.setLevel(.error)
do {
    var options = Session.Options()
    options.frameLimit = frameLimit
    if input == .pattern { options.size = Size(width: 320, height: 180) }

    // 1. Every face pixellated, into a movie.
    let report = try Session(input: input, graph: "face-pixellate", options: options).write(to: output)

    // 2. The same frames as RGBA bytes; the loop may stop early (`break`), which stops the run.
    for try await frame in try Session(input: input, graph: "face-pixellate", options: options).frames() {
        let mean = frame.withPlane(0) { pixels, rowBytes in
            var sum = 0
            for row in 0..<frame.size.height {
                for x in 0..<frame.size.width { sum += Int(pixels[row * rowBytes + x * 4]) }
            }
            return Double(sum) / Double(frame.size.width * frame.size.height)
        }
        print(String(format: "frame %d at %.3f s: mean %.1f", frame.index, frame.pts.seconds, mean))
    }
    print("wrote \(report.framesOut) frames to \(output)")
} catch {
    FileHandle.standardError.write(Data("prism-kit-example: \(error)\n".utf8))
    exit(1)
}
