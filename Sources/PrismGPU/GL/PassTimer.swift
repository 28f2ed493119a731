import CGLES
import CGPUShims
import Foundation

/// Times GPU passes: with GL_EXT_disjoint_timer_query where the driver has it (results read a few
/// frames later, so nothing stalls), else by fencing: glFinish before and after each pass and a CPU
/// clock in between, which serialises the pipeline and is labelled as such. Lives on the GPU thread.
package final class PassTimer {
    package enum Method: String, Sendable {
        case timerQuery = "GPU timer queries (GL_EXT_disjoint_timer_query)"
        case fencedCPU = "fenced CPU timing (glFinish around each pass)"
    }

    package let method: Method
    package let passCount: Int
    /// Nanoseconds per pass, one entry per frame that completed.
    package private(set) var samples: [[UInt64]]
    /// Frames whose query results were unusable (disjoint or implausible).
    package private(set) var discardedFrames = 0
    private var frames: [[GLuint]] = []     // query objects: [frame slot][pass]
    /// Set when queries are made: the thread they belong to.
    private var home: GLObjectHome?
    private var pendingSlots: [Int] = []
    private var currentSlot = 0
    private var started: UInt64 = 0
    private var currentFrame: [UInt64] = []
    private let lag = 4

    package init(passCount: Int, preferQueries: Bool = true, extensions: Set<String>) {
        self.passCount = passCount
        samples = Array(repeating: [], count: passCount)
        if preferQueries && extensions.contains("GL_EXT_disjoint_timer_query") && prism_gl_timer_queries_load() != 0 {
            method = .timerQuery
            home = GLObjectHome(.query, count: lag * passCount)
            for _ in 0..<lag {
                var names = [GLuint](repeating: 0, count: passCount)
                glGenQueries(GLsizei(passCount), &names)
                frames.append(names)
            }
            _ = prism_gl_gpu_disjoint()  // clears the flag
        } else {
            method = .fencedCPU
        }
    }

    deinit {
        let frames = self.frames
        home?.delete {
            for names in frames { glDeleteQueries(GLsizei(names.count), names) }
        }
    }

    package func beginFrame() {
        home?.check()
        switch method {
        case .timerQuery:
            if pendingSlots.count == lag { collect(slot: pendingSlots.removeFirst()) }
        case .fencedCPU:
            currentFrame = Array(repeating: 0, count: passCount)
        }
    }

    package func begin(pass: Int) {
        switch method {
        case .timerQuery:
            glBeginQuery(GLenum(0x88BF), frames[currentSlot][pass])  // GL_TIME_ELAPSED_EXT
        case .fencedCPU:
            glFinish()
            started = DispatchTime.now().uptimeNanoseconds
        }
    }

    package func end(pass: Int) {
        switch method {
        case .timerQuery:
            glEndQuery(GLenum(0x88BF))
        case .fencedCPU:
            glFinish()
            currentFrame[pass] = DispatchTime.now().uptimeNanoseconds - started
        }
    }

    package func endFrame() {
        switch method {
        case .timerQuery:
            pendingSlots.append(currentSlot)
            currentSlot = (currentSlot + 1) % lag
        case .fencedCPU:
            for (index, value) in currentFrame.enumerated() { samples[index].append(value) }
        }
    }

    /// Reads every outstanding result (waits for the GPU).
    package func finish() {
        home?.check()
        while !pendingSlots.isEmpty { collect(slot: pendingSlots.removeFirst()) }
    }

    private func collect(slot: Int) {
        let values = frames[slot].map { prism_gl_query_result_u64($0) }
        // A disjoint event (clock change, power state) invalidates the frame's results. Mesa's llvmpipe
        // has been seen returning absurd values (hours) for a few queries without flagging one: a pass
        // over ten seconds is treated the same way.
        if prism_gl_gpu_disjoint() != 0 || values.contains(where: { $0 > 10_000_000_000 }) {
            discardedFrames += 1
            return
        }
        for (index, value) in values.enumerated() { samples[index].append(value) }
    }

    /// Median milliseconds per pass over the samples so far.
    package func medianMilliseconds() -> [Double] {
        samples.map { values in
            guard !values.isEmpty else { return 0 }
            let sorted = values.sorted()
            return Double(sorted[sorted.count / 2]) / 1e6
        }
    }
}
