// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, one per door the exporter reads from outside. A package of its own, so a plain
// `swift build` or `swift test` at the top never builds them; `run.sh` builds them with
// `--sanitize=fuzzer --sanitize=address` and `-enable-testing` (they reach internals by `@testable import`).
let doors = [
    "http-request", "http-response", "json", "gzip", "encoding", "openweather", "retry-after", "yaml", "config",
    "web-config", "state-file", "day-file", "listen-fds",
]

let package = Package(
    name: "openweather-exporter-fuzz",
    platforms: [.macOS(.v15)],
    // Through a link named as the package: a path dependency is known by its directory's name.
    dependencies: [.package(path: "openweather-exporter")],
    targets: [.target(name: "FuzzSupport")]
        + doors.map { door in
            .executableTarget(
                name: door,
                dependencies: ["FuzzSupport", .product(name: "ExporterModules", package: "openweather-exporter")],
                path: "Sources/\(door)",
                // No main: libFuzzer's own main calls LLVMFuzzerTestOneInput.
                swiftSettings: [.unsafeFlags(["-parse-as-library"])]
            )
        }
)
