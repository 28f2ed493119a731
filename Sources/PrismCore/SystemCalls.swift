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

/// Runs `body` (writes to a pipe or a socket) with SIGPIPE blocked on the calling thread only, so that a
/// reader that went away is EPIPE from the write (an error to handle), not a signal that ends the process,
/// and without touching the process's disposition of SIGPIPE (a program embedding the library keeps its
/// own). A SIGPIPE the writes raised stays pending on this thread while blocked; it is taken back
/// (`sigtimedwait`, no wait) before the thread's mask is restored, unless one was already pending before
/// `body` ran (that one is the caller's). The one place library code guards writes against SIGPIPE.
///
///     let written = withoutSIGPIPE { writev(fd, pieces, count) }
package func withoutSIGPIPE<Result>(_ body: () throws -> Result) rethrows -> Result {
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    var previous = sigset_t()
    guard pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous) == 0 else { return try body() }
    var pending = sigset_t()
    sigemptyset(&pending)
    // Already blocked and pending before (the caller's own): leave it be.
    let pendingBefore = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1
    defer {
        let savedErrno = errno
        if !pendingBefore {
            sigemptyset(&pending)
            if sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1 {
                var noWait = timespec(tv_sec: 0, tv_nsec: 0)
                while sigtimedwait(&pipeOnly, nil, &noWait) == -1 && errno == EINTR {}
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        errno = savedErrno
    }
    return try body()
}
