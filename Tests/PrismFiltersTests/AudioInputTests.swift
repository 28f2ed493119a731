import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// ISF `audio` and `audioFFT` inputs: parsed with their MAX, described by `prism filters`, and rendered
/// on the GPU from a window of known tones, compared with references computed here from the same samples
/// (the waveform's values, a direct DFT).
final class AudioInputTests: XCTestCase {
    static let rate = 48000
    /// Bins of the 1024-sample window sit at multiples of 46.875 Hz: tones on bins 40 and 100.
    static let loud = (bin: 40, amplitude: 0.75), quiet = (bin: 100, amplitude: 0.25)

    static func tone(_ n: Int, bin: Int, amplitude: Double, phase: Double = 0) -> Double {
        amplitude * sin(2 * Double.pi * Double(bin) * Double(n) / Double(AudioWindow.sampleCount) + phase)
    }

    func corpusKernel(_ name: String) throws -> UserShaderKernel {
        try UserShaderKernel(shader: UserShader.load(path: ISFParityTests.corpus.appendingPathComponent(name).path))
    }

    /// Renders a generator kernel at `size` for one frame carrying `audio`.
    func render(_ kernel: UserShaderKernel, size: Size, audio: AudioWindow?) throws -> TestImage {
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        let blank = [UInt8](repeating: 0, count: size.pixelCount * 4)
        let (rgba, out) = try renderStill(graph, rgba: blank, size: size, frame: FrameContext(audio: audio))
        return TestImage(size: out, rgba: rgba)
    }

    // MARK: Header

    func testAudioInputsParseWithTheirMAXAndAreNotParameters() throws {
        let shader = try UserShader.load(path: ISFParityTests.corpus.appendingPathComponent("audio-spectrum.fs").path)
        XCTAssertEqual(shader.audioInputs.map(\.name), ["spectrum", "bands"])
        XCTAssertEqual(shader.audioInputs.map(\.type), [.audioFFT, .audioFFT])
        XCTAssertNil(shader.audioInputs[0].maximum)
        XCTAssertEqual(shader.audioInputs[1].maximum, .int(8))
        XCTAssertTrue(shader.parameters.isEmpty, "audio inputs are textures, not settable values")
        XCTAssertNil(shader.inputImage, "a shader with only audio inputs is a generator")
        let kernel = try UserShaderKernel(shader: shader)
        XCTAssertFalse(kernel.isFused, "audio textures are bound in passes")
        XCTAssertEqual(kernel.inputCount, 0, "audio inputs are not graph streams")
        let summary = shader.summary
        XCTAssertTrue(summary.contains("audio input: spectrum (audioFFT, 512 bins"), summary)
        XCTAssertTrue(summary.contains("audio input: bands (audioFFT, MAX 8: 8 bins"), summary)
    }

    func testABadMAXIsRefusedAtItsPosition() {
        for bad in ["0", "2.5", "\"wide\""] {
            let text = "/*{\n\"INPUTS\": [\n  {\"NAME\": \"w\", \"TYPE\": \"audio\", \"MAX\": \(bad)}\n]\n}*/\nvoid main() { gl_FragColor = vec4(0.0); }\n"
            XCTAssertThrowsError(try UserShader.load(source: text, path: "/tmp/bad-max.fs")) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains("bad-max.fs:3:"), message)
                XCTAssertTrue(message.contains("MAX"), message)
            }
        }
    }

    // MARK: Rendering

    func testWaveformImageHoldsEachRunsLoudestSampleAtMAXColumns() throws {
        let count = AudioWindow.sampleCount
        let left = (0..<count).map { Float(Self.tone($0, bin: 5, amplitude: 0.8)) }
        let right = (0..<count).map { Float(Self.tone($0, bin: 13, amplitude: 0.5, phase: 1)) }
        let window = AudioWindow(sampleRate: Self.rate, samples: [left, right])
        let out = try render(corpusKernel("audio-waveform.fs"), size: Size(width: 64, height: 4), audio: window)
        // MAX 64: 64 columns of 16 samples; each holds its run's sample of greatest magnitude as 0.5 + s/2.
        func column(_ samples: [Float], _ c: Int) -> Double {
            let run = samples[(c * 16)..<(c * 16 + 16)]
            let loudest = run.max { abs($0) < abs($1) }!
            return 0.5 + Double(loudest) / 2
        }
        let expected = TestImage.from(size: out.size) { x, _ in
            SIMD4(column(left, x), column(right, x), 64.0 / 255, 1)
        }
        assertClose(out, expected, tolerance: 1, "waveform at MAX 64, two channels")
    }

    func testSpectrumImageShowsTheTonesWhereADirectDFTPutsThem() throws {
        let count = AudioWindow.sampleCount
        let samples = (0..<count).map { Float(Self.tone($0, bin: Self.loud.bin, amplitude: Self.loud.amplitude)
                                              + Self.tone($0, bin: Self.quiet.bin, amplitude: Self.quiet.amplitude)) }
        let window = AudioWindow(sampleRate: Self.rate, samples: [samples])
        let out = try render(corpusKernel("audio-spectrum.fs"), size: Size(width: 512, height: 2), audio: window)

        // The reference: a Hann-windowed direct DFT, bin k at column k - 1, scaled so amplitude A reads A.
        let hann = (0..<count).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(count)) }
        let gain = hann.reduce(0, +)
        let magnitudes = (1...(count / 2)).map { k -> Double in
            var re = 0.0, im = 0.0
            for n in 0..<count {
                let angle = -2 * Double.pi * Double(k * n) / Double(count)
                re += Double(samples[n]) * hann[n] * cos(angle)
                im += Double(samples[n]) * hann[n] * sin(angle)
            }
            return (re * re + im * im).squareRoot() * (k == count / 2 ? 1 : 2) / gain
        }
        let bands = (0..<8).map { band in magnitudes[(band * 64)..<(band * 64 + 64)].max()! }
        let expected = TestImage.from(size: out.size) { x, _ in SIMD4(magnitudes[x], bands[x / 64], 0.25, 1) }
        assertClose(out, expected, tolerance: 1, "spectrum and 8 bands")

        let reds = (0..<512).map { out.pixel($0, 0).x }
        XCTAssertEqual(reds.indices.max { reds[$0] < reds[$1] }, Self.loud.bin - 1, "the loud tone's bin is the peak")
        XCTAssertEqual(reds[Self.loud.bin - 1], Self.loud.amplitude, accuracy: 2.0 / 255)
        XCTAssertEqual(reds[Self.quiet.bin - 1], Self.quiet.amplitude, accuracy: 2.0 / 255)
        XCTAssertLessThan(reds[300], 2.0 / 255, "far from both tones there is nothing")
    }

    func testTheTextureFollowsEachFrameAndItsChannelCount() throws {
        let kernel = try corpusKernel("audio-waveform.fs")
        let count = AudioWindow.sampleCount
        let graph = FilterGraph()
        try graph.append("user", kernel: kernel, parameters: kernel.parameters)
        let size = Size(width: 64, height: 2)
        let blank = [UInt8](repeating: 0, count: size.pixelCount * 4)
        // Two frames through one renderer: a constant 0.5 then a constant -0.5, mono then stereo.
        let results = try SharedGPU.get().perform { () -> [[UInt8]] in
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let uploader = FrameUploader(ringSize: 1)
            var outputs: [[UInt8]] = []
            for (index, channels) in [[[Float](repeating: 0.5, count: count)],
                                      [[Float](repeating: -0.5, count: count), [Float](repeating: 1, count: count)]].enumerated() {
                let uploaded = try blank.withUnsafeBytes { bytes in
                    try uploader.upload(CPUFramePlanes(format: .rgba, size: size, colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                       planes: [(bytes.baseAddress!, size.width * 4)]))
                }
                try renderer.render(uploaded, context: FrameContext(time: Double(index) / 30, frameIndex: index,
                                                                    audio: AudioWindow(sampleRate: Self.rate, samples: channels)))
                let layout = renderer.sinkLayouts[0]
                var packed = [UInt8](repeating: 0, count: layout.byteCount)
                let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
                _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
                outputs.append(Array(packed.prefix(4)))
            }
            return outputs
        }
        // Mono: one row, so both reads see channel 0 (0.75); stereo: 0.25 and 1.0.
        XCTAssertEqual(results[0][0], 191, accuracy: 1)
        XCTAssertEqual(results[0][1], 191, accuracy: 1)
        XCTAssertEqual(results[1][0], 64, accuracy: 1)
        XCTAssertEqual(results[1][1], 255, accuracy: 1)
    }
}
