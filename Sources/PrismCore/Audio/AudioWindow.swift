import Foundation

/// The sound that goes with one video frame, for audio-reactive filters: the most recent
/// `sampleCount` samples of each channel ending at the frame's time, and their spectrum.
///
/// Conventions (those of ISF hosts, see docs/isf-audio.md):
/// - `samples[c]` holds channel c's samples, oldest first, as float PCM in -1...1;
/// - `spectrum[c]` holds the magnitudes of bins 1...N/2 of a Hann-windowed N-point FFT of those samples
///   (N = `sampleCount`): entry j is the bin at (j + 1)·rate/N Hz, the last one Nyquist. Magnitudes are
///   scaled so that a sine of amplitude A centred on a bin reads A there (2·|X|/Σw; 1·|X|/Σw at Nyquist).
package struct AudioWindow: Sendable, Equatable {
    /// Samples per channel in a window: 1024 (21 ms at 48 kHz), giving 512 FFT bins.
    package static let sampleCount = 1024

    package let sampleRate: Int
    package let samples: [[Float]]
    package let spectrum: [[Float]]

    package var channelCount: Int { samples.count }

    /// `samples`: one array of `sampleCount` values per channel (at least one channel).
    package init(sampleRate: Int, samples: [[Float]]) {
        precondition(!samples.isEmpty && samples.allSatisfy { $0.count == Self.sampleCount },
                     "an audio window holds \(Self.sampleCount) samples per channel")
        self.sampleRate = sampleRate
        self.samples = samples
        spectrum = samples.map(Self.magnitudes)
    }

    /// A window of silence (a track that has ended, a microphone that has not delivered yet).
    package static func silence(sampleRate: Int, channels: Int) -> AudioWindow {
        AudioWindow(sampleRate: sampleRate, samples: Array(repeating: Array(repeating: 0, count: sampleCount), count: max(1, channels)))
    }

    private static let fft = RealFFT(size: sampleCount)
    /// The Hann window, and the sum of its values (its coherent gain times N).
    private static let hann: (values: [Double], sum: Double) = {
        let values = (0..<sampleCount).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(sampleCount)) }
        return (values, values.reduce(0, +))
    }()

    static func magnitudes(_ channel: [Float]) -> [Float] {
        let (window, sum) = hann
        let windowed = (0..<sampleCount).map { Float(Double(channel[$0]) * window[$0]) }
        let bins = fft.transform(windowed)
        return (1...(sampleCount / 2)).map { k in
            let scale = (k == sampleCount / 2 ? 1 : 2) / sum
            return Float((bins[k].re * bins[k].re + bins[k].im * bins[k].im).squareRoot() * scale)
        }
    }

    // MARK: As ISF images

    /// An ISF `audio` image: width = samples (at most `maxWidth`), height = channels, one row per channel
    /// from the first. Values are 0.5 + sample/2 clamped to 0...1 (0.5 is silence). With fewer columns than
    /// samples, each column covers an equal run of samples and holds the one of greatest magnitude, so a
    /// single column still shows how loud the window is.
    package func waveformImage(maxWidth: Int?) -> (width: Int, values: [[Float]]) {
        let columns = Self.columns(Self.sampleCount, maxWidth)
        return (columns, samples.map { row in
            Self.reduce(row, to: columns) { group in group.max { abs($0) < abs($1) } ?? 0 }
                .map { min(1, max(0, 0.5 + $0 / 2)) }
        })
    }

    /// An ISF `audioFFT` image: width = bins (at most `maxWidth`), height = channels. With fewer columns
    /// than bins, each column holds the greatest magnitude of its run of bins (a tone keeps its height).
    package func spectrumImage(maxWidth: Int?) -> (width: Int, values: [[Float]]) {
        let columns = Self.columns(Self.sampleCount / 2, maxWidth)
        return (columns, spectrum.map { row in Self.reduce(row, to: columns) { $0.max() ?? 0 } })
    }

    private static func columns(_ native: Int, _ maxWidth: Int?) -> Int {
        guard let maxWidth, maxWidth >= 1 else { return native }
        return min(native, maxWidth)
    }

    private static func reduce(_ row: [Float], to columns: Int, _ pick: (ArraySlice<Float>) -> Float) -> [Float] {
        guard columns < row.count else { return row }
        return (0..<columns).map { c in
            let from = c * row.count / columns, to = (c + 1) * row.count / columns
            return pick(row[from..<max(to, from + 1)])
        }
    }
}
