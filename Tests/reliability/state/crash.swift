// The state writer alone, for ../state.sh: `crash DIR write` writes states of growing
// generation through StateStorage (streamed to a temporary file, fsync, rename, fsync of the directory) as
// fast as it can until it is killed; `crash DIR check` loads the file the way the exporter does
// and prints its generation, or fails. Built with StateFile.swift, SavedState.swift,
// StateStorage.swift and Files.swift.
import Glibc

@main
enum Crash {
    /// A state as large as a few hundred locations, different in every generation.
    static func state(generation: Int) -> SavedState {
        var state = SavedState(
            savedAt: Double(generation), pausedUntil: Double(generation) + 3600, rateLimitStrikes: generation % 7)
        let body = Array(
            "{\"main\":{\"temp\":\(generation)},\"padding\":\"\(String(repeating: "x", count: 700))\"}".utf8)
        for location in 0..<(200 + generation % 300) {
            state.locations.append(
                .init(
                    identity: "L\(location)\u{0}at:\(location),0",
                    sources: [
                        .init(
                            name: "weather", up: true, lastSuccess: Double(generation), lastPollDuration: 0.1,
                            lastError: nil,
                            lastAttempt: Double(generation), nextDue: Double(generation + 600), failures: 0, body: body)
                    ]))
        }
        return state
    }

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else { fatalError("usage: crash DIR write|check") }
        let storage: StateStorage
        do { storage = try StateStorage(directory: arguments[1]) } catch { fatalError("\(error)") }
        switch arguments[2] {
        case "write":
            var generation = 1
            if let contents = try? storage.read(), let old = try? StateFile.decode(contents.bytes) {
                generation = Int(old.savedAt) + 1
            }
            while true {
                let next = state(generation: generation)
                do { try storage.write(headerCount: StateFile.headerCount) { StateFile.write(next, emit: $0) } } catch {
                    fatalError("\(error)")
                }
                generation += 1
            }
        case "check":
            guard let bytes = (try? storage.read())?.bytes else {
                print("none")
                exit(0)
            }
            do {
                let loaded = try StateFile.decode(bytes)
                guard loaded == state(generation: Int(loaded.savedAt)) else {
                    fatalError("generation \(Int(loaded.savedAt)) decodes to other content")
                }
                print(Int(loaded.savedAt))
            } catch {
                print("invalid: \(error)")
                exit(1)
            }
        default:
            fatalError("usage: crash DIR write|check")
        }
    }
}
