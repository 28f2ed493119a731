import XCTest
import PrismCore
@testable import PrismGPU

final class ContextTests: XCTestCase {
    func testContextReportsRendererAndRunsOnItsThread() throws {
        let context = try GPUContext()
        XCTAssertFalse(context.info.renderer.isEmpty)
        XCTAssertTrue(context.info.version.contains("OpenGL ES 3"))
        XCTAssertFalse(context.thread.isCurrent)
        XCTAssertTrue(try context.perform { context.thread.isCurrent })
        print("extensions:", context.info.extensions.sorted().filter { $0.contains("timer") || $0.contains("float") })
    }

    func testAnExplicitDeviceThatDoesNotExistIsAnError() {
        XCTAssertThrowsError(try GPUContext(options: GPUOptions(deviceIndex: 99))) { error in
            XCTAssertTrue("\(error)".contains("99"), "\(error)")
        }
    }
}
