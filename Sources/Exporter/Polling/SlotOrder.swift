/// How slots move when a reload changes the sources: `old[slot]` is the slot the same source had
/// before (a reload matches sources by name, as `job(answering:)` does), nil for a source it did not
/// have. Whatever is kept by slot (readings, counts, retry times, spent days) moves with its source
/// through it.
struct SlotOrder {
    let old: [Int?]

    init(_ names: [String], from previous: [String]) {
        old = names.map { previous.firstIndex(of: $0) }
    }

    /// `values` in the new slots: a new source's is nil.
    func moved<Value>(_ values: [Value?]) -> [Value?] {
        old.map { $0.flatMap { $0 < values.count ? values[$0] : nil } }
    }

    /// The new slots of `slots`.
    func moved(_ slots: Set<Int>) -> Set<Int> {
        Set(old.indices.filter { old[$0].map(slots.contains) ?? false })
    }
}
