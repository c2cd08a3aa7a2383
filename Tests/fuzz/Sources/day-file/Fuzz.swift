// The day file (`openweather-exporter.day` in --storage.path), which every process sharing the
// directory writes: read under its lock, it is a day's counts, none, or odd (then written over),
// never a trap; a day read back is within the limits the budget relies on.
import FuzzSupport
import Glibc

@testable import Exporter

private let directory: String = {
    var template = Array("/tmp/openweather-exporter-fuzz-day-XXXXXX".utf8CString)
    require(mkdtemp(&template) != nil, "cannot make a directory under /tmp")
    return String(cString: template)
}()
private let shared = SharedDay(storage: try! StateStorage(directory: directory))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let fd = open(shared.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    require(fd >= 0, "cannot write \(shared.path)")
    if let data { require(write(fd, data, size) == size, "cannot write \(shared.path)") }
    close(fd)
    do {
        try shared.update(waitMilliseconds: 0) { contents in
            if let day = contents.day {
                require(contents.odd == nil, "a day taken and called odd")
                require(max(day.counts.count, day.spent.count) <= DailyBudget.maxNames, "too many names taken")
            }
            let written = contents.day ?? SavedState.Daily(day: 1, total: 0, counts: [])
            return ((), written)
        }
    } catch {
        fatalError("the day file could not be used: \(error)")
    }
    return 0
}
