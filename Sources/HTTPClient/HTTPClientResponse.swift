/// A complete response: any status is a response, not an error.
public struct HTTPClientResponse: Sendable {
    public let status: Int
    /// In arrival order, names lowercased.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    /// The first value of a header, looked up by its lowercased name.
    public func header(_ lowercasedName: String) -> String? {
        headers.first { $0.name == lowercasedName }?.value
    }
}
