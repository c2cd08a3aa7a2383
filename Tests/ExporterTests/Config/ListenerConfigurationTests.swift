import Glibc
import TestSupport
import Testing

@testable import Exporter

/// `--web.listen-address` repeated (the exporter-toolkit's way) and `--web.systemd-socket`.
@Suite struct ListenerConfigurationTests {
    let location = ["--location", "A=1,2"]

    @Test func theListenAddressRepeats() throws {
        let flags = try load(
            location + ["--web.listen-address=127.0.0.1:9100", "--web.listen-address", "[::1]:9101"])
        #expect(
            flags.listenAddresses == [
                ListenAddress(host: "127.0.0.1", port: 9100), ListenAddress(host: "::1", port: 9101),
            ])
        let variable = try load(
            location,
            environment: testKey.merging(["OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS": ":9100, 127.0.0.1:9101"]) { $1 })
        #expect(
            variable.listenAddresses == [
                ListenAddress(host: "", port: 9100), ListenAddress(host: "127.0.0.1", port: 9101),
            ])
        let file = "/tmp/owe-listen-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        defer { unlink(file) }
        try write("web:\n  listen_address: [\":9100\", \"127.0.0.1:9101\"]\n", to: file)
        let listed = try load(location + ["--config.file", file])
        #expect(listed.listenAddresses == variable.listenAddresses)
        // The flags' list replaces the file's as a whole, and says so.
        let both = try load(location + ["--config.file", file, "--web.listen-address=:9200"])
        #expect(both.listenAddresses == [ListenAddress(host: "", port: 9200)])
        #expect(
            both.warnings.contains {
                $0.hasSuffix(
                    """
                    is not used: --web.listen-address overrides it (flags win over variables, variables over the \
                    config file); set it in one place only
                    """
                )
            })
        #expect(try load(location).listenAddresses == [ListenAddress(host: "", port: 9755)])
        // Port 0 is a new free port each time.
        #expect(
            try load(location + ["--web.listen-address=127.0.0.1:0", "--web.listen-address=127.0.0.1:0"])
                .listenAddresses.count == 2)
    }

    @Test func aRepeatedAddressOrABadOneIsRefused() {
        #expect(
            loadError(
                location + ["--web.listen-address=:9100", "--web.listen-address=:9101", "--web.listen-address=:9100"])
                    == """
                    --web.listen-address ":9100" is given twice: give each address once (a second listener on it \
                    could not bind)
                    """
        )
        #expect(
            loadError(location + ["--web.listen-address=:9100", "--web.listen-address=9101"])
                == """
                --web.listen-address "9101" is not an address: use HOST:PORT, for example :9755, 127.0.0.1:9755 \
                or [::]:9755
                """
        )
        #expect(
            loadError(
                location, environment: testKey.merging(["OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS": ":9100,"]) { $1 }
            )
            .hasPrefix("$OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS \"\" is not an address"))
        // Issue 49: the flag took commas, which the help gives for the variable only.
        #expect(
            loadError(location + ["--web.listen-address=:9100,:9101"])
                == """
                --web.listen-address ":9100,:9101" holds a comma: give the flag once per value \
                (--web.listen-address=ADDRESS --web.listen-address=ADDRESS); commas separate values only in \
                $OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS
                """
        )
    }

    @Test func systemdHandsOverTheSocketsOfThisProcess() throws {
        func handed(_ environment: [String: String], pid: Int32 = 4242) -> String {
            do {
                return "\(try SystemdSockets.handedOver(environment: environment, pid: pid))"
            } catch {
                return error.description
            }
        }
        #expect(handed(["LISTEN_PID": "4242", "LISTEN_FDS": "1"]) == "3..<4")
        #expect(handed(["LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "a:b"]) == "3..<5")
        let unit =
            """
            start the exporter from a socket unit (deploy/systemd/openweather-exporter.socket), or leave \
            --web.systemd-socket out to listen on --web.listen-address
            """
        #expect(
            handed([:])
                == """
                --web.systemd-socket: $LISTEN_PID and $LISTEN_FDS are not set, so systemd handed over no socket: \
                \(unit)
                """
        )
        #expect(
            handed(["LISTEN_PID": "4242"])
                == "--web.systemd-socket: $LISTEN_FDS is not set, so systemd handed over no socket: \(unit)")
        #expect(
            handed(["LISTEN_PID": "1", "LISTEN_FDS": "1"])
                == """
                --web.systemd-socket: the sockets are for process 1 ($LISTEN_PID), not this one (4242): a wrapper \
                that starts the exporter must exec it, not run it as a child; or \(unit)
                """
        )
        // Issue 49: `+4242`, `04242`, `+1` and `01` were taken; systemd writes plain decimal digits.
        for pid in ["", "x", "-3", "0", "99999999999", "+4242", "04242", " 4242"] {
            #expect(
                handed(["LISTEN_PID": pid, "LISTEN_FDS": "1"])
                    == """
                    --web.systemd-socket: $LISTEN_PID=\(pid) is not a process ID (plain decimal digits, no sign or \
                    leading zero): \(unit)
                    """
            )
        }
        for count in ["0", "-1", "100", "65", "two", "", "+1", "01", "1 ", "0x1"] {
            #expect(
                handed(["LISTEN_PID": "4242", "LISTEN_FDS": count])
                    == """
                    --web.systemd-socket: $LISTEN_FDS=\(count) is not a count of sockets from 1 to 64 in plain decimal \
                    digits (no sign or leading zero): \(unit)
                    """
            )
        }
        #expect(handed(["LISTEN_PID": "4242", "LISTEN_FDS": "64"]) == "3..<67")
    }

    /// Claimed at startup, before the exporter opens a descriptor that a missing one could be taken for.
    @Test func theDescriptorsHandedOverMustBeOpen() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        try SystemdSockets.claim(fd..<fd + 1)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        // Far above any descriptor the test process has open (a closed one could be reused meanwhile).
        #expect(throws: ConfigError.self) { try SystemdSockets.claim(999_998..<1_000_000) }
        do {
            try SystemdSockets.claim(999_998..<1_000_000)
        } catch {
            #expect(
                error.description
                    == """
                    --web.systemd-socket: $LISTEN_FDS=2 names descriptor 999998, which is not open (bad file \
                    descriptor): systemd hands over descriptors 999998 to 999999; start the exporter from its \
                    socket unit, not with the variables set by hand
                    """
            )
        }
    }

    @Test func theSystemdSocketFlagTakesTheSocketsInsteadOfTheAddresses() throws {
        let mine = ["LISTEN_PID": String(getpid()), "LISTEN_FDS": "2"]
        let config = try load(location + ["--web.systemd-socket"], environment: testKey.merging(mine) { $1 })
        #expect(config.systemdSockets == 3..<5)
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        #expect(try load(location).systemdSockets == nil)
        // As the toolkit does, the addresses are not used; here a warning says so.
        let given = try load(
            location + ["--web.systemd-socket", "--web.listen-address=:9100"], environment: testKey.merging(mine) { $1 }
        )
        #expect(
            given.warnings == [
                """
                --web.listen-address is not used: --web.systemd-socket serves on the sockets systemd hands over \
                instead (the socket unit's ListenStream= says where)
                """
            ])
        #expect(
            loadError(location + ["--web.systemd-socket"]).hasPrefix(
                "--web.systemd-socket: $LISTEN_PID and $LISTEN_FDS are not set"))
        #expect(Flag.helpText.contains("--web.systemd-socket"))
    }

    func write(_ text: String, to path: String) throws {
        let handle = try #require(fopen(path, "w"))
        fputs(text, handle)
        fclose(handle)
    }
}
