import Foundation
import PrismCore

/// A child process started with `posix_spawn`: standard input /dev/null, standard output /dev/null or a pipe
/// this process reads, standard error a file (read back for the message when it fails). Every descriptor this
/// process opens for it is close-on-exec, so two children never hold each other's pipes open.
final class BenchChild {
    let executable: String
    let arguments: [String]
    let pid: pid_t
    /// The read end of the child's standard output (-1 when it goes to /dev/null).
    let output: Int32
    private let errorPath: String

    init(_ executable: String, _ arguments: [String], directory: String, stdoutToPipe: Bool) throws {
        self.executable = executable
        self.arguments = arguments
        errorPath = directory + "/child-\(UInt32.random(in: 0...UInt32.max)).stderr"
        let errorFD = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errorFD >= 0 else { throw SystemError("open", code: errno, context: errorPath) }
        defer { close(errorFD) }
        var pipeFDs: [Int32] = [-1, -1]
        if stdoutToPipe {
            guard pipe(&pipeFDs) == 0 else { throw SystemError("pipe", code: errno, context: executable) }
            for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if stdoutToPipe {
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, errorFD, 2)
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv + [nil], environ)
        if stdoutToPipe { close(pipeFDs[1]) }
        guard result == 0 else {
            if stdoutToPipe { close(pipeFDs[0]) }
            try? FileManager.default.removeItem(atPath: errorPath)
            throw SystemError("posix_spawn", code: result, context: executable)
        }
        pid = child
        output = stdoutToPipe ? pipeFDs[0] : -1
    }

    private var status: Int32?

    deinit {
        if output >= 0 { close(output) }
        // A child left behind by an error elsewhere: with its pipe closed it ends (EPIPE) and is reaped here.
        if status == nil { _ = wait() }
        try? FileManager.default.removeItem(atPath: errorPath)
    }

    /// Waits for the child to end; its wait status.
    func wait() -> Int32 {
        if let status { return status }
        var result: Int32 = 0
        while waitpid(pid, &result, 0) < 0 && errno == EINTR {}
        status = result
        return result
    }

    /// Throws with the end of the child's standard error unless it exited with 0.
    func check(_ status: Int32) throws {
        // WIFEXITED and WEXITSTATUS, spelt out (the C macros are not imported).
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        guard !exited || code != 0 else { return }
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(3).joined(separator: " | ")
        let how = exited ? "exited with \(code)" : "was killed by signal \(status & 0x7f)"
        throw BenchError("\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) \(how): \(tail)")
    }
}
