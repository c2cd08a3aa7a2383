import Glibc

/// A child process with its standard error captured, for end-to-end tests.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let stderrFD: Int32
    private var captured: [UInt8] = []

    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw LoopbackHTTP.Failure(description: "pipe failed") }
        // Only the child's stderr may hold the write end, or the read end never sees EOF.
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child = pid_t()
        let result = posix_spawn(&child, path, &actions, nil, argv, envp)
        close(pipeFDs[1])
        guard result == 0 else {
            close(pipeFDs[0])
            throw LoopbackHTTP.Failure(description: "cannot start \(path): \(String(cString: strerror(result)))")
        }
        pid = child
        stderrFD = pipeFDs[0]
        _ = fcntl(stderrFD, F_SETFL, fcntl(stderrFD, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(stderrFD)
    }

    /// What the child wrote to stderr so far.
    public var standardError: String {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(stderrFD, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            captured += buffer[0..<count]
        }
        return String(decoding: captured, as: UTF8.self)
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// The exit status, or nil if the child is still running after `seconds`.
    public func wait(seconds: Double) -> Int32? {
        var status: Int32 = 0
        var exited = false
        _ = waitUntil(seconds: seconds) {
            exited = waitpid(pid, &status, WNOHANG) == pid
            return exited
        }
        guard exited else { return nil }
        // WIFEXITED / WEXITSTATUS, which Swift cannot import as macros.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
