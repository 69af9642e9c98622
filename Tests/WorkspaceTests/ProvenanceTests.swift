// Who wrote a page file decides how it is read (PageFileOrigin): a person's save on this device is
// taken three-way against this device's projections, a sync tool's delivery only for what no op of
// any device explains, and what may be another device's work in transit waits for its ops.
import Glibc
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// The file without the block whose first line is `- text` (its property lines go with it).
func withoutBlock(_ file: String, _ text: String) -> String {
    var out: [Substring] = []
    var skipping = false
    for line in file.split(separator: "\n", omittingEmptySubsequences: false) {
        if line == "- \(text)" { skipping = true; continue }
        if skipping && line.hasPrefix("  ") { continue }
        skipping = false
        out.append(line)
    }
    return out.joined(separator: "\n")
}

/// Saves `text` to `path` the way an editor that saves by rename does (gedit, `sed -i`, VS Code).
func saveLikeGedit(_ path: String, _ text: String) throws {
    let tmp = Path.join(Path.parent(of: path), ".goutputstream-TEST01")
    try writeText(tmp, text)
    try Sys.rename(tmp, path)
}

@Suite struct ProvenanceTests {
    @Test(arguments: ["in place", "by rename"])
    func a_hand_deletion_of_the_newest_block_is_honoured(saved how: String) async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("older")])
        _ = try await ws.projectDirtyPages()
        _ = try await ws.appendCaptures([capture("newest")])
        _ = try await ws.projectDirtyPages()
        let edited = withoutBlock(fileText(t.journal(day1)), "newest")
        if how == "in place" { try writeText(t.journal(day1), edited) } else { try saveLikeGedit(t.journal(day1), edited) }
        // What the daemon's watcher reports for either save (InotifyTests pins that).
        try await ws.reconcile(path: t.journal(day1), origin: .editedHere)
        _ = try await ws.appendCaptures([capture("next capture")])
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["older", "next capture"], "saved \(how)")
        #expect(!fileText(t.journal(day1)).contains("newest"), "the deleted block came back:\n\(fileText(t.journal(day1)))")
        await ws.close()
    }

    @Test func a_page_another_devices_outld_projected_becomes_no_ops_here() async throws {
        let t = TwoDevices()
        t.syncSettleMs = 60_000
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("a1 from laptop")]) }
        try await t.session("b") { ws in _ = try await ws.appendCaptures([capture("b1 from desktop")]) }
        let probe = try t.open("b")
        let actorB = probe.actorID
        await probe.close()
        // A's page arrives before A's op log, renamed in from Syncthing's temporary.
        try t.syncJournal(from: "a", to: "b")
        let ws = try t.open("b")
        try await ws.reconcile(path: t.journal("b"), origin: .delivered(by: "syncthing"))
        _ = try await ws.projectDirtyPages()
        #expect(await ws.waitingFiles == [t.journal("b")], "A's block waits for A's ops")
        #expect(fileText(t.journal("b")).contains("a1 from laptop"), "a waiting page file is not overwritten")
        await ws.close()
        #expect(!fileText(Path.join(t.root("b"), ".outl/ops/ops-\(actorB).jsonl")).contains("a1 from laptop"),
                "B recorded A's capture as its own")
        // A's ops arrive: the page is explained, both captures show, B's log still holds only B's work.
        try t.syncOps(from: "a", to: "b")
        try await t.session("b")
        #expect(try await t.texts("b").sorted() == ["a1 from laptop", "b1 from desktop"])
        #expect(!fileText(Path.join(t.root("b"), ".outl/ops/ops-\(actorB).jsonl")).contains("a1 from laptop"))
    }

    @Test func unexplained_content_is_taken_once_other_devices_are_quiet() async throws {
        // A phone with Logseq and no outld: its edit arrives as a page file only, never with ops.
        let t = TwoDevices()
        t.syncSettleMs = 300
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("from the laptop")]) }
        try t.syncOps(from: "a", to: "b")
        try t.syncJournal(from: "a", to: "b")
        try await t.session("b")
        try writeText(Path.join(t.dir.path, "phone.md"), fileText(t.journal("b")) + "- typed on the phone\n")
        try Durable.publish(Array(fileText(Path.join(t.dir.path, "phone.md")).utf8), to: t.journal("b"),
                            via: Path.join(t.root("b"), "journals/.syncthing.\(day1.fileStem).md.tmp"))
        let ws = try t.open("b")
        try await ws.reconcile(path: t.journal("b"), origin: .delivered(by: "syncthing"))
        #expect(await texts(ws) == ["from the laptop"], "not taken while it may still be in transit")
        var due = try await ws.judgeWaiting()
        // Two settle times at most: a, whose op file is here too, may come before b in turn
        // (WorkInTransit.turn), and would take the phone's save first.
        #expect(due != nil && due! <= 600)
        // Judge again each time it said to, until the window it named is over (bounded).
        for _ in 0..<50 {
            guard let ms = due else { break }
            usleep(UInt32(ms + 1) * 1000)
            due = try await ws.judgeWaiting()
        }
        #expect(due == nil)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["from the laptop", "typed on the phone"])
        await ws.close()
    }

    @Test func a_sync_conflict_copy_gives_its_genuine_edits_and_goes() async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0   // nothing else is in transit here: judge the copy at once
        try Durable.makeDirectory(t.root, mode: 0o755)
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("one"), capture("two")])
        _ = try await ws.projectDirtyPages()
        let copy = Path.join(t.root, "journals/\(day1.fileStem).sync-conflict-20261202-101010-ABCDEFG.md")
        // The losing side of a conflict: the same page with a line typed there.
        try writeText(copy, fileText(t.journal(day1)) + "- typed in the other copy\n")
        try await ws.reconcile(path: copy, origin: .delivered(by: "syncthing"))
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["one", "two", "typed in the other copy"])
        #expect(readText(copy) == nil, "the conflict copy is removed")
        #expect(fileText(t.journal(day1)).contains("typed in the other copy"))
        // A copy that holds nothing new just goes, and never becomes a page of its own.
        try writeText(copy, fileText(t.journal(day1)))
        try await ws.reconcileAll()
        #expect(readText(copy) == nil)
        #expect(await ws.check().isEmpty)
        await ws.close()
    }
}

/// A phone's save that a sync tool brings to two devices becomes ops once: the device first in turn
/// (the least actor id) takes it at the settle time, the other waits a settle time more and finds it
/// explained by the first one's ops.
@Test func a_save_delivered_to_two_devices_is_taken_by_the_first_in_turn_only() async throws {
    let t = TwoDevices()
    t.syncSettleMs = 1500  // the second's turn comes 1.5 s after the first's: room for a loaded machine
    try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("from the laptop")]) }
    try await t.session("b")
    try t.syncOps(from: "a", to: "b")
    try t.syncOps(from: "b", to: "a")
    try await t.session("b")
    let phone = fileText(t.journal("b")).replacingOccurrences(of: "- from the laptop", with: "- from the laptop, edited on the phone")
    let a = try t.open("a"), b = try t.open("b")
    let first = a.actorID < b.actorID ? "a" : "b", second = first == "a" ? "b" : "a"
    let ws = ["a": a, "b": b]
    for d in ["a", "b"] {
        try Durable.publish(Array(phone.utf8), to: t.journal(d), via: Path.join(t.root(d), "journals/.syncthing.\(day1.fileStem).md.tmp"))
        try await ws[d]!.reconcile(path: t.journal(d), origin: .delivered(by: "syncthing"))
    }
    // The first in turn takes it once its settle time is over; the second still waits then.
    let start = wallClockMilliseconds()
    while wallClockMilliseconds() - start < 10_000, await texts(ws[first]!) != ["from the laptop, edited on the phone"] {
        usleep(50_000)
        _ = try await ws[first]!.judgeWaiting()
    }
    #expect(await texts(ws[first]!) == ["from the laptop, edited on the phone"])
    _ = try await ws[second]!.judgeWaiting()
    #expect(await texts(ws[second]!) == ["from the laptop"], "the second in turn took it as early as the first")
    // The first one's ops reach the second, which then finds the save explained.
    try t.syncOps(from: first, to: second)
    _ = try await ws[second]!.mergeForeignOps()
    let until = wallClockMilliseconds() + 10_000
    while wallClockMilliseconds() < until, try await ws[second]!.judgeWaiting() != nil { usleep(50_000) }
    _ = try await ws[second]!.projectDirtyPages()
    #expect(await texts(ws[second]!) == ["from the laptop, edited on the phone"])
    let secondsOps = fileText(Path.join(t.root(second), ".outl/ops/ops-\(await ws[second]!.actorID).jsonl"))
    #expect(!secondsOps.contains("edited on the phone"), "the second device took the save too:\n\(secondsOps)")
    await a.close(); await b.close()
}
