// PageRenderer reuses a block's lines from the page's last rendering when its content and depth are
// unchanged: whatever edits, moves, re-indents, deletes, preambles and cycles come between two
// renderings, the page it writes is byte for byte what Markdown.render writes from scratch.
import Foundation
import SystemCalls
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

/// A block written straight from the table's bytes (`BlockTable.renderStored`: an ASCII plain text,
/// plain keys and values) and every block it declines, side by side on one page: each is what
/// Markdown.render writes, and the declined ones (a drawer, a key with a blank, a value with a line
/// break, non-ASCII, invalid UTF-8 from a peer's op file, nothing plain about the text) are
/// still written, by the slow path.
@Test func blocks_written_from_the_tables_bytes_are_those_markdown_render_writes() throws {
    let t = TestWorkspace()
    let page = BlockID.journalPage(day1)
    let actor = BlockID(hi: 0x0190_0000_0000_7000, lo: 0x8000_0000_0000_0001)
    // A peer's op file whose last block's text is not UTF-8: the table keeps the bytes, the
    // String the slow path reads repairs them.
    var lines: [[UInt8]] = []
    func line(_ body: [UInt8]) -> [UInt8] {
        let crc = String(CRC32C.checksum(body), radix: 16)
        return Array((String(repeating: "0", count: 8 - crc.count) + crc + " ").utf8) + body + [10]
    }
    lines.append(line(Array(#"{"k":"cp","w":1796000000000,"c":0,"a":"\#(actor)","id":"\#(page)","pk":"j","t":"\#(day1.iso)"}"#.utf8)))
    lines.append(line(Array(#"{"k":"cb","w":1796000000000,"c":1,"a":"\#(actor)","id":"\#(BlockID(hi: 9, lo: 9))","pg":"\#(page)","pa":"","pos":"a0","t":"bad "#.utf8)
                      + [0xFF, 0xC3] + Array(#" bytes","pr":{"source":"x"}}"#.utf8)))
    let ops = Path.join(t.root, ".outl/ops")
    try FileManager.default.createDirectory(atPath: ops, withIntermediateDirectories: true)
    try Data(lines.flatMap { $0 }).write(to: URL(fileURLWithPath: Path.join(ops, "ops-\(actor).jsonl")))
    let core = try openCore(t.root, state: t.state())
    defer { core.close() }
    let cases: [(String, [Property])] = [
        ("plain capture", [Property("captured-at", "2026-12-01T23:58:07.120-05:00"), Property("source", "cli")]),
        ("no properties", []),
        ("a drawer", [Property(":LOGBOOK:", "CLOCK: [2026-12-02 Wed 10:00]")]),
        ("a key with a blank", [Property("two words", "v")]),
        ("a value over lines", [Property("note", "one\ntwo")]),
        ("an empty value", [Property("k", "")]),
        ("café", [Property("source", "cli")]),
        ("plain", [Property("lieu", "café")]),
        ("# a heading", []),
        ("key:: value", []),
        ("", [Property("source", "cli")]),
        ("tab\tinside", []),
        // Past the small room the lines are first tried in: written again into room reckoned first.
        (String(repeating: "a long plain text ", count: 40), [Property("source", "cli")]),
        ("a long value", [Property("note", String(repeating: "v", count: 600))]),
        ("many properties", (0..<30).map { Property("key\($0)", "value \($0)") }
            + [Property("captured-at", "2026-12-01T23:58:07.120-05:00")]),
        // A capture's record in another order than a create writes it, and twice.
        ("source first", [Property("source", "cli"), Property("captured-at", "2026-12-01T23:58:07.120-05:00")]),
        ("captured twice", [Property("captured-at", "t1"), Property("captured-at", "t2"), Property("source", "cli")]),
    ]
    for (k, (text, props)) in cases.enumerated() {
        var op = Op(hlc: HLC(wall: 10 + Int64(k), counter: 0, actor: actor), kind: .createBlock, id: BlockID(hi: 100, lo: UInt64(k)))
        op.page = page; op.pos = "b\(k)"; op.text = text; op.props = props
        _ = core.model.apply(op)
        // Nested under the first, so depth is exercised too.
        var child = op
        child.hlc.wall += 1000; child.id = BlockID(hi: 200, lo: UInt64(k)); child.parent = BlockID(hi: 100, lo: 0); child.pos = "c\(k)"
        _ = core.model.apply(child)
    }
    let rendered = core.render(page), whole = core.renderWhole(page)
    let same = rendered == whole  // bytes: a String would repair the invalid UTF-8 the test is about
    #expect(same, "rendered\n\(String(decoding: rendered, as: UTF8.self))\nwhole\n\(String(decoding: whole, as: UTF8.self))")
    let text = String(decoding: rendered, as: UTF8.self)
    // A capture's record is left out (page-properties none); a typed block's own source is its.
    #expect(text.contains("- plain capture\n  id:: 00000000-0000-0064-0000-000000000000\n"))
    #expect(text.contains("- café\n  source:: cli\n") && !text.contains("captured-at"))
    #expect(text.contains("bad \u{FFFD}"), "invalid UTF-8 is written repaired, as the slow path reads it")
    #expect(text.contains("  note:: \(String(repeating: "v", count: 600))\n") && text.contains("  key29:: value 29\n"))
}
