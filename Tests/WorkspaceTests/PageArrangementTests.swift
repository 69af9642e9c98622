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
