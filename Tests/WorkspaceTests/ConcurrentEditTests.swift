// Two devices' concurrent edits of one block never drop anyone's words silently (issue 48, finding 3):
// the later text stays in the block and the other is kept as a sibling block marked as a concurrent
// edit of it, on every device, whatever order the ops arrive in; an edit that brings back a block this
// device deleted is said here.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// Two devices with their own folders, synced by hand (op files only, as when `journals/` is not
/// synced, or both ways for pages too), each editing its own page file in place as a person does.
@Suite(.serialized) struct ConcurrentEditTests {
    /// A hand edit of `old` to `new` in device `d`'s page, taken by its outld.
    func edit(_ t: TwoDevices, _ d: String, _ old: String, _ new: String) async throws {
        try await t.session(d) { ws in
            try handEdit(t.journal(d), old, new)
            try await ws.reconcile(path: t.journal(d), origin: .editedHere)
        }
    }

    /// Both devices' op files exchanged, then a session on each (a live merge and a projection).
    func join(_ t: TwoDevices) async throws {
        try t.syncOps(from: "a", to: "b")
        try t.syncOps(from: "b", to: "a")
        try await t.session("a")
        try await t.session("b")
    }

    /// Two captures known to both devices; then, apart, b's person deletes "keep or not".
    func deletedOnBApart() async throws -> TwoDevices {
        let t = TwoDevices()
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("stays"), capture("keep or not")]) }
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        try await t.session("b") { ws in
            try writeText(t.journal("b"), withoutBlock(fileText(t.journal("b")), "keep or not"))
            try await ws.reconcile(path: t.journal("b"), origin: .editedHere)
        }
        #expect(try await t.texts("b") == ["stays"])
        return t
    }

    /// Device b's workspace, opened as its outld does, with what it says.
    func openB(_ t: TwoDevices) throws -> (Workspace, Said) {
        let said = Said()
        var o = WorkspaceOptions(root: t.root("b"))
        o.stateDirectory = t.dir.sub("state-b")
        o.log = WorkspaceLog { _, m, _ in said.add(m) }
        o.syncSettleMs = 0
        return (try Workspace(options: o), said)
    }

    /// A capture made on a, known to both devices before they part.
    func sharedCapture(_ t: TwoDevices, _ text: String) async throws {
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture(text)]) }
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        #expect(try await t.texts("b") == [text])
    }

    @Test(arguments: ["a first", "b first"])
    func two_devices_editing_one_block_apart_both_keep_every_word(_ order: String) async throws {
        let t = TwoDevices()
        try await sharedCapture(t, "call the plumber")
        // Apart: each person edits the same line.
        let first = order == "a first" ? "a" : "b", second = order == "a first" ? "b" : "a"
        try await edit(t, first, "- call the plumber", "- call the plumber before friday (\(first))")
        try await edit(t, second, "- call the plumber", "- call the plumber, ask about the boiler (\(second))")
        try await join(t)
        let a = try await t.texts("a"), b = try await t.texts("b")
        #expect(a == b, "the devices differ: \(a) against \(b)")
        #expect(Set(a) == ["call the plumber before friday (\(first))", "call the plumber, ask about the boiler (\(second))"], "\(a)")
        // The later edit is in the block; the other is the block after it, marked.
        let page = fileText(t.journal("a"))
        #expect(page.contains("concurrent-edit-of:: "), "\(page)")
        #expect(fileText(t.journal("b")) == page)
        // Joined again: nothing more is made.
        let ops = opCount(t.root("a"))
        try await join(t)
        #expect(try await t.texts("a") == a)
        #expect(opCount(t.root("a")) == ops, "joining again wrote ops")
    }

    /// An editor's buffer (saved in place here), or a phone's copy (no outld; its whole file comes by
    /// a sync tool's rename: another producer's file), loaded before b's edit of a line arrived, is
    /// saved with its own edit of that line. Both texts stay, on both devices: the edit names the
    /// text a projected before (FileDiff.sawText), not the current one it never saw.
    @Test(arguments: ["a stale buffer saved in place", "a phone's save by rename"])
    func an_edit_of_a_line_loaded_before_another_devices_edit_arrived_keeps_both_texts(_ how: String) async throws {
        let t = TwoDevices()
        try await sharedCapture(t, "buy oat milk")
        let buffer = fileText(t.journal("a"))
        try await edit(t, "b", "- buy oat milk", "- buy oat milk and bread")
        try t.syncOps(from: "b", to: "a")
        try await t.session("a")
        #expect(try await t.texts("a") == ["buy oat milk and bread"])
        try await t.session("a") { ws in
            let saved = buffer.replacingOccurrences(of: "- buy oat milk", with: "- buy oat milk, two litres")
            if how.hasPrefix("a phone") {
                try saveLikeGedit(t.journal("a"), saved)
                try await ws.reconcile(path: t.journal("a"))
            } else {
                try writeText(t.journal("a"), saved)
                try await ws.reconcile(path: t.journal("a"), origin: .editedHere)
            }
        }
        try await join(t)
        for d in ["a", "b"] {
            #expect(Set(try await t.texts(d)) == ["buy oat milk and bread", "buy oat milk, two litres"], "\(how), device \(d):\n\(fileText(t.journal(d)))")
        }
        #expect(fileText(t.journal("a")).contains("concurrent-edit-of:: "))
        #expect(fileText(t.journal("a")) == fileText(t.journal("b")))
    }

    @Test func sequential_edits_are_no_concurrent_edit() async throws {
        let t = TwoDevices()
        try await sharedCapture(t, "draft")
        try await edit(t, "a", "- draft", "- draft two")
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        try await edit(t, "b", "- draft two", "- draft three")
        try await join(t)
        #expect(try await t.texts("a") == ["draft three"])
        #expect(try await t.texts("b") == ["draft three"])
        #expect(!fileText(t.journal("a")).contains("concurrent-edit-of"))
    }

    @Test func an_edit_that_brings_back_a_block_deleted_here_is_said_here() async throws {
        let t = try await deletedOnBApart()
        try await edit(t, "a", "- keep or not", "- keep, edited on a")
        // b's outld runs when a's ops arrive.
        let (ws, said) = try openB(t)
        try t.syncOps(from: "a", to: "b")
        _ = try await ws.mergeForeignOps()
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["stays", "keep, edited on a"])
        #expect(said.lines.contains { $0.contains("deleted on this device") && $0.contains("keep, edited on a") }, "\(said.lines)")
        await ws.close()
    }
    /// The phone's file shows the device's edit (it synced before the phone's person edited): no
    /// concurrent edit, one line, the phone's.
    @Test func a_phones_edit_of_the_text_it_showed_is_no_concurrent_edit() async throws {
        let t = TwoDevices()
        try await sharedCapture(t, "draft")
        try await edit(t, "a", "- draft", "- draft two")
        let phone = fileText(t.journal("a"))
        try await t.session("a") { ws in
            try saveLikeGedit(t.journal("a"), phone.replacingOccurrences(of: "- draft two", with: "- final wording"))
            try await ws.reconcile(path: t.journal("a"))
        }
        #expect(try await t.texts("a") == ["final wording"], "\(fileText(t.journal("a")))")
        #expect(!fileText(t.journal("a")).contains("concurrent-edit-of"))
    }

    /// A phone's edit of a line a person here deleted meanwhile brings it back, and is said here.
    @Test func a_phones_edit_that_brings_back_a_block_deleted_here_is_said_here() async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0
        let said = Said()
        var o = WorkspaceOptions(root: t.root)
        o.stateDirectory = t.state()
        o.log = WorkspaceLog { _, m, _ in said.add(m) }
        o.syncSettleMs = 0
        let ws = try Workspace(options: o)
        let page = t.journal(day1)
        _ = try await ws.appendCaptures([capture("stays"), capture("keep or not")])
        _ = try await ws.projectDirtyPages()
        let phone = fileText(page)
        try writeText(page, withoutBlock(phone, "keep or not"))
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["stays"])
        try saveLikeGedit(page, phone.replacingOccurrences(of: "- keep or not", with: "- keep, edited on the phone"))
        try await ws.reconcile(path: page)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["stays", "keep, edited on the phone"])
        #expect(said.lines.contains { $0.contains("deleted on this device") && $0.contains("written elsewhere") }, "\(said.lines)")
        await ws.close()
        // `outl status` shows it too.
        let told = Workspace.recordedNotices(root: t.root, stateDirectory: t.state())
        #expect(told.map(\.kind) == [WorkspaceLog.broughtBack] && told[0].message.contains("keep, edited on the phone"), "\(told)")
    }

    /// The record `outl status` reads keeps the newest notices, at most `NoticeRecord.kept`, and
    /// skips a line that is not one.
    @Test func the_notice_record_keeps_the_newest_and_skips_what_is_not_a_notice() throws {
        let dir = TempDir("notices")
        let r = NoticeRecord(stateDir: dir.path, writable: true)
        for i in 0..<(NoticeRecord.kept + 5) {
            r.add(Notice(kind: WorkspaceLog.concurrentEdit, atMs: Int64(i), block: "b", device: "d", message: "n\(i)\twith\na tab"), log: .silent)
        }
        var all = NoticeRecord.read(r.path)
        #expect(all.count == NoticeRecord.kept && all.first?.atMs == 5 && all.last?.message == "n\(NoticeRecord.kept + 4) with a tab")
        try writeText(r.path, fileText(r.path) + "not a notice\n\t\t\n")
        all = NoticeRecord.read(r.path)
        #expect(all.count == NoticeRecord.kept)
        // Opened read-only, nothing is written.
        NoticeRecord(stateDir: dir.path, writable: false).add(Notice(kind: "x", atMs: 1, block: "", device: "", message: ""), log: .silent)
        #expect(NoticeRecord.read(r.path).count == NoticeRecord.kept)
    }

    /// The edit that brings back a block deleted here arrives while no outld runs: the next start
    /// says it (this device's file has not shown the block since), and the start after that does not.
    @Test func an_edit_that_brings_back_a_block_while_no_outld_runs_is_said_at_the_next_start() async throws {
        let t = try await deletedOnBApart()
        try await edit(t, "a", "- keep or not", "- keep, edited on a")
        try t.syncOps(from: "a", to: "b")
        func start() async throws -> [String] {
            let (ws, said) = try openB(t)
            _ = try await ws.projectDirtyPages()
            #expect(await texts(ws) == ["stays", "keep, edited on a"])
            await ws.close()
            return said.lines.filter { $0.contains("deleted on this device") }
        }
        let first = try await start()
        #expect(first.count == 1 && first[0].contains("keep, edited on a"), "\(first)")
        #expect(try await start().isEmpty)
        #expect(Workspace.recordedNotices(root: t.root("b"), stateDirectory: t.dir.sub("state-b")).count == 1)
        // Opened read-only (outl show, outl status), nothing is said.
        var ro = WorkspaceOptions(root: t.root("b"), readOnly: true)
        ro.stateDirectory = t.dir.sub("state-b")
        let said = Said()
        ro.log = WorkspaceLog { _, m, _ in said.add(m) }
        let ws = try Workspace(options: ro)
        await ws.close()
        #expect(!said.lines.contains { $0.contains("deleted on this device") }, "\(said.lines)")
    }

    /// Every kind of edit against every other, made apart on two devices, then joined: the same
    /// page on both, and every typed text on it unless a later deletion (said on the device whose
    /// text it removed, in the merge's "deleted here" notice) took it.
    @Test(arguments: ["text", "delete", "move"], ["text", "delete", "move"])
    func each_edit_kind_against_each_other_apart_then_joined_converges(_ onA: String, _ onB: String) async throws {
        let t = TwoDevices()
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("first"), capture("middle"), capture("last")]) }
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        func act(_ d: String, _ kind: String) async throws {
            try await t.session(d) { ws in
                let f = fileText(t.journal(d))
                switch kind {
                case "text": try handEdit(t.journal(d), "- middle", "- middle, edited on \(d)")
                case "delete": try writeText(t.journal(d), withoutBlock(f, "middle"))
                default:
                    // The block's lines moved to the top of the page.
                    let lines = f.components(separatedBy: "\n")
                    let start = lines.firstIndex(of: "- middle")!
                    var end = start + 1
                    while end < lines.count, lines[end].hasPrefix("  ") { end += 1 }
                    var moved = Array(lines[start..<end])
                    var rest = lines
                    rest.removeSubrange(start..<end)
                    moved += rest
                    try writeText(t.journal(d), moved.joined(separator: "\n"))
                }
                try await ws.reconcile(path: t.journal(d), origin: .editedHere)
            }
        }
        try await act("a", onA)
        try await act("b", onB)
        try await join(t)
        try await join(t)
        let a = try await t.texts("a"), b = try await t.texts("b")
        #expect(a == b, "\(onA) on a, \(onB) on b: \(a) against \(b)")
        #expect(fileText(t.journal("a")) == fileText(t.journal("b")))
        #expect(a.contains("first") && a.contains("last"))
        if onA == "text" && onB == "text" { #expect(a.contains("middle, edited on a") && a.contains("middle, edited on b"), "\(a)") }
        // b's change is the later one: its text is on the page whatever a did.
        if onB == "text" { #expect(a.contains("middle, edited on b"), "\(onA) on a: \(a)") }
        if onB == "delete" && onA != "text" { #expect(!a.contains { $0.hasPrefix("middle") }, "\(a)") }
    }
}
