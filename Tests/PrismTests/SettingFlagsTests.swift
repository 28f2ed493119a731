import XCTest
import PrismCore
@testable import Prism

/// `prism` spells every setting the library's messages name, each as a flag a command declares.
final class SettingFlagsTests: XCTestCase {
    func testEverySettingIsSpeltAsADeclaredFlag() {
        XCTAssertEqual(Set(SettingFlags.names.keys), Set(Setting.all), "settings prism does not spell")
        let declared = Set(PrismCommandLine.commands.flatMap(\.options).flatMap(\.names))
        for (setting, flag) in SettingFlags.names where setting != .segmentAny {
            XCTAssert(declared.contains(flag), "\(setting.property) is spelt \(flag), which no command declares")
        }
    }
}
