import Glibc
import TestSupport
import Testing

@testable import Exporter

/// Mistakes that would otherwise pass without a word: a file value a flag or variable overrides,
/// a misspelled variable, an API key that is an example's placeholder or unlike OpenWeather's.
@Suite struct ConfigWarningTests {
    let key = testKey

    // MARK: overrides

    /// The systemd unit pins --web.listen-address: the file's `web.listen_address` does nothing, and says so.
    @Test func aFlagOverridingAFileValueSaysWhichAndWhere() throws {
        let file = temporaryFile("web:\n  listen_address: \":9100\"\n  telemetry_path: /weather\n", suffix: ".yml")
        defer { unlink(file) }
        let config = try load(["--config.file", file, "--web.listen-address=:9755", "--location", "A=1,2"])
        #expect(config.listenAddresses.map(\.port) == [9755])
        #expect(config.telemetryPath == "/weather")
        let overrides = config.warnings.filter { $0.contains("overrides it") }
        #expect(
            overrides == [
                """
                config file "\(file)", line 2, column 19: `web.listen_address` is not used: --web.listen-address \
                overrides it (flags win over variables, variables over the config file); set it in one place only
                """
            ])
    }

    @Test func aVariableOverridingTheFileAndAFlagOverridingAVariableSaySoToo() throws {
        let file = temporaryFile("openweather:\n  language: de\n", suffix: ".yml")
        defer { unlink(file) }
        let environment = key.merging([
            "OPENWEATHER_EXPORTER_OPENWEATHER_LANGUAGE": "fr", "OPENWEATHER_EXPORTER_LOG_LEVEL": "debug",
        ]) { $1 }
        let config = try load(
            ["--config.file", file, "--log.level=warn", "--location", "A=1,2"], environment: environment)
        #expect(config.language == "fr" && config.logLevel == .warn)
        #expect(
            config.warnings.contains {
                $0.hasPrefix(
                    """
                    config file "\(file)", line 2, column 13: `openweather.language` is not used: \
                    $OPENWEATHER_EXPORTER_OPENWEATHER_LANGUAGE overrides it
                    """
                )
            })
        #expect(
            config.warnings.contains {
                $0.hasPrefix("$OPENWEATHER_EXPORTER_LOG_LEVEL is not used: --log.level overrides it")
            })
        #expect(config.warnings.count == 2, "\(config.warnings)")
    }

    /// The same value twice changes nothing, so nothing is said.
    @Test func anOverrideWithTheSameValueIsNotWarned() throws {
        let file = temporaryFile("web:\n  listen_address: \":9755\"\n", suffix: ".yml")
        defer { unlink(file) }
        #expect(
            try load(["--config.file", file, "--web.listen-address=:9755", "--location", "A=1,2"]).warnings.isEmpty)
    }

    /// A proxy URL may hold a password: the warning names the places, never the values.
    @Test func overrideWarningsQuoteNoValue() throws {
        let file = temporaryFile("openweather:\n  proxy_url: http://me:filepass@proxy.example:3128\n", suffix: ".yml")
        defer { unlink(file) }
        let config = try load([
            "--config.file", file, "--openweather.proxy-url=http://me:flagpass@proxy.example:3128", "--location",
            "A=1,2",
        ])
        #expect(config.warnings.count == 1, "\(config.warnings)")
        #expect(!config.warnings.joined().contains("pass"))
    }

    @Test func commandLineLocationsReplacingTheFilesSaySo() throws {
        let file = temporaryFile(
            """
            locations:
              - {name: London, latitude: 51.5, longitude: -0.1}
              - {name: Paris, latitude: 48.9, longitude: 2.35}
            """, suffix: ".yml")
        defer { unlink(file) }
        let config = try load(["--config.file", file, "--location", "Only=1,1"])
        #expect(config.locations.map(\.name) == ["Only"])
        #expect(
            config.warnings == [
                """
                --location replaces all 2 locations of config file "\(file)": lists of locations are not merged \
                (flags replace the variable's and the file's, the variable the file's); give every location in one place
                """
            ])
        let fromVariable = try load(
            ["--config.file", file], environment: key.merging(["OPENWEATHER_EXPORTER_LOCATION": "B=2,2"]) { $1 })
        #expect(fromVariable.locations.map(\.name) == ["B"])
        #expect(
            fromVariable.warnings.count == 1
                && fromVariable.warnings[0].hasPrefix(
                    "$OPENWEATHER_EXPORTER_LOCATION replaces all 2 locations of config file")
        )
        // Locations only in the file, or only on the command line: nothing to say.
        #expect(try load(["--config.file", file]).warnings.isEmpty)
        #expect(try load(["--location", "Only=1,1"]).warnings.isEmpty)
    }

    // MARK: variables

    @Test(arguments: [
        (
            "OPENWEATHER_EXPORTER_LOCATIONS",
            """
            $OPENWEATHER_EXPORTER_LOCATIONS is not a setting and is ignored (did you mean \
            $OPENWEATHER_EXPORTER_LOCATION?)
            """
        ),
        ("OPENWEATHER_EXPORTER_STORAGE_PAHT", "(did you mean $OPENWEATHER_EXPORTER_STORAGE_PATH?)"),
        ("OPENWEATHER_EXPORTER_LISTEN_ADDRESS", "(did you mean $OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS?)"),
        (
            "openweather_exporter_log_level",
            """
            $openweather_exporter_log_level is not a setting and is ignored (did you mean \
            $OPENWEATHER_EXPORTER_LOG_LEVEL?)
            """
        ),
        (
            "OPENWEATHER_EXPORTER_API_KEY",
            """
            $OPENWEATHER_EXPORTER_API_KEY is not read: the API key comes from $OPENWEATHER_API_KEY or \
            --openweather.api-key-file
            """
        ),
        (
            "OPENWEATHER_EXPORTER_WIBBLE",
            "$OPENWEATHER_EXPORTER_WIBBLE is not a setting and is ignored; run with --help"
        ),
    ])
    func aMisspelledVariableIsWarnedWithTheNearestName(name: String, expected: String) throws {
        let config = try load(["--location", "A=1,2"], environment: key.merging([name: "x"]) { $1 })
        #expect(config.warnings.count == 1 && config.warnings[0].contains(expected), "\(config.warnings)")
    }

    @Test func knownEmptyAndBuildVariablesAreNotWarned() throws {
        let environment = key.merging([
            "OPENWEATHER_EXPORTER_LOG_LEVEL": "info", "OPENWEATHER_EXPORTER_LOCATON": "",
            "OPENWEATHER_EXPORTER_REVISION": "abc123",
            "OPENWEATHER_EXPORTER_VERSION": "1.0", "OPENWEATHER_OTHER_TOOL": "x",
        ]) { $1 }
        #expect(try load(["--location", "A=1,2"], environment: environment).warnings.isEmpty)
    }

    /// A misspelled variable that leaves a setting missing is named in the error, where it is read.
    @Test func theErrorAMisspelledVariableCausesNamesIt() {
        let message = loadError([], environment: key.merging(["OPENWEATHER_EXPORTER_LOCATONS": "A=1,2"]) { $1 })
        #expect(message.hasPrefix("no location configured"))
        #expect(
            message.contains(
                """
                ; note: $OPENWEATHER_EXPORTER_LOCATONS is not a setting and is ignored (did you mean \
                $OPENWEATHER_EXPORTER_LOCATION?)
                """
            ))
    }

    // MARK: the API key's text

    @Test(arguments: [
        "REPLACE_WITH_YOUR_OPENWEATHER_API_KEY", "your-api-key", "YOUR_KEY_HERE", "changeme", "<api-key>",
        "${OPENWEATHER_API_KEY}",
        "$(API_KEY)", "{{.Values.apiKey}}", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "00000000000000000000000000000000",
        "my-placeholder-key",
        "insert-key", "example-key",
    ])
    func aPlaceholderKeyIsRefusedWithoutBeingQuoted(placeholder: String) throws {
        let fromVariable = loadError(["--location", "A=1,2"], environment: ["OPENWEATHER_API_KEY": placeholder])
        #expect(
            fromVariable.hasPrefix("the API key in $OPENWEATHER_API_KEY is the placeholder of an example"),
            "\(fromVariable)")
        #expect(fromVariable.contains("put your own OpenWeather API key there"))
        let file = temporaryFile(placeholder + "\n")
        defer { unlink(file) }
        let fromFile = loadError(["--location", "A=1,2", "--openweather.api-key-file", file], environment: [:])
        #expect(
            fromFile.hasPrefix(
                "the API key in \"\(file)\" (--openweather.api-key-file) is the placeholder of an example"),
            "\(fromFile)")
        if placeholder != "REPLACE_WITH_YOUR_OPENWEATHER_API_KEY" {
            #expect(!fromVariable.contains(placeholder) && !fromFile.contains(placeholder))
        }
    }

    @Test(arguments: [
        ("0123456789abcdef", "has 16 characters,"), ("0123456789ABCDEF0123456789abcdef", nil),
        ("0123456789abcdef0123456789abcdeg", "has characters other than 0-9 and a-f,"),
        ("0123456789abcdef0123456789abcdef\"", "has 33 characters, not all of them 0-9 and a-f,"),
        ("a-gateway-token-of-its-own", "has 26 characters, not all of them 0-9 and a-f,"),
    ])
    func aKeyUnlikeOpenWeathersIsWarnedWithoutBeingQuoted(key: String, problem: String?) throws {
        let config = try load(["--location", "A=1,2"], environment: ["OPENWEATHER_API_KEY": key])
        #expect(config.apiKey.value == key)
        if let problem {
            #expect(
                config.warnings == [
                    """
                    the API key in $OPENWEATHER_API_KEY \(problem) unlike OpenWeather's keys (32 hexadecimal \
                    characters): check that it was copied whole from https://home.openweathermap.org/api_keys; \
                    OpenWeather answers a wrong key with 401
                    """
                ])
            #expect(!config.warnings.joined().contains(key))
        } else {
            #expect(config.warnings.isEmpty, "\(config.warnings)")
        }
    }

    /// The demo sends the key only to its own simulator.
    @Test func theDemoTakesAnyKey() throws {
        let config = try load(["--demo"], environment: ["OPENWEATHER_API_KEY": "REPLACE_WITH_YOUR_OPENWEATHER_API_KEY"])
        #expect(config.demo && config.warnings.isEmpty)
    }
}
