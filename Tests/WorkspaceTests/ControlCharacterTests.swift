// No CR and no control (C0 other than tab and LF, DEL, C1) ever reaches a page (SPEC 2.2), whatever an op
// carries: the drain's captures are stored normalized, and render writes any other op's CR as a line
// break and a control as U+FFFD. A device reading such a projection makes no edit of it.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

extension Workspace {
    /// Commits ops as they are (as another device's or an older version's op log may hold them).
    func commitAsIs(_ ops: [Op]) throws { try core.commit(ops) }
}

@Suite struct ControlCharacterTests {
    static let dirty = "first\r\nsecond\rthird\u{0}nul \u{7}bell \u{1B}[31mescape\ttab del\u{7F} nel\u{85} csi\u{9B} é"

    @Test func a_capture_with_cr_or_controls_is_stored_and_projected_clean() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture(Self.dirty)])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.journalBlocks(day1).map(\.text) == ["first\nsecond\nthird\u{FFFD}nul \u{FFFD}bell \u{FFFD}[31mescape\ttab del\u{FFFD} nel\u{FFFD} csi\u{FFFD} é"])
        await ws.close()
        let bytes = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        #expect(!bytes.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A || $0 == 0x7F })
        #expect(!String(decoding: bytes, as: UTF8.self).unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("- first\n  id:: "))
    }

    @Test func an_op_carrying_controls_is_projected_without_them_and_makes_no_edit_elsewhere() async throws {
        let t = TwoDevices()
        var ws = try t.open("a")
        let page = BlockID.journalPage(day1)
        var p = Op(hlc: HLC(wall: 0, counter: 0, actor: BlockID(hi: 0, lo: 0)), kind: .createPage, id: page)
        p.pageKind = .journal; p.text = day1.iso
        var b = Op(hlc: p.hlc, kind: .createBlock, id: BlockID.random())
        b.page = page; b.pos = "a0"; b.text = Self.dirty
        b.props = [Property("note", "line\none\u{0}"), Property("when", "   ")]
        try await ws.commitAsIs([p, b])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.check().isEmpty)
        await ws.close()
        let bytes = try Durable.readRegularFile(t.journal("a"), limit: 1 << 20)
        #expect(!bytes.contains { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A || $0 == 0x7F })
        #expect(!String(decoding: bytes, as: UTF8.self).unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        #expect(Markdown.parse(bytes).blocks.first?.props == [Property("note", "line one\u{FFFD}"), Property("when", "")])
        // Device B receives A's page, and later A's ops with a newer edit of the block: the page is a
        // state some op produced (A's projection), not an edit that would undo the newer one.
        try t.syncJournal(from: "a", to: "b")
        ws = try t.open("a")
        var u = Op(hlc: p.hlc, kind: .updateBlock, id: b.id)
        u.text = "edited later"; u.props = b.props
        try await ws.commitAsIs([u])
        await ws.close()
        try t.syncOps(from: "a", to: "b")
        ws = try t.open("b")
        let before = await ws.bootSummary.ops
        try await ws.reconcileAll()
        _ = try await ws.projectDirtyPages()
        await ws.close()
        ws = try t.open("b")
        #expect(await ws.bootSummary.ops == before, "B recorded an edit no person made")
        #expect(await ws.journalBlocks(day1).map(\.text) == ["edited later"])
        await ws.close()
    }
}
