import Foundation
import PrismBuildInfo
import PrismKit

// The C API's error protocol: a status code per call, and one line per failure in the calling thread's
// `prism_last_error()` (a per-thread string the library owns, replaced by the thread's next failure).

/// `prism_status` (prism.h).
enum CStatus: Int32 {
    case ok = 0
    case end = 1
    case argument = -1
    case usage = -2
    case state = -3
    case run = -4
}

/// A failure of the C layer itself: which status it is, and its line.
struct CAPIError: Error, CustomStringConvertible {
    let status: CStatus
    let description: String
    static func argument(_ message: String) -> CAPIError { CAPIError(status: .argument, description: message) }
    static func state(_ message: String) -> CAPIError { CAPIError(status: .state, description: message) }
}

/// The thread's last error line (malloc'd, freed by the key's destructor when the thread ends).
private let lastErrorKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { free($0) }
    return key
}()

/// An empty string for `prism_last_error()` before any failure.
nonisolated(unsafe) private let emptyString: UnsafeMutablePointer<CChar> = strdup("")!

enum LastError {
    static func set(_ message: String) {
        let old = pthread_getspecific(lastErrorKey)
        // One line: a message that spans lines (a compiler log) keeps its first error's line first.
        pthread_setspecific(lastErrorKey, strdup(message.replacingOccurrences(of: "\n", with: "; ")))
        free(old)
    }

    static var text: UnsafePointer<CChar> {
        pthread_getspecific(lastErrorKey).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) } ?? UnsafePointer(emptyString)
    }
}

/// Runs `body`, turning what it throws into a status and the thread's last error. Errors thrown before a
/// run (by `Session.init`, the graph binder, the options) are usage errors; `during` marks calls whose
/// errors come from a running engine.
func cCall(during run: Bool = false, _ body: () throws -> CStatus) -> Int32 {
    do {
        return try body().rawValue
    } catch let error as CAPIError {
        LastError.set(error.description)
        return error.status.rawValue
    } catch {
        LastError.set("\(error)")
        return (run ? CStatus.run : .usage).rawValue
    }
}

/// A C string argument that must be there.
func string(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> String {
    guard let pointer else { throw CAPIError.argument("\(name) is NULL") }
    return String(cString: pointer)
}

/// A handle argument that must be there.
func handle<Object: AnyObject>(_ pointer: OpaquePointer?, _ type: Object.Type, _ name: String) throws -> Object {
    guard let pointer else { throw CAPIError.argument("\(name) is NULL") }
    return Unmanaged<Object>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
}

/// A new handle the caller owns (one retain, given back by the matching `_free`).
func retained(_ object: AnyObject) -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(object).toOpaque()) }

/// Gives back the caller's handle.
func release(_ pointer: OpaquePointer?) {
    guard let pointer else { return }
    Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(pointer)).release()
}

@_cdecl("prism_version")
public func prism_version() -> UnsafePointer<CChar> { UnsafePointer(versionString) }

nonisolated(unsafe) private let versionString: UnsafeMutablePointer<CChar> = strdup("\(BuildInfo.version) (\(BuildInfo.commit))")!

@_cdecl("prism_api_version")
public func prism_api_version() -> Int32 { 1 }

@_cdecl("prism_last_error")
public func prism_last_error() -> UnsafePointer<CChar> { LastError.text }
