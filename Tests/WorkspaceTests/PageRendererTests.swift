// PageRenderer reuses a block's lines from the page's last rendering when its content and depth are
// unchanged: whatever edits, moves, re-indents, deletes, preambles and cycles come between two
// renderings, the page it writes is byte for byte what Markdown.render writes from scratch.
import Testing
import TestSupport
@testable import Workspace

@Suite struct PageRendererTests {
    /// Applies three devices' random ops in a random interleaving, rendering every page after each
    /// few ops (so every rendering starts from the one before), and compares with a whole render.
    func check(seed: UInt64) throws -> Int {
        var rng = SplitMix64(seed: seed)
        let (_, files) = randomDeviceOps(&rng)
        var queues = files, ops: [Op] = []
        while queues.contains(where: { !$0.isEmpty }) {
            let a = queues.indices.filter { !queues[$0].isEmpty }.randomElement(using: &rng)!
            ops.append(queues[a].removeFirst())
        }
        let t = TestWorkspace()
        let core = try openCore(t.root, state: t.state())
        defer { core.close() }
        var compared = 0, i = 0
        while i < ops.count {
            let n = Int.random(in: 1...4, using: &rng)
            for op in ops[i..<min(i + n, ops.count)] { _ = core.model.apply(op) }
            i += n
            for page in core.model.pages.keys.sorted() {
                let cached = core.render(page), whole = core.renderWhole(page)
                if cached != whole {
                    Issue.record("seed \(seed), after op \(min(i, ops.count)): page \(page) rendered\n\(String(decoding: cached, as: UTF8.self))\nbut is\n\(String(decoding: whole, as: UTF8.self))")
                    return compared
                }
                compared += 1
            }
        }
        return compared
    }

    @Test func a_page_rendered_from_its_last_rendering_equals_one_rendered_whole() throws {
        var compared = 0
        for seed in UInt64(1)...300 { compared += try check(seed: seed) }
        #expect(compared > 10_000)  // the comparisons happened
    }

    @Test func a_rendering_reuses_the_lines_of_unchanged_blocks_and_renders_an_edited_one_anew() async throws {
        let t = TestWorkspace()
        let core = try openCore(t.root, state: t.state())
        defer { core.close() }
        let page = BlockID.journalPage(day1)
        var p = Op(hlc: HLC(wall: 1, counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .createPage, id: page)
        p.pageKind = .journal; p.text = day1.iso
        _ = core.model.apply(p)
        let a = BlockID(hi: 2, lo: 2), b = BlockID(hi: 3, lo: 3)
        for (k, id) in [a, b].enumerated() {
            var c = Op(hlc: HLC(wall: 2 + Int64(k), counter: 0, actor: p.hlc.actor), kind: .createBlock, id: id)
            c.page = page; c.pos = "a\(k)"; c.text = "block \(k)"
            _ = core.model.apply(c)
        }
        #expect(String(decoding: core.render(page), as: UTF8.self).contains("- block 1\n"))
        var u = Op(hlc: HLC(wall: 9, counter: 0, actor: p.hlc.actor), kind: .updateBlock, id: b)
        u.text = "edited: with a colon"
        _ = core.model.apply(u)
        var m = Op(hlc: HLC(wall: 10, counter: 0, actor: p.hlc.actor), kind: .moveBlock, id: a)
        m.parent = b; m.pos = "a0"
        _ = core.model.apply(m)
        let text = String(decoding: core.render(page), as: UTF8.self)
        #expect(text.hasPrefix("- edited: with a colon\n"))
        #expect(text.contains("\n  - block 0\n"))
        #expect(core.render(page) == core.renderWhole(page))
    }
}
