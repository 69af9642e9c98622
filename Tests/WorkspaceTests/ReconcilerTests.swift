// Hand edits are never lost: the reconciler against real page files on disk.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

func texts(_ ws: Workspace, _ day: JournalDay = day1) async -> [String] {
    await ws.journalBlocks(day).map(\.text)
}

func fileText(_ path: String) -> String { readText(path) ?? "" }

/// Replaces `old` with `new` in a file, as an editor would (write in place).
func handEdit(_ path: String, _ old: String, _ new: String) throws {
    let t = fileText(path)
    #expect(t.contains(old), "the file should contain \(old)")
    try writeText(path, t.replacingOccurrences(of: old, with: new))
}

@Test func hand_edit_then_capture_both_survive() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures([capture("first")])
    _ = try await ws.projectDirtyPages()
    try handEdit(t.journal(day1), "- first", "- first, edited by hand")
    _ = try await ws.appendCaptures([capture("second")])
    _ = try await ws.projectDirtyPages()
    #expect(await texts(ws) == ["first, edited by hand", "second"])
    let f = fileText(t.journal(day1))
    #expect(f.contains("- first, edited by hand") && f.contains("- second"))
    #expect(await ws.check().isEmpty)
    await ws.close()
    // And the edit is in the op log, not only in the file.
    let again = try t.open()
    #expect(await texts(again) == ["first, edited by hand", "second"])
}

@Test func stale_editor_buffer_after_capture_keeps_the_capture() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures([capture("alpha"), capture("beta")])
    _ = try await ws.projectDirtyPages()
    let editorBuffer = fileText(t.journal(day1))      // the editor opens the file
    _ = try await ws.appendCaptures([capture("landed while the editor was open")])
    _ = try await ws.projectDirtyPages()
    #expect(fileText(t.journal(day1)).contains("landed while"))
    // The editor saves its stale buffer with an edit.
    try writeText(t.journal(day1), editorBuffer.replacingOccurrences(of: "- beta", with: "- beta (edited)"))
    try await ws.reconcile(path: t.journal(day1))
    _ = try await ws.projectDirtyPages()
    #expect(await texts(ws) == ["alpha", "beta (edited)", "landed while the editor was open"])
    let f = fileText(t.journal(day1))
    #expect(f.contains("landed while the editor was open") && f.contains("beta (edited)"))
}

@Test func hand_deleted_block_stays_deleted() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let doomed = capture("delete me")
    _ = try await ws.appendCaptures([doomed])
    _ = try await ws.projectDirtyPages()
    _ = try await ws.appendCaptures([capture("keep me")])
    _ = try await ws.projectDirtyPages()
    // Remove the block's lines (bullet and its properties) by hand.
    let lines = fileText(t.journal(day1)).split(separator: "\n", omittingEmptySubsequences: false)
    let start = lines.firstIndex(of: "- delete me")!
    var kept = lines
    kept.removeSubrange(start..<(start + 2))  // its bullet line and its id::
    try writeText(t.journal(day1), kept.joined(separator: "\n"))
    try await ws.reconcile(path: t.journal(day1))
    #expect(await texts(ws) == ["keep me"])
    // A replay of the same capture (the drain crashed before deleting its file) does not bring it back.
    #expect(try await ws.appendCaptures([doomed]) == [.alreadyPresent])
    _ = try await ws.projectDirtyPages()
    #expect(!fileText(t.journal(day1)).contains("delete me"))
    await ws.close()
    let again = try t.open()
    #expect(await texts(again) == ["keep me"])
}

@Test func crash_between_op_and_projection_is_fixed_at_boot() async throws {
    let t = TestWorkspace()
    do {
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("projected")])
        _ = try await ws.projectDirtyPages()
        _ = try await ws.appendCaptures([capture("durable but never projected")])
        await ws.close()   // "crash": the op is durable, the page file is stale
    }
    let before = fileText(t.journal(day1))
    #expect(!before.contains("never projected"))
    let ws = try t.open()
    let written = try await ws.projectDirtyPages()
    #expect(written == [t.journal(day1)])
    #expect(await texts(ws) == ["projected", "durable but never projected"])
    let opsBefore = await ws.bootSummary.ops
    await ws.close()
    let again = try t.open()
    #expect(await again.bootSummary.ops == opsBefore, "no edits were invented")
    #expect(await again.check().isEmpty)
}

@Test func hand_written_blocks_and_pages_become_ops_with_ids() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures([capture("captured")])
    _ = try await ws.projectDirtyPages()
    try writeText(t.journal(day1), fileText(t.journal(day1)) + "- typed by hand\n  - a child\n")
    try Durable.makeDirectory(Path.join(t.root, "pages"), mode: 0o755)
    try writeText(Path.join(t.root, "pages/My page.md"), "- hello page\n")
    try await ws.reconcileAll()
    _ = try await ws.projectDirtyPages()
    let got = await texts(ws)
    #expect(got == ["captured", "typed by hand", "a child"], "\(got) file:\n\(fileText(t.journal(day1)))")
    let f = fileText(t.journal(day1))
    #expect(f.contains("- typed by hand\n  id:: ") && f.contains("  - a child\n    id:: "))
    #expect(fileText(Path.join(t.root, "pages/My page.md")).hasPrefix("- hello page\n  id:: "))
    #expect(await ws.check().isEmpty)
    // Reconciling again changes nothing.
    let ops = await ws.bootSummary.ops
    try await ws.reconcileAll()
    #expect(try await ws.projectDirtyPages().isEmpty)
    _ = ops
}

@Test func hand_moved_block_keeps_its_new_place() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures([capture("one"), capture("two"), capture("three")])
    _ = try await ws.projectDirtyPages()
    let f = fileText(t.journal(day1))
    let blocks = f.components(separatedBy: "- ").filter { !$0.isEmpty }
    try writeText(t.journal(day1), "- " + blocks[2] + "- " + blocks[0] + "- " + blocks[1])
    try await ws.reconcile(path: t.journal(day1))
    #expect(await texts(ws) == ["three", "one", "two"])
}

@Test func projection_writes_only_pages_that_changed() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let other = JournalDay(year: 2026, month: 12, day: 3)!
    _ = try await ws.appendCaptures([capture("a"), capture("b", day: other)])
    #expect(Set(try await ws.projectDirtyPages()) == [t.journal(day1), t.journal(other)])
    _ = try await ws.appendCaptures([capture("c", day: other)])
    #expect(try await ws.projectDirtyPages() == [t.journal(other)])
    #expect(try await ws.projectDirtyPages() == [])
}

/// Issue 48, finding 4: `dd` in vim on a block's bullet line alone deletes that block; its property
/// lines left behind never join the block above (no second capture time, no duplicate key).
@Test(arguments: ["the last block", "a block in the middle", "a typed block"])
func deleting_only_a_blocks_bullet_line_deletes_that_block(_ which: String) async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let page = t.journal(day1)
    _ = try await ws.appendCaptures([capture("first"), capture("second")])
    if which == "a typed block" {
        _ = try await ws.projectDirtyPages()
        try writeText(page, fileText(page) + "- typed here\n")
        try await ws.reconcile(path: page, origin: .editedHere)
    } else {
        _ = try await ws.appendCaptures([capture("last capture")])
    }
    _ = try await ws.projectDirtyPages()
    let gone = which == "a block in the middle" ? "second" : which == "a typed block" ? "typed here" : "last capture"
    let before = fileText(page)
    #expect(before.contains("- \(gone)\n"))
    try writeText(page, before.replacingOccurrences(of: "- \(gone)\n", with: ""))
    try await ws.reconcile(path: page, origin: .editedHere)
    _ = try await ws.projectDirtyPages()
    let all = which == "a typed block" ? ["first", "second", "typed here"] : ["first", "second", "last capture"]
    #expect(await texts(ws) == all.filter { $0 != gone }, "\(fileText(page))")
    let after = fileText(page)
    let details = await ws.journalMarkdown(day1, details: true) ?? ""
    #expect(details.components(separatedBy: "captured-at::").count - 1 == 2, "a block gained another's record:\n\(details)")
    #expect(!after.contains("captured-at::") && !after.contains("source::"), "\(after)")
    #expect(after.components(separatedBy: "id::").count - 1 == 2, "\(after)")
    #expect(!after.contains(gone), "\(after)")
    // No op holds a key twice.
    let ops = ((try? Sys.readDirectory(Path.join(t.root, ".outl/ops"))) ?? []).map { fileText(Path.join(t.root, ".outl/ops/\($0)")) }.joined()
    for line in ops.split(separator: "\n") {
        #expect(line.components(separatedBy: "\"captured-at\"").count <= 2 && line.components(separatedBy: "\"source\"").count <= 2, "\(line)")
    }
    #expect(await ws.check().isEmpty)
    await ws.close()
}

@Test func a_key_given_twice_in_a_block_is_the_last_one_given() {
    let page = Markdown.parse(Array("- text\n  tags:: a\n  tags:: b\n  id:: 01a251c9-4279-7d22-930f-ac4ea0d6e3ca\n  other:: x\n".utf8))
    #expect(page.blocks.count == 1)
    #expect(page.blocks[0].props.map(\.key) == ["tags", "other"] && page.blocks[0].props.map(\.value) == ["b", "x"], "\(page.blocks[0].props)")
    #expect(page.blocks[0].id?.description == "01a251c9-4279-7d22-930f-ac4ea0d6e3ca")
}
