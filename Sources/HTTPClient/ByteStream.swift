/// A connected byte stream whose every wait is bounded by a deadline.
protocol ByteStream {
    /// Reads at most `buffer.count` bytes; 0 means the peer closed the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int
    func writeAll(_ bytes: [UInt8], deadline: Deadline) throws(HTTPClientError)
}
