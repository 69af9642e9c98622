// Model: the workspace state the op log folds into, and `apply` (do_op), the only way it changes.
// Invariants: apply is idempotent (Create of an existing id is a no-op) and deterministic given HLC
// order, so every device that has the same ops has the same model.
public struct Block: Sendable {
    public var page: BlockID
    public var parent: BlockID?
    public var pos: String
    public var text: String
    public var props: [Property]
    public var deleted: Bool
}

public struct Page: Sendable {
    public var id: BlockID
    public var kind: PageKind
    /// A journal page's ISO day, or a named page's name; empty for a page seen only through its blocks.
    public var name: String
    public var preamble: String = ""
    /// Every block ever created on the page, deleted ones included, in creation order.
    public var blocks: [BlockID] = []
    /// The largest top-level position key, so an append lands at the end.
    public var maxTopPos: String = ""
    public var known: Bool = true

    public var journalDay: JournalDay? { kind == .journal ? JournalDay(parsing: name) : nil }

    /// Path relative to the workspace root.
    public var relativePath: String? {
        guard known else { return nil }
        switch kind {
        case .journal: return journalDay.map { "journals/\($0.fileStem).md" }
        case .named: return "pages/\(PageFileName.encode(name)).md"
        }
    }
}

public struct Model: Sendable {
    public var blocks: [BlockID: Block] = [:]
    public var pages: [BlockID: Page] = [:]
    public var opsApplied = 0
    public var opsSkipped = 0

    public init() {}

    /// Applies one op; returns the page it touched (for the dirty set), or nil when it changed nothing.
    @discardableResult
    public mutating func apply(_ op: Op) -> BlockID? {
        opsApplied += 1
        switch op.kind {
        case .createPage:
            if var p = pages[op.id] {
                if p.known { return nil }
                p.known = true; p.kind = op.pageKind; p.name = op.text
                pages[op.id] = p
            } else {
                pages[op.id] = Page(id: op.id, kind: op.pageKind, name: op.text)
            }
            return op.id
        case .createBlock:
            // One hash on the common path: insert, and put the old block back if there was one.
            let new = Block(page: op.page, parent: op.parent, pos: op.pos, text: op.text, props: op.props, deleted: false)
            if let old = blocks.updateValue(new, forKey: op.id) { blocks[op.id] = old; return nil }
            var pi = pages.index(forKey: op.page)
            if pi == nil {
                // A block whose page op has not arrived (yet): keep it; the page is not projected.
                pages[op.page] = Page(id: op.page, kind: .named, name: "", known: false)
                pi = pages.index(forKey: op.page)
            }
            pages.values[pi!].blocks.append(op.id)
            if op.parent == nil, op.pos > pages.values[pi!].maxTopPos { pages.values[pi!].maxTopPos = op.pos }
            return op.page
        case .updateBlock:
            guard var b = blocks[op.id] else { opsSkipped += 1; return nil }
            b.text = op.text
            b.props = op.props
            b.deleted = false  // an edit after a delete brings the block back: edits are never lost
            blocks[op.id] = b
            return b.page
        case .moveBlock:
            guard var b = blocks[op.id] else { opsSkipped += 1; return nil }
            if let p = op.parent, createsCycle(moving: op.id, under: p) { opsSkipped += 1; return nil }
            b.parent = op.parent
            b.pos = op.pos
            blocks[op.id] = b
            if op.parent == nil, op.pos > pages[b.page]?.maxTopPos ?? "" { pages[b.page]?.maxTopPos = op.pos }
            return b.page
        case .deleteBlock:
            guard var b = blocks[op.id] else { opsSkipped += 1; return nil }
            if b.deleted { return nil }
            b.deleted = true
            blocks[op.id] = b
            return b.page
        case .setPreamble:
            guard pages[op.id] != nil else { opsSkipped += 1; return nil }
            pages[op.id]!.preamble = op.text
            return op.id
        case .unknown:
            opsSkipped += 1
            return nil
        }
    }

    func createsCycle(moving id: BlockID, under parent: BlockID) -> Bool {
        var cur: BlockID? = parent
        var steps = 0
        while let c = cur, steps < 100_000 {
            if c == id { return true }
            cur = blocks[c]?.parent
            steps += 1
        }
        return false
    }

    /// The live blocks of a page as a tree: children sorted by (pos, id). A block whose parent is gone
    /// (deleted, unknown or on another page) is shown at the top level rather than hidden.
    public func tree(of pageID: BlockID) -> [TreeNode] {
        guard let page = pages[pageID] else { return [] }
        var children: [BlockID?: [BlockID]] = [:]
        for id in page.blocks {
            guard let b = blocks[id], !b.deleted, b.page == pageID else { continue }
            var parent = b.parent
            if let p = parent, blocks[p].map({ $0.deleted || $0.page != pageID }) ?? true { parent = nil }
            children[parent, default: []].append(id)
        }
        func build(_ parent: BlockID?, _ depth: Int) -> [TreeNode] {
            guard var ids = children[parent], depth < 1000 else { return [] }
            ids.sort { a, b in
                let pa = blocks[a]!.pos, pb = blocks[b]!.pos
                return pa != pb ? pa < pb : a < b
            }
            return ids.map { TreeNode(id: $0, children: build($0, depth + 1)) }
        }
        return build(nil, 0)
    }
}

public struct TreeNode: Sendable {
    public var id: BlockID
    public var children: [TreeNode]
}
