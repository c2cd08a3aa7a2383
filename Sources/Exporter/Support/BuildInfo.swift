import CBuildInfo

/// What `openweather_exporter_build_info` and `--version` report.
public enum BuildInfo {
    /// `git describe` of a release build (Tests/release/build.sh); "dev" for a plain `swift build`.
    public static let version = String(cString: openweather_exporter_build_version())
    /// The commit of a release build; "dev" for a plain `swift build`.
    static let revision = String(cString: openweather_exporter_build_revision())

    static var swiftVersion: String {
        #if compiler(>=6.4)
            "6.4+"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #elseif compiler(>=6.1)
            "6.1"
        #else
            "6.0"
        #endif
    }

    static var versionLine: String {
        "openweather-exporter \(version) (revision \(revision), swift \(swiftVersion))"
    }
}
