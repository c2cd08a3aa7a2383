/// What `openweather_exporter_build_info` and `--version` report.
public enum BuildInfo {
    public static let version = "0.1.0"
    /// Set by release builds through `-Xswiftc -DREVISION_...` is not possible for strings, so
    /// the revision comes from the environment of the build script when it stamps this file.
    public static let revision = "unknown"

    public static var swiftVersion: String {
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

    public static var versionLine: String {
        "openweather-exporter \(version) (revision \(revision), swift \(swiftVersion))"
    }
}
