import Glibc

/// Runs `script` with /bin/sh, its stdout and stderr captured; gives up (SIGKILL) after `timeout` seconds.
public func shell(_ script: String, timeout: Double = 60) -> (status: Int32, output: String) {
    var template = Array("/tmp/owe-shell-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { return (-1, "mkstemp failed") }
    close(fd)
    let outFile = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { unlink(outFile) }
    guard
        let child = try? ChildProcess(
            "/bin/sh", ["-c", "exec >'\(outFile)' 2>&1\n" + script],
            environment: ["PATH": "/usr/local/bin:/usr/bin:/bin"])
    else {
        return (-1, "cannot start /bin/sh")
    }
    let status = child.wait(seconds: timeout) ?? -1
    let output = (try? readFile(outFile)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    return (status, output)
}

/// A private CA with a server certificate (localhost, 127.0.0.1, ::1), a second one for rotation tests, and
/// a client certificate, made once per test process with the openssl command.
public struct TestCertificates: Sendable {
    public let directory: String
    public var caFile: String { directory + "/ca.pem" }
    public var serverCert: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    /// Another certificate for the same names, from the same CA (subject CN=rotated).
    public var rotatedCert: String { directory + "/rotated.pem" }
    public var rotatedKey: String { directory + "/rotated.key" }
    public var clientCert: String { directory + "/client.pem" }
    public var clientKey: String { directory + "/client.key" }
    /// A client certificate from a CA the server does not trust.
    public var strangerCert: String { directory + "/stranger.pem" }
    public var strangerKey: String { directory + "/stranger.key" }

    public static let shared: Result<TestCertificates, TestFailure> = Result { () throws(TestFailure) in
        try TestCertificates()
    }

    private init() throws(TestFailure) {
        var template = Array("/tmp/owe-certs-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        directory = String(cString: created)
        let script = """
            set -e
            cd '\(directory)'
            key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
            for ca in ca other-ca; do
                openssl req -x509 $key -keyout $ca.key -out $ca.pem -days 3 -subj "/CN=Test $ca" \\
                    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
            done
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\\nextendedKeyUsage=serverAuth\\n' > server.ext
            printf 'extendedKeyUsage=clientAuth\\n' > client.ext
            issue() { # name cn ext ca
                openssl req $key -keyout $1.key -out $1.csr -subj "/CN=$2" 2>/dev/null
                openssl x509 -req -in $1.csr -CA $4.pem -CAkey $4.key -CAcreateserial -days 3 -extfile $3 -out $1.pem 2>/dev/null
            }
            issue server server server.ext ca
            issue rotated rotated server.ext ca
            issue client client client.ext ca
            issue stranger stranger client.ext other-ca
            """
        let result = shell(script)
        guard result.status == 0 else { throw TestFailure("openssl failed: \(result.output)") }
    }
}
