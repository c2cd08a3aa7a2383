import Glibc
import Platform

/// Where a running exporter listens, read from /proc without starting a process (the shell script this
/// replaces forked `readlink` once per descriptor: 4.9 s with 1,500 connections open).
enum ListeningSockets {
    /// Other processes running the same executable as this one (same device and inode behind
    /// /proc/PID/exe), so a renamed or moved binary is still found and nothing else is.
    static func exporterProcesses() -> [Int32] {
        var own = stat()
        guard stat("/proc/self/exe", &own) == 0, let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        let me = getpid()
        var found: [Int32] = []
        while let entry = readdir(directory) {
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

    /// The TCP addresses `pids` listen on, as a client on this machine reaches them: the socket inodes
    /// among their descriptors, looked up in their network namespaces' tables (/proc/PID/net/tcp and
    /// tcp6). Each namespace's tables are read once, however many processes share it: they list every
    /// socket of the namespace, and reading them costs the kernel time in proportion. They are read
    /// through any of the namespace's processes that is still there: one may exit between the listing of
    /// its descriptors and the reading (a short-lived run of the same executable, such as this check).
    static func addresses(of pids: [Int32]) -> [ListenAddress] {
        var namespaces: [(namespace: UInt64, readers: [Int32], inodes: Set<UInt64>)] = []
        for pid in pids {
            let inodes = socketInodes(of: pid)
            guard !inodes.isEmpty else { continue }
            var info = stat()
            let namespace =
                stat("/proc/\(pid)/ns/net", &info) == 0 ? UInt64(info.st_ino) : UInt64(UInt32(bitPattern: pid)) << 32
            if let index = namespaces.firstIndex(where: { $0.namespace == namespace }) {
                namespaces[index].inodes.formUnion(inodes)
                namespaces[index].readers.append(pid)
            } else {
                namespaces.append((namespace, [pid], inodes))
            }
        }
        var addresses: [ListenAddress] = []
        for (_, readers, inodes) in namespaces {
            for address in listening(readingFrom: readers, among: inodes) where !addresses.contains(address) {
                addresses.append(address)
            }
        }
        return addresses
    }

    /// The listening addresses among `inodes` in the tables of the network namespace `readers` share,
    /// read through the first of them whose tables can still be read.
    static func listening(readingFrom readers: [Int32], among inodes: Set<UInt64>) -> [ListenAddress] {
        for pid in readers {
            var tables: [(bytes: [UInt8], isIPv6: Bool)] = []
            for (table, isIPv6) in [("tcp", false), ("tcp6", true)] {
                // Each line is a few hundred bytes; 64 MiB holds some 400,000 connections.
                if let bytes = try? RegularFile.read("/proc/\(pid)/net/\(table)", limit: 64 << 20) {
                    tables.append((bytes, isIPv6))
                }
            }
            // A kernel without IPv6 has no tcp6, so one table is enough; none: the process is gone.
            guard !tables.isEmpty else { continue }
            var addresses: [ListenAddress] = []
            for (bytes, isIPv6) in tables {
                for line in bytes.split(separator: UInt8(ascii: "\n")).dropFirst() {
                    let fields = line.split(separator: UInt8(ascii: " "))
                    // sl, local_address, rem_address, st (0A: LISTEN), tx:rx, tr:when, retrnsmt, uid, timeout, inode
                    guard fields.count > 9, String(decoding: fields[3], as: UTF8.self) == "0A",
                        let inode = UInt64(String(decoding: fields[9], as: UTF8.self)), inodes.contains(inode),
                        let address = parse(String(decoding: fields[1], as: UTF8.self), isIPv6: isIPv6)
                    else { continue }
                    if !addresses.contains(address) { addresses.append(address) }
                }
            }
            return addresses
        }
        return []
    }

    /// The inodes of the sockets among `pid`'s descriptors (`socket:[INODE]` links).
    static func socketInodes(of pid: Int32) -> Set<UInt64> {
        guard let directory = opendir("/proc/\(pid)/fd") else { return [] }
        defer { closedir(directory) }
        var inodes: Set<UInt64> = []
        var link = [CChar](repeating: 0, count: 64)
        while let entry = readdir(directory) {
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
