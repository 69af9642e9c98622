// PageArrangement: every live block of a page stands exactly once; a cycle of parents is cut at its
// member with the newest move, whatever order the ops arrived in; an orphan stands at the top level.
import Testing
@testable import Workspace

@Suite struct PageArrangementTests {
    let page = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 2)!)
    let actor = BlockID(hi: 7, lo: 7)
    let a = BlockID(hi: 1, lo: 1), b = BlockID(hi: 2, lo: 2), c = BlockID(hi: 3, lo: 3)
    let d = BlockID(hi: 4, lo: 4), e = BlockID(hi: 5, lo: 5), f = BlockID(hi: 6, lo: 6)

    func op(_ wall: Int64, _ kind: OpKind, _ id: BlockID) -> Op {
        Op(hlc: HLC(wall: wall, counter: 0, actor: actor), kind: kind, id: id)
    }

    /// a → b → c → a, c moved last; d under a; e a self-parent; f under a deleted block.
    func ops() -> [Op] {
        var out: [Op] = []
        var p = op(1, .createPage, page); p.pageKind = .journal; p.text = "2026-12-02"; out.append(p)
        for (k, id) in [a, b, c, d, e, f].enumerated() {
            var o = op(2 + Int64(k), .createBlock, id); o.page = page; o.pos = "p\(k)"; o.text = "block \(k)"
            out.append(o)
        }
        var gone = op(10, .createBlock, BlockID(hi: 9, lo: 9)); gone.page = page; gone.pos = "z"; out.append(gone)
        out.append(op(11, .deleteBlock, BlockID(hi: 9, lo: 9)))
        for (w, child, parent) in [(20, a, b), (21, b, c), (23, c, a), (24, d, a), (25, e, e), (26, f, BlockID(hi: 9, lo: 9))] {
            var m = op(Int64(w), .moveBlock, child); m.parent = parent; m.pos = "q"; out.append(m)
        }
        return out
    }

    func shape(_ nodes: [TreeNode]) -> String {
        nodes.map { n in "\(n.id.lo)" + (n.children.isEmpty ? "" : "(\(shape(n.children)))") }.joined(separator: " ")
    }

    @Test func a_cycle_is_cut_at_its_newest_move_and_every_block_stands_once_in_any_arrival_order() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var m = Model()
            for o in ops().shuffled(using: &rng) { m.apply(o) }
            // c (moved last in the cycle) stands at the top with b under it, a under b, d under a;
            // e (its own parent) and f (its parent deleted) at the top; siblings by (pos, id).
            #expect(shape(m.tree(of: page)) == "3(2(1(4))) 5 6")
            #expect(m.outline(of: page).map { "\($0.id.lo)@\($0.depth)" } == ["3@0", "2@1", "1@2", "4@3", "5@0", "6@0"])
        }
    }

    @Test func an_outline_row_is_the_block_it_names() {
        var m = Model()
        for o in ops() { m.apply(o) }
        for entry in m.outline(of: page) { #expect(m.blocks.rows[entry.row].id == entry.id) }
        #expect(m.blockIDs(createdOn: page).count == 7, "the deleted block is still listed as created there")
    }
}

@Suite struct FlatOutlineTests {
    let page = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 2)!)
    let other = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 3)!)
    let actor = BlockID(hi: 7, lo: 7)

    /// Random pages of top-level blocks, some created out of order, deleted, moved to another page or
    /// nested: the one-pass outline, when it answers, is the arranged one, and it answers for a page
    /// of captures appended in order.
    @Test func the_flat_outline_is_the_arranged_outline_whenever_it_answers() {
        var rng = SystemRandomNumberGenerator()
        var answered = 0
        for round in 0..<300 {
            var m = Model(), wall: Int64 = 1
            func next(_ kind: OpKind, _ id: BlockID) -> Op {
                wall += 1
                return Op(hlc: HLC(wall: wall, counter: 0, actor: actor), kind: kind, id: id)
            }
            for (p, day) in [(page, "2026-12-02"), (other, "2026-12-03")] {
                var o = next(.createPage, p); o.pageKind = .journal; o.text = day; m.apply(o)
            }
            let n = Int.random(in: 0...12, using: &rng)
            let inOrder = round % 3 == 0
            var ids: [BlockID] = []
            for k in 0..<n {
                let id = BlockID(hi: 1, lo: UInt64.random(in: 1...40, using: &rng))
                var o = next(.createBlock, id); o.page = page
                o.pos = inOrder ? "p\(String(format: "%02d", k))" : ["a", "b", "b", "c"].randomElement(using: &rng)!
                o.text = "block \(k)"; m.apply(o); ids.append(id)
            }
            if !inOrder, let id = ids.randomElement(using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: m.apply(next(.deleteBlock, id))
                case 1: var o = next(.moveBlock, id); o.page = other; o.pos = "a"; m.apply(o)
                case 2: if let p = ids.randomElement(using: &rng) { var o = next(.moveBlock, id); o.parent = p; o.pos = "a"; m.apply(o) }
                default: break
                }
            }
            let arranged = m.arrangedOutline(of: page).map { "\($0.id)/\($0.row)/\($0.depth)" }
            if let flat = m.flatOutline(of: page) {
                answered += 1
                #expect(flat.map { "\($0.id)/\($0.row)/\($0.depth)" } == arranged)
            } else {
                #expect(!inOrder || Set(ids).count < ids.count, "a page appended in order takes the one pass")
            }
        }
        #expect(answered >= 100)
    }
}
