import Glibc

/// A spawned helper program. Its stdin is a pipe this process holds open, so a
/// helper written to exit on EOF dies with the test process even after a crash.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let stdinWrite: Int32
    private let stdoutRead: Int32

    init(_ arguments: [String]) throws {
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { throw TestFailure("pipe: \(errno)") }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            throw TestFailure("pipe: \(errno)")
        }
        // The test process's ends must not leak into later children, or EOF would never come.
        for fd in [input[1], output[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(input[0])
        close(output[1])
        guard status == 0 else {
            close(input[1]); close(output[0])
            throw TestFailure("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        stdinWrite = input[1]
        stdoutRead = output[0]
    }

    /// The next line of the child's stdout, or nil at EOF or after `timeout`.
    func readLine(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: stdoutRead, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return nil }
            guard entry.revents != 0 else { continue }
            guard read(stdoutRead, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Waits for the exit status, killing the child if it outlives `timeout`.
    func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return (status >> 8) & 0xFF }
            sleep(for: .milliseconds(20))
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
    }

    deinit {
        close(stdinWrite)
        close(stdoutRead)
    }
}
