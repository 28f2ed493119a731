import Foundation
import PrismCore
import PrismMedia
import Synchronization

/// Which picture a preview client watches.
enum PreviewView: String, Sendable, CaseIterable {
    case output, input
}

/// The latest frames for the preview, per view: the newest read-back RGBA buffer (snapshots) and the
/// newest JPEG (streams). Producers replace; consumers take the newest and skip what they missed, so a
/// slow client never holds the pipeline back.
final class PreviewHub: Sendable {
    private struct Slot {
        var buffer: PooledFrameBuffer?
        var jpeg: [UInt8]?
        var jpegSequence = 0
        var subscribers = 0
    }
    private struct State {
        var slots: [PreviewView: Slot] = [.output: Slot(), .input: Slot()]
        var closed = false
    }
    private let state = Monitor(State())

    /// Keeps `buffer` as the newest frame of `view` (the previous one goes back to its pool).
    func setLatest(_ buffer: PooledFrameBuffer, for view: PreviewView) {
        state.withLock { $0.slots[view]!.buffer = buffer }
    }

    func latest(_ view: PreviewView) -> PooledFrameBuffer? {
        state.withLock { $0.slots[view]!.buffer }
    }

    func publishJPEG(_ jpeg: [UInt8], for view: PreviewView) {
        state.withLock { state in
            state.slots[view]!.jpeg = jpeg
            state.slots[view]!.jpegSequence += 1
        }
    }

    func subscriberCount(_ view: PreviewView) -> Int {
        state.withLock { $0.slots[view]!.subscribers }
    }

    func subscribe(_ view: PreviewView) { state.withLock { $0.slots[view]!.subscribers += 1 } }
    func unsubscribe(_ view: PreviewView) { state.withLock { $0.slots[view]!.subscribers -= 1 } }

    /// Waits until `view` has a JPEG newer than `sequence`; nil once closed. Wakes at least every
    /// `timeout` seconds to return the current one again (keeps idle connections alive).
    func nextJPEG(_ view: PreviewView, after sequence: Int, timeout: Double = 2) -> (sequence: Int, jpeg: [UInt8])? {
        state.wait(until: { $0.closed || ($0.slots[view]!.jpegSequence > sequence && $0.slots[view]!.jpeg != nil) },
                   deadline: Date(timeIntervalSinceNow: timeout)) { state, newer in
            let slot = state.slots[view]!
            if !newer {
                if let jpeg = slot.jpeg { return (slot.jpegSequence, jpeg) }
                if state.closed { return nil }
                return (sequence, [])
            }
            guard !state.closed, let jpeg = slot.jpeg else { return nil }
            return (slot.jpegSequence, jpeg)
        }
    }

    /// Ends every stream and lets the buffers go.
    func close() {
        state.withLock { state in
            state.closed = true
            for view in PreviewView.allCases { state.slots[view]!.buffer = nil }
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }
}

/// One MJPEG client: `multipart/x-mixed-replace` parts, each the newest JPEG when the previous part
/// has gone out. Runs on the client's connection thread; a slow reader just sees fewer frames.
final class MJPEGStream: HTTPStreamSource, Sendable {
    static let boundary = "prismframe"
    private let hub: PreviewHub
    private let view: PreviewView
    /// The part being sent: only the connection thread reads, so this lock is never contended.
    private struct Part {
        var sequence = 0
        var bytes: [UInt8] = []
        var offset = 0
    }
    private let part = Mutex(Part())
    private let finished = Mutex(false)

    init(hub: PreviewHub, view: PreviewView) {
        self.hub = hub
        self.view = view
        hub.subscribe(view)
    }

    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        part.withLock { part in
            while part.offset >= part.bytes.count {
                guard let (next, jpeg) = hub.nextJPEG(view, after: part.sequence) else { return nil }
                if jpeg.isEmpty { continue }
                part.sequence = next
                let header = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n"
                part.bytes = Array(header.utf8) + jpeg + Array("\r\n".utf8)
                part.offset = 0
            }
            let count = min(capacity, part.bytes.count - part.offset)
            let offset = part.offset
            part.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
            part.offset += count
            return count
        }
    }

    func finish() {
        let first = finished.withLock { finished -> Bool in
            defer { finished = true }
            return !finished
        }
        if first { hub.unsubscribe(view) }
    }
}
