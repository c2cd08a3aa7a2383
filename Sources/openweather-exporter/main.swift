import Exporter
import Glibc
import HTTPServer
import Locking
import Platform
import Simulator

// The executable only parses arguments, starts things and waits for signals;
// everything else lives in the library targets.

requireProc()
hideRegistersFromCrashReports()
signal(SIGPIPE, SIG_IGN)
// Block the signals we handle before any thread starts, so they all reach sigwait below.
var handled = sigset_t()
sigemptyset(&handled)
for signalNumber in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&handled, signalNumber) }
pthread_sigmask(SIG_BLOCK, &handled, nil)
raiseDescriptorLimit()

/// On Linux the Swift runtime reads the arguments from `/proc/self/cmdline`: without `/proc`
/// the process sees none and would blame the config ("no location"), so name the real cause.
func requireProc() {
    guard access("/proc/self/cmdline", R_OK) != 0 else { return }
    fail(
        """
        /proc is not mounted, so the command line cannot be read (Swift reads it from /proc/self/cmdline; the process \
        metrics come from /proc too): mount it, e.g. `mount -t proc proc ROOT/proc` for a chroot (container runtimes \
        do this themselves)
        """
    )
}

/// Swift's crash report lists every register with the 16 bytes it points to, which can be
/// bytes of the API key. The runtime reads `SWIFT_BACKTRACE` only at startup, so unless the
/// operator chose a `registers=` setting, run again at once with `registers=none`: the report
/// keeps its stack traces and loses the dumps. Where `/proc/self/exe` is missing, carry on.
func hideRegistersFromCrashReports() {
    let current = getenv("SWIFT_BACKTRACE").map { String(cString: $0) } ?? ""
    guard !current.contains("registers=") else { return }
    setenv("SWIFT_BACKTRACE", current.isEmpty ? "registers=none" : current + ",registers=none", 1)
    execv("/proc/self/exe", CommandLine.unsafeArgv)
}

func fail(_ message: String, status: Int32 = 2) -> Never {
    let line = StartupFailure.line(message)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// Like Go programs, use the hard limit: every scrape connection needs a descriptor.
func raiseDescriptorLimit() {
    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
    let pair = String(cString: pointer)
    if let equals = pair.firstIndex(of: "=") {
        environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    entry += 1
}

/// With `--demo`, the built-in simulator, and `configuration` pointed at it; nil without.
func startDemoSimulator(for configuration: inout Configuration) -> Simulator? {
    guard configuration.demo else { return nil }
    do {
        let simulator = try Simulator()
        configuration.openWeatherURL = simulator.baseURL
        if let spell = configuration.demoColdSpell {
            simulator.shiftTemperatures(latitude: spell.latitude, celsius: spell.celsius, hoursAhead: spell.hoursAhead)
        }
        return simulator
    } catch {
        fail("cannot start the demo simulator: \(error)", status: 1)
    }
}

let loader = ConfigurationLoader(arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
var configuration: Configuration
do {
    switch try loader.load() {
    case .help(let text):
        print(text)
        exit(0)
    case .version(let text):
        print(text)
        exit(0)
    case .check(let loaded):
        try loaded.check(logger: Logger(for: loaded))
        exit(0)
    case .run(let loaded):
        configuration = loaded
        // Before the demo's simulator or anything else takes a descriptor number systemd should have handed over.
        try configuration.claimSystemdSockets()
    case .backfill(var loaded, let options):
        // A backfill is one run to its end: Ctrl-C ends it (what it wrote is kept for the next run).
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        let demo = startDemoSimulator(for: &loaded)
        let status = BackfillCommand.run(loaded, options)
        demo?.stop()
        exit(status)
    case .healthcheck(let check):
        let (status, line) = check.run()
        print(line)
        exit(status)
    }
} catch {
    // A mistake in the flags, the environment or the config file, for every subcommand as for the
    // exporter. Docker counts any status but 0 as a failed health check, so 2 turns it unhealthy too.
    fail(error.description)
}

let logger = Logger(for: configuration)

let simulator = startDemoSimulator(for: &configuration)
let demoURL = simulator?.baseURL

let exporter: Exporter
do {
    exporter = try Exporter(
        configuration: configuration, logger: logger,
        reloader: { () throws(ConfigError) -> Configuration in
            guard case .run(var next) = try loader.load() else { throw ConfigError.noConfiguration }
            if let demoURL, next.demo { next.openWeatherURL = demoURL }
            return next
        })
} catch let error as StateStorageError {
    fail(error.description)
} catch let error as HTTPServerError where error.kind == .inheritedSocket {
    // The socket unit hands over the same descriptors again: a restart cannot fix it.
    fail(error.description)
} catch {
    fail("\(error)", status: 1)
}
exporter.start()

logger.announceStart(configuration, addresses: exporter.addresses, simulator: demoURL)

var received: Int32 = 0
while true {
    sigwait(&handled, &received)
    if received == SIGHUP {
        logger.info("SIGHUP received: reloading the configuration")
        exporter.reload()
        continue
    }
    logger.info("shutting down", [("signal", received == SIGTERM ? "SIGTERM" : "SIGINT")])
    // The promise is an exit within 2 s: a part that has not stopped by then is abandoned, and the
    // line says which, so a hang shows in the log instead of in a SIGKILL from the supervisor.
    let stage = Locked("the exporter")
    Threads.spawn(name: "stop-deadline") {
        var wait = timespec(tv_sec: 1, tv_nsec: 900_000_000)
        var left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
        logger.error(
            "shutdown did not finish within 1.9 s; exiting anyway", [("still_stopping", stage.withLock { $0 })])
        _exit(0)
    }
    exporter.shutdown { part in stage.withLock { $0 = part } }
    stage.withLock { $0 = "the demo simulator" }
    simulator?.stop()
    // Everything is stopped, written and logged (unbuffered): leave without the C library's exit
    // handlers and library destructors, which would run while detached threads still hold locks.
    _exit(0)
}
