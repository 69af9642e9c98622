// PageRenderer: a page's Markdown from the model, reusing the lines of every block unchanged since the
// page's last rendering. Invariant: the bytes equal Markdown.render of the page's MDPage (tested by
// PageRendererTests against random edits, moves and re-indents), because a block's lines depend on its
// id, text, properties and depth alone, and (content offset, depth) names those exactly: the model's
// arena is append-only (an update stores its content at a new offset) and the model is never replaced.

/// The last renderings of a few pages, each with where every block's lines are in it.
struct PageRenderCache {
    struct Entry {
        var id: BlockID
        var content: UInt64
        var depth: Int
        var range: Range<Int>
    }

    struct Rendering {
        var bytes: [UInt8]
        var preamble: String
        var preambleEnd: Int
        /// In file order.
        var entries: [Entry]
    }

    /// Pages kept, and bytes kept in all: a pass that renders every page at boot keeps the last few.
    static let maxPages = 64
    static let maxBytes = 32 << 20

    private var renderings: [BlockID: Rendering] = [:]
    /// Least recently rendered first.
    private var order: [BlockID] = []
    private var bytes = 0

    mutating func take(_ page: BlockID) -> Rendering? {
        guard let r = renderings.removeValue(forKey: page) else { return nil }
        order.removeAll { $0 == page }
        bytes -= r.bytes.count
        return r
    }

    mutating func keep(_ r: Rendering, of page: BlockID) {
        guard r.bytes.count <= PageRenderCache.maxBytes / 4 else { return }
        while order.count >= PageRenderCache.maxPages || bytes + r.bytes.count > PageRenderCache.maxBytes, !order.isEmpty {
            let old = order.removeFirst()
            bytes -= renderings.removeValue(forKey: old)?.bytes.count ?? 0
        }
        renderings[page] = r
        order.append(page)
        bytes += r.bytes.count
    }

    mutating func removeAll() {
        renderings = [:]; order = []; bytes = 0
    }
}

extension WorkspaceCore {
    /// The page as its file shows it.
    func render(_ pageID: BlockID) -> [UInt8] { renderPage(pageID).bytes }

    /// The page as its file shows it, and the ids of its blocks in file order.
    func renderPage(_ pageID: BlockID) -> (bytes: [UInt8], ids: [BlockID]) {
        let preamble = model.pages[pageID]?.preamble ?? ""
        let old = renderCache.take(pageID)
        var out: [UInt8] = []
        out.reserveCapacity((old?.bytes.count ?? 0) + 512)
        if let old, old.preamble == preamble {
            out.append(contentsOf: old.bytes[..<old.preambleEnd])
        } else {
            Markdown.renderPreamble(preamble, into: &out)
        }
        let preambleEnd = out.count
        let outline = model.outline(of: pageID)
        // The table and the old rendering are read through locals: the loop touches them per block.
        let blocks = model.blocks
        let oldEntries = old?.entries ?? [], oldBytes = old?.bytes ?? []
        var entries: [PageRenderCache.Entry] = []
        entries.reserveCapacity(outline.count)
        // The old entries are walked alongside: an unchanged page meets each block where it was, so
        // the index by id is built only once a block is not where the walk expects it.
        var next = 0
        var index: [BlockID: Int]? = nil
        // Unchanged blocks' lines are copied a run at a time: a page that only gained a block at its
        // end is one copy of its old bytes and one block rendered.
        var run = 0..<0
        func flush() {
            guard !run.isEmpty else { return }
            oldBytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[run])) }
            run = 0..<0
        }
        var end = out.count  // where `out` ends once the run is copied
        for (id, row, depth) in outline {
            let content = blocks.rows[row].content
            var hit: Range<Int>? = nil
            if !oldEntries.isEmpty {
                var k: Int? = nil
                if next < oldEntries.count, oldEntries[next].id == id {
                    k = next
                } else {
                    if index == nil {
                        var ix: [BlockID: Int] = [:]
                        ix.reserveCapacity(oldEntries.count)
                        for (i, e) in oldEntries.enumerated() { ix[e.id] = i }
                        index = ix
                    }
                    k = index![id]
                }
                if let k {
                    next = k + 1
                    let e = oldEntries[k]
                    if e.content == content && e.depth == depth { hit = e.range }
                }
            }
            let start = end
            if let hit {
                if run.isEmpty || hit.lowerBound != run.upperBound { flush(); run = hit }
                else { run = run.lowerBound..<hit.upperBound }
                end += hit.count
            } else {
                flush()
                let b = blocks.block(at: row)
                Markdown.render(MDBlock(id: id, text: b.text, props: b.props), depth: depth, &out)
                end = out.count
            }
            entries.append(PageRenderCache.Entry(id: id, content: content, depth: depth, range: start..<end))
        }
        flush()
        renderCache.keep(PageRenderCache.Rendering(bytes: out, preamble: preamble, preambleEnd: preambleEnd, entries: entries), of: pageID)
        return (out, entries.map(\.id))
    }

    /// The page rendered from scratch, as Markdown.render writes its MDPage: what `render` must equal.
    func renderWhole(_ pageID: BlockID) -> [UInt8] {
        func md(_ n: TreeNode) -> MDBlock {
            let b = model.blocks[n.id]!
            return MDBlock(id: n.id, text: b.text, props: b.props, children: n.children.map(md))
        }
        let page = model.pages[pageID]
        return Markdown.render(MDPage(preamble: page?.preamble ?? "", blocks: model.tree(of: pageID).map(md)))
    }
}
