// The page-file limit, on real files: no page file is written that the reader would refuse, whatever
// the ops hold. A page over the limit holds back its largest blocks (the same ones on every device,
// whatever order the ops arrived in) and says which device made them; a file without them deletes
// none of them; a hand-typed block too large for one op is refused and its file left as it is.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

extension Workspace {
    /// The page-file limit, made small so a test reaches it with a few blocks.
    func limitPages(to bytes: Int) { core.maxPageBytes = bytes }
}

@Suite struct PageSizeLimitTests {
    static let limit = 4096

    func lines(_ n: Int, _ tag: String) -> String { (1...n).map { "\(tag) line \($0) of a long paste" }.joined(separator: "\n") }

    func open(_ t: TestWorkspace, log: WorkspaceLog = .silent) throws -> Workspace {
        var o = WorkspaceOptions(root: t.root)
        o.stateDirectory = t.state()
        o.log = log
        o.syncSettleMs = 0
        return try Workspace(options: o)
    }

    @Test func a_page_over_the_limit_holds_back_its_largest_block_and_shows_the_rest() async throws {
        let t = TestWorkspace()
        var logged: [String] = []
        let ws = try open(t, log: WorkspaceLog { logged.append($0) })
        await ws.limitPages(to: Self.limit)
        let big = capture(lines(200, "big")), small = (1...5).map { capture("small \($0)") }
        _ = try await ws.appendCaptures([small[0], small[1], big, small[2], small[3], small[4]])
        _ = try await ws.projectDirtyPages()
        let bytes = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        #expect(bytes.count <= Self.limit)
        #expect(Markdown.parse(bytes).blocks.map(\.text) == (1...5).map { "small \($0)" })
        #expect(await ws.failingPages.isEmpty)
        let held = logged.filter { $0.contains(big.id) }
        #expect(held.count == 1 && held[0].contains("device ") && held[0].contains("is not shown"), "\(logged)")
        #expect(await ws.check().contains { $0.contains(big.id) && $0.contains("is not shown") })
        // The block is in the model and the op log: within a larger limit the page shows it again.
        _ = try await ws.appendCaptures([capture("small 6")])
        _ = try await ws.projectDirtyPages()
        #expect(logged.filter { $0.contains(big.id) }.count == 1, "said once: \(logged)")
        await ws.limitPages(to: 1 << 20)
        _ = try await ws.appendCaptures([capture("small 7")])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.journalBlocks(day1).count == 8)
        let shown = Markdown.parse(try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)).blocks.map(\.text)
        #expect(shown.count == 8 && shown[2] == lines(200, "big"), "\(shown)")
        #expect(logged.contains { $0.contains("every block is shown again") }, "\(logged)")
        await ws.close()
    }

    @Test func a_held_back_block_goes_with_its_nested_blocks() async throws {
        let t = TestWorkspace()
        let ws = try open(t)
        await ws.limitPages(to: Self.limit)
        let parent = BlockID.random(), child = BlockID.random(), other = BlockID.random()
        let page = BlockID.journalPage(day1)
        var p = Op(hlc: HLC(wall: 1, counter: 0, actor: BlockID.random()), kind: .createPage, id: page)
        p.pageKind = .journal; p.text = day1.iso
        var a = Op(hlc: p.hlc, kind: .createBlock, id: parent)
        a.page = page; a.pos = "a0"; a.text = lines(200, "parent")
        var c = Op(hlc: p.hlc, kind: .createBlock, id: child)
        c.page = page; c.parent = parent; c.pos = "a0"; c.text = "the child"
        var o = Op(hlc: p.hlc, kind: .createBlock, id: other)
        o.page = page; o.pos = "a1"; o.text = "another"
        try await ws.commitAsIs([p, a, c, o])
        _ = try await ws.projectDirtyPages()
        let bytes = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let md = Markdown.parse(bytes)
        #expect(md.blocks.map(\.text) == ["another"] && md.blocks[0].children.isEmpty, "\(String(decoding: bytes, as: UTF8.self))")
        #expect(await ws.check().contains { $0.contains(parent.description) })
        await ws.close()
    }

    /// Two devices with the same ops write the same page: which blocks are held back depends on the
    /// blocks, not on which device's ops came first (blocks of one size tie by id).
    @Test func the_blocks_held_back_do_not_depend_on_arrival_order() async throws {
        let t = TwoDevices()
        for d in ["a", "b"] {
            let ws = try t.open(d)
            await ws.limitPages(to: Self.limit)
            // Same size on both devices: the tie is broken by id.
            _ = try await ws.appendCaptures([capture(lines(60, "big from \(d)")), capture("small from \(d)")])
            _ = try await ws.projectDirtyPages()
            await ws.close()
        }
        try t.syncOps(from: "a", to: "b")
        try t.syncOps(from: "b", to: "a")
        for d in ["a", "b"] {
            let ws = try t.open(d)
            await ws.limitPages(to: Self.limit)
            _ = try await ws.mergeForeignOps()
            _ = try await ws.projectDirtyPages()
            #expect(await ws.journalBlocks(day1).count == 4, "device \(d) holds every block in its model")
            await ws.close()
        }
        let a = try Durable.readRegularFile(t.journal("a"), limit: 1 << 20)
        let b = try Durable.readRegularFile(t.journal("b"), limit: 1 << 20)
        #expect(a == b, "the devices wrote different pages:\n\(String(decoding: a, as: UTF8.self))\n--\n\(String(decoding: b, as: UTF8.self))")
        #expect(a.count <= Self.limit)
        let texts = Markdown.parse(a).blocks.map(\.text)
        #expect(texts.contains("small from a") && texts.contains("small from b") && texts.count == 3, "\(texts)")
    }

    @Test func a_hand_edit_of_a_page_holding_back_blocks_deletes_none_of_them() async throws {
        let t = TestWorkspace()
        var ws = try open(t)
        await ws.limitPages(to: Self.limit)
        let big = capture(lines(200, "big"))
        _ = try await ws.appendCaptures([capture("small 1"), big, capture("small 2")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        // A person edits the file (which lacks the big block), with outld down, then with it up.
        var text = String(decoding: try Durable.readRegularFile(t.journal(day1), limit: 1 << 20), as: UTF8.self)
        text = text.replacingOccurrences(of: "- small 2", with: "- small 2, edited") + "- typed by hand\n"
        try putFile(t.journal(day1), Array(text.utf8))
        ws = try open(t)
        await ws.limitPages(to: Self.limit)
        try await ws.reconcile(path: t.journal(day1), origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        let blocks = await ws.journalBlocks(day1)
        #expect(blocks.map(\.text).contains(lines(200, "big")), "the held-back block was deleted")
        #expect(blocks.map(\.text).contains("small 2, edited") && blocks.map(\.text).contains("typed by hand"))
        await ws.close()
        let ops = try OpLogFiles.all(t.root)
        #expect(!ops.contains { $0.contains(#""k":"db""#) }, "a delete op nobody made")
    }

    /// A block a person typed that no op line could carry (over 4 MiB) is not taken: the next start
    /// would skip its line, and the rewritten file would no longer hold it.
    @Test func a_hand_typed_block_too_large_for_one_op_is_refused_and_its_file_left_as_it_is() async throws {
        let t = TestWorkspace()
        let ws = try open(t)
        _ = try await ws.appendCaptures([capture("a capture")])
        _ = try await ws.projectDirtyPages()
        let huge = String(repeating: "pasted words ", count: (5 << 20) / 13)
        let before = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let edited = before + Array("- \(huge)\n- a small line typed after it\n".utf8)
        try putFile(t.journal(day1), edited)
        try await ws.reconcile(path: t.journal(day1), origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        let failing = await ws.failingPages
        #expect(failing.count == 1 && failing[0].reason.contains("over the 4 MiB an op may be"), "\(failing)")
        #expect(try Durable.readRegularFile(t.journal(day1), limit: 64 << 20) == edited, "the file was rewritten")
        // Another day still lands.
        let other = JournalDay(year: 2026, month: 12, day: 3)!
        _ = try await ws.appendCaptures([capture("the next day", day: other)])
        _ = try await ws.projectDirtyPages()
        #expect(String(decoding: try Durable.readRegularFile(t.journal(other), limit: 1 << 20), as: UTF8.self).contains("the next day"))
        await ws.close()
        #expect(try OpLogFiles.all(t.root).allSatisfy { $0.utf8.count < OpFileCursor.maxLineBytes })
        #expect(try !OpLogFiles.all(t.root).contains { $0.contains("a small line typed after it") }, "part of the file was taken")
    }
}

/// Every line of every op file in the workspace.
enum OpLogFiles {
    static func all(_ root: String) throws -> [String] {
        let dir = Path.join(root, ".outl/ops")
        return try Sys.readDirectory(dir).filter { $0.hasSuffix(".jsonl") }.flatMap { n in
            String(decoding: try Durable.readRegularFile(Path.join(dir, n), limit: 256 << 20), as: UTF8.self)
                .split(separator: "\n").map(String.init)
        }
    }
}
