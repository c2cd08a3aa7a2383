import Glibc
import Platform

/// systemd's socket activation, as `sd_listen_fds(3)` reads it: `$LISTEN_PID` names the process the
/// sockets are for, `$LISTEN_FDS` says how many, and they are the descriptors from 3 on. What each
/// descriptor is gets checked when the server takes it over.
enum SystemdSockets {
    /// The first descriptor systemd hands over (`SD_LISTEN_FDS_START`).
    static let firstDescriptor: Int32 = 3
    /// A socket unit lists a few; more is a variable set by mistake, and each would be checked.
    static let maxCount = 64
    /// Read and then removed from the environment, so no child process takes the sockets for its own.
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// The descriptors handed to process `pid`, or why there are none it can use.
    static func handedOver(environment: [String: String], pid: Int32) throws(ConfigError) -> Range<Int32> {
        let unit =
            """
            start the exporter from a socket unit (deploy/systemd/openweather-exporter.socket), or leave \
            --web.systemd-socket out to listen on --web.listen-address
            """
        guard let pidText = environment["LISTEN_PID"], let fdsText = environment["LISTEN_FDS"] else {
            let missing = ["LISTEN_PID", "LISTEN_FDS"].filter { environment[$0] == nil }.map { "$" + $0 }
            throw ConfigError(
                """
                --web.systemd-socket: \(missing.joined(separator: " and ")) \(missing.count == 1 ? "is" : "are") not \
                set, so systemd handed over no socket: \(unit)
                """
            )
        }
        guard let listenPID = plainDecimal(pidText).flatMap(Int32.init), listenPID > 0 else {
            throw ConfigError(
                """
                --web.systemd-socket: $LISTEN_PID=\(pidText) is not a process ID (plain decimal digits, no sign or \
                leading zero): \(unit)
                """
            )
        }
        guard listenPID == pid else {
            throw ConfigError(
                """
                --web.systemd-socket: the sockets are for process \(listenPID) ($LISTEN_PID), not this one (\(pid)): a \
                wrapper that starts the exporter must exec it, not run it as a child; or \(unit)
                """
            )
        }
        guard let count = plainDecimal(fdsText).flatMap({ Int($0) }), count >= 1, count <= maxCount else {
            throw ConfigError(
                """
                --web.systemd-socket: $LISTEN_FDS=\(fdsText) is not a count of sockets from 1 to \(maxCount) in plain \
                decimal digits (no sign or leading zero): \(unit)
                """
            )
        }
        return firstDescriptor..<firstDescriptor + Int32(count)
    }

    /// `text` when it is a number as systemd writes one: decimal digits, no sign, no leading zero.
    /// Swift's `Int` would take `+1`, and `01` is a zero-padded text no systemd sets.
    private static func plainDecimal(_ text: String) -> String? {
        guard let first = text.utf8.first, first != UInt8(ascii: "0") || text.utf8.count == 1,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return text
    }

    /// Checks that each descriptor is open and makes it close-on-exec, as `sd_listen_fds(3)` does,
    /// before the process opens any of its own: one that systemd did not hand over would otherwise be
    /// taken by a socket of the exporter's (the demo's simulator) and served on as systemd's.
    static func claim(_ descriptors: Range<Int32>) throws(ConfigError) {
        for fd in descriptors where fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 {
            throw ConfigError(
                """
                --web.systemd-socket: $LISTEN_FDS=\(descriptors.count) names descriptor \(fd), which is not open \
                (\(errnoText(errno).lowercased())): systemd hands over descriptors \(descriptors.lowerBound) to \
                \(descriptors.upperBound - 1); start the exporter from its socket unit, not with the variables set by \
                hand
                """
            )
        }
    }

    /// Removes the variables, as `sd_listen_fds(3)` does when asked to: a process the exporter starts must not take
    /// the sockets for its own (their descriptors are close-on-exec once the server has them).
    static func forget() {
        for name in variables { unsetenv(name) }
    }
}
