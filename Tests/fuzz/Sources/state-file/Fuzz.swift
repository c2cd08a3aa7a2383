// The state file's decoder (--storage.path). Every input is tried twice: as it is, and re-sealed with
// a correct header and checksum (as someone editing the file on purpose would), so the payload parser
// is reached, not only the checksum. A decoded state must encode back to the same state.
import FuzzSupport

@testable import Exporter

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? StateFile.decode(bytes)
    var sealed = StateFile.magic
    append(&sealed, UInt64(StateFile.version), bytes: 4)
    append(&sealed, UInt64(CRC32.checksum(bytes)), bytes: 4)
    append(&sealed, UInt64(bytes.count), bytes: 8)
    sealed += bytes
    if let state = try? StateFile.decode(sealed) {
        let again = StateFile.encode(state)
        require((try? StateFile.decode(again)) == state, "a decoded state does not survive encoding")
    }
    return 0
}

private func append(_ out: inout [UInt8], _ value: UInt64, bytes: Int) {
    for index in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
}
