// Reconciler: turns a hand-edited page file into ops before the page is projected again, so no edit is
// lost, while a page file another device projected (a sync tool copied it here, maybe late, maybe
// before that device's ops) is never mistaken for an edit. The design, and why:
// * Provenance decides. A file that is still the inode this device last published and was changed in
//   place is a person editing this device's projection: three-way against the closest of the recent
//   projections kept device-locally (the base), as before. Sync tools (Syncthing, rsync, outl on a
//   share) replace files by rename, so a file with another inode has an unknown producer.
// * For a file of unknown producer nothing is taken on trust. A block state some op produced (the
//   OpHistory) is a projection, not an edit; only a state no op produced is an edit. A block with an
//   id this device does not know yet is created with that id (its create op may still be in transit;
//   Create is idempotent, so the two converge). A move is taken once the file proves its producer
//   saw every create and move of the block. An op this device made from such a file (adopted, its
//   stamp in OpHistory.adopted) is never evidence: it only repeats what one file said.
// * An edited-here file deletes only as a fresh buffer: the newest projection with blocks removed
//   (nothing else changed, order included), or one holding a block that came to this device's file
//   no earlier than each it lacks last did (FilePresence: arrival here, not creation stamps, orders
//   blocks of several devices). A stale buffer (it lacks an id:: outld wrote, shows a block as an
//   older projection did, or one deleted since) deletes nothing, and a state it shows that some op
//   produced earlier is no edit. Blocks without ids are the blocks they were (Reconciler.identify),
//   never made twice.
// * Deletions must be proven: a live block missing from such a file is deleted only if the file's
//   content proves its producer had the block (Evidence: another block or state of the same actor,
//   no earlier in that actor's op file than the block's create, is in the file; each actor's ops
//   arrive as a prefix of its file, whose stamps need not grow: HLClock.stamp(after:))
//   and had every edit of it. Otherwise the file is just older than the block, and the block stays.
// * The three cases are one enum, Provenance, decided by the caller (PagePass) from
//   how the file arrived and its inode; FileDiff switches on it for each judgement it makes.
// * Rejected alternative: a state stamp inside the file (a page property) names the base exactly, but
//   it is one more line in every page a person reads, and Obsidian shows it as text.
// Limits (man/outl.1 BUGS): deleting, in a copy edited elsewhere or saved by rename, a block nothing
// later of its device on the page vouches for, is indistinguishable from an older projection: kept.
enum Reconciler {
    /// Who wrote a page file, which decides what its differences from the model may mean.
    enum Provenance {
        /// This device's projection, edited in place by a person: three-way against the closest of
        /// these recent projections (never empty), so a deletion by hand is honoured; `presence`
        /// says which blocks a buffer holding some ids was read with.
        case editedHere(bases: [MDPage], presence: FilePresence = FilePresence())
        /// Another producer's (a sync tool's delivery, a conflict copy, a file of another inode): a
        /// state some op produced is a projection, not an edit; a deletion must be proven (Evidence).
        /// `shown`: this device's recent projections of the page, oldest first: the texts an edit in
        /// the file may have started from (FileDiff.sawText), parsed only if an edit asks.
        case otherProducer(OpHistory, shown: () -> [MDPage] = { [] })
        /// Nothing known (a page file a person just created, or no readable op history): only new
        /// blocks are taken, and a preamble where the page had none.
        case nothingKnown
    }

    struct Flat { var parent: BlockID?; var text: String; var props: [Property] }

    /// A page file's blocks in page order (depth first), each with its parent's index: one iterative
    /// walk of the parsed tree, so no depth of nesting reaches a thread's stack (outld reconciles on
    /// the cooperative pool, whose threads may have far smaller stacks than the main thread).
    struct Outline {
        /// Each block without its children (they are listed in `kids`).
        var blocks: [MDBlock] = []
        /// The index of each block's parent, -1 at the top level.
        var parent: [Int] = []
        var kids: [[Int]] = []
        var top: [Int] = []

        init(_ roots: [MDBlock]) {
            var stack: [(MDBlock, Int)] = roots.reversed().map { ($0, -1) }
            while let (b, p) = stack.popLast() {
                let i = blocks.count
                var own = b
                own.children = []
                blocks.append(own)
                parent.append(p)
                kids.append([])
                if p < 0 { top.append(i) } else { kids[p].append(i) }
                for c in b.children.reversed() { stack.append((c, i)) }
            }
        }

        func kids(of i: Int) -> [Int] { i < 0 ? top : kids[i] }
    }

    static func flatten(_ blocks: [MDBlock], parent: BlockID?, into out: inout [BlockID: Flat]) {
        var stack: [(MDBlock, BlockID?)] = blocks.reversed().map { ($0, parent) }
        while let (b, p) = stack.popLast() {
            if let id = b.id, out[id] == nil { out[id] = Flat(parent: p, text: b.text, props: b.props) }
            for c in b.children.reversed() { stack.append((c, b.id)) }
        }
    }

    /// Gives every block in the file an id this page can own, and returns the ids it recognised
    /// rather than read (`matched`). A block without an id, or with a second copy of one, is first
    /// taken for a live block of the page the file does not hold by id: an editor's stale buffer
    /// saved after outld wrote the ids it lacks (or the same bytes reconciled again after a crash)
    /// must not create its blocks again. Equal text first (page order, one to one); else, between
    /// the same neighbouring anchors (blocks both hold by id under the same parent), exactly one
    /// such missing block and one such file block: that block, edited. Matching is only to blocks
    /// missing from the file, so a second line a person types with an existing block's text, while
    /// the file holds that block, is a new block; and the gap rule only to blocks a file may have
    /// shown without their id (`typedInAFile`, typed into a file on this `device`), so a line typed in
    /// a buffer loaded before a capture or another device's typed block landed is never taken for
    /// that block, edited (a file changes only what it showed). The rest, and a block whose id
    /// belongs to another page, get fresh ids (they are new).
    /// `byGap`: the gap rule holds only for a file made from a projection: a person's edit of this
    /// device's (`.editedHere`), or a file holding some of the page's blocks by id. A file holding
    /// none of them (a new file, another spelling) may never have held the missing block, and
    /// taking its line for that block edited would overwrite the block.
    /// `mint` derives ids from the file's bytes: one that names a live block of the page with other
    /// text is that block in an older state (the same bytes were reconciled before), recognised too.
    static func identify(_ o: inout Outline, page: BlockID, model: Model, device: BlockID, byGap: Bool = true,
                         mint: (String) -> BlockID) -> Set<BlockID> {
        var held = Set<BlockID>()
        var heldAt = [Bool](repeating: false, count: o.blocks.count)
        var foreign: [Int] = []   // ids of another page: new blocks, never matched
        var open: [Int] = []      // no id, or a second copy of one
        for i in o.blocks.indices {
            guard let id = o.blocks[i].id else { open.append(i); continue }
            if held.contains(id) {
                o.blocks[i].id = nil
                open.append(i)
            } else if model.blocks[id].map({ $0.page == page }) ?? true {
                held.insert(id)
                heldAt[i] = true
            } else {
                foreign.append(i)
            }
        }
        var matched = Set<BlockID>()
        if !open.isEmpty { matched = match(&o, open: open, held: held, heldAt: heldAt, page: page, model: model, device: device, byGap: byGap || !held.isEmpty) }
        var taken = held.union(matched)
        for i in (open + foreign).sorted() where o.blocks[i].id == nil || !heldAt[i] && !matched.contains(o.blocks[i].id!) {
            var id = mint(o.blocks[i].text)
            while taken.contains(id) { id = mint(o.blocks[i].text) }  // never two blocks with one id
            o.blocks[i].id = id
            taken.insert(id)
            // Minted from bytes this page's file held before (its blocks' ids derive from them), the
            // id is a block made from that file, since edited: an editor saved its old buffer again.
            if let b = model.blocks[id], !b.deleted, b.page == page, b.text != o.blocks[i].text { matched.insert(id) }
        }
        return matched
    }

    /// A block as read, with the properties the block holds: a capture's record (CaptureRecord) its
    /// page leaves out is its recorded value, never removed, so a page without it is no edit.
    static func fillRecord(_ b: inout MDBlock, model: Model) {
        guard let id = b.id, let r = model.blocks.find(id) else { return }
        let record = model.blocks.record(ofRow: r)
        if !record.isEmpty { b.props = CaptureRecord.filled(b.props, record: record) }
    }

    /// The page with every block filled so (`fillRecord`): the projections a file is compared with
    /// are read as the file is.
    static func withRecords(_ page: MDPage, model: Model) -> MDPage {
        mapBlocks(page) { fillRecord(&$0, model: model) }
    }

    /// The page with `change` made to each block (not its children). Iterative: any depth of
    /// nesting, on any thread's stack.
    static func mapBlocks(_ page: MDPage, _ change: (inout MDBlock) -> Void) -> MDPage {
        let o = Outline(page.blocks)
        var built = [MDBlock?](repeating: nil, count: o.blocks.count)
        for i in o.blocks.indices.reversed() {  // children come after their parent
            var b = o.blocks[i]
            change(&b)
            b.children = o.kids[i].map { k in defer { built[k] = nil }; return built[k]! }
            built[i] = b
        }
        var out = page
        out.blocks = o.top.map { built[$0]! }
        return out
    }

    /// Whether a block may have stood in this device's file without its id: one a person typed there,
    /// whose create this `device` made from the file. A capture comes to its page with its id (and its
    /// capture time) from its first projection on, and so does a block another device made (its ops
    /// bring it), so a buffer that holds such a block without an id never showed it: an id-less line
    /// there is the person's own.
    static func typedInAFile(_ b: Block, id: BlockID, model: Model, device: BlockID) -> Bool {
        guard let r = model.blocks.find(id), !model.blocks.isCapture(row: r) else { return false }
        return model.blocks.createStamp(ofRow: r).actor == device
    }

    /// Where a block stands among its siblings: its parent and the nearest anchors before and after.
    struct Gap: Hashable { var parent: BlockID?; var before: BlockID?; var after: BlockID? }

    static func match(_ o: inout Outline, open: [Int], held: Set<BlockID>, heldAt: [Bool],
                      page: BlockID, model: Model, device: BlockID, byGap: Bool) -> Set<BlockID> {
        // The live blocks of the page the file does not hold, in page order, and each one's siblings.
        var missing: [BlockID] = []
        var siblings: [BlockID?: [BlockID]] = [:]
        var stack: [(TreeNode, BlockID?)] = model.tree(of: page).reversed().map { ($0, nil) }
        while let (n, p) = stack.popLast() {
            if !held.contains(n.id) { missing.append(n.id) }
            siblings[p, default: []].append(n.id)
            for c in n.children.reversed() { stack.append((c, n.id)) }
        }
        if missing.isEmpty { return [] }
        var matched = Set<BlockID>()
        // Equal text, one to one, in page order.
        var byText: [String: [BlockID]] = [:]
        for id in missing { byText[Markdown.projected(model.blocks[id]!.text, []).text, default: []].append(id) }
        var next: [String: Int] = [:]
        for i in open {
            let t = o.blocks[i].text
            guard let ids = byText[t] else { continue }
            let k = next[t, default: 0]
            guard k < ids.count else { continue }
            next[t] = k + 1
            o.blocks[i].id = ids[k]
            matched.insert(ids[k])
        }
        if !byGap { return matched }
        // The same gap: sibling groups from the top down, so a group's parent is known by then.
        let isOpen = Set(open)
        var groups = [-1]
        while let g = groups.popLast() {
            let parent: BlockID? = g < 0 ? nil : o.blocks[g].id
            let fileKids = o.kids(of: g)
            for k in fileKids where heldAt[k] || o.blocks[k].id.map(matched.contains) == true { groups.append(k) }
            if g >= 0 && parent == nil { continue }
            let modelKids = siblings[parent] ?? []
            let inModel = Set(modelKids)
            func anchor(_ id: BlockID?) -> Bool { id.map { held.contains($0) && inModel.contains($0) } ?? false }
            var anchors = Set<BlockID>()
            for k in fileKids where heldAt[k] && anchor(o.blocks[k].id) { anchors.insert(o.blocks[k].id!) }
            func gaps<T>(_ items: [T], id: (T) -> BlockID?, isAnchor: (T) -> Bool, isCandidate: (T) -> Bool) -> [Gap: [T]] {
                var out: [Gap: [T]] = [:]
                var pending: [T] = []
                var before: BlockID? = nil
                for x in items {
                    if isAnchor(x) {
                        for p in pending { out[Gap(parent: parent, before: before, after: id(x)), default: []].append(p) }
                        pending = []
                        before = id(x)
                    } else if isCandidate(x) {
                        pending.append(x)
                    }
                }
                for p in pending { out[Gap(parent: parent, before: before, after: nil), default: []].append(p) }
                return out
            }
            let fileGaps = gaps(fileKids, id: { o.blocks[$0].id }, isAnchor: { heldAt[$0] && anchors.contains(o.blocks[$0].id!) },
                                isCandidate: { isOpen.contains($0) && o.blocks[$0].id == nil })
            if fileGaps.isEmpty { continue }
            let modelGaps = gaps(modelKids, id: { $0 }, isAnchor: { anchors.contains($0) },
                                 isCandidate: { !held.contains($0) && !matched.contains($0) })
                .mapValues { $0.filter { id in model.blocks[id].map { typedInAFile($0, id: id, model: model, device: device) } ?? false } }
            for (gap, ks) in fileGaps where ks.count == 1 {
                guard let ms = modelGaps[gap], ms.count == 1 else { continue }
                o.blocks[ks[0]].id = ms[0]
                matched.insert(ms[0])
                groups.append(ks[0])
            }
        }
        return matched
    }

    /// The base the editor most likely started from: the recent projection closest to the file
    /// (fewest blocks added, removed or changed); on a tie, the newest. But a file that differs from
    /// the newest projection only by blocks it lacks is that projection with blocks deleted by hand:
    /// otherwise deleting the newest block would look like an unchanged older buffer and be undone.
    static func chooseBase(file: [BlockID: Flat], bases: [MDPage]) -> MDPage? {
        if let newest = bases.last {
            var flat: [BlockID: Flat] = [:]
            flatten(newest.blocks, parent: nil, into: &flat)
            let onlyDeletions = file.allSatisfy { id, f in
                flat[id].map { $0.text == f.text && $0.props == f.props && $0.parent == f.parent } ?? false
            }
            if onlyDeletions && file.count < flat.count { return newest }
        }
        var best: (Int, MDPage)? = nil
        for base in bases.reversed() {
            var flat: [BlockID: Flat] = [:]
            flatten(base.blocks, parent: nil, into: &flat)
            var cost = 0
            for (id, f) in file {
                if let b = flat[id] { if b.text != f.text || b.props != f.props || b.parent != f.parent { cost += 1 } }
                else { cost += 1 }
            }
            for id in flat.keys where file[id] == nil { cost += 1 }
            if best == nil || cost < best!.0 { best = (cost, base) }
        }
        return best?.1
    }

    /// Ops (with placeholder stamps; the caller stamps them in order) that make the model say what the
    /// file says, as far as its provenance lets it be believed.
    /// `history` loads the op history, asked for only when an edited-here file proves itself a
    /// stale buffer (then a block it shows in a state some op produced earlier is no edit).
    /// `device`: this device's actor (whose creates from a file are blocks a person typed there);
    /// `adopted`: whether a stamp of its is an op taken from another producer's file.
    static func diff(file parsed: MDPage, provenance: Provenance, model: Model, page: BlockID, device: BlockID,
                     adopted: @escaping (HLC) -> Bool = { _ in false },
                     history: (() -> OpHistory?)? = nil, mint: (String) -> BlockID) -> [Op] {
        var outline = Outline(parsed.blocks)
        var editedHere = false
        if case .editedHere = provenance { editedHere = true }
        let matched = identify(&outline, page: page, model: model, device: device, byGap: editedHere, mint: mint)
        for i in outline.blocks.indices { fillRecord(&outline.blocks[i], model: model) }
        var provenance = provenance
        switch provenance {
        case .editedHere(let bases, let presence):
            provenance = .editedHere(bases: bases.map { withRecords($0, model: model) }, presence: presence)
        case .otherProducer(let history, let shown):
            provenance = .otherProducer(history, shown: { shown().map { withRecords($0, model: model) } })
        case .nothingKnown:
            break
        }
        var flat: [BlockID: Flat] = [:]
        for (i, b) in outline.blocks.enumerated() {
            let p = outline.parent[i]
            flat[b.id!] = Flat(parent: p < 0 ? nil : outline.blocks[p].id, text: b.text, props: b.props)
        }
        var d = FileDiff(provenance, file: flat, order: outline.blocks.map { $0.id! }, matched: matched, model: model, page: page)
        d.device = device
        d.adopted = adopted
        d.history = history
        if d.isStaleBuffer, let h = history?() { d.noteOlderStates(h) }
        d.preamble(parsed.preamble)
        d.walk(outline)
        d.deletions()
        return d.ops
    }

    /// Whether `a` is `b` with elements left out (in the same order).
    static func isSubsequence(_ a: [BlockID], of b: [BlockID]) -> Bool {
        var i = a.startIndex
        for x in b where i < a.endIndex && a[i] == x { i += 1 }
        return i == a.endIndex
    }

    /// Every id the blocks carry, at any depth, in file order.
    static func ids(in blocks: [MDBlock]) -> [BlockID] {
        var out: [BlockID] = []
        var todo = Array(blocks.reversed())
        while let b = todo.popLast() {
            if let id = b.id { out.append(id) }
            todo.append(contentsOf: b.children.reversed())
        }
        return out
    }

    /// The longest run of `keys` already in order (each `less` than the next), as indices into `keys`,
    /// in order: patience sorting, O(n log n). The reconciler keeps such a run of siblings in place.
    static func longestOrderedRun<Key>(_ keys: [Key], less: (Key, Key) -> Bool) -> [Int] {
        var tails: [Int] = []  // tails[k]: where the smallest-ending run of length k + 1 found so far ends
        var prev = [Int](repeating: -1, count: keys.count)
        for (i, k) in keys.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if less(keys[tails[mid]], k) { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { prev[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var run: [Int] = []
        var c = tails.last ?? -1
        while c >= 0 { run.append(c); c = prev[c] }
        return run.reversed()
    }
}

/// One file's differences from the model, judged as its provenance allows, and the ops that take them.
struct FileDiff {
    typealias Flat = Reconciler.Flat
    let provenance: Reconciler.Provenance
    let model: Model
    let page: BlockID
    /// The file's blocks by id (ids assigned).
    let file: [BlockID: Flat]
    /// Their ids in file order (depth first).
    let fileOrder: [BlockID]
    /// .editedHere: the projection the editor most likely started from (Reconciler.chooseBase).
    var basePreamble = ""
    var base: [BlockID: Flat] = [:]
    /// The base's ids in page order (depth first).
    var baseOrder: [BlockID] = []
    /// Whether that base is this device's newest projection of the page (else the buffer is older
    /// than what the file held since).
    var baseIsNewest = false
    /// Blocks the file shows as an older projection did (the buffer predates the base).
    var olderThanBase = Set<BlockID>()

    /// An edited-here file that proves it is an editor's stale buffer: it lacks an id:: outld wrote
    /// for a block it shows, shows a block as an older projection did, or shows one deleted since.
    var isStaleBuffer: Bool {
        guard case .editedHere = provenance else { return false }
        if !matched.isEmpty || !olderThanBase.isEmpty { return true }
        return file.keys.contains { model.blocks[$0].map { $0.deleted && $0.page == page } == true }
    }

    /// In a stale buffer, a block whose state differs from the base's but is one some op produced
    /// is an older state the buffer still shows, not an edit (it would undo a newer edit).
    mutating func noteOlderStates(_ history: OpHistory) {
        for (id, f) in file {
            guard let b = base[id], b.text != f.text || b.props != f.props,
                  history.explains(id, text: f.text, props: f.props) else { continue }
            olderThanBase.insert(id)
        }
    }
    /// .otherProducer: what the file proves its producer had seen.
    var evidence = Evidence()
    /// The op history, loaded when asked (Reconciler.diff's).
    var history: (() -> OpHistory?)? = nil
    /// This device's actor, and whether one of its stamps is an op taken from another producer's
    /// file (Reconciler.diff's).
    var device: BlockID? = nil
    var adopted: (HLC) -> Bool = { _ in false }

    /// Each block's states as this device's recent projections showed them, oldest first; worked
    /// out when an edit first asks (most files another producer delivers edit nothing).
    var shownStates = ShownStates { [:] }

    final class ShownStates {
        private var states: [BlockID: [Flat]]?
        private let make: () -> [BlockID: [Flat]]
        init(_ make: @escaping () -> [BlockID: [Flat]]) { self.make = make }
        subscript(id: BlockID) -> [Flat] {
            let all = states ?? make()
            states = all
            return all[id] ?? []
        }
    }

    /// The states the `file`'s blocks had in `projections` (oldest first), for `shownStates`.
    static func shownStates(of file: [BlockID: Flat], in projections: [MDPage]) -> [BlockID: [Flat]] {
        var out: [BlockID: [Flat]] = [:]
        for older in projections {
            var flat: [BlockID: Flat] = [:]
            Reconciler.flatten(older.blocks, parent: nil, into: &flat)
            for id in file.keys {
                guard let f = flat[id] else { continue }
                if let last = out[id]?.last, last.text == f.text, last.props == f.props { continue }
                out[id, default: []].append(f)
            }
        }
        return out
    }

    /// The text an edited block's editor saw, when not the block's current one (Op.base). A file
    /// that differs from the recent projections only in that block ties them all as its base, so
    /// the edit itself decides, and only when it is plain: the newest older state the edit kept
    /// whole (typed into it, as "buy oat milk" became "buy oat milk, two litres") and is fewer bytes
    /// from, while it did not keep the current text whole (" and bread", which arrived after the
    /// buffer was loaded; "draft two" made "draft three" is an edit of the current text). Its
    /// stamp is the newest op that made that state (OpHistory), else the block's create. Nil
    /// otherwise (a rewrite, an edit of the current text): commit then names the current one.
    /// Another producer's file (a phone's save) is judged the same way, from the states this device
    /// projected, unless it proves its producer had the current text's op (Evidence): so a phone's
    /// edit made at once with a device's is kept too. Nil there names nothing (last writer wins).
    /// In a file edited here, a current text this device's person made (not taken from another
    /// producer's file) was typed in this very file: its editor saw it, so no older base is guessed.
    func sawText(_ id: BlockID, _ state: Block, editedTo text: String) -> HLC? {
        switch provenance {
        case .editedHere:
            if let r = model.blocks.find(id), let device {
                let e = model.blocks.editsOf(r)
                let current = e.update ?? e.create
                if current.actor == device, !adopted(current) { return nil }
            }
        case .otherProducer(let history, _):
            guard let r = model.blocks.find(id) else { return nil }
            let e = model.blocks.editsOf(r)
            let current = e.update ?? e.create
            if let n = history.blocks[id]?.texts.first(where: { $0.0.hlc == current })?.0, evidence.covers(n) { return nil }
        case .nothingKnown: return nil
        }
        let current = Markdown.projected(state.text, state.props)
        if FileDiff.keptWhole(current.text, in: text) { return nil }
        let fromCurrent = FileDiff.bytesApart(current.text, text)
        guard let older = shownStates[id].last(where: { s in
            (s.text != current.text || s.props != current.props) && FileDiff.keptWhole(s.text, in: text)
                && FileDiff.bytesApart(s.text, text) < fromCurrent
        }) else { return nil }
        let h = OpHistory.hash(older.text, older.props)
        if let v = history?()?.blocks[id]?.texts.filter({ $0.1 == h }).map(\.0.hlc).max() { return v }
        return model.blocks.find(id).map { model.blocks.createStamp(ofRow: $0) }
    }

    /// How many bytes two texts differ by outside their common start and end: what one edit of the
    /// one makes the other, counted cheaply (no edit distance over 64 KiB texts).
    static func bytesApart(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        var p = 0
        while p < x.count, p < y.count, x[p] == y[p] { p += 1 }
        var s = 0
        while s < x.count - p, s < y.count - p, x[x.count - 1 - s] == y[y.count - 1 - s] { s += 1 }
        return (x.count - p - s) + (y.count - p - s)
    }

    /// Whether `text` holds all of `old`, with only something typed somewhere inside or around it:
    /// `old` is `text`'s common start and end with it.
    static func keptWhole(_ old: String, in text: String) -> Bool {
        let x = Array(old.utf8), y = Array(text.utf8)
        guard x.count <= y.count else { return false }
        var p = 0
        while p < x.count, x[p] == y[p] { p += 1 }
        var s = 0
        while s < x.count - p, x[x.count - 1 - s] == y[y.count - 1 - s] { s += 1 }
        return p + s == x.count
    }

    var ops: [Op] = []
    let stamp = HLC(wall: 0, counter: 0, actor: BlockID(hi: 0, lo: 0))

    /// Blocks the file showed without their id, recognised by Reconciler.identify.
    let matched: Set<BlockID>

    init(_ provenance: Reconciler.Provenance, file: [BlockID: Flat], order: [BlockID], matched: Set<BlockID> = [],
         model: Model, page: BlockID) {
        self.matched = matched
        self.fileOrder = order
        self.model = model
        self.page = page
        self.file = file
        switch provenance {
        case .editedHere(let bases, _):
            guard let chosen = Reconciler.chooseBase(file: file, bases: bases) else {
                self.provenance = .nothingKnown  // no projection recorded: nothing to compare with
                return
            }
            basePreamble = chosen.preamble
            baseIsNewest = chosen == bases.last
            Reconciler.flatten(chosen.blocks, parent: nil, into: &base)
            baseOrder = Reconciler.ids(in: chosen.blocks)
            // A block shown as an older projection showed it, not as the base does: the buffer is
            // older than the base (whose own base was not kept). That block's state is no edit.
            shownStates = ShownStates { FileDiff.shownStates(of: file, in: bases) }
            for older in bases {
                if older == chosen { continue }
                var flat: [BlockID: Flat] = [:]
                Reconciler.flatten(older.blocks, parent: nil, into: &flat)
                for (id, f) in file {
                    guard let o = flat[id], o.text == f.text, o.props == f.props,
                          let b = base[id], b.text != f.text || b.props != f.props else { continue }
                    olderThanBase.insert(id)
                }
            }
        case .otherProducer(let history, let shown):
            // A block the file held no id for (Reconciler.identify) proves nothing its producer saw.
            for (id, f) in file where model.blocks[id]?.page == page && !matched.contains(id) {
                evidence.take(id, text: f.text, props: f.props, history: history)
            }
            shownStates = ShownStates { FileDiff.shownStates(of: file, in: shown()) }
        case .nothingKnown:
            break
        }
        self.provenance = provenance
    }

    /// A preamble that differs from the page's is taken if it is an edit.
    mutating func preamble(_ text: String) {
        let state = model.pages[page]?.preamble ?? ""
        guard text != state else { return }
        let edited: Bool
        switch provenance {
        case .editedHere: edited = text != basePreamble
        case .otherProducer(let history, _): edited = !history.explainsPreamble(page, text)
        case .nothingKnown: edited = state.isEmpty
        }
        guard edited else { return }
        var op = Op(hlc: stamp, kind: .setPreamble, id: page)
        op.text = text
        ops.append(op)
    }

    /// Whether the file's `b` is an edit of the block, whose state in the model is `state`.
    func changed(_ id: BlockID, to b: MDBlock, from state: Block) -> Bool {
        // The model's state as its projection shows it (no CR, no control: Markdown.projected).
        func differsFromShown() -> Bool {
            let shown = Markdown.projected(state.text, state.props)
            return shown.text != b.text || shown.props != b.props
        }
        switch provenance {
        case .editedHere:
            if olderThanBase.contains(id) { return false }
            if let r = base[id] { return r.text != b.text || r.props != b.props }
            return differsFromShown()
        case .otherProducer(let history, _):
            // Another device's projection shows some state an op produced: not an edit.
            return differsFromShown() && !history.explains(id, text: b.text, props: b.props)
        case .nothingKnown:
            return false
        }
    }

    /// Whether the file's place for a known block is a move. A person's edit of this device's
    /// projection: yes. Another producer's file: only when it proves its producer had seen every
    /// create and every move of the block (Evidence, the rule deletions use), so that its producer
    /// placed the block where this device does; otherwise the file may be an older projection (or
    /// one made before a create of the same id won), and taking its order would undo a move.
    func movable(_ id: BlockID) -> Bool {
        switch provenance {
        case .editedHere: return true
        case .otherProducer(let history, _):
            guard let s = history.blocks[id], !s.creates.isEmpty else { return false }
            return s.creates.allSatisfy { evidence.covers($0) } && s.moves.allSatisfy { evidence.covers($0) }
        case .nothingKnown: return false
        }
    }

    /// Siblings that stay where they are: of the known live blocks already under `parent`, those the
    /// file may not move, and the longest run already in order of the others. Indices into `ids`.
    func keptInPlace(_ ids: [BlockID], parent: BlockID?) -> Set<Int> {
        var kept = Set<Int>()
        var candidates: [Int] = []
        for (i, id) in ids.enumerated() {
            guard let b = model.blocks[id], !b.deleted, b.parent == parent else { continue }
            if movable(id) { candidates.append(i) } else { kept.insert(i) }
        }
        let keys = candidates.map { (model.blocks[ids[$0]]!.pos, ids[$0]) }
        let run = Reconciler.longestOrderedRun(keys) { a, b in a.0 != b.0 ? a.0 < b.0 : a.1 < b.1 }
        for r in run { kept.insert(candidates[r]) }
        return kept
    }

    /// Where a block the walk places at `i` goes before: the least position of the kept siblings the
    /// file has after it, above `floor` (the walk's last position). Kept blocks the file may not move
    /// need not be in order, so the least is not always the next one, and one may be below the floor.
    func nextKeptPosition(after i: Int, _ g: Group, above floor: String?) -> String? {
        guard let least = g.leastKeptAfter[i + 1] else { return nil }
        if floor.map({ $0 < least }) ?? true { return least }
        var best: String? = nil
        for j in (i + 1)..<g.ids.count where g.kept.contains(j) {
            let p = model.blocks[g.ids[j]]!.pos
            if floor.map({ $0 < p }) ?? true, best.map({ p < $0 }) ?? true { best = p }
        }
        return best
    }

    /// One sibling group being walked: the parent, the file's blocks under it, how far it got.
    struct Group {
        let parent: BlockID?
        let members: [Int]
        let ids: [BlockID]
        let kept: Set<Int>
        /// leastKeptAfter[j]: the least position of the kept siblings from j on.
        let leastKeptAfter: [String?]
        var next = 0
        var prevKey: String? = nil
    }

    /// Creates, updates and moves, sibling by sibling, depth first (a parent's ops before its
    /// children's), with an explicit stack: a page may nest deeper than a thread's stack allows.
    mutating func walk(_ o: Reconciler.Outline) {
        func group(_ parentIndex: Int) -> Group {
            let members = o.kids(of: parentIndex)
            let parent = parentIndex < 0 ? nil : o.blocks[parentIndex].id
            let ids = members.map { o.blocks[$0].id! }
            let kept = keptInPlace(ids, parent: parent)
            var least = [String?](repeating: nil, count: ids.count + 1)
            for j in stride(from: ids.count - 1, through: 0, by: -1) {
                least[j] = least[j + 1]
                if kept.contains(j) {
                    let p = model.blocks[ids[j]]!.pos
                    if least[j].map({ p < $0 }) ?? true { least[j] = p }
                }
            }
            return Group(parent: parent, members: members, ids: ids, kept: kept, leastKeptAfter: least)
        }
        var stack = [group(-1)]
        while !stack.isEmpty {
            let top = stack.count - 1
            let i = stack[top].next
            guard i < stack[top].members.count else { stack.removeLast(); continue }
            stack[top].next = i + 1
            let g = stack[top]
            let k = g.members[i]
            step(o.blocks[k], i, g, prevKey: &stack[top].prevKey)
            if !o.kids[k].isEmpty { stack.append(group(k)) }
        }
    }

    /// The ops for the `i`th sibling of group `g`.
    mutating func step(_ b: MDBlock, _ i: Int, _ g: Group, prevKey: inout String?) {
        let id = g.ids[i], parent = g.parent
        guard let state = model.blocks[id] else {
            let pos = PositionKey.between(prevKey, nextKeptPosition(after: i, g, above: prevKey))
            var op = Op(hlc: stamp, kind: .createBlock, id: id)
            op.page = page; op.parent = parent; op.pos = pos; op.text = b.text; op.props = b.props
            ops.append(op)
            prevKey = pos
            return
        }
        let edited = changed(id, to: b, from: state)
        var mayMove = movable(id)
        if state.deleted {
            // Deleted elsewhere after the editor opened the file: stays deleted unless edited here.
            if !edited { return }
            mayMove = true
        }
        if edited {
            var op = Op(hlc: stamp, kind: .updateBlock, id: id)
            op.text = b.text; op.props = b.props
            op.base = sawText(id, state, editedTo: b.text)
            ops.append(op)
        }
        if g.kept.contains(i) {
            prevKey = max(prevKey ?? "", state.pos)
        } else if mayMove {
            let pos = PositionKey.between(prevKey, nextKeptPosition(after: i, g, above: prevKey))
            var op = Op(hlc: stamp, kind: .moveBlock, id: id)
            op.parent = parent; op.pos = pos
            ops.append(op)
            prevKey = pos
        } else if state.parent == parent {
            prevKey = max(prevKey ?? "", state.pos)
        }
    }

    /// Live blocks of the page the file no longer holds, deleted where the provenance proves it.
    mutating func deletions() {
        switch provenance {
        case .editedHere:
            // A buffer older than the base proves no deletion: one that lacks an id:: outld wrote for
            // a block it shows (a stale editor buffer), or one that lacks a live block the base lacked
            // too (added after the base: the editor's buffer predates even that projection, which
            // is then not the base it started from).
            if !matched.isEmpty || !olderThanBase.isEmpty { return }
            // One that still shows a block deleted since it was read predates that delete: stale too.
            for id in file.keys where model.blocks[id].map({ $0.deleted && $0.page == page }) == true { return }
            for id in model.blockIDs(createdOn: page) where file[id] == nil && base[id] == nil {
                if let b = model.blocks[id], !b.deleted, b.page == page { return }
            }
            // A file that is the newest projection with blocks removed, and nothing else changed (no
            // text, parent or order), is that projection with blocks deleted by hand (or a buffer
            // no reading can tell from it). Otherwise (the file also differs, or its
            // base is an older projection: the file held something else since) a block is deleted
            // only if the buffer was read with it: it holds, by id, a block that came to this
            // device's file no earlier than that block last did (FilePresence). Creation stamps
            // cannot say so: another device's block may arrive long after a later one made here.
            let onlyRemoved = baseIsNewest && file.allSatisfy { id, f in
                base[id].map { $0.text == f.text && $0.props == f.props && $0.parent == f.parent } ?? false
            } && Reconciler.isSubsequence(fileOrder, of: baseOrder)
            guard case .editedHere(_, let presence) = provenance else { return }
            let held = file.keys.filter { !matched.contains($0) && model.blocks[$0]?.page == page }
            // Deleted by hand: in the base, gone from the file, still live here.
            for id in base.keys.sorted() where file[id] == nil {
                if let b = model.blocks[id], !b.deleted, b.page == page {
                    if !onlyRemoved && !presence.wasRead(with: id, holding: held) { continue }
                    ops.append(Op(hlc: stamp, kind: .deleteBlock, id: id))
                }
            }
        case .otherProducer(let history, _):
            // Deleted only if the file proves its producer had the block and all its edits.
            for id in model.blockIDs(createdOn: page) where file[id] == nil {
                guard let b = model.blocks[id], !b.deleted, b.page == page,
                      let s = history.blocks[id], let c = s.create, evidence.covers(c),
                      s.texts.allSatisfy({ evidence.covers($0.0) }) else { continue }
                ops.append(Op(hlc: stamp, kind: .deleteBlock, id: id))
            }
        case .nothingKnown:
            break
        }
    }
}
