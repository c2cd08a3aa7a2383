import Glibc
import Locking
import Platform
import TestSupport
import Testing

/// A test's children die with it, however the test process ends: a timeout's SIGKILL leaves no
/// exporter holding a port and a core for the next run.
@Suite(.endToEnd) struct ChildProcessTests {
    static let parentVariable = "OWE_TEST_CHILD_PARENT"

    /// Only run as the parent the test below starts (skipped otherwise): starts a child from a
    /// thread that ends at once, says the child's pid once the child has outlived that thread by a
    /// second, and waits to be killed.
    @Test(.enabled(if: getenv(ChildProcessTests.parentVariable) != nil))
    func parentOfAChild() throws {
        let child = Locked<ChildProcess?>(nil)
        let thread = try Threads.startJoinable {
            child.withLock { $0 = try? ChildProcess("sleep", ["120"]) }
        }.get()
        pthread_join(thread, nil)
        let process = try #require(child.withLock { $0 })
        // The kernel signals a child when the thread that forked it ends: ChildProcess forks from
        // a thread of its own, so this child must still run after its starter thread is gone.
        #expect(process.wait(seconds: 1) == nil)
        print("child pid=\(process.pid)")
        fflush(nil)
        #expect(process.wait(seconds: 90) == nil)
    }

    @Test func aChildDiesWithTheTestProcessEvenKilledBySIGKILL() throws {
        // This test bundle again, running only the parent above.
        let bundle = try #require(try? readlink("/proc/self/exe"))
        let parent = try ChildProcess(
            bundle, ["--testing-library", "swift-testing", "--filter", "ChildProcessTests/parentOfAChild"],
            environment: [Self.parentVariable: "1"])
        // Swift Testing's own lines may come first; a sanitized build takes a while to start.
        var pid: pid_t?
        let start = monotonicSeconds()
        while pid == nil, monotonicSeconds() - start < 120, let line = parent.readLine(seconds: 120) {
            if line.hasPrefix("child pid=") { pid = pid_t(line.dropFirst("child pid=".count)) }
        }
        let child = try #require(pid, "the parent said no child pid: \(parent.standardOutput) \(parent.standardError)")
        #expect(running(child))
        parent.signal(SIGKILL)
        #expect(parent.wait(seconds: 30) == 128 + SIGKILL)
        // The orphan is killed by the kernel and reaped by whoever adopts it.
        #expect(waitUntil(seconds: 30) { !running(child) }, "pid \(child) still runs after its test process was killed")
    }

    /// True while `pid` exists and is not a zombie.
    private func running(_ pid: pid_t) -> Bool {
        guard let status = try? readFile("/proc/\(pid)/status") else { return false }
        return !String(decoding: status, as: UTF8.self).contains("State:\tZ")
    }

    private func readlink(_ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = Glibc.readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { throw TestFailure("readlink \(path): \(errnoText(errno))") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
