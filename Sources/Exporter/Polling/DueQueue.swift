/// The schedule's due jobs: a binary min-heap of (due time, job position), ordered by time, then position.
struct DueQueue {
    private var heap: [(due: Double, index: Int)] = []

    init(_ entries: [(Double, Int)] = []) {
        heap = entries.map { (due: $0.0, index: $0.1) }
        for position in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(position) }
    }

    var count: Int { heap.count }
    var first: (due: Double, index: Int)? { heap.first }

    mutating func insert(_ entry: (Double, Int)) {
        heap.append((due: entry.0, index: entry.1))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let left = 2 * parent + 1
            if left < heap.count && Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if left + 1 < heap.count && Self.precedes(heap[left + 1], heap[smallest]) { smallest = left + 1 }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private static func precedes(_ left: (due: Double, index: Int), _ right: (due: Double, index: Int)) -> Bool {
        left.due != right.due ? left.due < right.due : left.index < right.index
    }
}
