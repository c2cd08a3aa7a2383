import Exposition
import Glibc
import OpenWeather
import Platform

/// The work of a backfill kept beside its output, `OUTPUT.partial/`, so an interrupted run resumes:
/// `range` holds the first run's range and what it backfills, and each location done is one file,
/// written whole (`FileWriter`) before the next location starts. The output is assembled from them at
/// the end, and the directory removed. With `--output=-` (standard output) nothing is kept: an
/// interrupted run starts afresh.
///
/// Whoever can write beside the output can plant names there: every file is written by `FileWriter`
/// (nothing followed), read by `RegularFile` without following a link, and the range read back is
/// checked as one this program could have made.
struct BackfillParts {
    let output: String
    let directory: String
    /// False for standard output: nothing is kept on disk.
    let kept: Bool

    /// `--output=-`: the file goes to standard output.
    static let standardOutput = "-"

    init(output: String) {
        self.output = output
        directory = output + ".partial"
        kept = output != Self.standardOutput
    }

    /// What a run is: its range and which histories it asks for.
    struct HistoryRange: Equatable {
        var from: Double
        var until: Double
        var weather: Bool
        var airPollution: Bool

        var line: String {
            "from=\(Int64(from)) until=\(Int64(until)) weather=\(weather) air_pollution=\(airPollution)\n"
        }

        /// 1979-01-01T00:00:00Z: One Call's history (timemachine) starts there.
        static let historyStart = 283_996_800.0
        /// Timemachine answers up to four days ahead of now.
        static let furthestAhead = 4 * 86_400.0

        /// Nil when the range is one this program makes: whole seconds, `from` before `until`, from the
        /// start of OpenWeather's history to four days ahead of `now`. Else what is wrong with it.
        func problem(now: Double) -> String? {
            guard from.isFinite, until.isFinite, from == from.rounded(.down), until == until.rounded(.down) else {
                return "its ends are not whole seconds"
            }
            guard from < until else { return "it ends before it starts" }
            guard from >= Self.historyStart else {
                return
                    """
                    it starts at \(Clock.rfc3339(from)), before \(Clock.rfc3339(Self.historyStart)), where \
                    OpenWeather's history starts
                    """
            }
            guard until <= now + Self.furthestAhead else {
                return
                    "it ends at \(Clock.rfc3339(until)), more than four days from now, past what OpenWeather forecasts"
            }
            return nil
        }

        static func parse(_ text: String) -> HistoryRange? {
            var fields: [String: String] = [:]
            for pair in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                fields[String(parts[0])] = String(parts[1])
            }
            // Whole numbers only, as `line` writes them: no `nan`, `inf` or `1e300`.
            guard let from = fields["from"].flatMap({ Int64($0) }), let until = fields["until"].flatMap({ Int64($0) }),
                let weather = fields["weather"].flatMap(Bool.init), let air = fields["air_pollution"].flatMap(Bool.init)
            else { return nil }
            return HistoryRange(from: Double(from), until: Double(until), weather: weather, airPollution: air)
        }
    }

    /// Refuses an output that exists and is not a regular file (a FIFO, a device, a link), before any
    /// request is sent: the file would be renamed over it.
    func checkOutput() throws(BackfillError) {
        guard kept else { return }
        do {
            try FileWriter.checkReplaceable(output)
        } catch {
            throw BackfillError.configuration("--output: \(error.description), or --output=- for standard output")
        }
    }

    /// The range of an earlier run of this output, if one was interrupted; refused when it is not one
    /// this program could have made at `now`.
    func existingRange(now: Double) throws(BackfillError) -> HistoryRange? {
        guard kept else { return nil }
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            guard errno == ENOENT else { throw BackfillError("cannot look at \(directory): \(errnoText(errno))") }
            return nil
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw BackfillError(
                """
                \(directory) is not a directory (a link or a file is never followed): remove it, a backfill keeps its \
                work there
                """
            )
        }
        let bytes: [UInt8]
        do {
            bytes = try read(directory + "/range", limit: 4096)
        } catch {
            throw BackfillError(
                """
                \(directory) holds an earlier backfill's work but no readable range (\(error)): remove the directory \
                to start afresh
                """
            )
        }
        guard let range = HistoryRange.parse(String(decoding: bytes, as: UTF8.self)) else {
            throw BackfillError("\(directory)/range is not a backfill's range: remove \(directory) to start afresh")
        }
        if let problem = range.problem(now: now) {
            throw BackfillError(
                "\(directory)/range is not a range a backfill makes (\(problem)): remove \(directory) to start afresh")
        }
        return range
    }

    func start(_ range: HistoryRange) throws(BackfillError) {
        guard kept else { return }
        guard mkdir(directory, 0o700) == 0 else {
            throw BackfillError.configuration(
                "cannot create \(directory): \(errnoText(errno)); --output must be in a directory you can write")
        }
        try Self.keepFile(Array(range.line.utf8), at: directory + "/range")
    }

    /// Where a location's block is kept: named by a hash of its identity (name and place), so a
    /// location renamed or moved is asked again.
    func path(of location: Location) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in location.identity.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + Self.blockSuffix
    }

    private static let blockSuffix = ".om"

    /// The block kept for `location`, nil when it is not done (or what is there is not one).
    func block(of location: Location) -> HistoryBlock? {
        guard kept, let bytes = try? read(path(of: location), limit: 1 << 30) else { return nil }
        return HistoryBlock.decode(bytes)
    }

    func keep(_ block: HistoryBlock, of location: Location) throws(BackfillError) {
        guard kept else { return }
        try Self.keepFile(block.encoded, at: path(of: location))
    }

    /// Removes the work once the output is written, blocks of locations no longer configured too: our
    /// own names only, relative to the directory opened without following a link.
    func remove() {
        guard kept else { return }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { return }
        if let listing = fdopendir(directoryFD) {
            var names: [String] = []
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "range" || name.hasPrefix("range.tmp")
                    || (name.utf8.count == 16 + Self.blockSuffix.utf8.count && name.hasSuffix(Self.blockSuffix))
                    || name.contains(Self.blockSuffix + ".tmp")
                {
                    names.append(name)
                }
            }
            for name in names { unlinkat(directoryFD, name, 0) }
            closedir(listing)
        } else {
            close(directoryFD)
        }
        rmdir(directory)
    }

    /// A kept file: regular, not through a link, at most `limit` bytes.
    private func read(_ path: String, limit: Int) throws(RegularFile.Failure) -> [UInt8] {
        try RegularFile.read(path, limit: limit, followLinks: false)
    }

    /// The output, whole or not at all (`FileWriter`), 0644 as promtool or another user may read it;
    /// to standard output when it is `-`. It is the user's name: anything but a regular file there is refused.
    static func write(_ bytes: [UInt8], to output: String) throws(BackfillError) {
        if output == standardOutput {
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw BackfillError("cannot write to standard output: \(errnoText(errno))") }
                written += count
            }
            return
        }
        do {
            try FileWriter.replace(output, with: bytes, mode: 0o644, existing: .regularFileOnly)
        } catch {
            throw BackfillError("--output: \(error.description), or --output=- for standard output")
        }
    }

    /// A file of the work, the owner's alone, in the directory this program made.
    private static func keepFile(_ bytes: [UInt8], at path: String) throws(BackfillError) {
        do {
            try FileWriter.replace(path, with: bytes, mode: 0o600)
        } catch {
            throw BackfillError(error.description)
        }
    }
}

/// Why a backfill stopped; what it had done is kept for the next run.
struct BackfillError: Error, CustomStringConvertible, Equatable {
    let description: String
    /// One Call's 401 for a key without its subscription: the weather is skipped, the rest goes on.
    var subscriptionMissing = false
    /// The command as given cannot run, whatever the API answers: change the flags (exit status 2,
    /// as for the exporter's mistakes), not a failure that running it again may get past (1).
    var isConfigurationMistake = false

    init(_ description: String, subscriptionMissing: Bool = false) {
        self.description = description
        self.subscriptionMissing = subscriptionMissing
    }

    static func configuration(_ description: String) -> BackfillError {
        var error = BackfillError(description)
        error.isConfigurationMistake = true
        return error
    }

    /// The command's exit status for it.
    var status: Int32 { isConfigurationMistake ? 2 : 1 }
}
