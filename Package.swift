// swift-tools-version:6.0
import PackageDescription

// Each library target is one concern; the folder names are the architecture.
// Nothing here depends on a package outside the toolchain.
let package = Package(
    name: "openweather-exporter",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "openweather-exporter", targets: ["openweather-exporter"]),
        // The modules that read outside input, for the fuzz package in Tests/fuzz (a package of its own).
        .library(
            name: "ExporterModules",
            targets: ["Encoding", "Exporter", "Gzip", "HTTPClient", "HTTPServer", "JSON", "OpenWeather", "YAML"]),
    ],
    targets: [
        // OpenSSL through a tiny C shim: the headers ship with libssl-dev.
        .target(
            name: "CTLS",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        // zlib from the system (zlib1g-dev): deflateInit2 and inflateInit2 are macros, wrapped in C.
        .target(name: "CZlib", linkerSettings: [.linkedLibrary("z")]),
        // Version and revision, stamped by the release script through C defines ("dev" otherwise).
        .target(name: "CBuildInfo"),
        // bcrypt (and the other crypt(3) schemes) from libcrypt (libcrypt-dev), compared in constant time.
        .target(name: "CCrypt", linkerSettings: [.linkedLibrary("crypt")]),
        // A lock over pthread_mutex_t that ThreadSanitizer can see (Synchronization.Mutex is a futex it cannot).
        .target(name: "Locking"),
        // Threads over pthread_create and the C library's error text: the POSIX helpers every layer shares.
        .target(name: "Platform"),
        // Percent-encoding, base64 and hex digits, once for every module that reads or writes them.
        .target(name: "Encoding"),
        // Gzip: chunks compressed apart and served as one member, and inflating; nothing of HTTP or Prometheus.
        .target(name: "Gzip", dependencies: ["CZlib"]),
        // One OpenSSL context type for both roles (lifetime, error text); each side configures its own.
        .target(name: "TLS", dependencies: ["CTLS"]),
        // A blocking HTTP/1.1 client with deadlines and size caps (http and https).
        .target(name: "HTTPClient", dependencies: ["CTLS", "Encoding", "Locking", "Platform", "TLS"]),
        // epoll, eventfd and accept4 from the real headers (Swift's Glibc module leaves them out).
        .target(name: "CLinux"),
        // Our own HTTP/1.1 server on POSIX sockets and epoll, plain or TLS; knows nothing of weather.
        .target(name: "HTTPServer", dependencies: ["CLinux", "CTLS", "Locking", "Platform", "TLS"]),
        // A strict, small JSON parser: keeps Foundation (and its memory) out of the process.
        .target(name: "JSON"),
        // A YAML subset for config files (no anchors, aliases or tags); values keep their line:column.
        .target(name: "YAML"),
        // The Prometheus text format encoder; knows nothing of HTTP or weather.
        .target(name: "Exposition"),
        // The OpenWeather API: request, response models, unit conversion, error mapping.
        .target(name: "OpenWeather", dependencies: ["Encoding", "HTTPClient", "JSON", "Platform"]),
        // An OpenWeather-compatible server with simulated weather and switchable faults.
        .target(name: "Simulator", dependencies: ["Encoding", "HTTPServer", "Locking", "Platform"]),
        // Config, poller, metrics, web handler, logging: the wiring of the product.
        .target(
            name: "Exporter",
            dependencies: [
                "CBuildInfo", "CCrypt", "CLinux", "Encoding", "HTTPClient", "HTTPServer", "Exposition", "Gzip",
                "Locking",
                "OpenWeather", "Platform", "YAML",
            ]),
        .executableTarget(
            name: "openweather-exporter", dependencies: ["Exporter", "HTTPServer", "Locking", "Platform", "Simulator"]),

        // fork and exec with PR_SET_PDEATHSIG for the tests' children (posix_spawn has no hook for it).
        .target(name: "CChildProcess", path: "Tests/CChildProcess"),
        // The helpers every test target shares: child processes, loopback HTTP, waiting, golden files.
        .target(
            name: "TestSupport", dependencies: ["CChildProcess", "CZlib", "Gzip", "Locking", "Platform", "Simulator"],
            path: "Tests/TestSupport", exclude: ["checks.py", "processes.sh", "waiting.py"]),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["CTLS", "HTTPServer", "Locking", "Platform", "TestSupport"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient", "Locking", "Platform", "TestSupport"]),
        .testTarget(name: "EncodingTests", dependencies: ["Encoding"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
        .testTarget(name: "ExpositionTests", dependencies: ["Exposition"]),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"]),
        .testTarget(name: "YAMLTests", dependencies: ["YAML", "TestSupport"]),
        .testTarget(
            name: "OpenWeatherTests", dependencies: ["OpenWeather", "HTTPServer", "JSON", "Simulator", "TestSupport"]),
        .testTarget(
            name: "SimulatorTests", dependencies: ["Simulator", "JSON", "OpenWeather", "Platform", "TestSupport"]),
        .testTarget(
            name: "ExporterTests",
            dependencies: [
                "Encoding", "Exporter", "Gzip", "HTTPServer", "Locking", "Platform", "Simulator", "TestSupport", "YAML",
            ], exclude: ["Golden"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Encoding", "Exporter", "Gzip", "openweather-exporter", "Simulator", "TestSupport"]
        ),
    ]
)
