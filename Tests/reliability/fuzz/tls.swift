// libFuzzer entry point for the server's TLS transport: built by ../fuzz.sh tls with
// `swiftc -sanitize=fuzzer,address` together with the HTTPServer transport files and the CTLS shim.
// The input is what a client sends, cut into flights by its own bytes; the server side reads through
// TLSTransport over a socket pair. Besides "no crash", the transport must never report more bytes than
// the buffer holds, and must end in data, EAGAIN, end of stream or a protocol error.
import CTLS
import Glibc

private let source: TLSContextSource = {
    let environment = ProcessInfoLite.environment
    guard let cert = environment["FUZZ_TLS_CERT"], let key = environment["FUZZ_TLS_KEY"] else {
        fatalError("set FUZZ_TLS_CERT and FUZZ_TLS_KEY (fuzz.sh tls does)")
    }
    do {
        return try TLSContextSource(TLSServerConfiguration(certFile: cert, keyFile: key))
    } catch {
        fatalError("\(error)")
    }
}()
private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: TLSTransport.recordSize, alignment: 16)
private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
private let sink = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
        return 0
    }
    defer {
        close(fds[0])
        close(fds[1])
    }
    guard let transport = TLSTransport(fd: fds[0], context: source.context(now: 0), scratch: scratch) else { return 0 }
    defer { transport.release() }
    var offset = 0
    while offset < size {
        // Each flight: one length byte (times 16, plus 1), then that many bytes.
        let length = min(size - offset - 1, Int(data[offset]) * 16 + 1)
        offset += 1
        if length > 0 {
            _ = write(fds[1], data + offset, length)
            offset += length
        }
        let n = transport.read(into: buffer)
        precondition(n <= buffer.count, "read more than the buffer")
        precondition(
            n > 0 || n == 0 || n == -Int(EAGAIN) || n == -Int(EPROTO) || n == -Int(ECONNRESET) || n == -Int(EPIPE),
            "unexpected result \(n)")
        // Whatever the server answered (alerts, a ServerHello) is read away, so it never blocks.
        while read(fds[1], sink.baseAddress, sink.count) > 0 {}
        if n == 0 || n == -Int(EPROTO) { break }
    }
    transport.shutdownWrite()
    return 0
}

/// The environment without Foundation.
enum ProcessInfoLite {
    static var environment: [String: String] {
        var out: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                out[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return out
    }
}
