// An editor's stale buffer (saved after outld wrote the ids it lacks) never creates its blocks again:
// an id-less block is first the live block of the page the file lacks (Reconciler.identify).
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// How many ops this workspace's op files hold (every device's).
func opCount(_ root: String) -> Int {
    let dir = Path.join(root, ".outl/ops")
    let names = (try? Sys.readDirectory(dir)) ?? []
    return names.filter { $0.hasSuffix(".jsonl") }.reduce(0) { n, name in
        n + fileText(Path.join(dir, name)).split(separator: "\n").count
    }
}

@Suite struct StaleSaveTests {
    @Test(arguments: ["in place", "by rename"])
    func a_stale_save_matches_blocks_it_lacks_ids_for(saved how: String) async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0   // a save by rename is another producer's file: judged at once here
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("captured")])
        _ = try await ws.projectDirtyPages()
        // The person types a line; outld takes it and writes its id under it.
        let buffer = fileText(page) + "- new line\n"
        try writeText(page, buffer)
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(fileText(page).contains("- new line\n  id:: "))
        func save(_ text: String) async throws {
            if how == "in place" { try writeText(page, text) } else { try saveLikeGedit(page, text) }
            try await ws.reconcile(path: page)
            _ = try await ws.projectDirtyPages()
        }
        // The editor still holds its buffer without that id and saves it, with an edit of the line.
        let edited = buffer.replacingOccurrences(of: "- new line", with: "- new line, edited")
        try await save(edited)
        #expect(await texts(ws) == ["captured", "new line, edited"], "saved \(how):\n\(fileText(page))")
        let ops = opCount(t.root)
        // The same buffer again, and the unedited one: no block is made again, no op is added.
        try await save(edited)
        try await save(edited)
        #expect(await texts(ws) == ["captured", "new line, edited"], "saved \(how):\n\(fileText(page))")
        #expect(opCount(t.root) == ops, "identical stale saves added ops")
        // The buffer with another line: that line alone is new.
        try await save(edited + "- another line\n")
        #expect(await texts(ws) == ["captured", "new line, edited", "another line"], "saved \(how):\n\(fileText(page))")
        #expect(opCount(t.root) == ops + 1)
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    /// A block another device's person typed comes here by its ops, with its id in every projection
    /// of it: a buffer loaded before it arrived never showed it, so a line typed at its place is the
    /// person's own, never that block edited (issue 48: a file changes only what it showed).
    @Test func a_line_typed_where_another_devices_typed_block_arrived_is_a_new_block() async throws {
        let t = TwoDevices()
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("shared")]) }
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        // a's editor loads the page; b's person types a line at its end, taken by b's outld.
        let buffer = fileText(t.journal("a"))
        try await t.session("b") { ws in
            try writeText(t.journal("b"), fileText(t.journal("b")) + "- typed on b\n")
            try await ws.reconcile(path: t.journal("b"), origin: .editedHere)
        }
        try t.syncOps(from: "b", to: "a")
        try await t.session("a")
        #expect(fileText(t.journal("a")).contains("- typed on b\n  id:: "))
        // a's editor saves its buffer with a line typed at the same place.
        try await t.session("a") { ws in
            try writeText(t.journal("a"), buffer + "- typed on a\n")
            try await ws.reconcile(path: t.journal("a"), origin: .editedHere)
        }
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        // Both typed at the page's end, neither having seen the other's: in either order, the same on both.
        let a = try await t.texts("a")
        #expect(a.first == "shared" && Set(a) == ["shared", "typed on b", "typed on a"] && a.count == 3, "\(fileText(t.journal("a")))")
        #expect(try await t.texts("b") == a)
    }

    @Test func a_stale_save_of_a_typed_block_and_its_child_makes_neither_again() async throws {
        // The parent is its block by equal text; the child, edited, by its gap under that parent.
        let t = TestWorkspace()
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("captured")])
        _ = try await ws.projectDirtyPages()
        let buffer = fileText(page) + "- typed\n  - its child\n"
        try writeText(page, buffer)
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        try writeText(page, buffer.replacingOccurrences(of: "its child", with: "its child, edited"))
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["captured", "typed", "its child, edited"], "\(fileText(page))")
        let f = fileText(page)
        #expect(f.components(separatedBy: "  id:: ").count == 4, "every block has its one id:\n\(f)")
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    @Test func a_second_line_with_an_existing_blocks_text_is_a_new_block() async throws {
        // Matching is only to blocks the file lacks: the file holds "same" by id, so a second "same"
        // a person types is theirs.
        let t = TestWorkspace()
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("same")])
        _ = try await ws.projectDirtyPages()
        try writeText(page, fileText(page) + "- same\n")
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["same", "same"])
        await ws.close()
    }

    @Test func a_pasted_second_copy_of_an_id_is_a_new_block() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("one"), capture("two")])
        _ = try await ws.projectDirtyPages()
        // The person copies "one" (with its id line) below itself.
        let f = fileText(page)
        let one = f.components(separatedBy: "- two")[0]
        try writeText(page, one + one.replacingOccurrences(of: "- one", with: "- one, copied") + "- two" + f.components(separatedBy: "- two")[1])
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["one", "one, copied", "two"], "\(fileText(page))")
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    /// The newest projection less some blocks is a hand deletion; with two blocks also swapped it
    /// may be an editor's buffer read before the block it lacks arrived, and deletes only what the
    /// buffer proves it was read with (it holds a block that came to the file after that one did).
    @Test func a_buffer_that_also_reorders_deletes_only_what_it_proves_it_was_read_with() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        let page = t.journal(day1)
        func land(_ text: String) async throws {
            _ = try await ws.appendCaptures([capture(text)])
            _ = try await ws.projectDirtyPages()
        }
        /// The file's top-level blocks, as the person's editor shows them now.
        func blocks() -> [FileBlock] { fileBlocks(fileText(page)).blocks }
        func save(_ kept: [FileBlock]) async throws {
            try writeText(page, fileText(preamble: [], blocks: kept))
            try await ws.reconcile(path: page, origin: .editedHere)
            _ = try await ws.projectDirtyPages()
        }
        try await land("one")
        try await land("two")
        let buffer = blocks()
        try await land("three")
        // A buffer read before "three" landed, with "one" and "two" swapped: it lacks "three"
        // because it predates it, and holds nothing that came to the file after "three" did.
        try await save([buffer[1], buffer[0]])
        #expect(await texts(ws) == ["two", "one", "three"], "\(fileText(page))")
        // The newest projection less a block, and nothing else changed: a deletion by hand.
        let now = blocks()
        try await save([now[0], now[2]])
        #expect(await texts(ws) == ["two", "three"], "\(fileText(page))")
        // "two" came to the file before "three", which the buffer holds: read with "two", whatever
        // else it changed, so its absence is the person's deletion.
        try await land("four")
        let last = blocks()
        try await save([last[2], last[1]])  // "four", "three": swapped, "two" left out
        #expect(await texts(ws) == ["four", "three"], "\(fileText(page))")
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    /// Issue 48, finding 1, as a person meets it: a line typed in a buffer loaded before a capture
    /// landed is a new block, never that capture edited (the buffer never showed it).
    @Test(arguments: ["in place", "by rename"])
    func a_line_typed_in_a_buffer_loaded_before_a_capture_is_not_that_capture_edited(saved how: String) async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0
        let ws = try t.open()
        let page = t.journal(day1)
        func save(_ text: String) async throws {
            if how == "in place" { try writeText(page, text) } else { try saveLikeGedit(page, text) }
            try await ws.reconcile(path: page, origin: .editedHere)
            _ = try await ws.projectDirtyPages()
        }
        _ = try await ws.appendCaptures([capture("alpha")])
        _ = try await ws.projectDirtyPages()
        try await save(fileText(page).replacingOccurrences(of: "- alpha\n", with: "- alpha, edited\n") + "- typed by hand\n")
        _ = try await ws.appendCaptures([capture("beta")])
        _ = try await ws.projectDirtyPages()
        let buffer = fileText(page)  // the editor loads the page now
        _ = try await ws.appendCaptures([capture("gamma")])
        _ = try await ws.projectDirtyPages()
        #expect(fileText(page).contains("- gamma\n"))
        try await save(buffer + "- saved from a stale buffer\n")
        let now = await texts(ws)
        #expect(now == ["alpha, edited", "typed by hand", "beta", "gamma", "saved from a stale buffer"]
                || now == ["alpha, edited", "typed by hand", "beta", "saved from a stale buffer", "gamma"],
                "saved \(how):\n\(fileText(page))")
        // gamma keeps its capture time and source.
        let shown = await ws.journalMarkdown(day1, details: true) ?? ""
        let gamma = shown.components(separatedBy: "- gamma\n").dropFirst().first ?? ""
        #expect(gamma.hasPrefix("  captured-at:: ") && gamma.contains("  source:: cli"), "saved \(how):\n\(shown)")
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    @Test func with_nothing_known_an_id_less_block_is_still_the_block_it_was() throws {
        // .nothingKnown (no projection, no op history): new blocks only, and a block the file holds no
        // id for is first the page's block it lacks.
        let page = BlockID.journalPage(day1)
        var model = Model()
        var p = Op(hlc: HLC(wall: 1, counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .createPage, id: page)
        p.pageKind = .journal; p.text = day1.iso
        model.apply(p)
        let a = BlockID.random(), b = BlockID.random()
        for (n, (id, text)) in [(a, "kept"), (b, "typed")].enumerated() {
            var op = Op(hlc: HLC(wall: 2 + Int64(n), counter: 0, actor: BlockID(hi: 1, lo: 1)), kind: .createBlock, id: id)
            op.page = page; op.pos = PositionKey.between(n == 0 ? nil : model.blocks[a]!.pos, nil); op.text = text
            model.apply(op)
        }
        let file = Markdown.parse(Array("- kept\n  id:: \(a)\n- typed\n- typed\n".utf8))
        let ops = Reconciler.diff(file: file, provenance: .nothingKnown, model: model, page: page, device: BlockID(hi: 1, lo: 1),
                                  mint: { _ in BlockID.random() })
        #expect(ops.map(\.kind) == [.createBlock], "one \"typed\" is the block it was, the other is new: \(ops)")
    }
}

/// Another spelling of a day that cannot be read (a FIFO a peer left) is said once and left; the
/// day's own file is still written, and nothing fails.
@Test func an_unreadable_second_spelling_holds_back_neither_its_page_nor_another() async throws {
    let t = TestWorkspace()
    let said = Said()
    var o = WorkspaceOptions(root: t.root)
    o.stateDirectory = t.state()
    o.log = WorkspaceLog { said.add($0) }
    let ws = try Workspace(options: o)
    _ = try await ws.appendCaptures([capture("before")])
    _ = try await ws.projectDirtyPages()
    let iso = Path.join(t.root, "journals/\(day1.iso).md")
    #expect(mkfifo(iso, 0o644) == 0)
    for text in ["after one", "after two"] {
        _ = try await ws.appendCaptures([capture(text)])
        _ = try await ws.projectDirtyPages()
    }
    #expect(fileText(t.journal(day1)).contains("- after two"), "\(fileText(t.journal(day1)))")
    #expect(await ws.failingPages.isEmpty)
    #expect(said.lines.filter { $0.contains(iso) }.count == 1, "\(said.lines)")
    var st = stat()
    #expect(lstat(iso, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO, "the FIFO is left as it is")
    await ws.close()
}

/// Log lines a workspace says, collected from whatever thread it says them on.
final class Said: @unchecked Sendable {
    private let lock = NSLock()
    private var all: [String] = []
    func add(_ s: String) { lock.lock(); all.append(s); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return all }
}
