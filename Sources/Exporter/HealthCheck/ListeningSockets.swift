import Glibc
import Platform

/// Where running exporters listen, read from /proc without starting a process (the shell script this
/// replaces forked `readlink` once per descriptor: 4.9 s with 1,500 connections open), and in which
/// network namespace: an address means nothing outside its own. Every step stops at the check's
/// deadline and is linear in what it reads, and at most `maxAddresses` are kept, so a huge or planted
/// table costs neither the timeout nor a long answer.
enum ListeningSockets {
    /// An exporter listens on one address, so this many is a machine running several of them; a table
    /// with more was not made by exporters, and asking each would outlast any timeout.
    static let maxAddresses = 8

    /// A network namespace: the device and inode behind /proc/PID/ns/net (`net:[INODE]`).
    struct NamespaceID: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64

        init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        init(_ info: stat) {
            self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }

        /// The namespace `path` (a /proc/…/ns/net link) stands for; nil when it cannot be read.
        init?(of path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        /// The calling thread's, which a thread that entered another namespace does not share with the process.
        static func current() -> NamespaceID? {
            NamespaceID(of: "/proc/thread-self/ns/net") ?? NamespaceID(of: "/proc/self/ns/net")
        }
    }

    /// Exporter processes that share a network namespace, and the addresses they listen on in it.
    struct Namespace: Sendable, Equatable {
        var id: NamespaceID
        /// Its tables are read, and it is entered, through the first of these still there.
        var pids: [Int32]
        var addresses: [ListenAddress] = []
    }

    /// What a look through /proc found.
    struct Scan: Sendable {
        /// The namespace the scan ran in; nil when /proc does not show it.
        var own = NamespaceID.current()
        /// The other processes running this executable.
        var processes: [Int32] = []
        /// The namespaces where they listen, in the order of their first process.
        var namespaces: [Namespace] = []
        /// Whether there was more listening than `maxAddresses`, which were kept.
        var truncated = false
        /// What the scan was at when the deadline passed; nil when it finished.
        var unfinished: String?
    }

    /// The TCP addresses the other exporter processes listen on, by network namespace: the socket
    /// inodes among their descriptors, looked up in their namespace's tables (/proc/PID/net/tcp and
    /// tcp6), read once per namespace however many processes share it (they list every socket of
    /// the namespace, and reading them costs the kernel time in proportion).
    static func scan(until deadline: ContinuousClock.Instant) -> Scan {
        var scan = Scan()
        guard let processes = exporterProcesses(until: deadline) else {
            scan.unfinished = "looking through /proc for the exporter's processes"
            return scan
        }
        scan.processes = processes
        var positions: [NamespaceID: Int] = [:]
        var inodes: [Set<UInt64>] = []
        for pid in processes {
            guard let found = socketInodes(of: pid, until: deadline) else {
                scan.unfinished = "reading the descriptors of process \(pid)"
                return scan
            }
            // No namespace to read: the process has gone since it was listed.
            guard !found.isEmpty, let id = NamespaceID(of: "/proc/\(pid)/ns/net") else { continue }
            if let position = positions[id] {
                scan.namespaces[position].pids.append(pid)
                inodes[position].formUnion(found)
            } else {
                positions[id] = scan.namespaces.count
                scan.namespaces.append(Namespace(id: id, pids: [pid]))
                inodes.append(found)
            }
        }
        var room = maxAddresses
        for position in scan.namespaces.indices {
            guard room > 0 else {
                scan.truncated = true
                break
            }
            let namespace = scan.namespaces[position]
            let found = listening(readingFrom: namespace.pids, among: inodes[position], until: deadline, limit: room)
            guard let found else {
                scan.unfinished = "reading the TCP tables of process \(namespace.pids[0])"
                return scan
            }
            scan.namespaces[position].addresses = found.addresses
            scan.truncated = scan.truncated || found.more
            room -= found.addresses.count
        }
        scan.namespaces.removeAll { $0.addresses.isEmpty }
        return scan
    }

    /// Other processes running the same executable as this one (same device and inode behind
    /// /proc/PID/exe), so a renamed or moved binary is still found and nothing else is; nil at the deadline.
    static func exporterProcesses(until deadline: ContinuousClock.Instant) -> [Int32]? {
        var own = stat()
        guard stat("/proc/self/exe", &own) == 0, let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        let me = getpid()
        var found: [Int32] = []
        while let entry = readdir(directory) {
            guard ContinuousClock.now < deadline else { return nil }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = Int32(name), pid != me else { continue }
            var other = stat()
            guard stat("/proc/\(pid)/exe", &other) == 0, other.st_dev == own.st_dev, other.st_ino == own.st_ino else {
                continue
            }
            found.append(pid)
        }
        return found.sorted()
    }

    /// The listening addresses among `inodes` in the tables of the network namespace `readers` share,
    /// read through the first of them whose tables can still be read (one may exit between the listing
    /// of its descriptors and the reading: a short-lived run of the same executable, such as this check):
    /// at most `limit`, and whether there were more; nil when the deadline passed.
    static func listening(
        readingFrom readers: [Int32], among inodes: Set<UInt64>, until deadline: ContinuousClock.Instant,
        limit: Int = maxAddresses
    ) -> (addresses: [ListenAddress], more: Bool)? {
        for pid in readers {
            let tables = ["tcp", "tcp6"].map { "/proc/\(pid)/net/\($0)" }
            switch listening(inTables: tables[0], tables[1], among: inodes, until: deadline, limit: limit) {
            case .found(let addresses, let more): return (addresses, more)
            case .late: return nil
            case .unreadable: continue
            }
        }
        return ([], false)
    }

    /// What the tables of a namespace gave.
    enum Tables: Equatable {
        /// At most the limit asked for, and whether there were more.
        case found([ListenAddress], more: Bool)
        /// Neither could be opened: the process they were read through is gone.
        case unreadable
        /// The deadline passed first.
        case late
    }

    /// The listening addresses among `inodes` in the IPv4 table `tcp` and the IPv6 table `tcp6` (a
    /// kernel without IPv6 has none, so one is enough), read a chunk at a time, each row once: at most
    /// `limit` of them.
    static func listening(
        inTables tcp: String, _ tcp6: String, among inodes: Set<UInt64>, until deadline: ContinuousClock.Instant,
        limit: Int
    ) -> Tables {
        var addresses: [ListenAddress] = []
        var more = false
        var read = false
        for (path, isIPv6) in [(tcp, false), (tcp6, true)] where !more {
            let rows = forEachRow(of: path, until: deadline) { row in
                guard let address = listeningAddress(row, among: inodes, isIPv6: isIPv6), !addresses.contains(address)
                else { return true }
                guard addresses.count < limit else {
                    more = true
                    return false
                }
                addresses.append(address)
                return true
            }
            guard let rows else { return .late }
            read = read || rows
        }
        return read ? .found(addresses, more: more) : .unreadable
    }

    /// Calls `body` with each row of the table at `path` (its header line skipped) until it returns
    /// false, one chunk of the file in memory at a time: true when the table was read, false when it
    /// could not be opened, nil when the deadline passed first.
    private static func forEachRow(
        of path: String, until deadline: ContinuousClock.Instant, _ body: (ArraySlice<UInt8>) -> Bool
    ) -> Bool? {
        guard let (fd, _) = try? RegularFile.open(path) else { return false }
        defer { close(fd) }
        var pending: [UInt8] = []
        var header = true
        var late = false
        // Each row is a few hundred bytes; 64 MiB holds some 400,000 connections. A table cut short by
        // the limit or a failed read still gave its rows so far.
        try? RegularFile.forEachChunk(fd: fd, limit: 64 << 20) { chunk in
            guard ContinuousClock.now < deadline else {
                late = true
                return false
            }
            var start = chunk.startIndex
            while let end = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = end + 1 }
                let row: ArraySlice<UInt8>
                if pending.isEmpty {
                    row = chunk[start..<end]
                } else {
                    pending += chunk[start..<end]
                    row = pending[...]
                }
                defer { pending.removeAll(keepingCapacity: true) }
                if header {
                    header = false
                } else if !body(row) {
                    return false
                }
            }
            pending += chunk[start...]
            return true
        }
        return late ? nil : true
    }

    /// A table row's local address when it is a listening socket (state 0A) among `inodes`; the fields:
    /// sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode.
    static func listeningAddress(_ row: ArraySlice<UInt8>, among inodes: Set<UInt64>, isIPv6: Bool) -> ListenAddress? {
        var local = row[row.startIndex..<row.startIndex]
        var state = local
        var inode = local
        var field = 0
        var index = row.startIndex
        while field <= 9 {
            while index < row.endIndex, row[index] == UInt8(ascii: " ") { index += 1 }
            let start = index
            while index < row.endIndex, row[index] != UInt8(ascii: " ") { index += 1 }
            guard start < index else { return nil }
            switch field {
            case 1: local = row[start..<index]
            case 3: state = row[start..<index]
            case 9: inode = row[start..<index]
            default: break
            }
            field += 1
        }
        guard state.elementsEqual("0A".utf8), let number = UInt64(String(decoding: inode, as: UTF8.self)),
            inodes.contains(number)
        else { return nil }
        return parse(String(decoding: local, as: UTF8.self), isIPv6: isIPv6)
    }

    /// The inodes of the sockets among `pid`'s descriptors (`socket:[INODE]` links); nil at the deadline.
    static func socketInodes(of pid: Int32, until deadline: ContinuousClock.Instant) -> Set<UInt64>? {
        guard let directory = opendir("/proc/\(pid)/fd") else { return [] }
        defer { closedir(directory) }
        var inodes: Set<UInt64> = []
        var link = [CChar](repeating: 0, count: 64)
        while let entry = readdir(directory) {
            guard ContinuousClock.now < deadline else { return nil }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard Int(name) != nil else { continue }
            let count = readlink("/proc/\(pid)/fd/\(name)", &link, link.count - 1)
            guard count > 9 else { continue }
            let text = String(decoding: link[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("socket:["), text.hasSuffix("]"), let inode = UInt64(text.dropFirst(8).dropLast())
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// A table's `HEX:PORT` local address. The kernel prints each 32-bit word of the address as the
    /// host reads it from memory, so putting the words back into an address struct undoes it on any
    /// byte order. The wildcard addresses become the IPv4 loopback, which a dual-stack socket on `::`
    /// also answers and which every container has.
    static func parse(_ text: String, isIPv6: Bool) -> ListenAddress? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1], radix: 16) else { return nil }
        let hex = Array(parts[0].utf8)
        var words: [UInt32] = []
        for start in stride(from: 0, to: hex.count, by: 8) {
            guard start + 8 <= hex.count,
                let word = UInt32(String(decoding: hex[start..<start + 8], as: UTF8.self), radix: 16)
            else { return nil }
            words.append(word)
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if !isIPv6 {
            guard words.count == 1 else { return nil }
            var address = in_addr(s_addr: words[0])
            if words[0] == 0 { return ListenAddress(host: "127.0.0.1", port: port) }
            guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        } else {
            guard words.count == 4 else { return nil }
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { raw in
                for (index, word) in words.enumerated() {
                    raw.storeBytes(of: word, toByteOffset: index * 4, as: UInt32.self)
                }
            }
            if words.allSatisfy({ $0 == 0 }) { return ListenAddress(host: "127.0.0.1", port: port) }
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        }
        var host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // An IPv4 address on a dual-stack socket: the plain IPv4 address reaches it.
        if host.hasPrefix("::ffff:"), host.contains(".") { host = String(host.dropFirst(7)) }
        return ListenAddress(host: host, port: port)
    }
}
