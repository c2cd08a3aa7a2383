import Gzip
import TestSupport
import Testing

@Suite struct GzipTests {
    static let text: [UInt8] = Array(
        (0..<3000).map { "line_\($0 % 97){location=\"Zürich \($0)\"} \($0 * 7)\n" }.joined().utf8)
    static let pieces = stride(from: 0, to: text.count, by: 1000).map { Array(text[$0..<min($0 + 1000, text.count)]) }

    @Test func oneMemberRoundTrips() {
        let member = Gzip.member(Self.text)
        #expect(member.starts(with: [0x1F, 0x8B, 8]))
        #expect(member.count < Self.text.count / 4)
        #expect(Gzip.inflate([member], expectedCount: Self.text.count) == Self.text)
        #expect(Gzip.inflate([Gzip.member([])]) == [])
        #expect(Gzip.memberCount([member]) == 1)
    }

    /// Segments compressed on their own, between one header and one trailer, are one member of the joined text.
    @Test func segmentsFramedOnceAreOneMember() {
        let compressor = GzipCompressor()
        let segments = Self.pieces.map(compressor.segment)
        // The stream is reused: the same input gives the same segment.
        #expect(compressor.segment(Self.pieces[0]) == segments[0])
        #expect(compressor.segment([]) == [])
        var crc: UInt32 = 0
        for piece in Self.pieces { crc = Gzip.combine(crc, Gzip.crc32(piece), secondCount: piece.count) }
        #expect(crc == Gzip.crc32(Self.text))
        // The same with each length's operator made beforehand, as the renderer keeps them.
        var combined: UInt32 = 0
        for piece in Self.pieces {
            combined = Gzip.combine(combined, Gzip.crc32(piece), using: Gzip.combineOperator(secondCount: piece.count))
        }
        #expect(combined == crc)
        let body = [Gzip.header] + segments + [[]] + [Gzip.trailer(crc: crc, count: Self.text.count)]
        #expect(Gzip.inflate(body) == Self.text)
        #expect(Gzip.memberCount(body) == 1)
        // The same stream cut anywhere, into pieces that do not follow the segments.
        let stream = body.concatenated
        let cut = stride(from: 0, to: stream.count, by: 77).map { Array(stream[$0..<min($0 + 77, stream.count)]) }
        #expect(Gzip.inflate([[]] + cut + [[]]) == Self.text)
        // A wrong CRC or length is caught.
        #expect(Gzip.inflate([Gzip.header] + segments + [Gzip.trailer(crc: crc ^ 1, count: Self.text.count)]) == nil)
        #expect(Gzip.inflate([Gzip.header] + segments + [Gzip.trailer(crc: crc, count: Self.text.count + 1)]) == nil)
    }

    @Test func severalMembersInflateToTheirTextsJoined() {
        let members = Self.pieces.map { Gzip.member($0) }
        #expect(Gzip.inflate(members) == Self.text)
        #expect(Gzip.memberCount(members) == Self.pieces.count)
    }

    /// Read into any buffer size, a stream cut anywhere gives its text, and nothing after its end.
    @Test func anInflaterFillsEachBufferInTurn() throws {
        let members = [Gzip.member(Self.text), Gzip.member(Array(Self.text.prefix(5000)))]
        let stream = members.concatenated
        let cut = stride(from: 0, to: stream.count, by: 333).map { Array(stream[$0..<min($0 + 333, stream.count)]) }
        for size in [1, 7, 4096, 1 << 20] {
            let inflater = try #require(GzipInflater([[]] + cut + [[]]))
            var text: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: size)
            var reads = 0
            while !inflater.isFinished {
                let count = try #require(buffer.withUnsafeMutableBytes { inflater.read(into: $0) })
                // Only the read that reaches the end may come back short.
                #expect(count == size || inflater.isFinished, "\(size)")
                text += buffer[0..<count]
                reads += 1
            }
            #expect(text == Self.text + Self.text.prefix(5000), "\(size)")
            #expect(reads <= (text.count + size - 1) / size + 1)
            #expect(buffer.withUnsafeMutableBytes { inflater.read(into: $0) } == 0)
        }
        // Invalid or cut short: nil, on that read and every later one.
        var corrupt = members[0]
        corrupt[corrupt.count - 6] ^= 0xFF
        for bad in [[corrupt], [Array(members[0].dropLast(3))], [Array(Self.text.prefix(100))]] {
            let inflater = try #require(GzipInflater(bad))
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            #expect(buffer.withUnsafeMutableBytes { inflater.read(into: $0) } == nil)
            #expect(buffer.withUnsafeMutableBytes { inflater.read(into: $0) } == nil)
            #expect(!inflater.isFinished)
        }
    }

    @Test func invalidOrTruncatedStreamsGiveNil() {
        let member = Gzip.member(Self.text)
        #expect(Gzip.inflate([]) == [])
        #expect(Gzip.inflate([Array(Self.text.prefix(100))]) == nil)
        #expect(Gzip.inflate([Array(member.dropLast(3))]) == nil)
        #expect(Gzip.inflate([member, [0x1F]]) == nil)
        var corrupt = member
        corrupt[corrupt.count - 6] ^= 0xFF  // the CRC
        #expect(Gzip.inflate([corrupt]) == nil)
    }
}
