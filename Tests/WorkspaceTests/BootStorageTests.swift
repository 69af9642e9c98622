// The boot's compact model: applying ops straight from their line bytes must build exactly the model
// that applying the decoded `Op`s builds, and the block table must keep value semantics as it grows.
import Testing
@testable import Workspace

private func sameBlock(_ a: Block?, _ b: Block?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return a.page == b.page && a.parent == b.parent && a.pos == b.pos && a.text == b.text && a.props == b.props
        && a.deleted == b.deleted
}

@Test func applying_raw_lines_builds_the_same_model_as_applying_ops() {
    let actor = BlockID.random()
    var wall: Int64 = 1_796_206_489_801
    func op(_ kind: OpKind, _ id: BlockID) -> Op { wall += 1; return Op(hlc: HLC(wall: wall, counter: 0, actor: actor), kind: kind, id: id) }
    let page = BlockID.journalPage(JournalDay(year: 2026, month: 12, day: 2)!)
    let a = BlockID.random(), b = BlockID.random(), c = BlockID.random()
    var ops: [Op] = []
    var cp = op(.createPage, page); cp.text = "2026-12-02"; ops.append(cp)
    var o = op(.createBlock, a); o.page = page; o.pos = "m"; o.text = "quote \" tab \t nul \u{0} 🧪 ünï"
    o.props = [Property("captured-at", "2026-12-01T23:58:07.120-05:00"), Property("so\"urce", "cli")]; ops.append(o)
    o = op(.createBlock, b); o.page = page; o.parent = a; o.pos = "a"; o.text = "child"; ops.append(o)
    o = op(.createBlock, c); o.page = BlockID.random(); o.pos = "z"; o.text = "orphan page"; ops.append(o)
    o = op(.createBlock, a); o.page = page; o.pos = "q"; o.text = "duplicate create is a no-op"; ops.append(o)
    o = op(.updateBlock, b); o.text = "edited\nline"; o.props = [Property("captured-at", "x")]; ops.append(o)
    o = op(.moveBlock, a); o.parent = b; o.pos = "b"; ops.append(o)  // a cycle until b moves away
    o = op(.moveBlock, b); o.pos = "zz"; ops.append(o)  // to the top level: raises maxTopPos
    ops.append(op(.deleteBlock, c))
    o = op(.setPreamble, page); o.text = "title:: day"; ops.append(o)
    ops.append(op(.unknown, BlockID.random()))

    var viaOps = Model(), viaBytes = Model()
    var scratch = ParseScratch()
    for op in ops {
        viaOps.apply(op)
        let line = Array(OpEncoder.line(op).dropLast())
        line.withUnsafeBufferPointer { l in
            guard let raw = OpParser.parseRaw(l, &scratch) else { Issue.record("line did not parse"); return }
            scratch.bytes.withUnsafeBufferPointer { sb in
                scratch.props.withUnsafeBufferPointer { pp in
                    _ = viaBytes.apply(RawOpView(raw: raw, json: UnsafeBufferPointer(rebasing: l[9...]), scratch: sb, props: pp))
                }
            }
        }
    }
    #expect(viaOps.blocks.count == 3 && viaBytes.blocks.count == 3)
    for id in [a, b, c] { #expect(sameBlock(viaOps.blocks[id], viaBytes.blocks[id])) }
    #expect(viaBytes.blocks[a]?.text == "quote \" tab \t nul \u{0} 🧪 ünï")
    #expect(viaBytes.blocks[a]?.props == [Property("captured-at", "2026-12-01T23:58:07.120-05:00"), Property("so\"urce", "cli")])
    #expect(viaBytes.blocks[b]?.parent == nil && viaBytes.blocks[b]?.pos == "zz")
    #expect(viaBytes.blocks[c]?.deleted == true)
    #expect(viaOps.pages.count == viaBytes.pages.count)
    for (id, p) in viaOps.pages {
        let q = viaBytes.pages[id]
        #expect(q?.name == p.name && q?.preamble == p.preamble && viaBytes.blockIDs(createdOn: id) == viaOps.blockIDs(createdOn: id) && q?.maxTopPos == p.maxTopPos
                && q?.known == p.known)
    }
    #expect(viaBytes.pages[page]?.maxTopPos == "zz")
    #expect(viaOps.opsSkipped == viaBytes.opsSkipped && viaBytes.opsSkipped == 2)
}

@Test func the_block_table_grows_past_its_reservation_and_copies_on_write() {
    var m = Model()
    let page = BlockID.journalPage(JournalDay(year: 2026, month: 1, day: 1)!)
    var ids: [BlockID] = []
    for k in 0..<5000 {
        let id = BlockID.random()
        ids.append(id)
        var op = Op(hlc: HLC(wall: Int64(k), counter: 0, actor: id), kind: .createBlock, id: id)
        op.page = page; op.pos = "p\(k)"; op.text = "block \(k)"; op.props = [Property("k\(k % 7)", "\(k)")]
        m.apply(op)
    }
    #expect(m.blocks.count == 5000)
    #expect(ids.enumerated().allSatisfy { m.blocks[$1]?.text == "block \($0)" && m.blocks[$1]?.props == [Property("k\($0 % 7)", "\($0)")] })
    let before = m
    var del = Op(hlc: HLC(wall: 9999, counter: 0, actor: ids[0]), kind: .deleteBlock, id: ids[0])
    del.text = ""
    m.apply(del)
    #expect(m.blocks[ids[0]]?.deleted == true)
    #expect(before.blocks[ids[0]]?.deleted == false, "a copy of the model must not see later ops")
    #expect(m.blocks[BlockID.random()] == nil)
}
