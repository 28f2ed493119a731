#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Calls a POSIX function again for as long as it fails with EINTR (a signal arrived before it did its
/// work), and returns its first other result: the one place Prism retries interrupted calls. `errno` is
/// left as the last call set it, so a failure can still be read from it.
///
///     let count = retryingEINTR { read(fd, buffer, size) }
@inlinable
package func retryingEINTR<Result: SignedInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}
