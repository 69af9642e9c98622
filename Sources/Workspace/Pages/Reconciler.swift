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
//   Create is idempotent, so the two converge). Order is left alone (no move can be proven).
// * Deletions must be proven: a live block missing from such a file is deleted only if the file's
//   content proves its producer had the block (Evidence: another block or state of the same actor,
//   no earlier in that actor's op file than the block's create, is in the file; each actor's ops
//   arrive as a prefix of its file, whose stamps need not grow: HLClock.stamp(after:))
//   and had every edit of it. Otherwise the file is just older than the block, and the block stays.
// * The three cases are one enum, Provenance, decided by the caller (WorkspaceCore+Reconcile) from
//   how the file arrived and its inode; FileDiff switches on it for each judgement it makes.
// * Rejected alternative: a state stamp inside the file (a page property) names the base exactly, but
//   it is one more line in every page a person reads, and Obsidian shows it as text.
// Limits (man/outl.1 BUGS): deleting, in a copy edited elsewhere or saved by rename, a block nothing
// later of its device on the page vouches for, is indistinguishable from an older projection: kept.
enum Reconciler {
    /// Who wrote a page file, which decides what its differences from the model may mean.
    enum Provenance {
        /// This device's projection, edited in place by a person: three-way against the closest of
        /// these recent projections (never empty), so a deletion by hand is honoured.
        case editedHere(bases: [MDPage])
        /// Another producer's (a sync tool's delivery, a conflict copy, a file of another inode): a
        /// state some op produced is a projection, not an edit; a deletion must be proven (Evidence).
        case otherProducer(OpHistory)
        /// Nothing known (a page file a person just created, or no readable op history): only new
        /// blocks are taken, and a preamble where the page had none.
        case nothingKnown
    }

    struct Flat { var parent: BlockID?; var text: String; var props: [Property] }

    static func flatten(_ blocks: [MDBlock], parent: BlockID?, into out: inout [BlockID: Flat]) {
        for b in blocks {
            if let id = b.id, out[id] == nil { out[id] = Flat(parent: parent, text: b.text, props: b.props) }
            flatten(b.children, parent: b.id, into: &out)
        }
    }

    /// Gives every block in the file an id this page can own: a block without one, a second copy of
    /// one, or one that belongs to another page gets a fresh id (it is a new block).
    static func assignIDs(_ blocks: inout [MDBlock], page: BlockID, model: Model, seen: inout Set<BlockID>,
                          mint: (String) -> BlockID) {
        for i in blocks.indices {
            if let id = blocks[i].id, !seen.contains(id), model.blocks[id].map({ $0.page == page }) ?? true {
                seen.insert(id)
            } else {
                let id = mint(blocks[i].text)
                blocks[i].id = id
                seen.insert(id)
            }
            assignIDs(&blocks[i].children, page: page, model: model, seen: &seen, mint: mint)
        }
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
    static func diff(file parsed: MDPage, provenance: Provenance, model: Model, page: BlockID,
                     mint: (String) -> BlockID) -> [Op] {
        var blocks = parsed.blocks
        var seen = Set<BlockID>()
        assignIDs(&blocks, page: page, model: model, seen: &seen, mint: mint)
        var flat: [BlockID: Flat] = [:]
        flatten(blocks, parent: nil, into: &flat)
        var d = FileDiff(provenance, file: flat, model: model, page: page)
        d.preamble(parsed.preamble)
        d.walk(blocks, parent: nil)
        d.deletions()
        return d.ops
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
    /// .editedHere: the projection the editor most likely started from (Reconciler.chooseBase).
    var basePreamble = ""
    var base: [BlockID: Flat] = [:]
    /// .otherProducer: what the file proves its producer had seen.
    var evidence = Evidence()
    var ops: [Op] = []
    let stamp = HLC(wall: 0, counter: 0, actor: BlockID(hi: 0, lo: 0))

    init(_ provenance: Reconciler.Provenance, file: [BlockID: Flat], model: Model, page: BlockID) {
        self.model = model
        self.page = page
        self.file = file
        switch provenance {
        case .editedHere(let bases):
            guard let chosen = Reconciler.chooseBase(file: file, bases: bases) else {
                self.provenance = .nothingKnown  // no projection recorded: nothing to compare with
                return
            }
            basePreamble = chosen.preamble
            Reconciler.flatten(chosen.blocks, parent: nil, into: &base)
        case .otherProducer(let history):
            for (id, f) in file where model.blocks[id]?.page == page {
                evidence.take(id, text: f.text, props: f.props, history: history)
            }
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
        case .otherProducer(let history): edited = !history.explainsPreamble(page, text)
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
            if let r = base[id] { return r.text != b.text || r.props != b.props }
            return differsFromShown()
        case .otherProducer(let history):
            // Another device's projection shows some state an op produced: not an edit.
            return differsFromShown() && !history.explains(id, text: b.text, props: b.props)
        case .nothingKnown:
            return false
        }
    }

    /// Only a person's edit of this device's projection proves a move.
    var movesAllowed: Bool {
        if case .editedHere = provenance { return true }
        return false
    }

    /// Siblings that stay where they are: of the known live blocks already under `parent`, the
    /// longest run already in order. Returns indices into `ids`.
    func keptInPlace(_ ids: [BlockID], parent: BlockID?) -> Set<Int> {
        var candidates: [Int] = []
        for (i, id) in ids.enumerated() {
            if let b = model.blocks[id], !b.deleted, b.parent == parent { candidates.append(i) }
        }
        let keys = candidates.map { (model.blocks[ids[$0]]!.pos, ids[$0]) }
        let run = Reconciler.longestOrderedRun(keys) { a, b in a.0 != b.0 ? a.0 < b.0 : a.1 < b.1 }
        return Set(run.map { candidates[$0] })
    }

    /// The position of the first kept sibling after `i`: a new position goes before it.
    func nextKeptPosition(after i: Int, _ ids: [BlockID], kept: Set<Int>) -> String? {
        var j = i + 1
        while j < ids.count { if kept.contains(j) { return model.blocks[ids[j]]!.pos }; j += 1 }
        return nil
    }

    /// Creates, updates and moves, sibling by sibling, depth first.
    mutating func walk(_ siblings: [MDBlock], parent: BlockID?) {
        let ids = siblings.map { $0.id! }
        let kept = keptInPlace(ids, parent: parent)
        var prevKey: String? = nil
        for (i, b) in siblings.enumerated() {
            let id = ids[i]
            guard let state = model.blocks[id] else {
                let pos = PositionKey.between(prevKey, nextKeptPosition(after: i, ids, kept: kept))
                var op = Op(hlc: stamp, kind: .createBlock, id: id)
                op.page = page; op.parent = parent; op.pos = pos; op.text = b.text; op.props = b.props
                ops.append(op)
                prevKey = pos
                walk(b.children, parent: id)
                continue
            }
            let edited = changed(id, to: b, from: state)
            var mayMove = movesAllowed
            if state.deleted {
                // Deleted elsewhere after the editor opened the file: stays deleted unless edited here.
                if !edited { walk(b.children, parent: id); continue }
                mayMove = true
            }
            if edited {
                var op = Op(hlc: stamp, kind: .updateBlock, id: id)
                op.text = b.text; op.props = b.props
                ops.append(op)
            }
            if kept.contains(i) {
                prevKey = state.pos
            } else if mayMove {
                let pos = PositionKey.between(prevKey, nextKeptPosition(after: i, ids, kept: kept))
                var op = Op(hlc: stamp, kind: .moveBlock, id: id)
                op.parent = parent; op.pos = pos
                ops.append(op)
                prevKey = pos
            } else {
                prevKey = max(prevKey ?? "", state.pos)
            }
            walk(b.children, parent: id)
        }
    }

    /// Live blocks of the page the file no longer holds, deleted where the provenance proves it.
    mutating func deletions() {
        switch provenance {
        case .editedHere:
            // Deleted by hand: in the base, gone from the file, still live here.
            for id in base.keys.sorted() where file[id] == nil {
                if let b = model.blocks[id], !b.deleted, b.page == page {
                    ops.append(Op(hlc: stamp, kind: .deleteBlock, id: id))
                }
            }
        case .otherProducer(let history):
            // Deleted only if the file proves its producer had the block and all its edits.
            for id in model.pages[page]?.blocks ?? [] where file[id] == nil {
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
