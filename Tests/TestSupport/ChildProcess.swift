import CChildProcess
import Dispatch
import Glibc
import Locking
import Platform

/// A spawned program with its stdout and stderr captured. It dies with the test process however
/// that ends, a timeout's SIGKILL included (PR_SET_PDEATHSIG, see `Spawner`); while the test runs
/// it is killed (SIGKILL) and reaped when released, so no test leaves a child behind. Its stdin is
/// a pipe this process holds open.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let stdinWrite: Int32
    private let stdoutRead: Int32
    private let stderrRead: Int32

    private struct State {
        var output: [UInt8] = []
        var error: [UInt8] = []
        /// How much of `output` `readLine` has handed out.
        var lineStart = 0
        /// The raw wait status once reaped.
        var status: Int32?
    }
    private let state = Locked(State())

    /// `path` is looked up in PATH when it has no slash. The child sees only `environment` plus PATH
    /// and the sanitizers' options, so a child built with a sanitizer reports where the tests' run
    /// says (`log_path`: Tests/README.md).
    public init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var ends: [Int32] = [0, 0]
            // Close-on-exec from the start: only the child may hold the ends it uses (as its 0, 1
            // and 2), or EOF never comes, and another test's child must not inherit them either.
            guard child_process_pipe(&ends) == 0 else {
                for fd in pipes.joined() { close(fd) }
                throw TestFailure("pipe: \(errnoText(errno))")
            }
            pipes.append(ends)
        }
        var variables = environment
        for name in ["PATH", "TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]
        where variables[name] == nil {
            if let value = getenv(name) { variables[name] = String(cString: value) }
        }
        // ThreadSanitizer sleeps a second before a process exits (for races with exit): the tests
        // time how fast their children stop, so a child's exit must be its own (later options win).
        variables["TSAN_OPTIONS"] = "atexit_sleep_ms=0" + (variables["TSAN_OPTIONS"].map { ":" + $0 } ?? "")
        let environment = variables.map { "\($0.key)=\($0.value)" }
        let (input, output, error) = (pipes[0][0], pipes[1][1], pipes[2][1])
        let child = Spawner.run {
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            return child_process_spawn(argv, envp, input, output, error)
        }
        for fd in [pipes[0][0], pipes[1][1], pipes[2][1]] { close(fd) }
        guard child > 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw TestFailure("cannot start \(path): \(errnoText(-child))")
        }
        pid = child
        stdinWrite = pipes[0][1]
        stdoutRead = pipes[1][0]
        stderrRead = pipes[2][0]
        for fd in [stdoutRead, stderrRead] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        close(stdinWrite)
        if state.withLock({ $0.status }) == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        close(stdoutRead)
        close(stderrRead)
    }

    /// Moves whatever the child wrote into the buffers (the pipes must not fill up and block it).
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        for fd in [stdoutRead, stderrRead] {
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                state.withLock {
                    if fd == stdoutRead { $0.output += buffer[0..<count] } else { $0.error += buffer[0..<count] }
                }
            }
        }
    }

    /// What the child wrote to stderr so far.
    public var standardError: String {
        drain()
        return state.withLock { String(decoding: $0.error, as: UTF8.self) }
    }

    /// What the child wrote to stdout so far.
    public var standardOutput: String {
        drain()
        return state.withLock { String(decoding: $0.output, as: UTF8.self) }
    }

    /// The next line of stdout, or nil when none came within `seconds` (or the child is gone).
    public func readLine(seconds: Double) -> String? {
        var line: String?
        _ = waitUntil(seconds: seconds) {
            drain()
            line = state.withLock { state in
                guard let end = state.output[state.lineStart...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                defer { state.lineStart = end + 1 }
                return String(decoding: state.output[state.lineStart..<end], as: UTF8.self)
            }
            return line != nil
        }
        return line
    }

    /// The port in the first `marker` followed by digits on stderr (`address=127.0.0.1:` of a
    /// server started on port 0), or nil when none appears within `seconds`. The default is a
    /// ceiling, not a timing: a sanitized build reading a large config beside two CPU hogs printed
    /// nothing within 10 s.
    public func port(after marker: String, seconds: Double = 60) -> UInt16? {
        var port: UInt16?
        _ = waitUntil(seconds: seconds) {
            port = portInLog(after: marker)
            return port != nil
        }
        return port
    }

    /// The same, suspending instead of blocking a thread while the child starts.
    public func port(after marker: String, seconds: Double = 60) async -> UInt16? {
        var port: UInt16?
        _ = await waitUntil(seconds: seconds) {
            port = portInLog(after: marker)
            return port != nil
        }
        return port
    }

    private func portInLog(after marker: String) -> UInt16? {
        let log = standardError
        guard let start = log.firstRange(of: marker)?.upperBound else { return nil }
        return UInt16(log[start...].prefix { $0.isNumber })
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// The exit code (128 + the signal for a death by signal, as a shell reports it), or nil if the
    /// child is still running after `seconds`.
    public func wait(seconds: Double) -> Int32? {
        var status: Int32?
        _ = waitUntil(seconds: seconds) {
            status = reap()
            return status != nil
        }
        drain()
        return status.map(Self.exitCode)
    }

    /// The same, suspending instead of blocking one of Swift Testing's threads meanwhile.
    public func wait(seconds: Double) async -> Int32? {
        var status: Int32?
        _ = await waitUntil(seconds: seconds) {
            status = reap()
            return status != nil
        }
        drain()
        return status.map(Self.exitCode)
    }

    /// The raw wait status once the child has ended (reaping it), nil while it runs.
    private func reap() -> Int32? {
        drain()
        return state.withLock { state in
            if state.status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid { state.status = raw }
            }
            return state.status
        }
    }

    /// WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift cannot import as macros.
    private static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// The one thread every child is forked from. The kernel sends a child its PR_SET_PDEATHSIG signal
/// when the *thread* that forked it ends, not the process: Swift Testing's and Dispatch's threads
/// end when idle, which would kill a child in the middle of its test. This thread never ends.
enum Spawner {
    private static let jobs = Locked<[@Sendable () -> Void]>([])
    private static let queued = DispatchSemaphore(value: 0)
    private static let started: Void = Threads.spawn(name: "child spawner") {
        while true {
            queued.wait()
            jobs.withLock { $0.removeFirst() }()
        }
    }

    /// Runs `body` on the spawner thread and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        _ = started
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        jobs.withLock {
            $0.append {
                result.withLock { $0 = body() }
                done.signal()
            }
        }
        queued.signal()
        done.wait()
        return result.withLock { $0! }
    }
}

/// Where `name` is found in PATH, if anywhere: for tests that need a tool and skip, saying so, without it.
public func executablePath(_ name: String) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
}
