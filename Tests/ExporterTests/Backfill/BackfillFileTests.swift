import Glibc
import Platform
import TestSupport
import Testing

@testable import Exporter

/// Backfill writes and reads its files as the state does (issue 27): through `FileWriter` (a random
/// temporary made with O_EXCL|O_NOFOLLOW, renamed) and `RegularFile`; an output that is not a
/// regular file is refused before any request; a kept range is checked before anything is sized by it.
@Suite struct BackfillFileTests {
    typealias Run = BackfillTests.Run

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode : nil
    }

    static func contents(_ path: String) -> String? {
        (try? readFile(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A link planted at the name the output's temporary once had (`OUTPUT.tmp`, opened with O_TRUNC)
    /// overwrote its target: now the temporary is a new name, made exclusively, and the link stays a link.
    @Test func aLinkPlantedAtTheTemporaryIsNotFollowed() throws {
        let directory = BackfillTests.temporaryDirectory()
        let output = directory + "/history.om"
        let victim = temporaryFile("the victim's own file\n", mode: 0o644)
        defer { unlink(victim) }
        #expect(symlink(victim, output + ".tmp") == 0)
        #expect(symlink(victim, output + ".partial.tmp") == 0)
        let run = Run(output: output)
        try run.backfill().run(since: .seconds(3600), until: BackfillTests.until)
        #expect(Self.contents(victim) == "the victim's own file\n")
        #expect(try BackfillTests.text(output).hasSuffix("# EOF\n"))
        #expect(
            Self.mode(output).map { $0 & S_IFMT == S_IFREG && $0 & 0o777 == 0o644 } == true,
            "the output is a regular file others may read")
        #expect(Self.mode(output + ".tmp").map { $0 & S_IFMT == S_IFLNK } == true, "the link is left as it was")
    }

    /// The work kept beside the output is the owner's alone: the directory 0700, its files 0600.
    @Test func theWorkKeptIsTheOwnersAlone() throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        let run = Run(output: output)
        run.transport.answer { request in
            request.path == "/data/2.5/air_pollution/history"
                ? .failure(.http(status: 503, message: "down", retryAfterSeconds: nil)) : BackfillTests.answers(request)
        }
        #expect(throws: BackfillError.self) {
            try run.backfill().run(since: .seconds(3600), until: BackfillTests.until)
        }
        #expect(Self.mode(output + ".partial").map { $0 & S_IFMT == S_IFDIR && $0 & 0o777 == 0o700 } == true)
        #expect(Self.mode(output + ".partial/range").map { $0 & 0o777 == 0o600 } == true)
    }

    /// A FIFO, a link (to a device, here /dev/null) or a directory given as the output is refused
    /// with a message, before a request is sent, and left as it was.
    @Test(arguments: ["fifo", "link", "directory"])
    func anOutputThatIsNotARegularFileIsRefused(kind: String) throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        switch kind {
        case "fifo": #expect(mkfifo(output, 0o600) == 0)
        case "link": #expect(symlink("/dev/null", output) == 0)
        default: #expect(mkdir(output, 0o700) == 0)
        }
        let before = Self.mode(output)
        let run = Run(output: output)
        #expect {
            try run.backfill().run(since: .seconds(3600), until: BackfillTests.until)
        } throws: { error in
            let text = (error as? BackfillError)?.description ?? ""
            return text.hasPrefix("--output: \(output) exists and is ") && text.contains("not a regular file")
                && text.contains("--output=-")
        }
        #expect(run.transport.log.isEmpty, "refused before any request")
        #expect(Self.mode(output) == before)
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }

    /// `--output=-`: nothing is kept on disk, so nothing is read back or planted into.
    @Test func standardOutputKeepsNoWork() throws {
        let parts = BackfillParts(output: "-")
        #expect(!parts.kept)
        #expect(try parts.existingRange(now: BackfillTests.until) == nil)
        try parts.checkOutput()
        #expect(throws: Never.self) { try parts.start(.init(from: 0, until: 1, weather: true, airPollution: true)) }
        #expect(access("-.partial", F_OK) != 0)
    }

    /// A range no run could have made (once `from=1e300` or `nan` spun forever) is refused, saying so.
    @Test(arguments: [
        "from=1e300 until=1764590400 weather=true air_pollution=true\n",
        "from=nan until=1764590400 weather=true air_pollution=true\n",
        "from=-inf until=1764590400 weather=true air_pollution=true\n",
        "from=1 until=1764590400 weather=true air_pollution=true\n",
        "from=1764590400 until=1764586800 weather=true air_pollution=true\n",
        "from=1764586800 until=99999999999 weather=true air_pollution=true\n",
        "from=1764586800.5 until=1764590400 weather=true air_pollution=true\n",
    ])
    func aRangeNoRunCouldHaveMadeIsRefused(range: String) throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        #expect(mkdir(output + ".partial", 0o700) == 0)
        try writeFile(output + ".partial/range", range)
        let run = Run(output: output)
        #expect {
            try run.backfill().run(since: .seconds(3600), until: BackfillTests.until)
        } throws: { error in
            let text = (error as? BackfillError)?.description ?? ""
            return text.contains("remove \(output).partial to start afresh")
        }
        #expect(run.transport.log.isEmpty)
    }

    /// The check every range goes through, the kept one and the one --since and --until make.
    @Test func theRangeCheckSaysWhatIsWrong() {
        let now = BackfillTests.until
        func problem(_ from: Double, _ until: Double) -> String? {
            BackfillParts.HistoryRange(from: from, until: until, weather: true, airPollution: false).problem(now: now)
        }
        #expect(problem(now - 86_400, now) == nil)
        #expect(problem(283_996_800, now + 4 * 86_400) == nil, "from 1979 to four days ahead")
        #expect(problem(now - 31_000 * 365 * 86_400, now)?.contains("before 1979-01-01") == true)
        #expect(problem(283_996_799, now)?.contains("before 1979-01-01") == true)
        #expect(problem(now - 3600, now + 4 * 86_400 + 1)?.contains("more than four days from now") == true)
        #expect(problem(now, now - 3600) == "it ends before it starts")
        #expect(problem(now, now) == "it ends before it starts")
        #expect(problem(.nan, now) == "its ends are not whole seconds")
        #expect(problem(1e300, .infinity) == "its ends are not whole seconds")
        #expect(problem(now - 0.5, now) == "its ends are not whole seconds")
    }

    /// Every file of the work is read as the state is: a FIFO planted as a location's block is not
    /// waited on (the location is asked again), a link at the range or the directory is not followed.
    @Test func plantedFilesInTheWorkAreNotFollowedOrWaitedOn() throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        let parts = BackfillParts(output: output)
        try parts.start(
            .init(from: BackfillTests.until - 3600, until: BackfillTests.until, weather: true, airPollution: true))
        #expect(mkfifo(parts.path(of: BackfillTests.locations[0]), 0o600) == 0)
        #expect(parts.block(of: BackfillTests.locations[0]) == nil)

        let secret = temporaryFile("from=1764586800 until=1764590400 weather=true air_pollution=true\n")
        defer { unlink(secret) }
        let linked = BackfillTests.temporaryDirectory() + "/linked.om"
        #expect(mkdir(linked + ".partial", 0o700) == 0 && symlink(secret, linked + ".partial/range") == 0)
        #expect(throws: BackfillError.self) {
            try BackfillParts(output: linked).existingRange(now: BackfillTests.until)
        }

        // A link as the directory: refused, and what it points to is never emptied.
        let victimDirectory = BackfillTests.temporaryDirectory()
        try writeFile(victimDirectory + "/range", "keep me")
        let elsewhere = BackfillTests.temporaryDirectory() + "/elsewhere.om"
        #expect(symlink(victimDirectory, elsewhere + ".partial") == 0)
        #expect(throws: BackfillError.self) {
            try BackfillParts(output: elsewhere).existingRange(now: BackfillTests.until)
        }
        BackfillParts(output: elsewhere).remove()
        #expect(Self.contents(victimDirectory + "/range") == "keep me")
    }

    /// `--since=31000y` once made an array of 2.2 GB of hours before it was refused: the range is
    /// checked first, against OpenWeather's history (from 1979) and four days ahead.
    @Test(arguments: [31_000 * 365 * 86_400, 48 * 365 * 86_400] as [Int64])
    func aSinceBeyondTheHistoryIsRefusedBeforeAnythingIsSized(seconds: Int64) throws {
        let run = Run(output: BackfillTests.temporaryDirectory() + "/history.om")
        // The thread's CPU time: a busy machine stretches the wall clock, not the work.
        let started = threadCPUSeconds()
        #expect {
            try run.backfill().run(since: .seconds(seconds), until: BackfillTests.until)
        } throws: { error in
            let text = (error as? BackfillError)?.description ?? ""
            return text.hasPrefix("--since and --until give a range OpenWeather has no history for")
                && text.contains("before 1979-01-01")
        }
        #expect(threadCPUSeconds() - started < 5)
        #expect(run.transport.log.isEmpty)
    }
}

/// The one writer's rules, as every file the project writes gets them.
@Suite struct FileWriterTests {
    @Test func aFileIsReplacedWholeWithItsModeAndNoTemporaryLeft() throws {
        let directory = BackfillTests.temporaryDirectory()
        let path = directory + "/file"
        let old = umask(0o077)
        defer { umask(old) }
        try FileWriter.replace(path, with: Array("one\n".utf8), mode: 0o644)
        try FileWriter.replace(path, mode: 0o644) { output in
            output.end = 4
            output.append(Array("tail\n".utf8))
            output.write(Array("two\n".utf8), at: 0)
        }
        #expect(BackfillFileTests.contents(path) == "two\ntail\n")
        #expect(BackfillFileTests.mode(path).map { $0 & 0o777 } == 0o644, "the mode asked for, whatever the umask")
        let names = try #require(opendir(directory))
        var found: [String] = []
        while let entry = readdir(names) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { found.append(name) }
        }
        closedir(names)
        #expect(found == ["file"])
    }

    /// `.regularFileOnly` refuses a FIFO, a link or a directory; `.replaced` (the program's own names)
    /// replaces a FIFO or a link, never what a link points to.
    @Test func whatStandsAtTheNameIsCheckedNotFollowed() throws {
        let directory = BackfillTests.temporaryDirectory()
        let victim = temporaryFile("victim\n")
        defer { unlink(victim) }
        #expect(symlink(victim, directory + "/link") == 0)
        #expect(mkfifo(directory + "/fifo", 0o600) == 0)
        for name in ["link", "fifo"] {
            #expect(throws: FileWriter.Failure.self) {
                try FileWriter.replace(directory + "/" + name, with: [1], existing: .regularFileOnly)
            }
            try FileWriter.replace(directory + "/" + name, with: Array("mine\n".utf8))
            #expect(BackfillFileTests.mode(directory + "/" + name).map { $0 & S_IFMT == S_IFREG } == true)
        }
        #expect(BackfillFileTests.contents(victim) == "victim\n")
    }
}
