/// The day's request counts a backfill shares with the exporter through the exporter's state file
/// (`--storage.path`): read when it starts, and what it sent added back after each location, so a
/// backfill and the exporter after it, or backfills one after another, never pass a day's allowance.
/// Everything else in the file is left as the exporter wrote it.
struct SharedDay {
    let storage: StateStorage

    /// The state file's counts of `daily`'s day, taken into it (a file of another day holds none of today's).
    func load(into daily: inout DailyBudget) throws(BackfillError) {
        guard let saved = try read(), let counts = saved.daily else { return }
        daily.restore(
            day: counts.day, counts: Dictionary(counts.counts.map { ($0.name, max($0.count, 0)) }, uniquingKeysWith: max),
            total: max(counts.total, 0), spent: Set(counts.spent))
    }

    /// Adds `sent` (requests by source name, sent on `day` since the last call) to the file's counts
    /// of that day, read afresh so that what another run added meanwhile is kept.
    func add(_ sent: [String: Int], day: Int, now: Double) throws(BackfillError) {
        guard sent.values.contains(where: { $0 > 0 }) else { return }
        var state = try read() ?? SavedState(savedAt: now)
        var daily = state.daily.flatMap { $0.day == day ? $0 : nil } ?? SavedState.Daily(day: day, total: 0, counts: [])
        var counts = Dictionary(daily.counts.map { ($0.name, $0.count) }, uniquingKeysWith: max)
        for (source, count) in sent where count > 0 {
            counts[source, default: 0] += count
            daily.total += count
        }
        daily.counts = counts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }
        state.daily = daily
        do throws(StateStorageError) {
            try storage.write(headerCount: StateFile.headerCount) { emit in StateFile.write(state, emit: emit) }
        } catch {
            throw BackfillError("cannot add this run's requests to the day's counts in \(storage.path): \(error.description)")
        }
    }

    private func read() throws(BackfillError) -> SavedState? {
        let contents: StateStorage.Contents?
        do throws(Files.ReadError) {
            contents = try storage.read()
        } catch {
            throw BackfillError("cannot read the day's request counts from \(storage.path): \(error.description)")
        }
        guard let contents else { return nil }
        do throws(StateFile.DecodeError) {
            return try StateFile.decode(contents.bytes).renamingSources(Sources.formerNames)
        } catch {
            throw BackfillError(
                "\(storage.path) cannot be read (\(error)), so the day's request counts are unknown: start the exporter once (it replaces a file it cannot use) or give another --storage.path")
        }
    }
}
