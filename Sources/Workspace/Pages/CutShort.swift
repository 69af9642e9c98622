// CutShort: whether a page file another producer wrote is a copy cut short (a buggy peer, a sync
// tool's torn transfer) rather than an edit: judged on content, never on quiet, so however long such
// a file stays, nothing in it becomes an edit. Invariant: only a file that ends inside a line of a
// projection is cut short; one that ends at a line's end (a person deleting the last blocks, or the
// last lines of a block) never is. A person's shortened last line without a final newline (an editor
// that writes none) reads the same: it waits, never taken and never written over, until it changes.

enum CutShort {
    /// True when `file` is a strict prefix of one of `projections` (what this device wrote for the
    /// page, or would write now) that ends inside a line: a block's text or a property cut mid-way.
    static func isCutShort(_ file: [UInt8], of projections: [[UInt8]]) -> Bool {
        guard let last = file.last, last != UInt8(ascii: "\n") else { return false }  // empty: judged on its own (PagePass)
        return projections.contains { p in
            file.count < p.count && p[..<file.count].elementsEqual(file) && p[file.count] != UInt8(ascii: "\n")
        }
    }
}
