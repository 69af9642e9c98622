// PageArrangement: where each live block of a page stands (its parent, its place among its siblings,
// its depth), decided from the model alone. Invariants: every live block of the page is shown exactly
// once, at any depth (explicit stacks, never recursion); a block whose parent is gone (deleted, unknown
// or on another page) stands at the top level; a cycle of parents left by concurrent moves is broken at
// its member with the newest move (else the greatest id); siblings are sorted by (pos, id).

extension Model {
    /// A page's live blocks by local index: `ids[i]` is at `rows[i]` of `blocks` under `parent[i]`
    /// (-1 at the top level); `order` holds the indices sorted by (parent, pos, id), so the children of
    /// `p` are `order[first[p + 1] ..< first[p + 2]]`.
    struct Arrangement {
        var ids: [BlockID] = []
        var rows: [Int] = []
        var parent: [Int] = []
        var order: [Int] = []
        var first: [Int] = [0, 0]

        func children(of p: Int) -> ArraySlice<Int> { order[first[p + 1]..<first[p + 2]] }
    }

    /// Every block ever created on a page, deleted ones and those moved to another page included.
    func blockIDs(createdOn pageID: BlockID) -> [BlockID] {
        (pages[pageID]?.rows ?? RowRuns()).map { blocks.rows[Int($0)].id }
    }

    /// The live blocks of a page as a tree, children sorted by (pos, id).
    public func tree(of pageID: BlockID) -> [TreeNode] {
        let a = arrangement(of: pageID)
        // Built children first with an explicit stack: every block is shown at any depth of nesting,
        // on any thread's stack (outld runs this on the cooperative pool).
        var frames: [(node: Int, kids: ArraySlice<Int>, done: [TreeNode])] = [(-1, a.children(of: -1), [])]
        while true {
            let top = frames.count - 1
            if let i = frames[top].kids.popFirst() {
                let kids = a.children(of: i)
                if kids.isEmpty { frames[top].done.append(TreeNode(id: a.ids[i], children: [])) }
                else { frames.append((i, kids, [])) }
                continue
            }
            let f = frames.removeLast()
            if f.node < 0 { return f.done }
            frames[frames.count - 1].done.append(TreeNode(id: a.ids[f.node], children: f.done))
        }
    }

    /// The same blocks as `tree(of:)`, in file order, each with its row in `blocks` and its depth.
    func outline(of pageID: BlockID) -> [(id: BlockID, row: Int, depth: Int)] {
        flatOutline(of: pageID) ?? arrangedOutline(of: pageID)
    }

    /// `outline(of:)` through the whole arrangement, for any page.
    func arrangedOutline(of pageID: BlockID) -> [(id: BlockID, row: Int, depth: Int)] {
        let a = arrangement(of: pageID)
        var out: [(id: BlockID, row: Int, depth: Int)] = []
        out.reserveCapacity(a.ids.count)
        var stack: [(Int, Int)] = a.children(of: -1).reversed().map { ($0, 0) }
        while let (i, depth) = stack.popLast() {
            out.append((a.ids[i], a.rows[i], depth))
            for k in a.children(of: i).reversed() { stack.append((k, depth + 1)) }
        }
        return out
    }

    /// The outline of a page whose live blocks all stand at the top level and were created in
    /// (pos, id) order, in one pass; nil for any other page. Such a page (a day of captures, each
    /// appended at the end) is most pages, and for it the arrangement's order is creation order.
    func flatOutline(of pageID: BlockID) -> [(id: BlockID, row: Int, depth: Int)]? {
        guard let page = pages[pageID] else { return [] }
        var out: [(id: BlockID, row: Int, depth: Int)] = []
        out.reserveCapacity(page.rows.count)
        let number = blocks.pageNumber(pageID) ?? -1
        var last = -1
        for r in page.rows {
            let row = blocks.rows[Int(r)]
            guard !row.deleted, row.pageNumber == number else { continue }
            if row.hasParent { return nil }
            if last >= 0 {
                let c = blocks.comparePos(ofRow: last, Int(r))
                if c > 0 || (c == 0 && !(blocks.rows[last].id < row.id)) { return nil }
            }
            out.append((row.id, Int(r), 0))
            last = Int(r)
        }
        return out
    }

    func arrangement(of pageID: BlockID) -> Arrangement {
        guard let page = pages[pageID] else { return Arrangement() }
        var a = Arrangement()
        a.ids.reserveCapacity(page.rows.count)
        a.rows.reserveCapacity(page.rows.count)
        var local = LocalIndex(capacity: page.rows.count)
        // A block stands on its row's page (it is listed on every page it was created on).
        let number = blocks.pageNumber(pageID) ?? -1
        for r in page.rows {
            let row = blocks.rows[Int(r)]
            guard !row.deleted, row.pageNumber == number else { continue }
            local.insert(row.id, a.ids.count)
            a.ids.append(row.id)
            a.rows.append(Int(r))
        }
        let n = a.ids.count
        a.parent = a.rows.map { r in
            blocks.parent(ofRow: r).map { local.find($0) ?? -1 } ?? -1
        }
        // Each block's chain of parents ends at the top level or in a cycle (one per chain, as each
        // block has one parent); a cycle found is cut at the member chosen from its members alone, so
        // the walk's order does not change the result.
        var state = [UInt8](repeating: 0, count: n)  // 0 unseen, 1 on the walk, 2 reaches the top
        var path: [Int] = []
        for start in 0..<n where state[start] == 0 {
            path.removeAll(keepingCapacity: true)
            var cur = start
            while cur >= 0, state[cur] == 0 {
                state[cur] = 1
                path.append(cur)
                cur = a.parent[cur]
            }
            if cur >= 0, state[cur] == 1 {
                let cycle = path[path.firstIndex(of: cur)!...]
                let cut = cycle.max { x, y in
                    let mx = blocks.edits[a.rows[x]]?.move, my = blocks.edits[a.rows[y]]?.move
                    if mx != my { return mx.map { m in my.map { m < $0 } ?? false } ?? true }
                    return a.ids[x] < a.ids[y]
                }!
                a.parent[cut] = -1
            }
            for i in path { state[i] = 2 }
        }
        let (parent, rows, ids) = (a.parent, a.rows, a.ids)
        a.order = (0..<n).sorted { x, y in
            if parent[x] != parent[y] { return parent[x] < parent[y] }
            let c = blocks.comparePos(ofRow: rows[x], rows[y])
            return c != 0 ? c < 0 : ids[x] < ids[y]
        }
        // first[p + 1] is where p's children start in `order` (p = -1 for the top level).
        a.first = [Int](repeating: 0, count: n + 2)
        for i in 0..<n { a.first[a.parent[i] + 2] += 1 }
        for p in 0..<(n + 1) { a.first[p + 1] += a.first[p] }
        return a
    }
}

/// A page's block ids to their local indices: open addressing over `BlockID.tableHash` (the hash the
/// block table trusts too), so an arrangement, made at every projection, seeds no hasher and
/// allocates no dictionary storage.
private struct LocalIndex {
    private var keys: [BlockID]
    private var values: [Int32]
    private let mask: Int

    init(capacity n: Int) {
        var size = 16
        while size < 2 * n { size <<= 1 }
        keys = [BlockID](repeating: BlockID(hi: 0, lo: 0), count: size)
        values = [Int32](repeating: -1, count: size)
        mask = size - 1
    }

    private func slot(_ id: BlockID) -> Int { Int(truncatingIfNeeded: id.tableHash >> 32) & mask }

    /// `id` is not in the index yet (a page lists each block once).
    mutating func insert(_ id: BlockID, _ value: Int) {
        var i = slot(id)
        while values[i] >= 0 { i = (i + 1) & mask }
        keys[i] = id
        values[i] = Int32(value)
    }

    func find(_ id: BlockID) -> Int? {
        var i = slot(id)
        while values[i] >= 0 {
            if keys[i] == id { return Int(values[i]) }
            i = (i + 1) & mask
        }
        return nil
    }
}
