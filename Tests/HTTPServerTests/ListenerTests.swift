import Glibc
import Locking
import TestSupport
import Testing

@testable import HTTPServer

/// Several listeners, and sockets inherited from another process (systemd's socket activation): one
/// server on each, and a clear refusal of a descriptor it cannot serve on.
@Suite("HTTPServer listeners") struct ListenerTests {
    static func get(_ port: UInt16) throws -> Int? {
        let client = try TestClient(port: port)
        client.send(request("/"))
        return client.readResponse()?.status
    }

    @Test func servesTheSameHandlerOnEveryListener() throws {
        let server = try startServer {
            $0.listeners = [.address(host: "127.0.0.1", port: 0), .address(host: "127.0.0.1", port: 0)]
        }
        #expect(server.ports.count == 2 && server.ports[0] != server.ports[1] && server.port == server.ports[0])
        #expect(server.addresses == server.ports.map { "127.0.0.1:\($0)" })
        for port in server.ports {
            let client = try TestClient(port: port)
            client.send(request("/either"))
            #expect(client.readResponse()?.text == "GET /either? 0")
        }
        server.shutdown()
    }

    /// Issue 49: `[::ffff:127.0.0.1]:P` failed with a bare "invalid argument" (an IPv6 socket with
    /// IPV6_V6ONLY cannot bind a v4-mapped address). It binds with V6ONLY off and serves 127.0.0.1.
    @Test func servesOnAnIPv4MappedAddress() throws {
        let server = try startServer { $0.listeners = [.address(host: "::ffff:127.0.0.1", port: 0)] }
        defer { server.shutdown() }
        #expect(server.addresses == ["[::ffff:127.0.0.1]:\(server.port)"])
        #expect(try Self.get(server.port) == 200)
    }

    /// A listener that cannot open closes those opened before it: nothing is left bound.
    @Test func aFailingListenerLeavesNoneOpen() throws {
        let taken = try startServer()
        defer { taken.shutdown() }
        let (free, port) = try LoopbackHTTP.tcpSocket(listening: nil)
        close(free)
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(
                configuration: {
                    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: port)
                    configuration.listeners.append(.address(host: "127.0.0.1", port: taken.port))
                    return configuration
                }(), handler: ClosureHandler(body: echo))
        }
        // The first address was bound and closed again: a server takes it now.
        let again = try startServer { $0.listeners = [.address(host: "127.0.0.1", port: port)] }
        again.shutdown()
    }

    /// An inherited listening socket, blocking as systemd may hand it over, is served on: made
    /// non-blocking (the loops share it) and close-on-exec, and closed with the server.
    @Test func servesOnAnInheritedListeningSocket() throws {
        let (fd, port) = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false)
        let server = try startServer { $0.listeners = [.socket(fd: fd, origin: "systemd ($LISTEN_FDS)")] }
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(server.port == port && server.addresses == ["127.0.0.1:\(port)"])
        for _ in 0..<3 { #expect(try Self.get(port) == 200) }
        server.shutdown()
        #expect(fcntl(fd, F_GETFD) == -1 && errno == EBADF)
    }

    /// Issue 49: another holder of an inherited socket shuts it down (`shutdown(SHUT_RD)`). The loop
    /// that found it failed stopped watching every listener, so the first one stopped answering too (3
    /// of 3 requests timed out). Now only the failed one is dropped, reported once; the first serves on.
    @Test func aListenerShutDownElsewhereIsDroppedAlone() throws {
        let (first, firstPort) = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false)
        let (second, secondPort) = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false)
        let holder = dup(second)
        defer { close(holder) }
        let dropped = Locked<[String]>([])
        let server = try startServer {
            $0.listeners = [.socket(fd: first, origin: "systemd"), .socket(fd: second, origin: "systemd")]
            $0.onListenerDropped = { message in dropped.withLock { $0.append(message) } }
        }
        defer { server.shutdown() }
        #expect(try Self.get(secondPort) == 200)
        #expect(shutdown(holder, Int32(SHUT_RD)) == 0)
        #expect(waitUntil(seconds: 30) { !dropped.withLock { $0 }.isEmpty })
        for _ in 0..<3 { #expect(try Self.get(firstPort) == 200) }
        let messages = dropped.withLock { $0 }
        #expect(messages.count == 1)
        #expect(messages.first?.contains("listener 127.0.0.1:\(secondPort) stopped accepting") == true)
    }

    @Test func refusesAnInheritedDescriptorItCannotServeOn() throws {
        func refusal(_ fd: Int32) -> String {
            do {
                _ = try HTTPServer(
                    configuration: {
                        var configuration = HTTPServerConfiguration()
                        configuration.listeners = [.socket(fd: fd, origin: "systemd ($LISTEN_FDS)")]
                        return configuration
                    }(), handler: ClosureHandler(body: echo))
                return "served"
            } catch {
                #expect(error.kind == .inheritedSocket)
                return error.description
            }
        }
        var pipeFDs: [Int32] = [0, 0]
        #expect(pipe(&pipeFDs) == 0)
        defer { for fd in pipeFDs { close(fd) } }
        #expect(
            refusal(pipeFDs[0])
                == "cannot serve on descriptor \(pipeFDs[0]) of systemd ($LISTEN_FDS): it is a pipe, not a socket")
        let unlistened = try LoopbackHTTP.tcpSocket(listening: nil, closeOnExec: false).fd
        defer { close(unlistened) }
        #expect(
            refusal(unlistened).hasSuffix(
                """
                it is not listening: systemd hands over a listening socket only with Accept=no (the default) in the \
                socket unit
                """
            ))
        let datagram = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(datagram >= 0)
        defer { close(datagram) }
        #expect(refusal(datagram).contains("it is not a stream socket"))
        let unix = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(unix >= 0)
        defer { close(unix) }
        #expect(refusal(unix).contains("it is not a TCP socket"))
        // Far above any descriptor the test process has open (a closed one could be reused meanwhile).
        #expect(refusal(999_999).contains("descriptor 999999 of systemd ($LISTEN_FDS): it is not open"))
        // A refused descriptor is left as it was, for its owner to close.
        #expect(fcntl(unlistened, F_GETFL) & O_NONBLOCK == 0)
    }
}
