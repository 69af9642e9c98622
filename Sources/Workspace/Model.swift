// Model: the workspace state the op log folds into, and `apply` (do_op), the only way it changes.
// Invariants: apply is idempotent (Create of an existing id is a no-op) and deterministic given HLC
// order, so every device that has the same ops has the same model. Blocks live in a compact BlockTable.
#if canImport(Glibc)
import Glibc
#endif

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

    /// Path relative to the workspace root; a journal's file is named as `journalFormat` says (when
    /// a file of the day exists in either spelling, it wins: `JournalFiles`).
    public func relativePath(journalFormat: JournalFileFormat = .logseq) -> String? {
        guard known else { return nil }
        switch kind {
        case .journal: return journalDay.map { JournalFiles.relativePath($0, journalFormat) }
        case .named: return "pages/\(PageFileName.encode(name)).md"
        }
    }
}

public struct Model: Sendable {
    /// Compact rows; `blocks[id]` decodes one `Block` on demand.
    public internal(set) var blocks = BlockTable()
    public var pages: [BlockID: Page] = [:]
    public var opsApplied = 0
    public var opsSkipped = 0

    public init() {}

    /// Applies one op; returns the page it touched (for the dirty set), or nil when it changed nothing.
    @discardableResult
    public mutating func apply(_ op: Op) -> BlockID? { applyFields(op) }

    /// The boot's path: the op's texts go from the line's bytes straight into the arena.
    @discardableResult
    mutating func apply(_ op: RawOpView) -> BlockID? { applyFields(op) }

    @inline(__always)
    mutating func applyFields<O: OpFields>(_ op: O) -> BlockID? {
        opsApplied += 1
        switch op.kind {
        case .createPage:
            if var p = pages[op.id] {
                if p.known { return nil }
                p.known = true; p.kind = op.pageKind; p.name = op.textString
                pages[op.id] = p
            } else {
                pages[op.id] = Page(id: op.id, kind: op.pageKind, name: op.textString)
            }
            return op.id
        case .createBlock:
            // Create of an existing id is a no-op (idempotence).
            if blocks.find(op.id) != nil { return nil }
            var pi = pages.index(forKey: op.page)
            if pi == nil {
                // A block whose page op has not arrived (yet): keep it; the page is not projected.
                pages[op.page] = Page(id: op.page, kind: .named, name: "", known: false)
                pi = pages.index(forKey: op.page)
            }
            let parent = op.parent
            let pos = op.withPos { blocks.appendBytes($0) }
            let content = op.storeContent(in: &blocks)
            _ = blocks.insert(BlockRow(id: op.id, page: op.page, parent: parent ?? BlockID(hi: 0, lo: 0),
                                       content: content, pos: pos, hasParent: parent != nil, deleted: false))
            pages.values[pi!].blocks.append(op.id)
            if parent == nil { Model.raiseMaxTopPos(&pages.values[pi!].maxTopPos, op) }
            return op.page
        case .updateBlock:
            guard let r = blocks.find(op.id) else { opsSkipped += 1; return nil }
            let content = op.storeContent(in: &blocks)
            blocks.rows[r].content = content
            blocks.rows[r].deleted = false  // an edit after a delete brings the block back: edits are never lost
            return blocks.rows[r].page
        case .moveBlock:
            guard let r = blocks.find(op.id) else { opsSkipped += 1; return nil }
            if let p = op.parent, createsCycle(moving: op.id, under: p) { opsSkipped += 1; return nil }
            let pos = op.withPos { blocks.appendBytes($0) }
            blocks.rows[r].parent = op.parent ?? BlockID(hi: 0, lo: 0)
            blocks.rows[r].hasParent = op.parent != nil
            blocks.rows[r].pos = pos
            let page = blocks.rows[r].page
            if op.parent == nil, let pi = pages.index(forKey: page) { Model.raiseMaxTopPos(&pages.values[pi].maxTopPos, op) }
            return page
        case .deleteBlock:
            guard let r = blocks.find(op.id) else { opsSkipped += 1; return nil }
            if blocks.rows[r].deleted { return nil }
            blocks.rows[r].deleted = true
            return blocks.rows[r].page
        case .setPreamble:
            guard pages[op.id] != nil else { opsSkipped += 1; return nil }
            pages[op.id]!.preamble = op.textString
            return op.id
        case .unknown:
            opsSkipped += 1
            return nil
        }
    }

    /// max = pos when pos > max, comparing as Strings do (bytes when both are ASCII, the common case).
    @inline(__always)
    static func raiseMaxTopPos<O: OpFields>(_ max: inout String, _ op: O) {
        let greater: Bool = op.withPos { p in
            let fast: Bool? = max.utf8.withContiguousStorageIfAvailable { mb in
                var high: UInt8 = 0
                for c in p { high |= c }
                for c in mb { high |= c }
                guard high < 0x80 else { return nil }
                let n = Swift.min(p.count, mb.count)
                let d = n == 0 ? 0 : memcmp(mb.baseAddress!, p.baseAddress!, n)
                return d != 0 ? d < 0 : mb.count < p.count
            } ?? nil
            if let fast { return fast }
            return String(decoding: p, as: UTF8.self) > max
        }
        if greater { max = op.withPos { String(decoding: $0, as: UTF8.self) } }
    }

    func createsCycle(moving id: BlockID, under parent: BlockID) -> Bool {
        var cur: BlockID? = parent
        var steps = 0
        while let c = cur, steps < 100_000 {
            if c == id { return true }
            cur = blocks.find(c).flatMap { blocks.rows[$0].hasParent ? blocks.rows[$0].parent : nil }
            steps += 1
        }
        return false
    }

    /// The live blocks of a page as a tree: children sorted by (pos, id). A block whose parent is gone
    /// (deleted, unknown or on another page) is shown at the top level rather than hidden.
    public func tree(of pageID: BlockID) -> [TreeNode] {
        guard let page = pages[pageID] else { return [] }
        var children: [BlockID?: [BlockID]] = [:]
        var pos: [BlockID: String] = [:]
        for id in page.blocks {
            guard let r = blocks.find(id) else { continue }
            let row = blocks.rows[r]
            guard !row.deleted, row.page == pageID else { continue }
            var parent: BlockID? = row.hasParent ? row.parent : nil
            if let p = parent, blocks.find(p).map({ blocks.rows[$0].deleted || blocks.rows[$0].page != pageID }) ?? true {
                parent = nil
            }
            children[parent, default: []].append(id)
            pos[id] = blocks.pos(ofRow: r)
        }
        func build(_ parent: BlockID?, _ depth: Int) -> [TreeNode] {
            guard var ids = children[parent], depth < 1000 else { return [] }
            ids.sort { a, b in
                let pa = pos[a]!, pb = pos[b]!
                return pa != pb ? pa < pb : a < b
            }
            return ids.map { TreeNode(id: $0, children: build($0, depth + 1)) }
        }
        return build(nil, 0)
    }
}

/// What `apply` reads from an op, so `Op` (Strings) and `RawOpView` (line bytes) share one do_op.
protocol OpFields {
    var kind: OpKind { get }
    var id: BlockID { get }
    var page: BlockID { get }
    var parent: BlockID? { get }
    var pageKind: PageKind { get }
    /// The text as a String (page names and preambles: rare ops).
    var textString: String { get }
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// Appends text and props to the arena; returns the content offset.
    func storeContent(in t: inout BlockTable) -> UInt64
}

extension Op: OpFields {
    var textString: String { text }
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var p = pos
        return p.withUTF8(body)
    }
    func storeContent(in t: inout BlockTable) -> UInt64 {
        var s = text
        let at = s.withUTF8 { t.appendBytes($0) }
        for p in props {
            var k = p.key, v = p.value
            t.appendVarint(k.withUTF8 { t.keys.id($0) })
            _ = v.withUTF8 { t.appendBytes($0) }
        }
        t.arena.append(0)
        return at
    }
}

extension RawOpView: OpFields {
    var kind: OpKind { raw.kind }
    var id: BlockID { raw.id }
    var page: BlockID { raw.page }
    var parent: BlockID? { raw.parent }
    var pageKind: PageKind { raw.pageKind }
    var textString: String { string(raw.text) }
    @inline(__always) func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(bytes(raw.pos)) }
    @inline(__always) func storeContent(in t: inout BlockTable) -> UInt64 {
        let at = t.appendBytes(bytes(raw.text))
        var k = 0
        while k + 1 < props.count {
            t.appendVarint(t.keys.id(bytes(props[k])))
            _ = t.appendBytes(bytes(props[k + 1]))
            k += 2
        }
        t.arena.append(0)
        return at
    }
}

public struct TreeNode: Sendable {
    public var id: BlockID
    public var children: [TreeNode]
}
