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
//   stamped no earlier than the block's create, is in the file; each actor's ops arrive as a prefix)
//   and had every edit of it. Otherwise the file is just older than the block, and the block stays.
// * Rejected alternative: a state stamp inside the file (a page property) names the base exactly, but
//   it is one more line in every page a person reads, and Obsidian shows it as text.
// Limits (man/outl.1 BUGS): deleting, in a copy edited elsewhere or saved by rename, a block nothing
// later of its device on the page vouches for, is indistinguishable from an older projection: kept.
enum Reconciler {
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
    /// file says.
    /// `bases` are this device's recent projections, given only when the file is one of them edited in
    /// place; otherwise `history` explains which contents some op produced (nil: take only new blocks).
    static func diff(file parsed: MDPage, bases: [MDPage], history: OpHistory? = nil, model: Model,
                     page: BlockID, mint: (String) -> BlockID) -> [Op] {
        var file = parsed
        var seen = Set<BlockID>()
        assignIDs(&file.blocks, page: page, model: model, seen: &seen, mint: mint)
        var fileFlat: [BlockID: Flat] = [:]
        flatten(file.blocks, parent: nil, into: &fileFlat)
        let base = chooseBase(file: fileFlat, bases: bases)
        var baseFlat: [BlockID: Flat] = [:]
        if let base { flatten(base.blocks, parent: nil, into: &baseFlat) }
        let hasBase = base != nil
        var evidence = Evidence()
        if !hasBase, let history {
            for (id, f) in fileFlat where model.blocks[id]?.page == page {
                evidence.take(id, text: f.text, props: f.props, history: history)
            }
        }
        let stamp = HLC(wall: 0, counter: 0, actor: BlockID(hi: 0, lo: 0))
        var ops: [Op] = []

        let statePreamble = model.pages[page]?.preamble ?? ""
        let basePreamble = base?.preamble ?? statePreamble
        let preambleEdited: Bool
        if hasBase || history == nil {
            preambleEdited = file.preamble != basePreamble && (hasBase || statePreamble.isEmpty)
        } else {
            preambleEdited = !history!.explainsPreamble(page, file.preamble)
        }
        if file.preamble != statePreamble, preambleEdited {
            var op = Op(hlc: stamp, kind: .setPreamble, id: page)
            op.text = file.preamble
            ops.append(op)
        }

        func key(_ id: BlockID) -> (String, BlockID) { (model.blocks[id]!.pos, id) }
        func less(_ a: (String, BlockID), _ b: (String, BlockID)) -> Bool { a.0 != b.0 ? a.0 < b.0 : a.1 < b.1 }

        func walk(_ siblings: [MDBlock], parent: BlockID?) {
            let ids = siblings.map { $0.id! }
            // Candidates to stay where they are: known, live blocks already under this parent.
            var candidates: [Int] = []
            for (i, id) in ids.enumerated() {
                if let b = model.blocks[id], !b.deleted, b.parent == parent { candidates.append(i) }
            }
            // The longest run already in order stays; everything else gets a new position.
            var kept = Set<Int>()
            if !candidates.isEmpty {
                var tails: [Int] = []          // index into candidates
                var prev = [Int](repeating: -1, count: candidates.count)
                for (ci, i) in candidates.enumerated() {
                    let k = key(ids[i])
                    var lo = 0, hi = tails.count
                    while lo < hi {
                        let mid = (lo + hi) / 2
                        if less(key(ids[candidates[tails[mid]]]), k) { lo = mid + 1 } else { hi = mid }
                    }
                    if lo > 0 { prev[ci] = tails[lo - 1] }
                    if lo == tails.count { tails.append(ci) } else { tails[lo] = ci }
                }
                var c = tails.last ?? -1
                while c >= 0 { kept.insert(candidates[c]); c = prev[c] }
            }
            var prevKey: String? = nil
            for (i, b) in siblings.enumerated() {
                let id = ids[i]
                func nextKeptKey() -> String? {
                    var j = i + 1
                    while j < ids.count { if kept.contains(j) { return model.blocks[ids[j]]!.pos }; j += 1 }
                    return nil
                }
                guard let state = model.blocks[id] else {
                    let pos = PositionKey.between(prevKey, nextKeptKey())
                    var op = Op(hlc: stamp, kind: .createBlock, id: id)
                    op.page = page; op.parent = parent; op.pos = pos; op.text = b.text; op.props = b.props
                    ops.append(op)
                    prevKey = pos
                    walk(b.children, parent: id)
                    continue
                }
                var changed: Bool
                // The model's state as its projection shows it (no CR, no control: Markdown.projected).
                let shown = Markdown.projected(state.text, state.props)
                if let r = baseFlat[id] { changed = r.text != b.text || r.props != b.props }
                else if hasBase { changed = shown.text != b.text || shown.props != b.props }
                else if let history {
                    // Another device's projection shows some state an op produced: not an edit.
                    changed = (shown.text != b.text || shown.props != b.props)
                        && !history.explains(id, text: b.text, props: b.props)
                } else { changed = false }
                var moveAllowed = hasBase
                if state.deleted {
                    // Deleted elsewhere after the editor opened the file: stays deleted unless edited here.
                    if !changed { walk(b.children, parent: id); continue }
                    moveAllowed = true
                }
                if changed {
                    var op = Op(hlc: stamp, kind: .updateBlock, id: id)
                    op.text = b.text; op.props = b.props
                    ops.append(op)
                }
                if kept.contains(i) {
                    prevKey = state.pos
                } else if moveAllowed {
                    let pos = PositionKey.between(prevKey, nextKeptKey())
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
        walk(file.blocks, parent: nil)

        // Deleted by hand: in the base, gone from the file, still live here.
        for id in baseFlat.keys.sorted() where fileFlat[id] == nil {
            if let b = model.blocks[id], !b.deleted, b.page == page {
                ops.append(Op(hlc: stamp, kind: .deleteBlock, id: id))
            }
        }
        // No base: deleted only if the file proves its producer had the block and all its edits.
        if !hasBase, let history {
            for id in model.pages[page]?.blocks ?? [] where fileFlat[id] == nil {
                guard let b = model.blocks[id], !b.deleted, b.page == page,
                      let s = history.blocks[id], let c = s.create, evidence.covers(c),
                      s.texts.allSatisfy({ evidence.covers($0.0) }) else { continue }
                ops.append(Op(hlc: stamp, kind: .deleteBlock, id: id))
            }
        }
        return ops
    }
}
