// Locking.Locked against Synchronization.Mutex in the same run: nanoseconds per `withLock` that
// adds one to an Int, uncontended (one thread) and contended (two threads on the same lock).
// Built and run by ../locking.sh; rounds alternate between the two locks, and the medians compare.
// Times are the process's CPU time, not wall time, so other work on the machine counts less.
import Glibc
import Locking
import Synchronization

final class Locks: Sendable {
    let mutex = Mutex(0)
    let locked = Locked(0)
}

func seconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

@inline(never) func addMutex(_ locks: Locks, _ count: Int) {
    for _ in 0..<count { locks.mutex.withLock { $0 &+= 1 } }
}

@inline(never) func addLocked(_ locks: Locks, _ count: Int) {
    for _ in 0..<count { locks.locked.withLock { $0 &+= 1 } }
}

/// Runs `work` on `threads` threads at once; returns the CPU time in seconds.
func timed(threads: Int, _ work: @escaping @Sendable () -> Void) -> Double {
    final class Box {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }
    let start = seconds()
    var ids: [pthread_t] = []
    for _ in 0..<threads {
        var id = pthread_t()
        let box = Unmanaged.passRetained(Box(work)).toOpaque()
        let result = pthread_create(
            &id, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().work()
                return nil
            }, box)
        precondition(result == 0)
        ids.append(id)
    }
    for id in ids { pthread_join(id, nil) }
    return seconds() - start
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let locks = Locks()
let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000_000
let rounds = 9
for threads in [1, 2] {
    var mutex: [Double] = []
    var locked: [Double] = []
    for _ in 0..<rounds {
        mutex.append(timed(threads: threads) { addMutex(locks, count) })
        locked.append(timed(threads: threads) { addLocked(locks, count) })
    }
    let operations = Double(count * threads)
    let m = median(mutex) / operations * 1e9
    let l = median(locked) / operations * 1e9
    let name = threads == 1 ? "uncontended" : "contended (2 threads)"
    print("\(name): Mutex \(format(m)) ns, Locked \(format(l)) CPU ns per withLock; Locked/Mutex = \(format(l / m))")
}
precondition(locks.mutex.withLock { $0 } == locks.locked.withLock { $0 })

func format(_ value: Double) -> String {
    let scaled = (value * 100).rounded() / 100
    return "\(scaled)"
}
