import Glibc
import TestSupport
import Testing

/// A FIFO where a file is expected once hung startup in open(), deaf to SIGTERM: every file the
/// exporter reads is opened without blocking and refused unless regular, with a message saying so.
@Suite(.endToEnd) struct FIFOTests {
    @Test(arguments: [
        (["--location", "A=1,2", "--openweather.api-key-file"], "API key file"),
        (["--demo", "--web.listen-address=127.0.0.1:0", "--config.file"], "config file"),
        (["--demo", "--web.listen-address=127.0.0.1:0", "--web.config.file"], "--web.config.file"),
    ])
    func aFIFOGivenAsAFileIsAnErrorNotAHang(arguments: [String], what: String) async throws {
        let fifo = temporaryFile()
        unlink(fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let process = try ChildProcess(DemoModeTests.executable, arguments + [fifo], environment: [:])
        var status = await process.wait(seconds: 30)
        if status == nil {
            process.signal(SIGTERM)
            status = await process.wait(seconds: 5)
            Issue.record(status == nil ? "hung on the FIFO and ignored SIGTERM" : "hung on the FIFO until SIGTERM")
            if status == nil {
                process.signal(SIGKILL)
                _ = await process.wait(seconds: 5)
            }
            return
        }
        #expect(status != 0, "\(process.standardError)")
        let output = process.standardError
        #expect(
            output.contains(what)
                && output.contains("\(fifo) is not a regular file (it is a FIFO): replace it with a regular file"),
            "\(output)")
    }
}
