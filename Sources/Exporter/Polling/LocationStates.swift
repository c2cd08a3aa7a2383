extension ReadingStore {
    /// Every location's state, in the configured order, kept in chunks of `chunkSize`.
    ///
    /// A snapshot shares the chunks with the store. While a renderer holds one, a poll's write copies
    /// the outer array and the one chunk it touches (a few KB) instead of every state: a state is
    /// about 370 bytes, so a flat array would copy 3.7 MB at 10,000 locations on the first write
    /// after each snapshot.
    struct LocationStates: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
        static let chunkShift = 4
        static var chunkSize: Int { 1 << chunkShift }

        private var chunks: [[LocationState]] = []
        private(set) var endIndex = 0
        var startIndex: Int { 0 }

        init(_ states: some Sequence<LocationState>) {
            var chunk: [LocationState] = []
            for state in states {
                if chunk.isEmpty { chunk.reserveCapacity(Self.chunkSize) }
                chunk.append(state)
                if chunk.count == Self.chunkSize {
                    chunks.append(chunk)
                    chunk = []
                }
            }
            if !chunk.isEmpty { chunks.append(chunk) }
            endIndex = chunks.reduce(0) { $0 + $1.count }
        }

        init(arrayLiteral states: LocationState...) {
            self.init(states)
        }

        /// Reads and writes in place, as an array's subscript does: copying a whole state costs a dozen
        /// reference counts. The chunks' own bounds checks catch any position outside the states.
        subscript(position: Int) -> LocationState {
            _read { yield chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)] }
            _modify { yield &chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)] }
        }
    }
}
