// RowRuns: the rows of the blocks created on one page, in the order they were created, kept as runs
// of consecutive row numbers. A day's captures arrive together, so a page is mostly one run: 8 bytes
// where a list cost 4 per block. Invariant: iterating gives back exactly the rows appended, in order;
// at worst (rows of pages interleaved one by one) a run costs 8 bytes per block.

struct RowRuns: Sequence, Sendable {
    /// (first row, rows in the run) pairs, one after the other.
    private var runs: [UInt32] = []
    /// Rows appended.
    private(set) var count = 0

    init() {}

    mutating func append(_ r: UInt32) {
        let n = runs.count
        if n >= 2, UInt64(runs[n - 2]) + UInt64(runs[n - 1]) == UInt64(r), runs[n - 1] < UInt32.max {
            runs[n - 1] += 1
        } else {
            runs.append(r)
            runs.append(1)
        }
        count += 1
    }

    /// What the runs hold allocated (the allocator may round it up).
    var bytes: Int { runs.capacity * 4 }
    /// How many runs there are.
    var runCount: Int { runs.count / 2 }

    func makeIterator() -> Iterator { Iterator(runs: runs) }

    struct Iterator: IteratorProtocol {
        let runs: [UInt32]
        var k = 0
        var row: UInt32 = 0
        var left: UInt32 = 0

        init(runs: [UInt32]) { self.runs = runs }

        @inline(__always) mutating func next() -> UInt32? {
            if left == 0 {
                guard k < runs.count else { return nil }
                row = runs[k]
                left = runs[k + 1]
                k += 2
            }
            left -= 1
            defer { row &+= 1 }
            return row
        }
    }
}
