// Two devices syncing one workspace folder never lose a line: two roots with their own state dirs, and
// a "sync tool" that copies op files and page files between them (temp file + rename, as Syncthing and
// rsync do) in every order one could: md before ops, ops before md, a stale md late, both capturing.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

final class TwoDevices {
    let dir = TempDir("outl-sync")
    func root(_ d: String) -> String { dir.sub("root-\(d)") }

    init() {
        // Both folders are shared by Syncthing, which marks each with .stfolder.
        for d in ["a", "b"] { try? Durable.makeDirectory(Path.join(root(d), ".stfolder"), mode: 0o755) }
    }

    /// How long other devices' op files must be quiet before unexplained page content is taken
    /// as an edit: 0 (at once) unless a test is about that wait.
    var syncSettleMs: Int64 = 0
    /// Each device's outld.conf page-properties (none unless set).
    var pageProperties: [String: PageProperties] = [:]
    /// What the devices' workspaces said (warnings and notes), in order, each line after its device.
    final class Said: @unchecked Sendable {
        private(set) var lines: [String] = []
        func add(_ s: String) { lines.append(s) }
    }
    let said = Said()

    func open(_ d: String) throws -> Workspace {
        var o = WorkspaceOptions(root: root(d))
        o.stateDirectory = dir.sub("state-\(d)")
        let said = said
        o.log = WorkspaceLog(sink: { _, message, _ in said.add("\(d): \(message)") })
        o.pageProperties = pageProperties[d] ?? .none
        o.syncSettleMs = syncSettleMs
        return try Workspace(options: o)
    }

    /// Opens a device, runs `body`, projects, closes: one session of outld on that device.
    func session(_ d: String, _ body: (Workspace) async throws -> Void = { _ in }) async throws {
        let ws = try open(d)
        _ = try await ws.projectDirtyPages()
        try await body(ws)
        _ = try await ws.projectDirtyPages()
        await ws.close()
    }

    func journal(_ d: String, _ day: JournalDay = day1) -> String {
        Path.join(root(d), "journals/\(day.fileStem).md")
    }

    /// Copies one file the way a sync tool does: a temporary name, then a rename over the target.
    func syncFile(_ rel: String, from: String, to: String) throws {
        let src = Path.join(root(from), rel)
        let dst = Path.join(root(to), rel)
        let bytes = try Durable.readRegularFile(src, limit: 64 << 20)
        let parent = Path.parent(of: dst)
        try Durable.makeDirectory(Path.parent(of: parent), mode: 0o755)
        try Durable.makeDirectory(parent, mode: 0o755)
        let tmp = Path.join(parent, ".syncthing.\(Path.lastComponent(dst)).tmp")
        try? Sys.unlink(tmp)
        try Durable.publish(bytes, to: dst, via: tmp)
    }

    func syncOps(from: String, to: String) throws {
        let dir = Path.join(root(from), ".outl/ops")
        try Durable.makeDirectory(Path.join(root(to), ".outl"), mode: 0o755)
        for n in try Sys.readDirectory(dir) where n.hasSuffix(".jsonl") {
            try syncFile(".outl/ops/\(n)", from: from, to: to)
        }
    }

    func syncJournal(from: String, to: String, _ day: JournalDay = day1) throws {
        try syncFile("journals/\(day.fileStem).md", from: from, to: to)
    }

    func texts(_ d: String, _ day: JournalDay = day1) async throws -> [String] {
        let ws = try open(d)
        let t = await ws.journalBlocks(day).map(\.text)
        await ws.close()
        return t
    }
}

/// Both devices capture to the same day while apart; afterwards each has its own projection.
func capturedApart(_ t: TwoDevices) async throws {
    try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("a1 from laptop")]) }
    try await t.session("b") { ws in _ = try await ws.appendCaptures([capture("b1 from desktop")]) }
}

@Test func synced_md_before_ops_keeps_both_devices_captures() async throws {
    let t = TwoDevices()
    try await capturedApart(t)
    try t.syncJournal(from: "a", to: "b")          // A's page (without b1) overwrites B's
    try await t.session("b")
    var f = fileText(t.journal("b"))
    #expect(f.contains("b1 from desktop"), "B's own capture survived A's page:\n\(f)")
    try t.syncOps(from: "a", to: "b")              // A's ops arrive after its page
    try t.syncOps(from: "b", to: "a")
    try t.syncJournal(from: "b", to: "a")
    try await t.session("a")
    try await t.session("b")
    for d in ["a", "b"] {
        let got = try await t.texts(d)
        #expect(got.sorted() == ["a1 from laptop", "b1 from desktop"], "device \(d): \(got)")
        f = fileText(t.journal(d))
        #expect(f.components(separatedBy: "a1 from laptop").count == 2, "one copy of a1 on \(d):\n\(f)")
    }
    #expect(try await t.texts("a") == t.texts("b"), "both devices show the same order")
}

@Test func synced_ops_before_stale_md_keeps_both_devices_captures() async throws {
    let t = TwoDevices()
    try await capturedApart(t)
    try t.syncOps(from: "a", to: "b")
    try t.syncOps(from: "b", to: "a")
    try await t.session("b")                        // B now projects a1 and b1
    try t.syncJournal(from: "a", to: "b")          // then A's page from before it saw b1 lands
    let ws = try t.open("b")
    let opsBefore = await ws.bootSummary.ops
    try await ws.reconcile(path: t.journal("b"))
    _ = try await ws.projectDirtyPages()
    #expect(await ws.journalBlocks(day1).map(\.text).sorted() == ["a1 from laptop", "b1 from desktop"])
    await ws.close()
    let again = try t.open("b")
    #expect(await again.bootSummary.ops == opsBefore, "a stale projection is not an edit: no ops")
    #expect(fileText(t.journal("b")).contains("b1 from desktop"))
    await again.close()
}

@Test func stale_md_arriving_late_undoes_nothing() async throws {
    let t = TwoDevices()
    try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("first"), capture("second")]) }
    let old = try Durable.readRegularFile(t.journal("a"), limit: 1 << 20)   // a copy in flight
    // On A: a hand edit of "first", a third capture, a hand deletion of "second".
    try handEdit(t.journal("a"), "- first", "- first, corrected")
    try await t.session("a") { ws in
        try await ws.reconcile(path: t.journal("a"))
        _ = try await ws.appendCaptures([capture("third")])
    }
    let lines = fileText(t.journal("a")).split(separator: "\n", omittingEmptySubsequences: false)
    let start = lines.firstIndex(of: "- second")!
    var kept = lines
    kept.removeSubrange(start..<(start + 2))  // its bullet line and its id::
    try writeText(t.journal("a"), kept.joined(separator: "\n"))
    try await t.session("a") { ws in try await ws.reconcile(path: t.journal("a")) }
    #expect(try await t.texts("a") == ["first, corrected", "third"])
    // B gets everything, then the stale copy of A's first page arrives last.
    try t.syncOps(from: "a", to: "b")
    try t.syncJournal(from: "a", to: "b")
    try await t.session("b")
    try Durable.makeDirectory(Path.join(t.root("b"), "journals"), mode: 0o755)
    let tmp = Path.join(t.root("b"), "journals/.stale.tmp")
    try Durable.publish(old, to: t.journal("b"), via: tmp)
    try await t.session("b") { ws in try await ws.reconcile(path: t.journal("b")) }
    #expect(try await t.texts("b") == ["first, corrected", "third"], "the stale page changed nothing")
    let f = fileText(t.journal("b"))
    #expect(f.contains("first, corrected") && f.contains("third") && !f.contains("- second"))
}

@Test func concurrent_captures_on_both_devices_converge_in_every_sync_order() async throws {
    for order in 0..<4 {
        let t = TwoDevices()
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("a1"), capture("a2")]) }
        try await t.session("b") { ws in _ = try await ws.appendCaptures([capture("b1"), capture("b2")]) }
        switch order {
        case 0: try t.syncJournal(from: "a", to: "b"); try t.syncOps(from: "a", to: "b")
        case 1: try t.syncOps(from: "a", to: "b"); try t.syncJournal(from: "a", to: "b")
        case 2: try t.syncJournal(from: "a", to: "b"); try await t.session("b"); try t.syncOps(from: "a", to: "b")
        default: try t.syncOps(from: "a", to: "b"); try await t.session("b"); try t.syncJournal(from: "a", to: "b")
        }
        try await t.session("b")
        try t.syncOps(from: "b", to: "a")
        try t.syncJournal(from: "b", to: "a")
        try await t.session("a")
        try await t.session("b")
        let a = try await t.texts("a"), b = try await t.texts("b")
        #expect(a.sorted() == ["a1", "a2", "b1", "b2"], "order \(order): A has \(a)")
        #expect(a == b, "order \(order): A \(a) vs B \(b)")
        #expect(fileText(t.journal("a")) == fileText(t.journal("b")), "order \(order): same page file")
    }
}

@Test func hand_edit_made_on_a_device_without_outl_reaches_the_other_as_an_edit() async throws {
    let t = TwoDevices()
    try await t.session("a") { ws in
        _ = try await ws.appendCaptures([capture("one"), capture("two"), capture("three")])
    }
    try t.syncOps(from: "a", to: "b")
    try t.syncJournal(from: "a", to: "b")
    try await t.session("b")
    // On A, with no outld running: edit "two", delete "one", add a line; then only the page syncs.
    try handEdit(t.journal("a"), "- two", "- two, edited on the laptop")
    let lines = fileText(t.journal("a")).split(separator: "\n", omittingEmptySubsequences: false)
    let start = lines.firstIndex(of: "- one")!
    var kept = lines
    kept.removeSubrange(start..<(start + 2))  // its bullet line and its id::
    try writeText(t.journal("a"), kept.joined(separator: "\n") + "- typed on the laptop\n")
    try t.syncJournal(from: "a", to: "b")
    try await t.session("b") { ws in try await ws.reconcile(path: t.journal("b")) }
    #expect(try await t.texts("b") == ["two, edited on the laptop", "three", "typed on the laptop"])
    // And the edits travel back to A as ops: A converges.
    try t.syncOps(from: "b", to: "a")
    try t.syncJournal(from: "b", to: "a")
    try await t.session("a")
    #expect(try await t.texts("a") == ["two, edited on the laptop", "three", "typed on the laptop"])
}

@Test func a_page_older_than_a_block_never_deletes_it() async throws {
    let t = TwoDevices()
    try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("old")]) }
    try t.syncOps(from: "a", to: "b")
    try t.syncJournal(from: "a", to: "b")
    // B captures; its page is [old, new]. A's page [old] is re-sent (e.g. rsync without -u).
    try await t.session("b") { ws in _ = try await ws.appendCaptures([capture("new on b")]) }
    try t.syncJournal(from: "a", to: "b")
    try await t.session("b") { ws in try await ws.reconcile(path: t.journal("b")) }
    #expect(try await t.texts("b") == ["old", "new on b"])
}

@Test func a_page_file_deleted_by_hand_is_projected_again_and_loses_nothing() async throws {
    // Documented in outl.1 BUGS: deleting a file does not delete its blocks.
    let t = TwoDevices()
    try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("still here")]) }
    try Sys.unlink(t.journal("a"))
    try await t.session("a")
    #expect(fileText(t.journal("a")).contains("- still here"))
    #expect(try await t.texts("a") == ["still here"])
}
