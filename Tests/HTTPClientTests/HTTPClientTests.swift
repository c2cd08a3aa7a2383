import TestSupport
import Testing

/// Serialized because the fd-leak check counts this process's descriptors, and
/// servers of concurrently running tests would make that count move.
@Suite(.serialized, .blocking) struct HTTPClientTests {}
