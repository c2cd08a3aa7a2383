import Dispatch
import Glibc
import Locking
import Platform

/// One address of a resolved name, without a port: the caller sets it per request.
struct ResolvedAddress: Sendable, Equatable {
    let family: Int32
    /// The raw `sockaddr_in` or `sockaddr_in6`.
    let bytes: [UInt8]
}

/// Name resolution that a hung resolver cannot turn into a hung poll.
///
/// `getaddrinfo` blocks and cannot be interrupted, so lookups run on a few
/// threads of their own (`maxThreads`, process-wide) while the caller waits
/// only until its request's deadline. A name being looked up is looked up
/// once, however many requests wait for it, so one hanging name costs one
/// thread. Answers are kept for `ttl`; after that the old answer still serves
/// (for up to `staleFor`) while a fresh lookup runs or after it failed, so a
/// resolver that stops answering does not stop requests to a host already resolved.
final class Resolver: Sendable {
    /// Looks a name up; the error is the resolver's reason.
    typealias Lookup = @Sendable (String) -> Result<[ResolvedAddress], HTTPClientError>

    static let shared = Resolver()

    static let defaultTTL: Duration = .seconds(30)
    static let defaultStaleFor: Duration = .seconds(600)
    static let defaultMaxThreads = 4
    /// Names waiting for a free lookup thread; beyond this a request fails at once.
    static let maxQueued = 64

    private struct Entry {
        var addresses: [ResolvedAddress]
        var resolvedAt: ContinuousClock.Instant
    }

    private final class Waiter: Sendable {
        let done = DispatchSemaphore(value: 0)
    }

    private struct State {
        var cache: [String: Entry] = [:]
        /// Names being looked up or queued, with the requests waiting for them.
        var pending: [String: [Waiter]] = [:]
        /// Outcome of the last lookup of a name, read by its waiters once woken.
        var outcomes: [String: Result<[ResolvedAddress], HTTPClientError>] = [:]
        var queue: [String] = []
        var threads = 0
        var idleThreads = 0
    }

    private let lookup: Lookup
    private let ttl: Duration
    private let staleFor: Duration
    private let maxThreads: Int
    private let state = Locked(State())
    private let work = DispatchSemaphore(value: 0)

    init(
        lookup: @escaping Lookup = Resolver.systemLookup, ttl: Duration = defaultTTL,
        staleFor: Duration = defaultStaleFor, maxThreads: Int = defaultMaxThreads
    ) {
        self.lookup = lookup
        self.ttl = ttl
        self.staleFor = staleFor
        self.maxThreads = max(1, maxThreads)
    }

    /// Lookup threads started so far; never more than `maxThreads`.
    var threadCount: Int { state.withLock { $0.threads } }

    /// The addresses of `host` (a name; IP literals never come here), or `.dns` when the
    /// lookup fails or does not finish by `deadline`.
    func resolve(_ host: String, deadline: Deadline) throws(HTTPClientError) -> [ResolvedAddress] {
        let now = ContinuousClock.now
        let waiter = Waiter()
        enum Step {
            case answer([ResolvedAddress])
            case wait
            case fail(HTTPClientError)
        }
        let (step, startThread) = state.withLock { state -> (Step, Bool) in
            if let entry = state.cache[host] {
                let age = now - entry.resolvedAt
                if age < ttl { return (.answer(entry.addresses), false) }
                if age < ttl + staleFor {
                    // Refresh in the background; this request goes on with the old answer.
                    let start = enqueue(host, waiter: nil, in: &state)
                    return (.answer(entry.addresses), start)
                }
                state.cache[host] = nil
            }
            if state.pending[host] == nil && state.queue.count >= Self.maxQueued {
                return (.fail(.dns(host: host, "too many lookups waiting: the resolver is not answering")), false)
            }
            return (.wait, enqueue(host, waiter: waiter, in: &state))
        }
        if startThread { spawnLookupThread() }
        switch step {
        case .answer(let addresses): return addresses
        case .fail(let error): throw error
        case .wait: break
        }
        let left = deadline.instant - ContinuousClock.now
        let nanoseconds = left.clampedNanoseconds
        guard waiter.done.wait(timeout: .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int.max))))) == .success else {
            throw .dns(host: host, "no answer before the request's deadline")
        }
        let outcome = state.withLock { $0.outcomes[host] }
        switch outcome {
        case .success(let addresses)?: return addresses
        case .failure(let error)?: throw error
        case nil: throw .dns(host: host, "no answer")
        }
    }

    /// Queues a lookup of `host` unless one is already queued or running; true when a new thread should start.
    private func enqueue(_ host: String, waiter: Waiter?, in state: inout State) -> Bool {
        if state.pending[host] != nil {
            if let waiter { state.pending[host]!.append(waiter) }
            return false
        }
        state.pending[host] = waiter.map { [$0] } ?? []
        state.queue.append(host)
        work.signal()
        // A thread counted idle may be about to take a name queued before this one: a new thread is
        // needed whenever the queue holds more names than there are idle threads to take them.
        guard state.queue.count > state.idleThreads, state.threads < maxThreads else { return false }
        state.threads += 1
        state.idleThreads += 1
        return true
    }

    private func spawnLookupThread() {
        let result = Threads.start { [self] in
            while true {
                work.wait()
                let host: String? = state.withLock { state in
                    guard !state.queue.isEmpty else { return nil }
                    state.idleThreads -= 1
                    return state.queue.removeFirst()
                }
                guard let host else { continue }
                let outcome = lookup(host)
                let waiters = state.withLock { state -> [Waiter] in
                    state.idleThreads += 1
                    state.outcomes[host] = outcome
                    // A failed refresh keeps the old answer: it still serves until it is too stale.
                    if case .success(let addresses) = outcome {
                        state.cache[host] = Entry(addresses: addresses, resolvedAt: .now)
                    }
                    return state.pending.removeValue(forKey: host) ?? []
                }
                for waiter in waiters { waiter.done.signal() }
            }
        }
        // Without a new thread the queued names wait for a busy one; their requests end at their deadlines.
        if result != 0 {
            state.withLock { state in
                state.threads -= 1
                state.idleThreads -= 1
            }
        }
    }

    /// `getaddrinfo`, for stream sockets of any family, in the resolver's order.
    static let systemLookup: Lookup = { host in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            let reason = status == EAI_SYSTEM ? errnoText(errno) : String(cString: gai_strerror(status))
            return .failure(.dns(host: host, reason))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = list
        while let current = next {
            let entry = current.pointee
            if let address = entry.ai_addr, entry.ai_family == AF_INET || entry.ai_family == AF_INET6 {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(entry.ai_addrlen)))
                let resolved = ResolvedAddress(family: entry.ai_family, bytes: bytes)
                if !addresses.contains(resolved) { addresses.append(resolved) }
            }
            next = entry.ai_next
        }
        return addresses.isEmpty ? .failure(.dns(host: host, "no IPv4 or IPv6 address")) : .success(addresses)
    }

    /// An IP literal as an address, without asking any resolver.
    static func literal(_ host: String) -> ResolvedAddress? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            return ResolvedAddress(family: AF_INET, bytes: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            return ResolvedAddress(family: AF_INET6, bytes: withUnsafeBytes(of: v6) { Array($0) })
        }
        return nil
    }
}
