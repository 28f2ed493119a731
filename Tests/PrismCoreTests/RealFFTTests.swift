import Foundation
import PrismCore
import XCTest

/// The radix-2 real FFT against a direct DFT, and the audio window's spectrum and ISF images.
final class RealFFTTests: XCTestCase {
    /// X[k] = Σ x[n]·e^(-2πikn/N), summed directly.
    func dft(_ x: [Float], _ k: Int) -> (re: Double, im: Double) {
        var re = 0.0, im = 0.0
        for (n, value) in x.enumerated() {
            let angle = -2 * Double.pi * Double(k * n) / Double(x.count)
            re += Double(value) * cos(angle)
            im += Double(value) * sin(angle)
        }
        return (re, im)
    }

    func testMatchesADirectDFTAtEverySize() {
        var generator = SystemRandomNumberGenerator()
        for size in [2, 4, 8, 16, 64, 256, 1024] {
            let x = (0..<size).map { _ in Float.random(in: -1...1, using: &generator) }
            let fast = RealFFT(size: size).transform(x)
            XCTAssertEqual(fast.count, size / 2 + 1)
            for k in 0...(size / 2) {
                let slow = dft(x, k)
                XCTAssertEqual(fast[k].re, slow.re, accuracy: 1e-4 * Double(size), "size \(size) bin \(k) real")
                XCTAssertEqual(fast[k].im, slow.im, accuracy: 1e-4 * Double(size), "size \(size) bin \(k) imaginary")
            }
        }
    }

    func testAToneOnABinReadsItsAmplitudeThere() {
        let count = AudioWindow.sampleCount
        let samples = (0..<count).map { Float(0.6 * sin(2 * Double.pi * 64 * Double($0) / Double(count))) }
        let window = AudioWindow(sampleRate: 48000, samples: [samples])
        let spectrum = window.spectrum[0]
        XCTAssertEqual(spectrum.count, count / 2)
        // Entry j is bin j + 1: 64 · 48000 / 1024 = 3 kHz.
        XCTAssertEqual(spectrum.indices.max { spectrum[$0] < spectrum[$1] }, 63)
        XCTAssertEqual(Double(spectrum[63]), 0.6, accuracy: 1e-4)
        XCTAssertEqual(Double(spectrum[62]), 0.3, accuracy: 1e-4, "the Hann window spreads half into each neighbour")
        XCTAssertLessThan(spectrum[200], 1e-4)
    }

    func testISFImagesMapSilenceToMidGreyAndHonourMAX() {
        let count = AudioWindow.sampleCount
        let silence = AudioWindow.silence(sampleRate: 44100, channels: 2)
        let wave = silence.waveformImage(maxWidth: nil)
        XCTAssertEqual(wave.width, count)
        XCTAssertEqual(wave.values.count, 2)
        XCTAssertTrue(wave.values.allSatisfy { $0.allSatisfy { $0 == 0.5 } }, "0.5 is silence")
        XCTAssertTrue(silence.spectrumImage(maxWidth: nil).values[0].allSatisfy { $0 == 0 })
        XCTAssertEqual(silence.spectrumImage(maxWidth: nil).width, count / 2)
        // MAX caps; it never widens.
        XCTAssertEqual(silence.waveformImage(maxWidth: 1).width, 1)
        XCTAssertEqual(silence.waveformImage(maxWidth: 5000).width, count)
        XCTAssertEqual(silence.spectrumImage(maxWidth: 4).width, 4)
        // One column conveys the loudness: the sample of greatest magnitude, sign kept; clamped to 0...1.
        var loud = [Float](repeating: 0.1, count: count)
        loud[700] = -0.9
        loud[10] = 3
        let one = AudioWindow(sampleRate: 48000, samples: [loud]).waveformImage(maxWidth: 2)
        XCTAssertEqual(one.values[0][0], 1, "a sample beyond full scale is clamped")
        XCTAssertEqual(Double(one.values[0][1]), 0.05, accuracy: 1e-6)
    }
}
