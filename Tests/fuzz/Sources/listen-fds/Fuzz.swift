// systemd's socket activation variables ($LISTEN_PID, $LISTEN_FDS) as the exporter reads them: a
// range of descriptors from 3 within the limit, or a ConfigError saying what to fix, never a trap.
import FuzzSupport

@testable import Exporter

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    // The two values are split at the first NUL byte (no variable can hold one).
    let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let pid = String(decoding: parts.first ?? [], as: UTF8.self)
    let fds = String(decoding: parts.count > 1 ? parts[1] : [], as: UTF8.self)
    for environment in [
        ["LISTEN_PID": pid, "LISTEN_FDS": fds], ["LISTEN_PID": "42", "LISTEN_FDS": fds], ["LISTEN_FDS": fds],
    ] {
        do {
            let range = try SystemdSockets.handedOver(environment: environment, pid: 42)
            require(
                range.lowerBound == SystemdSockets.firstDescriptor && !range.isEmpty
                    && range.count <= SystemdSockets.maxCount, "descriptors \(range)")
        } catch {
            require(error.description.contains("--web.systemd-socket"), "an error without its flag: \(error)")
        }
    }
    return 0
}
