import XCTest
import PrismCore

/// HDR metadata that no display or picture can have is dropped with one line naming its tag; plausible
/// metadata is kept as it is.
final class HDRMetadataPlausibilityTests: XCTestCase {
    func hdr10(mastering: MasteringDisplay?, light: ContentLightLevel?) -> VideoColor {
        VideoColor(space: YUVColorSpace(matrix: .bt2020, range: .limited), primaries: .bt2020, transfer: .pq,
                   mastering: mastering, lightLevel: light)
    }

    func display(black: Double, peak: Double) -> MasteringDisplay {
        MasteringDisplay(red: SIMD2(0.68, 0.32), green: SIMD2(0.265, 0.69), blue: SIMD2(0.15, 0.06), white: SIMD2(0.3127, 0.329),
                         minLuminance: black, maxLuminance: peak)
    }

    func testPlausibleMetadataIsKept() {
        var color = hdr10(mastering: display(black: 0.005, peak: 1000), light: ContentLightLevel(maxCLL: 1000, maxFALL: 400))
        let before = color
        XCTAssertEqual(color.dropImplausibleHDRMetadata(), [])
        XCTAssertEqual(color, before)
        XCTAssertEqual(color.peakLuminance, 1000)
        XCTAssertTrue(color.peakIsFromMetadata)
    }

    func testMaxCLLBeyondPQIsIgnoredAndThePeakNoLongerComesFromIt() {
        var color = hdr10(mastering: nil, light: ContentLightLevel(maxCLL: 65535, maxFALL: 400))
        XCTAssertEqual(color.peakLuminance, 65535, "what the stream says, before")
        XCTAssertEqual(color.dropImplausibleHDRMetadata(),
                       ["the content light level's MaxCLL of 65535 cd/m² is beyond PQ's 10000 cd/m²: ignored"])
        XCTAssertEqual(color.lightLevel, ContentLightLevel(maxCLL: 0, maxFALL: 400))
        XCTAssertEqual(color.peakLuminance, 1000, "BT.2100's default")
        XCTAssertFalse(color.peakIsFromMetadata)
    }

    func testAMasteringBlackAboveItsPeakIsIgnored() {
        var color = hdr10(mastering: display(black: 5000, peak: 1000), light: nil)
        XCTAssertEqual(color.dropImplausibleHDRMetadata(),
                       ["the mastering display's black (ST 2086 min_luminance) of 5000 cd/m² is not below its peak of 1000 cd/m²: ignored"])
        XCTAssertEqual(color.mastering?.minLuminance, 0)
        XCTAssertEqual(color.mastering?.maxLuminance, 1000, "the peak is kept")
        XCTAssertTrue(color.peakIsFromMetadata)
    }

    func testAPeakBeyondPQDropsTheDisplayAndAFALLAboveTheCLLIsDropped() {
        var color = hdr10(mastering: display(black: 0.01, peak: 50000), light: ContentLightLevel(maxCLL: 800, maxFALL: 900))
        XCTAssertEqual(color.dropImplausibleHDRMetadata(), [
            "the mastering display's peak (ST 2086 max_luminance) of 50000 cd/m² is beyond PQ's 10000 cd/m²: the mastering display metadata is ignored",
            "the content light level's MaxFALL of 900 cd/m² is above its MaxCLL of 800 cd/m²: ignored",
        ])
        XCTAssertNil(color.mastering)
        XCTAssertEqual(color.lightLevel, ContentLightLevel(maxCLL: 800, maxFALL: 0))
        XCTAssertEqual(color.peakLuminance, 800, "MaxCLL, the metadata left")
    }

    func testALevelThatSaysNothingIsNotCarried() {
        var color = hdr10(mastering: nil, light: ContentLightLevel(maxCLL: 70000, maxFALL: 0))
        XCTAssertEqual(color.dropImplausibleHDRMetadata().count, 1)
        XCTAssertNil(color.lightLevel)
    }
}
