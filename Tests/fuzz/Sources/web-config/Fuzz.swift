// The web config (`--web.config.file`, the exporter-toolkit's format): TLS, basic auth, headers. A file
// gives a web config or a ConfigError naming the file, never a trap.
import FuzzSupport

@testable import Exporter

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do {
        _ = try WebConfig.parse(bytes, directory: "/nonexistent", origin: "--web.config.file web.yml")
    } catch {
        require(error.description.hasPrefix("--web.config.file web.yml"), "an error without its origin: \(error)")
    }
    return 0
}
