import TestSupport
import Testing

/// Serialized: the TLS fixture's servers are shared, and tests that hold a connection to them make
/// the others wait past their deadlines. (The fd-leak check allows for other suites' sockets.)
@Suite(.serialized, .blockingSerially) struct HTTPClientTests {}
