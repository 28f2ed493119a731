import XCTest
import PrismCore
import PrismGPU

/// A GL compile error carries its log's places as diagnostics; its one line stays as it was.
final class ShaderCompileErrorTests: XCTestCase {
    func testTheLogsMessagesAreDiagnosticsAtTheirLines() {
        let error = ShaderCompileError(stage: .fragment, name: "blend", log: """
            0:3(10): warning: `x' unused
            0:12(5): error: `y' undeclared
            some driver remark
            ERROR: 1 compilation errors.  No code generated.
            """)
        XCTAssertEqual(error.description, "blend: fragment shader failed: 0:12(5): error: `y' undeclared")
        XCTAssertEqual(error.diagnostics, [
            Diagnostic(file: "blend", line: 3, column: 10, severity: .warning, message: "`x' unused"),
            Diagnostic(file: "blend", line: 12, column: 5, message: "`y' undeclared"),
            Diagnostic(file: "blend", line: nil, message: "some driver remark"),
        ])
        XCTAssertEqual((error as any Error).prismDiagnostics.count, 3, "read through any Error, as the CLI and the page do")
    }
}
