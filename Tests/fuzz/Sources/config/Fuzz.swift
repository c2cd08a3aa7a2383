// The config file through the whole loader, as `--config.file` reads it: YAML, the key tree, every
// setting's parser and the checks across settings. A file gives a configuration or a ConfigError,
// never a trap; the API key (from the environment) is in no error message.
import FuzzSupport
import Glibc

@testable import Exporter

private let key = "5f1c0e7a9b3d42e68a0c7d9e1f2b3a4c"
private let path = "/tmp/openweather-exporter-fuzz-config-\(getpid()).yml"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    require(fd >= 0, "cannot write \(path)")
    if let data { require(write(fd, data, size) == size, "cannot write \(path)") }
    close(fd)
    let loader = ConfigurationLoader(arguments: ["--config.file", path], environment: ["OPENWEATHER_API_KEY": key])
    do {
        _ = try loader.load()
    } catch {
        require(!error.description.contains(key), "the key in a config error: \(error)")
        require(!error.description.isEmpty, "a config error without a message")
    }
    return 0
}
