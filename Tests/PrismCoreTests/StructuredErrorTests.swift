import XCTest
import PrismCore
#if canImport(Glibc)
import Glibc
#endif

/// The one EINTR helper, and the compiler-log reader every diagnostic comes from.
final class StructuredErrorTests: XCTestCase {
    func testInterruptedCallsAreRetriedAndOtherFailuresReturned() {
        var calls = 0
        let result = retryingEINTR { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 5
        }
        XCTAssertEqual(result, 5)
        XCTAssertEqual(calls, 3, "retried while EINTR")
        calls = 0
        let failed = retryingEINTR { () -> Int32 in
            calls += 1
            errno = EBADF
            return -1
        }
        XCTAssertEqual(failed, -1)
        XCTAssertEqual(errno, EBADF, "the failure's errno is left for the caller")
        XCTAssertEqual(calls, 1)
        // A real call: read(2) on a closed descriptor fails once, with EBADF.
        var byte: UInt8 = 0
        XCTAssertEqual(retryingEINTR { read(-1, &byte, 1) }, -1)
        XCTAssertEqual(errno, EBADF)
    }

    func testCompilerLogLinesOfEachDriver() {
        XCTAssertEqual(CompilerLogLine(parsing: "0:12(5): error: 'x' : undeclared identifier"),
                       CompilerLogLine(line: 12, column: 5, severity: .error, message: "'x' : undeclared identifier"))
        XCTAssertEqual(CompilerLogLine(parsing: "0(7) : error C1008: undefined variable \"y\""),
                       CompilerLogLine(line: 7, column: nil, severity: .error, message: "C1008: undefined variable \"y\""))
        XCTAssertEqual(CompilerLogLine(parsing: "WARNING: 0:3: unused"), CompilerLogLine(line: 3, column: nil, severity: .warning, message: "unused"))
        XCTAssertNil(CompilerLogLine(parsing: "link failed"))
        XCTAssertTrue(CompilerLogLine.isSummary("ERROR: 2 compilation errors.  No code generated."))
    }

    func testErrorsWithoutPlacesHaveNoDiagnostics() {
        XCTAssertEqual(InvalidRequest("a.fs:3:1: not a place").diagnostics, [])
        XCTAssertEqual((SystemError("read", code: EIO) as any Error).prismDiagnostics, [])
        XCTAssertEqual(Diagnostic(file: "a b.fs", line: 3, column: 2, message: "m").description, "a b.fs:3:2: error: m")
    }
}
