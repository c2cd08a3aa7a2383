/// Which job: one source (its slot) at one location. The schedule lays its jobs out location by
/// location, a slot per source; this is the one place that says how a job's position is made.
struct JobID: Hashable, Sendable {
    var location: Int
    var slot: Int

    init(location: Int, slot: Int) {
        self.location = location
        self.slot = slot
    }

    /// The job at `index` of a schedule of `slots` sources a location.
    init(index: Int, slots: Int) {
        (location, slot) = index.quotientAndRemainder(dividingBy: max(slots, 1))
    }

    /// Its position in a schedule of `slots` sources a location.
    func index(slots: Int) -> Int { location * slots + slot }
}

extension PollSchedule {
    func index(of id: JobID) -> Int { id.index(slots: sourceCount) }
    func id(of index: Int) -> JobID { JobID(index: index, slots: sourceCount) }

    /// The positions of one source's jobs, at every location.
    func indices(ofSlot slot: Int) -> StrideTo<Int> { stride(from: slot, to: jobs.count, by: sourceCount) }

    /// The positions of one location's jobs, every source.
    func indices(atLocation location: Int) -> Range<Int> {
        min(
            JobID(location: location, slot: 0).index(slots: sourceCount), jobs.count)..<min(
                JobID(location: location + 1, slot: 0).index(slots: sourceCount), jobs.count)
    }
}
