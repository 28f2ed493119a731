import Foundation

/// A radix-2 FFT of real samples: the N-point transform computed as one N/2-point complex FFT of the
/// even and odd samples packed as real and imaginary parts, then separated (the classic "two for one").
/// Twiddles and the bit-reversal table are made once per size; `transform` allocates only its result.
package struct RealFFT: Sendable {
    /// N, a power of two ≥ 2.
    package let size: Int
    private let half: Int
    /// e^(-2πik/N) for k in 0..<N/2: the half-size FFT uses every other one, the split uses them all.
    private let twiddles: [(re: Double, im: Double)]
    private let reversed: [Int]

    package init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "the FFT size must be a power of two ≥ 2, not \(size)")
        self.size = size
        half = size / 2
        twiddles = (0..<(size / 2)).map { k in
            let angle = -2 * Double.pi * Double(k) / Double(size)
            return (cos(angle), sin(angle))
        }
        let bits = (size / 2).trailingZeroBitCount
        reversed = (0..<(size / 2)).map { index in
            var r = 0, v = index
            for _ in 0..<bits { r = (r << 1) | (v & 1); v >>= 1 }
            return r
        }
    }

    /// X[k] = Σ x[n]·e^(-2πikn/N) for k in 0...N/2 (the rest mirror these for real input).
    package func transform(_ samples: [Float]) -> [(re: Double, im: Double)] {
        precondition(samples.count == size, "\(size) samples expected, got \(samples.count)")
        // z[n] = x[2n] + i·x[2n+1], in bit-reversed order for the in-place butterflies.
        var re = [Double](repeating: 0, count: half), im = [Double](repeating: 0, count: half)
        for n in 0..<half {
            re[reversed[n]] = Double(samples[2 * n])
            im[reversed[n]] = Double(samples[2 * n + 1])
        }
        var length = 2
        while length <= half {
            let step = size / length // twiddle stride of the half-size transform: e^(-2πi·j/length)
            for start in stride(from: 0, to: half, by: length) {
                for j in 0..<(length / 2) {
                    let w = twiddles[j * step]
                    let a = start + j, b = a + length / 2
                    let tr = re[b] * w.re - im[b] * w.im, ti = re[b] * w.im + im[b] * w.re
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            length *= 2
        }
        // Split Z into the transforms of the even (E) and odd (O) samples: X[k] = E[k] + e^(-2πik/N)·O[k].
        var result: [(re: Double, im: Double)] = []
        result.reserveCapacity(half + 1)
        for k in 0...half {
            let a = k % half, b = (half - k) % half
            let zr = re[a], zi = im[a], cr = re[b], ci = -im[b] // Z[k], conj(Z[N/2 - k])
            let er = (zr + cr) / 2, ei = (zi + ci) / 2
            // O[k] = (Z[k] - conj(Z[N/2-k])) / 2i
            let or = (zi - ci) / 2, oi = -(zr - cr) / 2
            let w = k < half ? twiddles[k] : (re: -1.0, im: 0.0)
            result.append((er + w.re * or - w.im * oi, ei + w.re * oi + w.im * or))
        }
        return result
    }
}
