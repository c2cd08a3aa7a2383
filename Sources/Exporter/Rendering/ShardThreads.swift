import Dispatch
import Glibc
import Synchronization

/// Runs a render's shards on this thread when they are few, else on several at once (at start and
/// after a reload), each thread with a `ShardWorker` of its own.
struct ShardThreads {
    /// One thread per processor, at most four: a full render of 10,000 locations is tens of milliseconds.
    static let defaultParallelism = min(4, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// Threads that render shards when many are to be redone (at start and after a reload).
    let parallelism: Int
    /// Scratch buffers and a compressor per thread that renders shards; made on first use. The
    /// first also compresses the HELP and TYPE lines.
    private(set) var workers: [ShardWorker] = []
    /// The most threads shards were rendered on at once since the render began (it sets 1): its CPU
    /// time is about its wall time times this, which is what the publisher paces by.
    var threadsUsed = 1

    init(parallelism: Int) {
        self.parallelism = max(1, parallelism)
    }

    /// Replaces each listed shard with `make(worker, shard, its chunks until now)`: on this thread for a
    /// few shards, else spread over `parallelism` threads, each with its own worker, taking shards in turn.
    mutating func forEachShard(
        _ list: [Int], of shards: inout [MetricsRendering.ShardChunks],
        _ make: @Sendable (ShardWorker, Int, MetricsRendering.ShardChunks) -> MetricsRendering.ShardChunks
    ) {
        let threads = min(parallelism, (list.count + 7) / 8)
        while workers.count < max(threads, 1) { workers.append(ShardWorker()) }
        threadsUsed = max(threadsUsed, threads)
        if threads <= 1 {
            for shard in list { shards[shard] = make(workers[0], shard, shards[shard]) }
            return
        }
        let workers = workers
        let next = Atomic(0)
        shards.withUnsafeMutableBufferPointer { slots in
            // Each slot is written by exactly one thread (the one that took its position), and read
            // only after concurrentPerform has returned.
            let slots = UncheckedSendable(slots)
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                while true {
                    let position = next.add(1, ordering: .relaxed).oldValue
                    guard position < list.count else { return }
                    slots.value[list[position]] = make(workers[thread], list[position], slots.value[list[position]])
                }
            }
        }
    }
}

/// A value handed to concurrent code whose safety the caller guarantees (see its use).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
