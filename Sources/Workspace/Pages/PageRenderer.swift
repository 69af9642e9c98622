// PageRenderer: a page's Markdown from the model, reusing the lines of every block unchanged since the
// page's last rendering. Invariant: the bytes equal Markdown.render of the page's MDPage (each block
// with the properties its page shows: CaptureRecord), less the blocks held back when that would pass
// the page-file limit (`heldWithin`) (tested by PageRendererTests against random edits, moves and
// re-indents), because a block's lines depend on its id, text, shown properties and depth alone, and
// (content offset, create's content offset, depth) names those exactly for one `PageProperties`: the
// model's arena is append-only (an update stores its content at a new offset) and the model is never
// replaced.

/// The last renderings of a few pages, each with where every block's lines are in it.
struct PageRenderCache {
    struct Entry {
        var id: BlockID
        var content: UInt64
        /// Where the winning create's content is (its capture record): `content` until an update.
        var record: UInt64
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
    /// What the kept renderings hold (`outl debug-memory`).
    var bytesKept: Int { bytes }

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

    /// Per key id (1-based; 0 unused), how `renderStored` may write the key (`StoredKey`). Each key
    /// is judged once, when a rendering first meets the table holding it: keys are only ever added
    /// (a peer that sends 100,000 distinct keys must not make every page's rendering judge them all).
    private var keyKinds: [StoredKey] = [.other]
    private var kindsShowing = PageProperties.none

    mutating func keyKinds(of keys: KeyTable, showing: PageProperties) -> [StoredKey] {
        // Another table, or another setting: judged anew.
        if keyKinds.count > keys.starts.count || kindsShowing != showing { keyKinds = [.other]; kindsShowing = showing }
        if keyKinds.count < keys.starts.count {
            keys.flat.withUnsafeBufferPointer { flat in
                for k in keyKinds.count..<keys.starts.count {
                    let key = UnsafeBufferPointer(rebasing: flat[keys.starts[k - 1]..<keys.starts[k]])
                    keyKinds.append(StoredKey(key, showing: showing))
                }
            }
        }
        return keyKinds
    }
}

/// How `BlockTable.renderStored` writes a property's key: as it is (`plain`: `Markdown.isPlainKey`
/// and ASCII), by Markdown.render alone (`other`), or as a capture's record, written only when the
/// page shows it (CaptureRecord.shown): a capture's create holds `captured-at`, then `source`.
enum StoredKey: Equatable {
    case other, plain
    case capturedAt(shown: Bool)
    case source(shown: Bool)

    init(_ key: UnsafeBufferPointer<UInt8>, showing: PageProperties) {
        if key.elementsEqual(CaptureRecord.capturedAt.utf8) { self = .capturedAt(shown: showing.capturedAt); return }
        if key.elementsEqual(CaptureRecord.source.utf8) { self = .source(shown: showing.source); return }
        self = Markdown.isPlainKey(key) && !key.contains(where: { $0 >= 0x80 }) ? .plain : .other
    }
}

/// A page's file content, the blocks it shows (file order) and those held back to keep it within
/// the page-file limit (PageRenderer.heldWithin).
struct RenderedPage {
    var bytes: [UInt8]
    var ids: [BlockID]
    var heldBack: [HeldBackBlock] = []
}

/// A block not shown in its page's file, with its descendants, because the page would pass the size
/// a page file may hold: its own lines' size, and how many descendants went with it.
struct HeldBackBlock: Equatable {
    var id: BlockID
    var bytes: Int
    var descendants: Int
}

enum PageRenderer {
    /// What a page's bytes are for a given model, as a number: bumped with any change to how a page
    /// is rendered (Markdown.render, its escapes, the held-back choice), so a start reads again every
    /// page file the older renderer wrote (PageIndex). PageRendererTests pins a rendering to it.
    /// 2: a capture's record (captured-at, source) is left out unless page-properties names it.
    static let formatVersion = 2

    /// The page within `limit` bytes: blocks are held back (each with its descendants, whose depth
    /// only their parent gives them) largest own lines first, ties by id, until the rest fits. The
    /// choice depends on the model alone, never on the order ops arrived in, so every device that
    /// holds the same ops writes the same file; and the largest blocks are what a peer that floods a
    /// page sends, so a person's ordinary blocks stay. Held-back blocks stay in the model and the op
    /// log, and are not in `ids`: a file without them proves nothing about them (FilePresence).
    static func heldWithin(_ limit: Int, bytes: [UInt8], preambleEnd: Int, entries: [PageRenderCache.Entry]) -> RenderedPage {
        var total = bytes.count
        var held = [Bool](repeating: false, count: entries.count)
        // Where each block's subtree ends: the next entry no deeper than it.
        var end = [Int](repeating: entries.count, count: entries.count)
        var stack: [Int] = []
        for (i, e) in entries.enumerated() {
            while let t = stack.last, entries[t].depth >= e.depth { end[t] = i; stack.removeLast() }
            stack.append(i)
        }
        let order = entries.indices.sorted {
            let a = entries[$0], b = entries[$1]
            return a.range.count != b.range.count ? a.range.count > b.range.count : a.id < b.id
        }
        var heldBack: [HeldBackBlock] = []
        for i in order where total > limit && !held[i] {
            var n = 0
            for j in i..<end[i] where !held[j] {
                held[j] = true
                total -= entries[j].range.count
                n += 1
            }
            heldBack.append(HeldBackBlock(id: entries[i].id, bytes: entries[i].range.count, descendants: n - 1))
        }
        var out: [UInt8] = []
        out.reserveCapacity(total)
        out.append(contentsOf: bytes[..<preambleEnd])
        var ids: [BlockID] = []
        for (i, e) in entries.enumerated() where !held[i] {
            out.append(contentsOf: bytes[e.range])
            ids.append(e.id)
        }
        return RenderedPage(bytes: out, ids: ids, heldBack: heldBack)
    }
}

extension WorkspaceCore {
    /// The page as its file shows it.
    func render(_ pageID: BlockID) -> [UInt8] { renderPage(pageID).bytes }

    /// The page as its file shows it, the ids of its blocks in file order, and the blocks held back.
    func renderPage(_ pageID: BlockID) -> RenderedPage {
        let preamble = model.pages[pageID]?.preamble ?? ""
        let old = renderCache.take(pageID)
        let outline = model.outline(of: pageID)
        // Room for the old bytes and the new blocks at the old rendering's bytes per block, within the
        // page-file limit (a page of one huge block may gain many small ones): grown by doubling
        // instead, a page gaining 4,096 captures copied itself into fresh pages each time.
        let perBlock = old.map { $0.entries.isEmpty ? 128 : ($0.bytes.count - $0.preambleEnd) / $0.entries.count + 1 } ?? 128
        let gained = max(0, outline.count - (old?.entries.count ?? 0))
        var out: [UInt8] = []
        let cap = maxPageBytes + 512
        out.reserveCapacity(min((old?.bytes.count ?? 0) + 512 + min(perBlock, cap) * min(gained, cap), cap))
        if let old, old.preamble == preamble {
            out.append(contentsOf: old.bytes[..<old.preambleEnd])
        } else {
            Markdown.renderPreamble(preamble, into: &out)
        }
        let preambleEnd = out.count
        // The table and the old rendering are read through locals: the loop touches them per block.
        let blocks = model.blocks
        let showing = pageProperties
        let keyKinds = renderCache.keyKinds(of: blocks.keys, showing: showing)
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
            let edits = blocks.edits.isEmpty ? nil : blocks.edits[row]
            let record = edits?.createContent ?? content
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
                    if e.content == content && e.record == record && e.depth == depth { hit = e.range }
                }
            }
            let start = end
            if let hit {
                if run.isEmpty || hit.lowerBound != run.upperBound { flush(); run = hit }
                else { run = run.lowerBound..<hit.upperBound }
                end += hit.count
            } else {
                flush()
                // An updated row's record is its create's, not its content: Markdown.render then.
                if edits?.update != nil || !blocks.renderStored(row: row, id: id, depth: depth, keyKinds: keyKinds, into: &out) {
                    let (text, props) = blocks.shownContent(ofRow: row, showing: showing)
                    Markdown.render(MDBlock(id: id, text: text, props: props), depth: depth, &out)
                }
                end = out.count
            }
            entries.append(PageRenderCache.Entry(id: id, content: content, record: record, depth: depth, range: start..<end))
        }
        flush()
        if out.count > maxPageBytes {
            // Not kept: a page held within the limit is rare, and rendered whole again each time.
            return PageRenderer.heldWithin(maxPageBytes, bytes: out, preambleEnd: preambleEnd, entries: entries)
        }
        renderCache.keep(PageRenderCache.Rendering(bytes: out, preamble: preamble, preambleEnd: preambleEnd, entries: entries), of: pageID)
        return RenderedPage(bytes: out, ids: entries.map(\.id))
    }

    /// The page rendered from scratch, as Markdown.render writes its MDPage: what `render` must equal.
    /// Every block goes through Markdown.render here, none through `BlockTable.renderStored`.
    func renderWhole(_ pageID: BlockID, showing: PageProperties? = nil) -> [UInt8] {
        func md(_ n: TreeNode) -> MDBlock {
            let (text, props) = model.blocks.shownContent(ofRow: model.blocks.find(n.id)!, showing: showing ?? pageProperties)
            return MDBlock(id: n.id, text: text, props: props, children: n.children.map(md))
        }
        let page = model.pages[pageID]
        return Markdown.render(MDPage(preamble: page?.preamble ?? "", blocks: model.tree(of: pageID).map(md)))
    }
}

extension BlockTable {
    /// Row `r`'s lines straight from the arena, with no String made, when Markdown.render writes its
    /// text and shown properties as they are stored: an ASCII text `isPlain`, keys `isPlainKey`, values
    /// with nothing to normalize (nearly every capture). Writes the bytes Markdown.render writes for
    /// the block and returns true; for any other block writes nothing and returns false. ASCII only:
    /// the slow path reads stored bytes as Strings, which repair invalid UTF-8 a peer's op can hold.
    /// Only for a row no update has changed: its content is its create's, so its record.
    func renderStored(row r: Int, id: BlockID, depth: Int, keyKinds: [StoredKey], into out: inout [UInt8]) -> Bool {
        arena.withUnsafeBufferPointer { a -> Bool in
            keys.flat.withUnsafeBufferPointer { flat -> Bool in
                keys.starts.withUnsafeBufferPointer { st -> Bool in
                    keyKinds.withUnsafeBufferPointer { plain -> Bool in
                        BlockTable.renderStored(a, flat, st, plain, content: Int(rows[r].content), id: id, depth: depth, into: &out)
                    }
                }
            }
        }
    }

    /// The lines are written into a room on the stack and appended with one copy (appended a part
    /// at a time, eight appends per block cost more than writing the block). Nearly every block fits
    /// a small room, each part checked before it is written; a block that does not is written again
    /// into room reckoned from its parts first (a packed time unpacks to at most
    /// CompactTimestamp.maxBytes).
    @inline(__always)
    private static func renderStored(_ a: UnsafeBufferPointer<UInt8>, _ flat: UnsafeBufferPointer<UInt8>, _ st: UnsafeBufferPointer<Int>,
                                     _ keyKinds: UnsafeBufferPointer<StoredKey>, content: Int, id: BlockID, depth: Int,
                                     into out: inout [UInt8]) -> Bool {
        var i = content
        let n = readVarint(a, &i)
        let text = UnsafeBufferPointer(rebasing: a[i..<(i + n)])
        // Markdown.isPlain and ASCII, in one pass: from DEL up is DEL, a C1 control's lead or other UTF-8.
        guard let first = text.first, !Escapes.special(first) else { return false }
        var colon = false
        for c in text {
            if c < SP || c >= DEL || c == BS || (colon && c == COLON) { return false }
            colon = c == COLON
        }
        i += n
        let small = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) {
            write($0, text: text, props: i, a, flat, st, keyKinds, id: id, depth: depth, into: &out)
        }
        if small != .noRoom { return small == .written }
        var room = 2 * depth + 3 + n + 2 * (depth + 1) + 5 + 36 + 1
        var j = i
        while true {
            let k = readVarint(a, &j)
            if k == 0 { break }
            var value = CompactTimestamp.maxBytes
            if k & 1 == 0 {
                value = readVarint(a, &j)
                j += value
            } else {
                _ = readVarint(a, &j)
                _ = readVarint(a, &j)
            }
            room += 2 * (depth + 1) + st[k >> 1] - st[(k >> 1) - 1] + 4 + value
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) {
            write($0, text: text, props: i, a, flat, st, keyKinds, id: id, depth: depth, into: &out)
        } == .written
    }

    private enum Stored { case written, declined, noRoom }

    /// The block's lines into `room`, then appended to `out`: `.declined` (nothing appended) for a
    /// key or value that is not plain, `.noRoom` (nothing appended) when a part would not fit.
    @inline(__always)
    private static func write(_ room: UnsafeMutableBufferPointer<UInt8>, text: UnsafeBufferPointer<UInt8>, props: Int,
                              _ a: UnsafeBufferPointer<UInt8>, _ flat: UnsafeBufferPointer<UInt8>, _ st: UnsafeBufferPointer<Int>,
                              _ keyKinds: UnsafeBufferPointer<StoredKey>, id: BlockID, depth: Int, into out: inout [UInt8]) -> Stored {
        var w = ByteWriter(room)
        guard 2 * depth + 3 + text.count <= room.count else { return .noRoom }
        w.spaces(2 * depth)
        w.byte(DASH); w.byte(SP)
        w.bytes(text)
        w.byte(LF)
        var i = props
        // Whether the row is a capture (its captured-at came first), and whether a source came
        // before it (then the slow path, whose record is every record key, decides).
        var capture = false, sourceFirst = false
        while true {
            // A key's kind is known per key (`keyKinds`); a packed time unpacks to digits
            // and ASCII punctuation, which never need normalizing.
            let k = readVarint(a, &i)
            if k == 0 { break }
            var shown = true
            switch keyKinds[k >> 1] {
            case .other: return .declined
            case .plain: break
            case .capturedAt(let s):
                if capture || sourceFirst { return .declined }
                capture = true
                shown = s
            case .source(let s):
                if capture { shown = s } else { sourceFirst = true }
            }
            if !shown {
                if k & 1 == 0 { i += readVarint(a, &i) } else { _ = readVarint(a, &i); _ = readVarint(a, &i) }
                continue
            }
            let key = UnsafeBufferPointer(rebasing: flat[st[(k >> 1) - 1]..<st[k >> 1]])
            let line = 2 * (depth + 1) + key.count + 3 + 1
            if k & 1 == 0 {
                let n = readVarint(a, &i)
                let v = UnsafeBufferPointer(rebasing: a[i..<(i + n)])
                i += n
                // ASCII with nothing to normalize (Markdown.needsNormalizing: controls but TAB, DEL).
                guard !v.contains(where: { $0 >= DEL || ($0 < SP && $0 != TAB) }) else { return .declined }
                guard line + n <= room.count - w.count else { return .noRoom }
                w.spaces(2 * (depth + 1))
                w.bytes(key)
                w.lit(":: ")
                w.bytes(v)
            } else {
                let x = UInt64(readVarint(a, &i)), y = UInt64(readVarint(a, &i))
                guard line + CompactTimestamp.maxBytes <= room.count - w.count else { return .noRoom }
                w.spaces(2 * (depth + 1))
                w.bytes(key)
                w.lit(":: ")
                w.spelled(CompactTimestamp.maxBytes) { CompactTimestamp.unpack(x, y, into: $0.baseAddress!) }
            }
            w.byte(LF)
        }
        guard 2 * (depth + 1) + 5 + 36 + 1 <= room.count - w.count else { return .noRoom }
        w.spaces(2 * (depth + 1))
        w.lit("id:: ")
        w.id(id)
        w.byte(LF)
        out.append(contentsOf: UnsafeBufferPointer(w.written))
        return .written
    }
}
