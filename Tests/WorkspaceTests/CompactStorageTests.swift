// How the model keeps a block small (BlockTable): a 32-byte row with its page by number and its parent
// in the arena, and a capture's time packed (CompactTimestamp). What is read back is always exactly
// what the ops said, whatever the value's shape, and a typical capture costs what the memory target
// of a ten-year workspace was planned on.
import Testing
import TestSupport
@testable import Workspace

private func packs(_ s: String) -> (UInt64, UInt64)? {
    var s = s
    return s.withUTF8 { CompactTimestamp.pack($0) }
}

private func roundTrip(_ s: String) -> String? {
    guard let (a, b) = packs(s) else { return nil }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: CompactTimestamp.maxBytes) { out in
        String(decoding: UnsafeBufferPointer(rebasing: out[..<CompactTimestamp.unpack(a, b, into: out.baseAddress!)]), as: UTF8.self)
    }
}

/// A block created on `page` with one property, applied to `m`.
private func create(_ m: inout Model, _ value: String, page: BlockID, parent: BlockID? = nil, wall: Int64 = 10) -> BlockID {
    var op = Op(hlc: HLC(wall: wall, counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .createBlock, id: BlockID.random())
    op.page = page
    op.parent = parent
    op.pos = "0i"
    op.text = "t"
    op.props = [Property("captured-at", value), Property("source", "cli")]
    m.apply(op)
    return op.id
}

@Test func the_shapes_captures_write_are_packed_and_come_back_exactly() {
    for s in ["2026-12-01T23:58:07.120-05:00", "2026-12-01T23:58:07Z", "2026-12-01T23:58:07.000Z",
              "2026-12-01T23:58:07+14:00", "0000-00-00T00:00:00.000+00:00", "9999-99-99T99:99:99.999-99:99",
              "2026-02-30T25:61:60.999+00:00"] {
        #expect(packs(s) != nil, "\(s) is not packed")
        #expect(roundTrip(s) == s)
    }
}

@Test func any_other_value_is_kept_as_it_is() {
    var m = Model()
    let page = BlockID.journalPage(day1)
    for s in ["", "2026-12-01", "2026-12-01t23:58:07Z", "2026-12-01T23:58:07z", "2026-12-01T23:58:07,120Z",
              "2026-12-01T23:58:07.12Z", "2026-12-01T23:58:07.1200Z", "2026-12-01T23:58:07.120-0500",
              "2026-12-01 23:58:07Z", "2026-12-01T23:58:07.120~05:00", "2026-12-01T23:58:07.120-05-00",
              "2026-12-01T23:58:0a.120-05:00", "2026-12-01T23:58:07.12a-05:00", "2026-12-01T23:58:07.120-0a:00",
              "２026-12-01T23:58:07Z", "2026-12-01T23:58:07Z\n", "2026-12-01T23:58:07.120-05:00 ",
              "2026-12-01T23:58:07.120+05:00Z", "-026-12-01T23:58:07Z"] {
        #expect(packs(s) == nil, "\(s) was packed")
        let id = create(&m, s, page: page)
        #expect(m.blocks[id]?.props == [Property("captured-at", s), Property("source", "cli")])
    }
}

@Test func random_values_near_the_shape_come_back_exactly_through_the_model() {
    var rng = SplitMix64(seed: 42)
    let alphabet = Array("0123456789-T:.Z+z 9".utf8)
    let template = Array("2026-12-01T23:58:07.120-05:00".utf8)
    var m = Model()
    let page = BlockID.journalPage(day1)
    var packed = 0
    for _ in 0..<20_000 {
        var v = template
        // Cut to one of the widths near the packed ones, then change a few characters.
        let n = [19, 20, 21, 23, 24, 25, 26, 28, 29, 30].randomElement(using: &rng)!
        if n < v.count { v.removeLast(v.count - n) } else { v += [UInt8](repeating: 48, count: n - v.count) }
        if n == 20 || n == 24 { v[n - 1] = 90 }
        for _ in 0..<Int.random(in: 0...2, using: &rng) { v[Int.random(in: 0..<n, using: &rng)] = alphabet.randomElement(using: &rng)! }
        let s = String(decoding: v, as: UTF8.self)
        if packs(s) != nil { packed += 1 }
        let id = create(&m, s, page: page)
        #expect(m.blocks[id]?.props.first?.value == s)
    }
    #expect(packed > 2_000 && packed < 18_000, "both kinds met: \(packed) packed")
}

@Test func pages_and_parents_kept_by_number_and_in_the_arena_come_back_after_moves() {
    var m = Model()
    let day = BlockID.journalPage(day1), other = BlockID.journalPage(day1.next)
    let parent = create(&m, "p", page: day)
    let child = create(&m, "c", page: day, parent: parent)
    #expect(m.blocks[child]?.parent == parent && m.blocks[child]?.page == day && m.blocks[parent]?.parent == nil)
    // A move to the top, then under the parent again.
    var mv = Op(hlc: HLC(wall: 20, counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .moveBlock, id: child)
    mv.pos = "0k"
    m.apply(mv)
    #expect(m.blocks[child]?.parent == nil && m.blocks[child]?.pos == "0k")
    mv.hlc.wall = 30
    mv.parent = parent
    mv.pos = "0m"
    m.apply(mv)
    #expect(m.blocks[child]?.parent == parent && m.blocks[child]?.pos == "0m")
    // An older create of the same id on another page wins the page (the move keeps its place).
    var again = Op(hlc: HLC(wall: 5, counter: 0, actor: BlockID(hi: 2, lo: 2)), kind: .createBlock, id: child)
    again.page = other
    again.pos = "0a"
    again.text = "c"
    m.apply(again)
    #expect(m.blocks[child]?.page == other && m.blocks[child]?.parent == parent && m.blocks[child]?.pos == "0m")
    #expect(m.blocks.page(ofRow: m.blocks.find(parent)!) == day)
}

@Test func a_capture_costs_a_32_byte_row_and_its_time_packed() {
    var m = Model()
    let page = BlockID.journalPage(day1)
    _ = create(&m, "2026-12-01T23:58:07.120-05:00", page: page)
    let before = m.blocks.arena.count
    _ = create(&m, "2026-12-01T23:58:07.120-05:00", page: page)
    let perCapture = m.blocks.arena.count - before
    // pos 3, text 2, captured-at 12 (31 unpacked), source 5, end 1, stamp 3.
    #expect(perCapture == 26, "\(perCapture) arena bytes")
    #expect(MemoryLayout<BlockRow>.stride == 32)
}

@Test func a_pages_rows_kept_as_runs_come_back_in_the_order_they_were_created() {
    var rng = SplitMix64(seed: 7)
    for _ in 0..<200 {
        var runs = RowRuns(), list: [UInt32] = []
        var r = UInt32.random(in: 0...10, using: &rng)
        for _ in 0..<Int.random(in: 0...300, using: &rng) {
            // Mostly the next row (a day's captures), sometimes a jump back or ahead, or the same row.
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: r = UInt32.random(in: 0...1000, using: &rng)
            case 1: break
            default: r &+= 1
            }
            runs.append(r)
            list.append(r)
        }
        #expect(Array(runs) == list && runs.count == list.count)
    }
    var edge = RowRuns()
    for r in [UInt32.max - 1, UInt32.max, 0, 1] { edge.append(r) }
    #expect(Array(edge) == [UInt32.max - 1, UInt32.max, 0, 1])
    var day = RowRuns()
    for r in UInt32(5000)..<5100 { day.append(r) }
    // One run; its bytes are not asked: an array's capacity is what malloc gave it, which depends on
    // what else the process allocated (a recycled chunk can be larger than asked).
    #expect(day.runCount == 1, "a day of captures is one run")
}
