import Glibc

/// A value behind a `pthread_mutex_t`, with `Synchronization.Mutex`'s `withLock`.
///
/// Not `Synchronization.Mutex` because on Linux that one is a futex inside the standard library,
/// which is built without ThreadSanitizer: TSan cannot see it lock, and reports every access it
/// guards as a race. TSan intercepts `pthread_mutex_lock`, so with this lock its reports are real.
/// It costs about a nanosecond more per call (Tests/bench/locking.sh). Like `Mutex`, it is
/// `Sendable` whatever the value, because the value only goes in and out as `sending`.
public struct Locked<Value>: @unchecked Sendable {
    @usableFromInline let storage: Storage

    public init(_ value: sending Value) {
        storage = Storage(value)
    }

    /// Runs `body` with the value while holding the lock; `body` must not take the same lock again.
    @inlinable
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(storage.mutex)
        defer { pthread_mutex_unlock(storage.mutex) }
        return try body(&storage.value.pointee)
    }

    /// Both live at fixed addresses, as a `pthread_mutex_t` must not move once initialized.
    @usableFromInline
    final class Storage {
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
        @usableFromInline let value: UnsafeMutablePointer<Value>

        init(_ value: sending Value) {
            mutex = .allocate(capacity: 1)
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init: \(result)")
            self.value = .allocate(capacity: 1)
            self.value.initialize(to: value)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            value.deinitialize(count: 1)
            value.deallocate()
        }
    }
}
