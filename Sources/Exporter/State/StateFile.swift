/// The state file's bytes: a header (magic, format version, CRC-32 and length of the payload), then
/// the payload, little-endian, every string and body length-prefixed. A file cut short, changed by
/// hand or from a newer version is refused as a whole; within a valid one every count and length is
/// checked against what is left, so no input can make the decoder read out of bounds or allocate
/// more than the file's size. It needs nothing but the standard library, so the fuzzer and the
/// crash test build it alone (Tests/reliability/state).
enum StateFile {
    static let magic: [UInt8] = Array("OWXSTATE".utf8)
    /// Version 2 holds the day's request counts after the locations; a file of version 1, without them, is still read.
    static let version: UInt32 = 2
    static let headerCount = 8 + 4 + 4 + 8

    struct DecodeError: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// The whole file in memory.
    static func encode(_ state: SavedState) -> [UInt8] {
        var payload: [UInt8] = []
        let header = write(state) { payload += $0 }
        return header + payload
    }

    /// Streams the payload to `emit` in pieces of about `pieceSize` bytes, and returns the header
    /// that goes before it (it holds the payload's CRC and length, known only at the end). A writer
    /// never holds the whole file: at 10,000 locations it is megabytes.
    static func write(_ state: SavedState, pieceSize: Int = 64 * 1024, emit: ([UInt8]) -> Void) -> [UInt8] {
        let (crc, count) = withoutActuallyEscaping(emit) { emit in
            var out = Writer(pieceSize: pieceSize, emit: emit)
            out.double(state.savedAt)
            out.double(state.pausedUntil)
            out.integer(state.rateLimitStrikes)
            out.integer(state.recentStarts.count)
            for start in state.recentStarts { out.double(start) }
            out.integer(state.locations.count)
            for location in state.locations {
                out.string(location.identity)
                out.integer(location.sources.count)
                for source in location.sources {
                    out.string(source.name)
                    out.byte(source.up.map { $0 ? 1 : 2 } ?? 0)
                    out.double(source.lastSuccess)
                    out.double(source.lastPollDuration)
                    out.double(source.lastAttempt)
                    out.double(source.nextDue)
                    out.integer(source.failures)
                    out.string(source.lastError ?? "")
                    out.data(source.body)
                }
            }
            let daily = state.daily ?? SavedState.Daily(day: 0, total: 0, counts: [])
            out.integer(daily.day)
            out.integer(daily.total)
            out.integer(daily.counts.count)
            for (name, count) in daily.counts {
                out.string(name)
                out.integer(count)
            }
            out.integer(daily.spent.count)
            for name in daily.spent { out.string(name) }
            out.flush()
            return (out.crc, out.count)
        }
        var header = Writer(pieceSize: .max, emit: { _ in })
        header.bytes = magic
        header.uint32(version)
        header.uint32(crc)
        header.uint64(UInt64(count))
        return header.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeError) -> SavedState {
        guard bytes.count >= headerCount, Array(bytes[0..<8]) == magic else {
            throw DecodeError(
                description: bytes.count < headerCount
                    ? "too short (\(bytes.count) bytes)" : "not a state file (wrong magic)")
        }
        var header = Reader(bytes[8..<headerCount])
        let version = try header.uint32()
        guard version == 1 || version == Self.version else {
            throw DecodeError(
                description: "format version \(version), this exporter reads versions 1 to \(Self.version)")
        }
        let crc = try header.uint32()
        let count = try header.uint64()
        guard count == UInt64(bytes.count - headerCount) else {
            throw DecodeError(
                description:
                    """
                    truncated or padded: the header says \(count) bytes of data, the file has \
                    \(bytes.count - headerCount)
                    """
            )
        }
        let payload = bytes[headerCount...]
        guard CRC32.checksum(payload) == crc else {
            throw DecodeError(description: "checksum mismatch (corrupted or edited)")
        }
        var reader = Reader(payload)
        var state = SavedState(savedAt: try reader.double() ?? 0)
        state.pausedUntil = try reader.double()
        state.rateLimitStrikes = try reader.integer()
        for _ in 0..<(try reader.count(each: 8)) {
            if let start = try reader.double() { state.recentStarts.append(start) }
        }
        for _ in 0..<(try reader.count(each: 8)) {
            var location = SavedState.LocationEntry(identity: try reader.string(), sources: [])
            for _ in 0..<(try reader.count(each: 49)) {
                let name = try reader.string()
                var source = SavedState.SourceEntry(name: name)
                switch try reader.byte() {
                case 0: source.up = nil
                case 1: source.up = true
                case 2: source.up = false
                case let other: throw DecodeError(description: "bad health byte \(other)")
                }
                source.lastSuccess = try reader.double()
                source.lastPollDuration = try reader.double()
                source.lastAttempt = try reader.double()
                source.nextDue = try reader.double()
                source.failures = try reader.integer()
                let error = try reader.string()
                source.lastError = error.isEmpty ? nil : error
                source.body = try reader.data()
                location.sources.append(source)
            }
            state.locations.append(location)
        }
        if version >= 2 {
            var daily = SavedState.Daily(day: try reader.integer(), total: try reader.integer(), counts: [])
            for _ in 0..<(try reader.count(each: 8)) {
                daily.counts.append((try reader.string(), try reader.integer()))
            }
            for _ in 0..<(try reader.count(each: 4)) { daily.spent.append(try reader.string()) }
            // Day 0 is what a run without counts writes.
            if daily.day > 0 { state.daily = daily }
        }
        guard reader.atEnd else { throw DecodeError(description: "extra bytes after the last location") }
        return state
    }

    /// Collects bytes and hands them on in pieces, keeping the CRC and count of all it handed on.
    private struct Writer {
        var bytes: [UInt8] = []
        let pieceSize: Int
        let emit: ([UInt8]) -> Void
        private(set) var crc: UInt32 = 0
        private(set) var count = 0

        init(pieceSize: Int, emit: @escaping ([UInt8]) -> Void) {
            self.pieceSize = pieceSize
            self.emit = emit
            if pieceSize < .max { bytes.reserveCapacity(pieceSize + 64) }
        }

        mutating func flush() {
            guard !bytes.isEmpty else { return }
            crc = CRC32.checksum(bytes, continuing: crc)
            count += bytes.count
            emit(bytes)
            bytes.removeAll(keepingCapacity: true)
        }

        mutating func byte(_ value: UInt8) { bytes.append(value) }

        mutating func uint32(_ value: UInt32) {
            for shift in stride(from: 0, to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }

        mutating func uint64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }

        mutating func integer(_ value: Int) { uint32(UInt32(clamping: value)) }

        /// NaN stands for none.
        mutating func double(_ value: Double?) { uint64((value ?? .nan).bitPattern) }

        mutating func data(_ value: [UInt8]) {
            integer(value.count)
            bytes += value
            if bytes.count >= pieceSize { flush() }
        }

        mutating func string(_ value: String) { data(Array(value.utf8)) }
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var atEnd: Bool { position == bytes.endIndex }

        mutating func take(_ count: Int) throws(DecodeError) -> ArraySlice<UInt8> {
            guard count >= 0, bytes.endIndex - position >= count else {
                throw DecodeError(description: "ends in the middle of an entry")
            }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func byte() throws(DecodeError) -> UInt8 { try take(1).first! }

        mutating func uint32() throws(DecodeError) -> UInt32 {
            try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func uint64() throws(DecodeError) -> UInt64 {
            try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func integer() throws(DecodeError) -> Int { Int(try uint32()) }

        /// A count of entries of at least `each` bytes: more than the rest can hold is corruption.
        mutating func count(each: Int) throws(DecodeError) -> Int {
            let count = try integer()
            guard count <= (bytes.endIndex - position) / each else {
                throw DecodeError(description: "a count of \(count) entries does not fit the file")
            }
            return count
        }

        mutating func double() throws(DecodeError) -> Double? {
            let value = Double(bitPattern: try uint64())
            return value.isNaN ? nil : value
        }

        mutating func data() throws(DecodeError) -> [UInt8] { Array(try take(try integer())) }

        mutating func string() throws(DecodeError) -> String {
            let raw = try data()
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw DecodeError(description: "a name is not UTF-8")
            }
            return text
        }
    }
}

/// CRC-32 (IEEE, as zlib and gzip compute it), eight bytes a step.
enum CRC32 {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for table in 1..<8 {
                tables[table][byte] = (tables[table - 1][byte] >> 8) ^ tables[0][Int(tables[table - 1][byte] & 0xFF)]
            }
        }
        return tables
    }()

    /// `continuing`: the checksum of the bytes before these, as zlib's `crc32(crc, ...)` takes it.
    static func checksum(_ bytes: some Collection<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
        bytes.withContiguousStorageIfAvailable { checksum($0, continuing: previous) }
            ?? checksum(Array(bytes), continuing: previous)
    }

    static func checksum(_ bytes: UnsafeBufferPointer<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
        var crc = ~previous
        tables.withUnsafeBufferPointer { tables in
            let t0 = tables[0]
            let t1 = tables[1]
            let t2 = tables[2]
            let t3 = tables[3]
            let t4 = tables[4]
            let t5 = tables[5]
            let t6 = tables[6]
            let t7 = tables[7]
            var index = 0
            while index + 8 <= bytes.count {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(
                        bytes[index + 3]) << 24)
                crc =
                    t7[Int(low & 0xFF)] ^ t6[Int(low >> 8 & 0xFF)] ^ t5[Int(low >> 16 & 0xFF)] ^ t4[Int(low >> 24)]
                    ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])] ^ t1[Int(bytes[index + 6])]
                    ^ t0[Int(bytes[index + 7])]
                index += 8
            }
            while index < bytes.count {
                crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return ~crc
    }
}
