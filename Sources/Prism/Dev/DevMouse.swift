import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismPipeline
import Synchronization

/// The preview page's pointer over the output, for ShaderToy's `iMouse`: the page posts `POST /mouse`
/// (`{"x": 120.5, "y": 40, "down": true}`, output pixels from the bottom left), the server thread records
/// it here, and as a side input it sets `FrameContext.mouse` before each frame on the GPU thread.
///
/// ShaderToy's meaning: `xy` is where the pointer is while the button is down (it stays put once the
/// button is up); `zw` is where the button went down, `z` negated once it is up and `w` negated after the
/// first frame that saw the click. Before the first press nothing is set (`iMouse` stays what the shader's
/// `iMouse` parameter says, 0 by default).
final class DevMouse: SideInput, Sendable {
    /// One pointer event from the page.
    struct Event: Equatable, Decodable {
        var x: Double
        var y: Double
        var down: Bool
    }

    private struct Pointer {
        var position = SIMD2<Double>(0, 0)
        var click = SIMD2<Double>(0, 0)
        var down = false
        /// Pressed since the last frame was given the pointer.
        var newClick = false
        var pressed = false
    }

    private let pointer = Mutex(Pointer())

    /// The largest body `/mouse` takes: three short fields.
    static let maximumBody = 256

    /// The event in a `/mouse` body, checked against the output size; the error is one line naming the problem.
    static func parse(_ body: [UInt8], outputSize: Size) throws(UsageError) -> Event {
        guard body.count <= maximumBody else { throw UsageError("a mouse event is at most \(maximumBody) bytes") }
        guard let event = try? JSONDecoder().decode(Event.self, from: Data(body)) else {
            throw UsageError("expected {\"x\": pixels, \"y\": pixels from the bottom, \"down\": true|false}")
        }
        guard event.x.isFinite, event.y.isFinite,
              (0...Double(outputSize.width)).contains(event.x), (0...Double(outputSize.height)).contains(event.y) else {
            throw UsageError("the pointer must be inside the \(outputSize) output (x 0…\(outputSize.width), y 0…\(outputSize.height))")
        }
        return event
    }

    /// A pointer event from the page (any thread).
    func update(_ event: Event) {
        pointer.withLock { p in
            let position = SIMD2(event.x, event.y)
            if event.down && !p.down {
                p.click = position
                p.newClick = true
                p.pressed = true
            }
            if event.down { p.position = position }
            p.down = event.down
        }
    }

    /// `iMouse` for the next frame; nil before the first press.
    func next() -> SIMD4<Double>? {
        pointer.withLock { p in
            guard p.pressed else { return nil }
            let value = SIMD4(p.position.x, p.position.y, p.down ? p.click.x : -p.click.x, p.newClick ? p.click.y : -p.click.y)
            p.newClick = false
            return value
        }
    }

    func apply(to context: inout FrameContext, frame: TimedFrame, uploaded: UploadedFrame, index: Int) throws {
        if let mouse = next() { context.mouse = mouse }
    }
}
