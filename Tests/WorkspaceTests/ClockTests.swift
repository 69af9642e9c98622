// The clock under peers whose clocks are wrong: a stamp is never lower than one the clock issued or
// adopted, a peer stamp beyond HLClock.maxAhead is applied but held back and reported, a person's
// edit wins over what they saw whatever its stamp, and devices still converge. Also what a merge
// says each device did (who deleted my line?).
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// A peer's op file delivered into `root` as a sync tool does (temp name, rename).
func deliverPeerOps(_ root: String, _ actor: BlockID, _ ops: [Op]) throws {
    try Durable.makeDirectory(Path.join(root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir(root), mode: 0o755)
    try deliverByRename(Path.join(opsDir(root), "ops-\(actor).jsonl"), encode(ops))
}

/// This device's own ops, as its file holds them.
func ownOps(_ root: String, _ ws: Workspace) throws -> [Op] {
    try opsIn(Path.join(opsDir(root), "ops-\(ws.actorID).jsonl"))
}

let thirtyYears: Int64 = 30 * 365 * 86_400_000

func update(_ id: BlockID, _ text: String, _ hlc: HLC) -> Op {
    var op = Op(hlc: hlc, kind: .updateBlock, id: id)
    op.text = text
    return op
}

@Test func counter_at_its_maximum_carries_into_the_wall_time() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    // A peer a minute ahead (within the bound, so adopted) whose counter is at its maximum.
    let peer = BlockID.random()
    var theirs = captureOps(peer, 1, wall: wallClockMilliseconds() + 60_000)
    theirs[0].hlc.counter = UInt32.max
    try deliverPeerOps(t.root, peer, theirs)
    #expect(try await ws.mergeForeignOps().applied == 1)
    _ = try await ws.appendCaptures([capture("right after")])
    let mine = try ownOps(t.root, ws)
    #expect(mine.count == 2)
    #expect(mine.allSatisfy { theirs[0].hlc < $0.hlc }, "a wrapped counter stamped \(mine.map(\.hlc)) below \(theirs[0].hlc)")
    #expect(mine.first!.hlc.wall == theirs[0].hlc.wall + 1 && mine.first!.hlc.counter == 0)
    await ws.close()

    var clock = HLClock(actor: BlockID.random())
    let w = HLC.minWall + 1000
    clock.observe(HLC(wall: w, counter: UInt32.max, actor: peer), now: w)
    let a = clock.tick(now: w), b = clock.tick(now: w)
    #expect(a == HLC(wall: w + 1, counter: 0, actor: clock.actor) && a < b)
}

@Test func far_future_peer_stamp_does_not_drag_the_clock_and_is_reported() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let peer = BlockID.random()
    let before = wallClockMilliseconds()
    var theirs = captureOps(peer, 2, wall: before + thirtyYears)
    theirs[1].hlc.counter = UInt32.max
    try deliverPeerOps(t.root, peer, theirs)
    let r = try await ws.mergeForeignOps()
    #expect(r.applied == 2, "held back from the clock, still applied")
    #expect(await ws.containsBlock(theirs[1].id.description))
    let held = try #require(r.heldBack[peer.description], "\(r.heldBack)")
    #expect(held.ops == 2 && held.furthest == theirs[1].hlc && held.kind == "cb" && held.id == theirs[1].id.description)
    #expect(held.aheadMs >= thirtyYears - 10_000 && held.aheadMs <= thirtyYears + 10_000)
    _ = try await ws.appendCaptures([capture("made here after")])
    let after = wallClockMilliseconds()
    let mine = try ownOps(t.root, ws)
    #expect(mine.allSatisfy { $0.hlc.wall >= before && $0.hlc.wall <= after }, "own stamps \(mine.map(\.hlc)) carry a future time")
    // `outl status` reads the files: the peer's file says how far ahead, the own one says nothing.
    let summaries = try Workspace.opLogSummaries(root: t.root)
    let theirFile = try #require(summaries.first { $0.actor == peer.description })
    #expect(theirFile.aheadOfClock?.ops == 2 && theirFile.aheadOfClock?.furthest == theirs[1].hlc)
    #expect(summaries.first { $0.actor == ws.actorID }?.aheadOfClock == nil)
    await ws.close()
    // A restart holds them back too, and says so.
    let again = try t.open()
    #expect(await again.stampsHeldBackAtBoot[peer.description]?.ops == 2)
    _ = try await again.appendCaptures([capture("after the restart")])
    #expect(try ownOps(t.root, again).allSatisfy { $0.hlc.wall <= wallClockMilliseconds() })
    await again.close()
}

/// A workspace with one capture, "as captured", projected; and its block's id.
func oneCapture() async throws -> (TestWorkspace, Workspace, BlockID) {
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures([capture("as captured")])
    _ = try await ws.projectDirtyPages()
    return (t, ws, try #require(BlockID(await ws.journalBlocks(day1)[0].id)))
}

@Test func hand_edit_after_a_far_future_peer_edit_wins() async throws {
    let (t, ws, id) = try await oneCapture()
    // A peer decades ahead, its counter at the maximum, rewrote the line.
    let peer = BlockID.random()
    try deliverPeerOps(t.root, peer, [update(id, "from the future", HLC(wall: wallClockMilliseconds() + thirtyYears,
                                                                         counter: UInt32.max, actor: peer))])
    _ = try await ws.mergeForeignOps()
    _ = try await ws.projectDirtyPages()
    #expect(fileText(t.journal(day1)).contains("- from the future"))
    // The person sees that and fixes it by hand.
    try handEdit(t.journal(day1), "- from the future", "- fixed by hand")
    _ = try await ws.appendCaptures([capture("next line")])
    _ = try await ws.projectDirtyPages()
    #expect(await texts(ws) == ["fixed by hand", "next line"], "the edit was reverted")
    #expect(fileText(t.journal(day1)).contains("- fixed by hand"))
    let next = try #require(try ownOps(t.root, ws).first { $0.text == "next line" })
    #expect(next.hlc.wall <= wallClockMilliseconds(), "the next local op carries a future time: \(next.hlc)")
    await ws.close()
    // Every device decides the same: another device booting over both files.
    let other = try t.open(device: "b")
    #expect(await texts(other) == ["fixed by hand", "next line"])
    await other.close()
}

@Test func device_ten_minutes_fast_moves_no_other_clock_beyond_the_bound() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let fast = BlockID.random(), slightlyFast = BlockID.random()
    let start = wallClockMilliseconds()
    let tenMinutes = captureOps(fast, 3, wall: start + 10 * 60_000)
    let twoMinutes = captureOps(slightlyFast, 1, wall: start + 2 * 60_000)
    try deliverPeerOps(t.root, fast, tenMinutes)
    try deliverPeerOps(t.root, slightlyFast, twoMinutes)
    _ = try await ws.appendCaptures([capture("typed here first")])
    let r = try await ws.mergeForeignOps()
    // Its captures are shown at once.
    #expect(r.applied == 4 && r.dirtyPages == ["journals/\(day1.fileStem).md"])
    #expect(Set(await texts(ws)) == Set((tenMinutes + twoMinutes).map(\.text) + ["typed here first"]))
    #expect(r.heldBack.keys.sorted() == [fast.description], "only beyond the bound is held back: \(r.heldBack)")
    _ = try await ws.appendCaptures([capture("typed here")])
    let end = wallClockMilliseconds()
    let mine = try ownOps(t.root, ws).filter { $0.text == "typed here" }
    // Within the bound the clock follows (two minutes ahead); beyond it, not at all.
    #expect(mine.count == 1 && mine.allSatisfy { twoMinutes[0].hlc < $0.hlc && $0.hlc.wall <= end + HLClock.maxAhead && $0.hlc.wall < tenMinutes[0].hlc.wall },
            "own stamps \(mine.map(\.hlc))")
    #expect(await texts(ws).last == "typed here", "a capture drained now goes at the end, after the fast device's")
    await ws.close()
}

@Test func far_future_stamps_merged_in_any_order_converge_and_a_later_hand_edit_wins() async throws {
    var rng = SplitMix64(seed: Path.environment("OUTL_CLOCK_SEED").flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max))
    let seed = rng.state
    let t = TestWorkspace()
    let ws = try t.open()
    _ = try await ws.appendCaptures((0..<4).map { capture("line \($0)") })
    _ = try await ws.projectDirtyPages()
    let ids = await ws.journalBlocks(day1).map { BlockID($0.id)! }
    // Three peers: one decades ahead with its counter at the maximum, one ten minutes ahead, one on
    // time; each updates, moves and deletes some of the lines.
    let now = wallClockMilliseconds()
    let peers = [(BlockID.random(), now + thirtyYears), (BlockID.random(), now + 600_000), (BlockID.random(), now)]
    var files: [[Op]] = []
    for (k, (actor, wall)) in peers.enumerated() {
        var ops: [Op] = []
        for (n, id) in ids.enumerated() where Bool.random(using: &rng) || n == 0 || (k == 0 && n == ids.count - 1) {
            let h = HLC(wall: wall + Int64(n), counter: k == 0 ? UInt32.max : UInt32(n), actor: actor)
            // The far-future peer's newest op is an update: a wrapped counter would lose to it.
            switch k == 0 && n == ids.count - 1 ? 0 : Int.random(in: 0..<3, using: &rng) {
            case 0: ops.append(update(id, "peer \(k) on \(n)", h))
            case 1: var m = Op(hlc: h, kind: .moveBlock, id: id); m.pos = "z\(k)\(n)"; ops.append(m)
            default: ops.append(Op(hlc: h, kind: .deleteBlock, id: id))
            }
        }
        files.append(ops)
    }
    // The peers' files arrive one by one, in a random order, each in random pieces.
    var pieces: [(Int, Int)] = []
    for (k, f) in files.enumerated() {
        var cut = 0
        while cut < f.count { cut += Int.random(in: 1...f.count - cut, using: &rng); pieces.append((k, cut)) }
    }
    var arrival: [(Int, Int)] = []
    var byPeer = (0..<files.count).map { k in pieces.filter { $0.0 == k } }
    while byPeer.contains(where: { !$0.isEmpty }) {
        let k = (0..<byPeer.count).filter { !byPeer[$0].isEmpty }.randomElement(using: &rng)!
        arrival.append(byPeer[k].removeFirst())
    }
    for (k, cut) in arrival {
        try deliverPeerOps(t.root, peers[k].0, Array(files[k][..<cut]))
        _ = try await ws.mergeForeignOps()
    }
    _ = try await ws.projectDirtyPages()
    // The person rewrites every line they still see, by hand.
    let seen = await ws.journalBlocks(day1)
    var page = fileText(t.journal(day1))
    for b in seen { page = page.replacingOccurrences(of: "- \(b.text)\n", with: "- \(b.text), by hand\n") }
    try writeText(t.journal(day1), page)
    try await ws.reconcile(path: t.journal(day1), origin: .editedHere)
    let live = await ws.journalBlocks(day1)
    #expect(live.map(\.id) == seen.map(\.id) && live.allSatisfy { $0.text.hasSuffix(", by hand") },
            "seed \(seed) (OUTL_CLOCK_SEED): hand edits lost: \(live.map(\.text)) after \(seen.map(\.text))")
    let liveMarkdown = await ws.journalMarkdown(day1)
    await ws.close()
    // A device that boots over the same files, and one that reads them in another order, agree.
    let fresh = try t.open(device: "b")
    #expect(await fresh.journalMarkdown(day1) == liveMarkdown, "seed \(seed): a fresh boot differs from the live merges")
    await fresh.close()
    var shuffled = Model()
    let all = try OpLogReader.readAll(dir: opsDir(t.root), ownName: "", log: .silent, progress: nil).0.flatMap { $0 }
    for op in all.shuffled(using: &rng) { shuffled.apply(op) }
    var inOrder = Model()
    for op in all.sorted(by: { $0.hlc < $1.hlc }) { inOrder.apply(op) }
    let p = BlockID.journalPage(day1)
    func shown(_ m: Model) -> [String] {
        func walk(_ ns: [TreeNode]) -> [String] { ns.flatMap { ["\($0.id) \(m.blocks[$0.id]!.text)"] + walk($0.children) } }
        return walk(m.tree(of: p))
    }
    #expect(shown(shuffled) == shown(inOrder), "seed \(seed): the model depends on the order of the ops")
}

@Test func an_edit_stamped_after_a_far_future_field_proves_no_later_capture_was_seen() async throws {
    // Device a's edit of a line a peer stamped decades ahead is stamped after that line, so it is
    // ahead of a's later captures: a copy of the page showing the edit, made before those captures,
    // must not delete them (the proof goes by a's file order, not by stamps).
    let t = TwoDevices()
    let peer = BlockID.random()
    var id = BlockID(hi: 0, lo: 0)
    try await t.session("a") { ws in
        _ = try await ws.appendCaptures([capture("as captured")])
        _ = try await ws.projectDirtyPages()
        id = BlockID(await ws.journalBlocks(day1)[0].id)!
        try deliverPeerOps(t.root("a"), peer, [update(id, "from the future", HLC(wall: wallClockMilliseconds() + thirtyYears,
                                                                                   counter: 0, actor: peer))])
        _ = try await ws.mergeForeignOps()
        _ = try await ws.projectDirtyPages()
        try handEdit(t.journal("a"), "- from the future", "- fixed by hand")
        try await ws.reconcile(path: t.journal("a"), origin: .editedHere)
    }
    // b gets everything so far and projects the page: the edit, no later capture.
    for f in listDir(opsDir(t.root("a"))) { try t.syncFile(".outl/ops/\(f)", from: "a", to: "b") }
    try await t.session("b")
    #expect(fileText(t.journal("b")).contains("- fixed by hand"))
    // a captures more; then b's (older) page reaches a.
    let a = try t.open("a")
    _ = try await a.appendCaptures([capture("captured later")])
    _ = try await a.projectDirtyPages()
    try t.syncFile("journals/\(day1.fileStem).md", from: "b", to: "a")
    try await a.reconcile(path: t.journal("a"), origin: .delivered(by: "syncthing"))
    _ = try await a.projectDirtyPages()
    #expect(await texts(a) == ["fixed by hand", "captured later"], "an older copy of the page deleted a later capture")
    await a.close()
}

@Test func a_merge_says_what_each_device_created_edited_moved_and_deleted() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let long = "buy oat milk\tand the rest of a very long line that goes on and on"
    _ = try await ws.appendCaptures([capture(long), capture("second"), capture("third")])
    let ids = await ws.journalBlocks(day1).map { BlockID($0.id)! }
    let peer = BlockID.random()
    let w = wallClockMilliseconds()
    var created = captureOps(peer, 1, wall: w)
    var moved = Op(hlc: HLC(wall: w + 1, counter: 0, actor: peer), kind: .moveBlock, id: ids[2]); moved.pos = "zz"
    let edited = update(ids[1], "second, edited there", HLC(wall: w + 2, counter: 0, actor: peer))
    let deleted = Op(hlc: HLC(wall: w + 3, counter: 0, actor: peer), kind: .deleteBlock, id: ids[0])
    let deletedAgain = Op(hlc: HLC(wall: w + 4, counter: 0, actor: peer), kind: .deleteBlock, id: ids[0])
    created[0].hlc.wall = w
    try deliverPeerOps(t.root, peer, created + [moved, edited, deleted, deletedAgain])
    let r = try await ws.mergeForeignOps()
    let d = try #require(r.byDevice[peer.description])
    #expect(d.created == 1 && d.edited == 1 && d.moved == 1 && d.deleted == 1, "\(d)")
    #expect(d.deletedBlocks == [DeletedBlock(id: ids[0].description,
                                             firstWords: "buy oat milk\\tand the rest of a very long…")])
    await ws.close()
}

@Test func first_words_of_a_deleted_block_are_bounded_and_escaped() {
    #expect(DeletedBlock.firstWords("short") == "short")
    #expect(DeletedBlock.firstWords("two\nlines\r\u{85}\u{2028}\\") == "two\\nlines\\r\\u{85}\\u{2028}\\\\")
    let forty = String(repeating: "é", count: 40)
    #expect(DeletedBlock.firstWords(forty) == forty)
    #expect(DeletedBlock.firstWords(forty + "x") == forty + "…")
}

/// Issue 48, finding 5: one range of stamps for the writer and the reader. A peer's op stamped
/// past it (the 19-digit wall a person's edit after an 18-digit one got) is refused, and a person's
/// edit of a block a peer stamped at its very top is kept, in the range, across restarts.
@Test(arguments: ["past the range", "at its top", "just below its top"])
func an_edit_of_a_block_a_peer_stamped_at_the_limit_is_kept_across_restarts(_ peerStamp: String) async throws {
    let (t, ws, id) = try await oneCapture()
    let peer = BlockID.random()
    let stamp: HLC
    switch peerStamp {
    case "past the range": stamp = HLC(wall: 999_999_999_999_999_999, counter: UInt32.max, actor: peer)
    case "at its top": stamp = HLC(wall: HLC.maxWall, counter: UInt32.max, actor: peer)
    default: stamp = HLC(wall: HLC.maxWall, counter: UInt32.max - 1, actor: peer)
    }
    try deliverPeerOps(t.root, peer, [update(id, "from the peer", stamp)])
    _ = try await ws.mergeForeignOps()
    _ = try await ws.projectDirtyPages()
    if peerStamp == "past the range" {
        #expect(await texts(ws) == ["as captured"], "an op stamped past the range was applied")
        await ws.close()
        return
    }
    #expect(await texts(ws) == ["from the peer"])
    try handEdit(t.journal(day1), "- from the peer", "- fixed by hand")
    try await ws.reconcile(path: t.journal(day1), origin: .editedHere)
    let want = peerStamp == "at its top" ? ["from the peer", "fixed by hand"] : ["fixed by hand"]
    #expect(Set(await texts(ws)) == Set(want), "\(fileText(t.journal(day1)))")
    // Every op this device wrote is within the range, so its own reader takes each of them.
    let mine = try ownOps(t.root, ws)
    #expect(mine.allSatisfy { HLC.inRange(wall: $0.hlc.wall) }, "\(mine.map(\.hlc))")
    #expect(mine.count == fileText(Path.join(opsDir(t.root), "ops-\(await ws.actorID).jsonl")).split(separator: "\n").count)
    await ws.close()
    // After a restart, and on another device booting over both files: the same page.
    let again = try t.open()
    #expect(Set(await texts(again)) == Set(want))
    await again.close()
    let other = try t.open(device: "b")
    #expect(Set(await texts(other)) == Set(want))
    await other.close()
}

@Test func the_reader_takes_stamps_of_the_range_and_no_other() {
    func parses(_ wall: Int64) -> Bool {
        var op = Op(hlc: HLC(wall: wall, counter: 7, actor: BlockID.random()), kind: .deleteBlock, id: BlockID.random())
        op.text = ""
        return OpEncoder.line(op).dropLast().withUnsafeBufferPointer { OpParser.parse($0) } != nil
    }
    #expect(parses(HLC.minWall) && parses(1_796_206_489_000) && parses(HLC.maxWall))
    #expect(!parses(HLC.maxWall + 1) && !parses(-1) && !parses(999_999_999_999_999_999))
    // The bottom too: a create stamped at 1970 would be older than every create and take its block.
    #expect(!parses(0) && !parses(1) && !parses(HLC.minWall - 1))
    var clock = HLClock(actor: BlockID.random())
    // A machine whose clock says 1970 (a reset RTC) stamps from the bottom of the range on.
    #expect(clock.tick(now: 1000).wall == HLC.minWall && clock.tick(now: 1000) > HLC(wall: HLC.minWall, counter: 0, actor: clock.actor))
    #expect(clock.stamp(after: HLC(wall: HLC.maxWall, counter: UInt32.max, actor: BlockID.random())) == nil)
    #expect(clock.stamp(after: HLC(wall: HLC.maxWall, counter: 5, actor: BlockID.random()))?.counter == 6)
}
