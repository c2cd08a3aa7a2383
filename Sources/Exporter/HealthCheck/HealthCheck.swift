import HTTPClient

/// `openweather-exporter healthcheck`: asks a running exporter's `/-/healthy` and says in one line
/// whether it answered 200, for a container's HEALTHCHECK in an image without a shell or curl.
public struct HealthCheck: Sendable {
    /// The addresses given through the exporter's own settings (flag, variable, config file), asked
    /// in turn until one answers; empty: the listening sockets of the exporter processes this user can
    /// see, from /proc (also with --web.systemd-socket, whose sockets only the exporter's tables show).
    var addresses: [ListenAddress] = []
    /// Whether the web config given says TLS; nil without a web config: plain HTTP first, then TLS
    /// when the answer was not HTTP (an exporter started with a web config the check was not told of).
    var tls: Bool?
    /// For the whole check, every address and attempt included: below Docker's default 5 s timeout,
    /// so the check says why it failed instead of being killed.
    var timeout: Duration

    static let defaultTimeout = Duration.seconds(4)

    /// The line `openweather-exporter --help` ends with.
    static let pointer =
        "Container health check (exit 0 when /-/healthy answers 200):  openweather-exporter healthcheck --help"

    static let help = """
        usage: openweather-exporter healthcheck [--timeout=DURATION] [flags]

        Asks GET /-/healthy of a running exporter and exits 0 when it answers 200, 1 otherwise, with one \
        line saying why (2 for a mistake in its flags): a container's HEALTHCHECK with no shell or curl in \
        the image.

        Where: the addresses of --web.listen-address (or its variable, or web.listen_address in \
        --config.file), each in turn until one answers, the wildcard host asked on 127.0.0.1; when none \
        of them is given, or --web.systemd-socket is (systemd's sockets are the exporter's), the TCP sockets \
        on which the processes running this same executable listen, read from /proc (so an exporter \
        started with other flags than the check is found all the same), and :9755 when /proc shows none. \
        An exporter in another network namespace is asked in it (setns, which needs CAP_SYS_ADMIN); \
        without that right the check says so and fails rather than ask the same address in its own.

        How: https when the --web.config.file given has a tls_server_config (the certificate is not \
        checked: the check asks the exporter's own socket and sends no secret), plain HTTP when it has \
        none; with no web config given, plain HTTP, then https when the answer was not HTTP. /-/healthy \
        needs no password under basic_auth_users, so the check needs none either. A server that asks \
        for a client certificate (client_auth_type Require*) cannot be checked this way.

        Healthcheck flags:
          --timeout=DURATION  For the whole check, the look through /proc included (default 4s, under Docker's 5 s).

        Every other flag is the exporter's (openweather-exporter --help) and is accepted, so the check \
        can be given the exporter's own command line; only the listen address, the web config and the \
        config file are read.
        """

    init(_ settings: RawSettings, timeout: String?) throws(ConfigError) {
        if try !settings.resolved(Settings.systemdSocket), let given = try settings.value(Settings.listenAddress) {
            addresses = given.filter { $0.port != 0 }
        }
        if let path = try settings.resolved(Settings.webConfigFile) {
            tls = try WebConfig.load(path: path).tls != nil
        }
        if let timeout {
            guard let parsed = PrometheusDuration.parse(timeout), parsed > .zero else {
                throw ConfigError("--timeout=\(timeout) is not a duration: use one like 4s or 500ms")
            }
            self.timeout = min(parsed, .seconds(3600))
        } else {
            self.timeout = Self.defaultTimeout
        }
    }

    init(addresses: [ListenAddress], tls: Bool?, timeout: Duration) {
        self.addresses = addresses
        self.tls = tls
        self.timeout = timeout
    }

    /// Takes `--timeout` out of the subcommand's arguments and leaves the exporter's.
    static func extract(_ arguments: [String]) throws(ConfigError) -> (timeout: String?, rest: [String]) {
        var timeout: String?
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument == "--timeout" || argument.hasPrefix("--timeout=") else {
                rest.append(argument)
                continue
            }
            if timeout != nil { throw ConfigError("--timeout is given twice: give it once") }
            if argument == "--timeout" {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ConfigError("--timeout needs a value, for example --timeout=4s")
                }
                timeout = arguments[index]
                index += 1
            } else {
                timeout = String(argument.dropFirst("--timeout=".count))
            }
        }
        return (timeout, rest)
    }

    /// The exit status (0 healthy, 1 not) and the line saying why, all within `timeout`.
    public func run() -> (status: Int32, line: String) {
        let deadline = ContinuousClock.now + timeout
        let (status, line) = check(until: deadline)
        return (status, Self.bounded(line))
    }

    /// Addresses asked in one network namespace: the check's own (`namespace` nil) or that of exporter
    /// processes, where an address found in their tables means what it means to them.
    struct Group: Sendable, Equatable {
        var namespace: ListeningSockets.Namespace?
        var addresses: [ListenAddress]
    }

    private func check(until deadline: ContinuousClock.Instant) -> (status: Int32, line: String) {
        if !addresses.isEmpty {
            return ask([Group(addresses: addresses.map(Self.reachable))], until: deadline, note: "")
        }
        let scan = ListeningSockets.scan(until: deadline)
        if let unfinished = scan.unfinished {
            return (
                1,
                "healthcheck: unhealthy: the \(PrometheusDuration.format(timeout)) timeout passed while \(unfinished); "
                    + "give the check --web.listen-address to ask without looking through /proc"
            )
        }
        let (groups, note) = Self.plan(scan)
        return ask(groups, until: deadline, note: note)
    }

    /// Where the exporters a scan found are asked: in the check's own network namespace first, then in
    /// each other one (a process in another namespace listens there: the same address here may be
    /// nothing, or something else); when none listens, the default address here.
    static func plan(_ scan: ListeningSockets.Scan) -> (groups: [Group], note: String) {
        let own = scan.namespaces.filter { $0.id == scan.own }.map { Group(addresses: $0.addresses) }
        let others = scan.namespaces.filter { $0.id != scan.own }.map { Group(namespace: $0, addresses: $0.addresses) }
        guard own.isEmpty && others.isEmpty else {
            let most = ListeningSockets.maxAddresses
            let note = scan.truncated ? " (more than \(most) listening sockets in /proc: the first \(most) asked)" : ""
            return (own + others, note)
        }
        let defaultPort = Settings.listenAddress.defaultValue[0].port
        let fallback = Group(addresses: [ListenAddress(host: "127.0.0.1", port: defaultPort)])
        guard !scan.processes.isEmpty else {
            return ([fallback], " (no other openweather-exporter process in /proc, so the default address)")
        }
        let shown = scan.processes.prefix(8).map(String.init).joined(separator: ", ")
        let more = scan.processes.count > 8 ? " and \(scan.processes.count - 8) more" : ""
        return ([fallback], " (process \(shown)\(more) listens on no TCP port in /proc, so the default address)")
    }

    /// Asks each group's addresses until one answers 200, those of another namespace from inside it.
    func ask(
        _ groups: [Group], until deadline: ContinuousClock.Instant, note: String
    ) -> (status: Int32, line: String) {
        var left = groups.reduce(0) { $0 + $1.addresses.count }
        var failures: [String] = []
        for group in groups {
            var outcome: (healthy: String?, failures: [String])
            if let namespace = group.namespace {
                let pid = namespace.pids[0]
                let within = " (in the network namespace of process \(pid))"
                let asking: @Sendable () -> (healthy: String?, failures: [String]) = { [self, left] in
                    ask(group.addresses, of: left, until: deadline, within: within)
                }
                switch NetworkNamespace.run(in: namespace, asking) {
                case .success(let asked):
                    outcome = asked
                case .failure(let refusal):
                    // Asked here, the address could answer for something else: refuse to judge instead.
                    outcome = (
                        nil,
                        [
                            "process \(pid) listens in another network namespace (net:[\(namespace.id.inode)]), "
                                + "which this check cannot enter (\(refusal)): run the check in it (docker exec, "
                                + "nsenter --net --target \(pid), ip netns exec) or give it --web.listen-address"
                        ]
                    )
                }
            } else {
                outcome = ask(group.addresses, of: left, until: deadline)
            }
            if let healthy = outcome.healthy { return (0, healthy) }
            failures += outcome.failures
            left -= group.addresses.count
        }
        return (1, "healthcheck: unhealthy\(note): \(failures.joined(separator: "; "))")
    }

    /// Asks `addresses` in the calling thread's namespace (`within` says which, after each URL), the
    /// first of `left` still to be asked in the check.
    private func ask(
        _ addresses: [ListenAddress], of left: Int, until deadline: ContinuousClock.Instant, within: String = ""
    ) -> (healthy: String?, failures: [String]) {
        let client = HTTPClient(
            configuration: .init(
                userAgent: "openweather-exporter healthcheck", proxy: .direct, maxIdleConnections: 0,
                verifiesServer: false))
        var failures: [String] = []
        for (index, target) in addresses.enumerated() {
            // Each address gets its share of what is left: one that hangs (another exporter on the
            // machine, stopped) leaves time to ask the next.
            let targetStarted = ContinuousClock.now
            let share = (deadline - targetStarted) / (left - index)
            for scheme in tls.map({ [$0 ? "https" : "http"] }) ?? ["http", "https"] {
                let remaining = share - (ContinuousClock.now - targetStarted)
                guard remaining > .zero else {
                    let whole = PrometheusDuration.format(timeout)
                    failures.append("\(scheme)://\(target)\(within): no time left of its share of the \(whole) timeout")
                    break
                }
                let url = "\(scheme)://\(target)/-/healthy"
                let asked = "GET \(url)\(within)"
                do {
                    let request = HTTPClientRequest(
                        url: try RequestURL(parsing: url), timeout: remaining, maxBodyBytes: 4096)
                    let response = try client.get(request)
                    if response.status == 200 {
                        return ("healthcheck: \(asked) answered 200", failures)
                    }
                    failures.append("\(asked) answered \(response.status)")
                    // exporter-toolkit (and this exporter) answer plain HTTP on a TLS port with this 400.
                    guard scheme == "http", response.status == 400,
                        String(decoding: response.body, as: UTF8.self).contains("HTTPS server")
                    else { break }
                } catch {
                    failures.append("\(asked): \(error.description)")
                    // Plain HTTP to a TLS server fails as a malformed answer or a closed connection; a
                    // timeout would only repeat, and a refused connection is refused for TLS too.
                    if case .timeout = error { break }
                    if case .connect(let reason) = error, reason.contains("refused") { break }
                }
            }
        }
        return (nil, failures)
    }

    /// The most of its line the check prints: what Docker keeps of a health check's output.
    static let maxLineBytes = 4096

    /// `line` cut to `maxLineBytes` at a character boundary, saying so.
    static func bounded(_ line: String) -> String {
        guard line.utf8.count > maxLineBytes else { return line }
        let marker = " ... (cut)"
        var cut = ""
        for character in line {
            guard cut.utf8.count + character.utf8.count + marker.utf8.count <= maxLineBytes else { break }
            cut.append(character)
        }
        return cut + marker
    }

    /// The wildcard hosts are every interface: ask the IPv4 loopback, which every container has.
    static func reachable(_ address: ListenAddress) -> ListenAddress {
        ["", "0.0.0.0", "::"].contains(address.host) ? ListenAddress(host: "127.0.0.1", port: address.port) : address
    }
}
