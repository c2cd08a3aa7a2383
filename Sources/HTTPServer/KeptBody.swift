import CLinux
import Glibc

/// A response body served many times over, as nginx serves a file: its bytes are written once into
/// a sealed memfd, so a plain socket is sent them with sendfile(2), which hands the kernel references
/// to the pages instead of copying the body into the socket per response (the copy was most of a
/// large body's cost; below `EventLoop.sendFileFrom` the copy is cheaper and the loop makes it). TLS
/// cannot send a file (the bytes are encrypted in user space): it reads them through a read-only
/// mapping of the same pages, so there is still one copy of the body in memory.
///
/// The seals (no write, no resize) are what make this safe: a page the kernel is still sending
/// from, after this object is gone, can never change under a client; a new body is a new memfd.
public final class KeptBody: Sendable {
    /// The memfd; closed when the last response using the body is written (or dropped).
    let fd: Int32
    /// The body, mapped read-only (nil when empty).
    nonisolated(unsafe) let bytes: UnsafeRawPointer?
    public let count: Int

    /// The chunks' bytes, in order; nil when no memfd can be made (the caller serves the chunks).
    public init?(_ chunks: [[UInt8]]) {
        let count = chunks.reduce(0) { $0 + $1.count }
        let fd = clinux_memfd("exposition", count)
        guard fd >= 0 else { return nil }
        var bytes: UnsafeRawPointer?
        if !Self.write(chunks, to: fd) || clinux_seal(fd) != 0 {
            Glibc.close(fd)
            return nil
        }
        if count > 0 {
            let mapped = mmap(nil, count, PROT_READ, MAP_SHARED, fd, 0)
            guard let mapped, mapped != MAP_FAILED else {
                Glibc.close(fd)
                return nil
            }
            bytes = UnsafeRawPointer(mapped)
        }
        self.fd = fd
        self.bytes = bytes
        self.count = count
    }

    deinit {
        if let bytes { munmap(UnsafeMutableRawPointer(mutating: bytes), count) }
        Glibc.close(fd)
    }

    /// The bytes, for tests and readers that want them back.
    public var contents: [UInt8] {
        guard let bytes else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Writes the chunks with gathered writes of up to `batch` chunks, each pinned by a nested
    /// `withUnsafeBytes` so no pointer outlives its array.
    private static func write(_ chunks: [[UInt8]], to fd: Int32) -> Bool {
        let batch = 64
        var vectors = [iovec](repeating: iovec(), count: batch)
        var offset = 0
        var first = 0
        while first < chunks.count {
            let last = min(chunks.count, first + batch)
            let written = vectors.withUnsafeMutableBufferPointer { vectors in
                pinned(chunks, first, last, used: 0, vectors) { used in
                    var total = 0
                    for k in 0..<used { total += vectors[k].iov_len }
                    // A short write (a signal) resumes on the rest, copied out of the vectors.
                    var done = 0
                    while done < total {
                        let n =
                            done == 0
                            ? pwritev(fd, vectors.baseAddress, Int32(used), off_t(offset))
                            : rest(vectors, used, from: done, fd: fd, at: offset + done)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { return -1 }
                        done += n
                    }
                    return total
                }
            }
            if written < 0 { return false }
            offset += written
            first = last
        }
        return true
    }

    private static func pinned(
        _ chunks: [[UInt8]], _ index: Int, _ last: Int, used: Int, _ vectors: UnsafeMutableBufferPointer<iovec>,
        _ body: (Int) -> Int
    ) -> Int {
        guard index < last else { return body(used) }
        return chunks[index].withUnsafeBytes { bytes in
            guard bytes.count > 0 else { return pinned(chunks, index + 1, last, used: used, vectors, body) }
            vectors[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), iov_len: bytes.count)
            return pinned(chunks, index + 1, last, used: used + 1, vectors, body)
        }
    }

    /// One pwrite of the first vector's part not yet written (the loop comes back for the others).
    private static func rest(
        _ vectors: UnsafeMutableBufferPointer<iovec>, _ used: Int, from done: Int, fd: Int32, at offset: Int
    ) -> Int {
        var skip = done
        for k in 0..<used {
            if skip < vectors[k].iov_len {
                return pwrite(fd, vectors[k].iov_base! + skip, vectors[k].iov_len - skip, off_t(offset))
            }
            skip -= vectors[k].iov_len
        }
        return 0
    }
}
