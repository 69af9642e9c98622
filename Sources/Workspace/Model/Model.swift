// Model: the workspace state the op log folds into, and `apply` (do_op), the only way it changes.
// Invariants: the model is a function of the SET of ops applied, whatever their order, chunking or
// repetition, so a live merge of ops in any arrival order equals a fresh boot over the same files, and
// every device that has the same ops has the same model. A page exists only under its canonical id
// (`BlockID.canonicalPage`): a createPage under any other id is refused, judged from the op alone, and
// kept in `refusedPages` for the reports. Each block field keeps the stamp (HLC) of its
// last write: an update beats any create and among updates the newest wins; among creates of one id
// the least stamp wins; moves are last-writer-wins over the create's place; a block is deleted iff the
// newest of its deletes and updates is a delete. An op whose block has not arrived waits for it.
// Blocks live in a compact BlockTable.
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
    /// The row in `Model.blocks` of every block ever created on the page, deleted ones included, in
    /// creation order, once each (rows never move: the arrangement reads them without a lookup),
    /// kept as runs of consecutive rows.
    var rows = RowRuns()
    /// The largest top-level position key, so an append lands at the end.
    public var maxTopPos: String = ""
    /// A createPage arrived under the page's canonical id. An unknown page is never given a file,
    /// and neither are the blocks created on it.
    public var known: Bool = true
    /// The winning createPage (the least stamp), nil while no createPage arrived.
    var createStamp: HLC? = nil
    /// The newest setPreamble.
    var preambleStamp: HLC? = nil

    public var journalDay: JournalDay? { kind == .journal ? JournalDay(parsing: name) : nil }

    /// Path relative to the workspace root; a journal's file is named as `journalFormat` says (when
    /// a file of the day exists in either spelling, it wins: `JournalFiles`), a named page's by
    /// `PageFileName.fileStem` (shortened when its name does not fit).
    public func relativePath(journalFormat: JournalFileFormat = .logseq) -> String? {
        guard known else { return nil }
        switch kind {
        case .journal: return journalDay.map { JournalFiles.relativePath($0, journalFormat) }
        case .named: return "pages/\(PageFileName.fileStem(for: name)).md"
        }
    }
}

/// A createPage the model refused: its id is not the canonical id of what it names (a peer that
/// minted a journal day's or a named page's id its own way, or a name created under an older rule).
public struct RefusedPage: Sendable, Equatable {
    public var kind: PageKind
    /// The name the op gave (a journal's day as written).
    public var name: String
    /// The device whose op it is (the op's stamp's actor): the one to name in a report.
    public var actor: BlockID
    /// The op's stamp; of several refused createPages of one id, the least is kept.
    public var hlc: HLC
}

/// A text of a block made at once with another (neither editor had seen the other's): the older one,
/// which the block no longer shows.
struct ConcurrentEdit: Sendable {
    /// The property that marks the block keeping it: `concurrent-edit-of:: ((block id))`.
    static let markKey = "concurrent-edit-of"
    var block: BlockID
    /// The older text's stamp, and the text.
    var stamp: HLC
    var text: String
    var props: [Property]
    /// The stamp of the text the block shows, and of the text its editor saw.
    var kept: HLC
    var keptBase: HLC?
    /// The text the older one's own editor saw and replaced (its Op.base).
    var base: HLC? = nil

    /// Whether another losing text found with this one replaced it (named it as its base): its
    /// editor moved on from these words (a person who edited the line twice while apart), so only
    /// the newer is kept. Found together: a device's ops arrive as its file does, both at once.
    func replaced(among found: [ConcurrentEdit]) -> Bool {
        found.contains { $0.block == block && $0.base == stamp }
    }
}

/// A deleted block an update brought back: the update was made without seeing the deletion.
struct BroughtBack: Sendable {
    var block: BlockID
    var by: HLC
    var deletedBy: HLC
}

public struct Model: Sendable {
    /// Compact rows; `blocks[id]` decodes one `Block` on demand.
    public internal(set) var blocks = BlockTable()
    public var pages: [BlockID: Page] = [:]
    /// Ops handed to `apply`.
    public var opsApplied = 0
    /// Ops that changed nothing: an op applied before, a write older than the field's, an unknown kind,
    /// a refused createPage.
    public var opsSkipped = 0
    /// createPages refused because their id is not the canonical id of what they name, by that id.
    /// They change nothing else: the id stays an unknown page, so it and any block created on it
    /// (such blocks are kept, and shown only if a createPage that names that id canonically ever
    /// arrives) are never projected. Kept for the reports (`outl check`, the log) to name the device.
    public internal(set) var refusedPages: [BlockID: RefusedPage] = [:]
    /// Updates, moves and deletes whose block has not arrived yet, by block id: applied when its create is.
    var pending: [BlockID: [Op]] = [:]
    /// Pages the last `apply` touched besides the one it returned (a block whose winning create moved it
    /// to another page); the caller that tracks dirty pages empties it.
    var alsoTouched: [BlockID] = []
    /// Texts of one block made at once (neither editor had seen the other's), as applying found them;
    /// the workspace keeps each older one as a block beside (`keepConcurrentEdits`) and empties the
    /// list. A record of what applying found, not state: the model's blocks are the same without it.
    var concurrentEdits: [ConcurrentEdit] = []
    /// Deleted blocks an update brought back, as applying found them; the workspace says the ones
    /// deleted on its device and empties the list.
    var broughtBack: [BroughtBack] = []

    /// Blocks `device` deleted that another device's update, newer than the deletion, brought back,
    /// found from the stamps rather than as ops apply: a boot applies ops file by file, not in
    /// stamp order, so the update may come before the deletion it outlives.
    func broughtBack(overDeletionsBy device: BlockID) -> [BroughtBack] {
        blocks.edits.compactMap { r, e -> BroughtBack? in
            guard let d = e.delete, d.actor == device, let u = e.update, d < u, u.actor != device else { return nil }
            return BroughtBack(block: blocks.rows[r].id, by: u, deletedBy: d)
        }.sorted { $0.by < $1.by }
    }

    public init() {}

    /// What one op did to the model.
    enum Change: Equatable {
        /// Nothing: applied before, lost to a newer write, or an unknown kind.
        case none
        /// State no page shows (yet): an op waiting for its block, a preamble waiting for its page.
        case hidden
        /// This page may now render differently.
        case page(BlockID)
    }

    /// Whether each id is a block of the model (deleted ones too), in order.
    func knownRows(_ ids: [BlockID]) -> [Bool] { ids.map { blocks.find($0) != nil } }

    /// Applies one op; returns the page it touched (for the dirty set), or nil when it changed nothing
    /// a page shows.
    @discardableResult
    public mutating func apply(_ op: Op) -> BlockID? {
        if case .page(let p) = change(op) { return p }
        return nil
    }

    /// The boot's path: the op's texts go from the line's bytes straight into the arena.
    @discardableResult
    mutating func apply(_ op: RawOpView) -> BlockID? {
        if case .page(let p) = change(op) { return p }
        return nil
    }

    @inline(__always)
    mutating func change<O: OpFields>(_ op: O) -> Change {
        opsApplied += 1
        let c = applyFields(op)
        if case .none = c { opsSkipped += 1 }
        return c
    }

    @inline(__always)
    mutating func applyFields<O: OpFields>(_ op: O) -> Change {
        switch op.kind {
        case .createPage:
            let name = op.textString
            // Decided from the op alone, so the refusal does not depend on what arrived before it:
            // a page under another id would take over the day's (or the name's) file.
            guard BlockID.canonicalPage(kind: op.pageKind, name: name) == op.id else { return refuse(op, name) }
            if let i = pages.index(forKey: op.id) {
                if let s = pages.values[i].createStamp, !(op.hlc < s) { return .none }
                pages.values[i].known = true
                pages.values[i].kind = op.pageKind
                pages.values[i].name = name
                pages.values[i].createStamp = op.hlc
            } else {
                var p = Page(id: op.id, kind: op.pageKind, name: name)
                p.createStamp = op.hlc
                pages[op.id] = p
            }
            return .page(op.id)
        case .createBlock:
            if let r = blocks.find(op.id) { return createAgain(r, op) }
            let pi = pageIndex(op.page)
            let parent = op.parent
            let pos = op.withPos { blocks.appendPlace(parent: parent, pos: $0) }
            let content = op.storeContent(in: &blocks)
            blocks.appendStamp(op.hlc)
            let r = blocks.insert(BlockRow(id: op.id, pageNumber: blocks.numberPage(op.page), content: content, pos: pos,
                                           hasParent: parent != nil, deleted: false))
            pages.values[pi].rows.append(UInt32(r))
            if parent == nil, op.raisesMaxTopPos { Model.raiseMaxTopPos(&pages.values[pi].maxTopPos, op) }
            if !pending.isEmpty, let waiting = pending.removeValue(forKey: op.id) {
                for w in waiting { _ = edit(r, w) }
            }
            return .page(op.page)
        case .updateBlock, .moveBlock, .deleteBlock:
            guard let r = blocks.find(op.id) else { return wait(op) }
            return edit(r, op)
        case .setPreamble:
            let pi = pageIndex(op.id)
            if let s = pages.values[pi].preambleStamp, !(s < op.hlc) { return .none }
            pages.values[pi].preamble = op.textString
            pages.values[pi].preambleStamp = op.hlc
            return pages.values[pi].known ? .page(op.id) : .hidden
        case .unknown:
            return .none
        }
    }

    /// Records a createPage refused for its id; the least stamp's is kept, whatever the order.
    mutating func refuse<O: OpFields>(_ op: O, _ name: String) -> Change {
        if let r = refusedPages[op.id], !(op.hlc < r.hlc) { return .none }
        refusedPages[op.id] = RefusedPage(kind: op.pageKind, name: name, actor: op.hlc.actor, hlc: op.hlc)
        return .none
    }

    /// The index of a page in `pages`, made as an unknown page (not projected) until its createPage arrives.
    @inline(__always)
    mutating func pageIndex(_ id: BlockID) -> Dictionary<BlockID, Page>.Index {
        if let i = pages.index(forKey: id) { return i }
        pages[id] = Page(id: id, kind: .named, name: "", known: false)
        return pages.index(forKey: id)!
    }

    /// An update, move or delete of row `r`: the field's newest stamp wins.
    mutating func edit<O: OpFields>(_ r: Int, _ op: O) -> Change {
        var e = blocks.editsOf(r)
        let page = blocks.page(ofRow: r)
        switch op.kind {
        case .updateBlock:
            if let u = e.update, !(u < op.hlc) {
                // The older of two texts. When the newer one's editor had not seen this one, the two
                // were made at once: this one is kept beside the block, not dropped.
                if u != op.hlc, let seen = e.updateBase, seen < op.hlc {
                    let older = op.asOp()
                    concurrentEdits.append(ConcurrentEdit(block: op.id, stamp: op.hlc, text: older.text, props: older.props,
                                                         kept: u, keptBase: seen, base: op.base))
                }
                return .none
            }
            // The newer text. When its editor had not seen the text it replaces, that one too.
            if let u = e.update, let seen = op.base, seen < u, let b = blocks[op.id] {
                concurrentEdits.append(ConcurrentEdit(block: op.id, stamp: u, text: b.text, props: b.props, kept: op.hlc, keptBase: seen,
                                                     base: e.updateBase))
            }
            let wasDeleted = e.deleted
            if e.update == nil { e.createContent = blocks.rows[r].content }
            e.update = op.hlc
            e.updateBase = op.base
            blocks.rows[r].content = op.storeContent(in: &blocks)
            if wasDeleted, !e.deleted, let d = e.delete { broughtBack.append(BroughtBack(block: op.id, by: op.hlc, deletedBy: d)) }
        case .moveBlock:
            if op.parent == nil {
                // Every top-level pos seen raises maxTopPos (a max: the order does not matter), on every
                // page the block is created on.
                Model.raiseMaxTopPos(&pages[page]!.maxTopPos, op)
                for other in e.otherPages { Model.raiseMaxTopPos(&pages[other]!.maxTopPos, op) }
                let p = op.withPos { String(decoding: $0, as: UTF8.self) }
                if e.topMovePos.map({ $0 < p }) ?? true { e.topMovePos = p }
            }
            if let m = e.move, !(m < op.hlc) { blocks.edits[r] = e; return .none }
            e.move = op.hlc
            op.withPos { blocks.setPlace(r, parent: op.parent, pos: $0) }
        case .deleteBlock:
            if let d = e.delete, !(d < op.hlc) { return .none }
            e.delete = op.hlc
        default:
            return .none
        }
        blocks.rows[r].deleted = e.deleted
        blocks.edits[r] = e
        return .page(page)
    }

    /// A create of an id that exists (a replay, or a second device draining a synced copy): the least
    /// stamp's create wins the fields no update or move has overwritten, and its page.
    mutating func createAgain<O: OpFields>(_ r: Int, _ op: O) -> Change {
        let rowPage = blocks.page(ofRow: r)
        let current = blocks.createStamp(ofRow: r)
        if op.hlc == current { return .none }
        var e = blocks.edits[r]
        var change = Change.none
        if op.parent == nil {
            let pi = pageIndex(op.page)
            if op.raisesMaxTopPos { Model.raiseMaxTopPos(&pages.values[pi].maxTopPos, op) }
        }
        let newPage = op.page != rowPage && !(e?.otherPages.contains(op.page) ?? false)
        if newPage {
            // The block is listed on every page it is created on; tree(of:) shows it on its row's page.
            var x = e ?? blocks.editsOf(r)
            let pi = pageIndex(op.page)
            pages.values[pi].rows.append(UInt32(r))
            if let t = x.topMovePos { Model.raiseMaxTopPos(&pages.values[pi].maxTopPos, t) }
            x.otherPages.append(op.page)
            e = x
            change = .hidden
        }
        if op.hlc < current {
            if op.page != rowPage {
                var x = e!
                x.otherPages.removeAll { $0 == op.page }
                x.otherPages.append(rowPage)
                e = x
                blocks.setPage(r, op.page)
                alsoTouched.append(rowPage)
            }
            if e?.move == nil {
                op.withPos { blocks.setPlace(r, parent: op.parent, pos: $0) }
            }
            if e?.update == nil {
                blocks.rows[r].content = op.storeContent(in: &blocks)
                blocks.appendStamp(op.hlc)
            } else {
                // An update's content stays; the winning create's is kept for its capture record.
                e?.createContent = op.storeContent(in: &blocks)
                blocks.appendStamp(op.hlc)
            }
            e?.create = op.hlc
            change = .page(op.page)
        }
        if let e { blocks.edits[r] = e }
        return change
    }

    /// Parks an edit of a block that has not arrived; a re-delivered one is not parked twice.
    mutating func wait<O: OpFields>(_ op: O) -> Change {
        if pending[op.id]?.contains(where: { $0.hlc == op.hlc }) == true { return .none }
        pending[op.id, default: []].append(op.asOp())
        return .hidden
    }

    /// Ops still waiting for their block's create.
    public var waitingOps: Int { pending.values.reduce(0) { $0 + $1.count } }

    /// max = pos when pos > max, comparing as Strings do (bytes when both are ASCII, the common case).
    @inline(__always)
    static func raiseMaxTopPos<O: OpFields>(_ max: inout String, _ op: O) {
        let greater: Bool = op.withPos { p in OpEncoder.bytes(of: max) { PositionKey.greater(p, than: $0) } }
        if greater { max = op.posString }
    }

    static func raiseMaxTopPos(_ max: inout String, _ pos: String) {
        if pos > max { max = pos }
    }

    /// Raises the maxTopPos of `op`'s page (which exists: the op was applied) as applying it would
    /// have, for an op applied with `raisesMaxTopPos` false.
    mutating func raiseMaxTopPos<O: OpFields>(ofPageOf op: O) {
        if let i = pages.index(forKey: op.page) { Model.raiseMaxTopPos(&pages.values[i].maxTopPos, op) }
    }
}

/// What `apply` reads from an op, so `Op` (Strings), `RawOpView` (line bytes) and `CaptureOpView` (a
/// capture's create, read from its batch's bytes) share one do_op.
protocol OpFields {
    var kind: OpKind { get }
    var id: BlockID { get }
    var page: BlockID { get }
    var parent: BlockID? { get }
    var pageKind: PageKind { get }
    /// The text as a String (page names and preambles: rare ops).
    var textString: String { get }
    /// updateBlock: the stamp of the text its editor saw (Op.base).
    var base: HLC? { get }
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// The position as a String (an `Op` has one already: a capture's op made none anew).
    var posString: String { get }
    /// Appends text and props to the arena; returns the content offset.
    func storeContent(in t: inout BlockTable) -> UInt64
    var hlc: HLC { get }
    /// The op with Strings (an op that waits for its block is kept this way).
    func asOp() -> Op
    /// Whether applying a top-level create raises its page's maxTopPos (false only for a batch's
    /// captures, whose batch raises it: `CaptureOpView`).
    var raisesMaxTopPos: Bool { get }
}

extension Op: OpFields {
    var raisesMaxTopPos: Bool { true }
    var textString: String { text }
    var posString: String { pos }
    func asOp() -> Op { self }
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var p = pos
        return p.withUTF8(body)
    }
    func storeContent(in t: inout BlockTable) -> UInt64 {
        var s = text
        let at = s.withUTF8 { t.appendBytes($0) }
        for p in props {
            var k = p.key, v = p.value
            let key = k.withUTF8 { t.keys.id($0) }
            v.withUTF8 { t.appendProperty(key: key, value: $0) }
        }
        t.arena.append(0)
        return at
    }
}

extension RawOpView: OpFields {
    var raisesMaxTopPos: Bool { true }
    var base: HLC? { raw.base }
    var kind: OpKind { raw.kind }
    var id: BlockID { raw.id }
    var page: BlockID { raw.page }
    var parent: BlockID? { raw.parent }
    var pageKind: PageKind { raw.pageKind }
    var textString: String { string(raw.text) }
    var posString: String { string(raw.pos) }
    func asOp() -> Op { op() }
    @inline(__always) func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(bytes(raw.pos)) }
    @inline(__always) func storeContent(in t: inout BlockTable) -> UInt64 {
        let at = t.appendBytes(bytes(raw.text))
        var k = 0
        while k + 1 < props.count {
            t.appendProperty(key: t.keys.id(bytes(props[k])), value: bytes(props[k + 1]))
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
