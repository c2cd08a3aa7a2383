/// A broken invariant, with its message: an optimised build drops `precondition`'s message, and a
/// finding without it says nothing of what broke.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
