import XCTest
import PrismCore
@testable import PrismGPU

/// The face detector's input: a ≤320-px luma thumbnail drawn from an uploaded frame, against the same
/// sampling done on the CPU from the CPU's own R'G'B' conversion.
final class LumaThumbnailTests: XCTestCase {
    func testThumbnailIsTheMeanLumaOfEachBlockWithinTwoCodes() throws {
        let context = try GPUContext()
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        for (format, size) in [(PixelFormat.rgba, Size(width: 652, height: 366)), (.yuv420p, Size(width: 98, height: 54)),
                               (.nv12, Size(width: 1280, height: 720)), (.yuyv422, Size(width: 330, height: 200))] {
            let planes = TestPlanes.make(format: format, size: size, seed: 3)
            let rgba = CPUConversion.rgba(from: planes, format: format, size: size, colorSpace: space)
            let thumbnail = try context.perform {
                let uploader = FrameUploader(ringSize: 1)
                let frame = try planes.withPlanePointers(format: format, size: size) { pointers in
                    try uploader.upload(CPUFramePlanes(format: format, size: size, colorSpace: space, planes: pointers))
                }
                return try LumaThumbnailer().render(frame)
            }
            let expectedSize = LumaImage.thumbnailSize(for: size)
            XCTAssertEqual(thumbnail.size, expectedSize, "\(format) \(size)")
            XCTAssertLessThanOrEqual(thumbnail.size.width, 320)
            XCTAssertEqual(thumbnail.frameSize, size)
            // Samples at 1/4 and 3/4 of each block, both ways; BT.601 luma weights, full range.
            let bx = Double(size.width) / Double(expectedSize.width), by = Double(size.height) / Double(expectedSize.height)
            var worst = 0
            for ty in 0..<expectedSize.height { for tx in 0..<expectedSize.width {
                var sum = 0.0
                for (fx, fy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
                    let x = min(Int(((Double(tx) + fx) * bx).rounded(.down)), size.width - 1)
                    let y = min(Int(((Double(ty) + fy) * by).rounded(.down)), size.height - 1)
                    let i = (y * size.width + x) * 4
                    sum += (0.299 * Double(rgba[i]) + 0.587 * Double(rgba[i + 1]) + 0.114 * Double(rgba[i + 2])) / 255
                }
                let expected = Int((sum / 4 * 255).rounded())
                worst = max(worst, abs(expected - Int(thumbnail.pixels[ty * expectedSize.width + tx])))
            } }
            XCTAssertLessThanOrEqual(worst, 2, "\(format) \(size): max error \(worst)")
        }
    }

    func testThumbnailSizes() {
        XCTAssertEqual(LumaImage.thumbnailSize(for: Size(width: 1280, height: 720)), Size(width: 320, height: 180))
        XCTAssertEqual(LumaImage.thumbnailSize(for: Size(width: 1920, height: 1080)), Size(width: 320, height: 180))
        XCTAssertEqual(LumaImage.thumbnailSize(for: Size(width: 640, height: 480)), Size(width: 320, height: 240))
        // Never enlarged; widths stay multiples of 4.
        XCTAssertEqual(LumaImage.thumbnailSize(for: Size(width: 203, height: 100)), Size(width: 200, height: 99))
    }
}
