import Glibc
import TestSupport

/// A private CA and two python3 TLS servers on loopback: one with a certificate
/// for localhost and 127.0.0.1, one for a name the client never asks for.
/// Built once per test process; the servers exit when this process does.
struct TLSFixture: Sendable {
    let caFile: String
    let goodPort: UInt16
    let wrongHostPort: UInt16
    private let servers: [ChildProcess]

    static let shared: Result<TLSFixture, TestFailure> = Result { () throws(TestFailure) in try TLSFixture() }

    private init() throws(TestFailure) {
        var template = Array("/tmp/http-client-tests-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestFailure("mkdtemp: \(errno)") }
        let dir = String(cString: created)
        Self.removeAtExit(dir)
        let script = """
            set -e
            cd '\(dir)'
            key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
            openssl req -x509 $key -keyout ca.key -out ca.pem -days 2 -subj '/CN=HTTPClient Test CA' \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
            for name in good wrong; do
                openssl req $key -keyout $name.key -out $name.csr -subj "/CN=$name" 2>/dev/null
            done
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > good.ext
            printf 'subjectAltName=DNS:wrong.example\\nextendedKeyUsage=serverAuth\\n' > wrong.ext
            for name in good wrong; do
                openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                    -extfile $name.ext -out $name.pem 2>/dev/null
            done
            cat > server.py <<'PY'
            \(Self.serverScript)
            PY
            """
        let setup: ChildProcess
        do { setup = try ChildProcess("/bin/sh", ["-c", script]) } catch { throw TestFailure("\(error)") }
        guard setup.wait(seconds: 60) == 0 else { throw TestFailure("openssl certificate generation failed") }
        caFile = "\(dir)/ca.pem"

        var servers: [ChildProcess] = []
        var ports: [UInt16] = []
        for name in ["good", "wrong"] {
            let server: ChildProcess
            do {
                server = try ChildProcess("python3", ["\(dir)/server.py", "\(dir)/\(name).pem", "\(dir)/\(name).key"])
            } catch { throw TestFailure("\(error)") }
            guard let line = server.readLine(seconds: 20), let port = UInt16(line) else {
                throw TestFailure("python3 TLS server did not report its port")
            }
            servers.append(server)
            ports.append(port)
        }
        self.servers = servers
        goodPort = ports[0]
        wrongHostPort = ports[1]
    }

    /// The certificates are read by every test that builds a client, so they live as long as the
    /// process; then the directory goes.
    private static func removeAtExit(_ dir: String) {
        fixtureDirectory = strdup(dir)
        atexit {
            guard let dir = fixtureDirectory else { return }
            // The python servers are told to exit by the end of their stdin at the same moment.
            _ = system("rm -rf '\(String(cString: dir))'")
        }
    }

    /// Serves one request per connection (several when the path starts with /keep), each connection on
    /// a thread, and reports the SNI it saw in `X-SNI`, whether the handshake resumed a session in
    /// `X-Resumed` and the request's number on its connection in `X-Request-On-Connection`.
    private static let serverScript = """
        import os, socket, ssl, sys, threading
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[1], sys.argv[2])
        def on_sni(sock, name, _):
            sock.seen_sni = name or ""
        ctx.sni_callback = on_sni
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        print(srv.getsockname()[1], flush=True)
        def exit_with_parent():
            sys.stdin.read()
            os._exit(0)
        threading.Thread(target=exit_with_parent, daemon=True).start()
        def serve(conn):
            conn.settimeout(5)
            try:
                with ctx.wrap_socket(conn, server_side=True) as tls:
                    count = 0
                    while True:
                        data = b""
                        while b"\\r\\n\\r\\n" not in data:
                            chunk = tls.recv(4096)
                            if not chunk:
                                return
                            data += chunk
                        count += 1
                        body = b'{"ok":true}'
                        head = "HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nX-SNI: %s\\r\\nX-Resumed: %s\\r\\nX-Request-On-Connection: %d\\r\\nContent-Length: %d\\r\\n\\r\\n" % (
                            getattr(tls, "seen_sni", ""), "yes" if tls.session_reused else "no", count, len(body))
                        tls.sendall(head.encode() + body)
                        # One answer per connection, unless the path asks to keep it.
                        if b"/keep" not in data.split(b"\\r\\n")[0]:
                            return
            except Exception:
                pass
            finally:
                conn.close()
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """
}

/// For the atexit handler, which cannot capture.
nonisolated(unsafe) private var fixtureDirectory: UnsafeMutablePointer<CChar>?
