import TestSupport
import Testing

/// Not serialized: every test has servers and clients of its own, and the fd-leak check allows for
/// the sockets of the tests running beside it (a leak there is one per failing request, 320).
@Suite(.blocking) struct HTTPClientTests {}
