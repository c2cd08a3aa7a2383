/// What a test helper throws when the machine lets it down (a socket, a pipe, a child that would
/// not start, a file): the text says which call failed and why.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
