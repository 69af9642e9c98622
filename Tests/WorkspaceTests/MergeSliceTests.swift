// A live merge in slices (MergeSlice): a big delivery of another device's ops is read a slice at a
// time, says how far it is, ends with what one whole merge gives, hands the archive of what was seen
// each slice at once but judges a file only by a whole span, and keeps another producer's page
// file waiting until it is done.
import Testing
import SystemCalls
@testable import Workspace

/// A journal page created by `actor`, then `n` captures on it: the ops of a device with a long past.
func pageAndCaptures(_ actor: BlockID, _ n: Int, wall: Int64 = 1_796_206_489_000) -> [Op] {
    var cp = Op(hlc: HLC(wall: wall - 1, counter: 0, actor: actor), kind: .createPage, id: BlockID.journalPage(day1))
    cp.pageKind = .journal
    cp.text = day1.iso
    return [cp] + captureOps(actor, n, wall: wall)
}

/// A workspace with `.outl/ops`, opened on its state `device`.
func openWithOpsDir(_ t: TestWorkspace, device: String = "a") throws -> Workspace {
    try Durable.makeDirectory(t.root, mode: 0o755)
    try Durable.makeDirectory(Path.join(t.root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir(t.root), mode: 0o755)
    return try t.open(device: device)
}

@Test func a_merge_in_slices_reads_a_big_delivery_a_slice_at_a_time_and_says_how_far() async throws {
    let other = BlockID.random()
    let bytes = encode(pageAndCaptures(other, 3000))
    let t = TestWorkspace()
    let ws = try openWithOpsDir(t)
    try deliverByRename(Path.join(opsDir(t.root), "ops-\(other).jsonl"), bytes)
    var slices: [MergeReport] = []
    var whole = MergeReport()
    repeat {
        let r = try await ws.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 8192))
        slices.append(r)
        whole.add(r)
        #expect(await ws.mergeUnderWay == r.more)
    } while slices.last!.more && slices.count < 10_000
    #expect(slices.count > 20, "\(slices.count) slices of about 8 KiB for \(bytes.count) bytes")
    #expect(slices.dropLast().allSatisfy { $0.more && $0.read > 0 })
    #expect(zip(slices, slices.dropFirst()).allSatisfy { $0.bytesLeft > $1.bytesLeft || $1.bytesLeft == 0 }, "what is left only shrinks")
    #expect(whole.read == 3001 && whole.bytesRead == bytes.count && slices.last!.bytesLeft == 0)
    // Halfway, the estimate of the ops to read (from the ops per byte so far) is close to the truth.
    var half = MergeReport()
    for r in slices.prefix(slices.count / 2) { half.add(r) }
    let estimate = half.read + Int(Double(half.bytesLeft) * Double(half.read) / Double(half.bytesRead))
    #expect(abs(estimate - 3001) < 150, "estimated \(estimate) of 3001 ops halfway")

    // The same bytes merged whole by another device: the same report, the same page.
    let u = TestWorkspace()
    let one = try openWithOpsDir(u)
    try deliverByRename(Path.join(opsDir(u.root), "ops-\(other).jsonl"), bytes)
    let r = try await one.mergeForeignOps()
    #expect(!r.more && r.bytesLeft == 0)
    #expect(whole.read == r.read && whole.applied == r.applied && whole.appliedByActor == r.appliedByActor)
    #expect(whole.dirtyPages == r.dirtyPages && whole.byDevice == r.byDevice && whole.bytesRead == r.bytesRead)
    _ = try await ws.projectDirtyPages()
    _ = try await one.projectDirtyPages()
    #expect(fileText(t.journal(day1)) == fileText(u.journal(day1)) && fileText(t.journal(day1)).contains("- capture 2999 of"))
    #expect(try await ws.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 8192)) == MergeReport())
    await ws.close()
    await one.close()
}

@Test func a_file_missing_at_the_boot_read_in_slices_is_archived_whole_without_a_false_alarm() throws {
    // A device read another's file; at its next start the file is missing (a sync tool between
    // unlink and rename), so its ops come from this device's archive; then it is back with every op
    // seen and more. Read from its start in slices, the archive must judge the file by the whole
    // span: judged by each slice, it kept the file as one that lost ops (a fault, and a false alarm).
    let t = TestWorkspace()
    try Durable.makeDirectory(t.root, mode: 0o755)
    try Durable.makeDirectory(Path.join(t.root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir(t.root), mode: 0o755)
    var warnings: [String] = []
    var o = WorkspaceOptions(root: t.root)
    o.stateDirectory = t.state()
    o.log = WorkspaceLog { level, m, _ in if level != .info { warnings.append(m) } }
    let other = BlockID.random()
    let path = Path.join(opsDir(t.root), "ops-\(other).jsonl")
    let ops = pageAndCaptures(other, 1000)
    let before = try WorkspaceCore(options: o)
    try deliverByRename(path, encode(Array(ops.prefix(500))))
    #expect(try before.mergeForeignOps().read == 500)
    before.close()
    try Sys.unlink(path)
    let core = try WorkspaceCore(options: o)
    defer { core.close() }
    #expect(core.model.blocks[ops[499].id] != nil, "the archive gave the boot what the file held")
    try deliverByRename(path, encode(ops))
    var whole = MergeReport(), n = 0
    repeat {
        whole.add(try core.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 2048)))
        n += 1
    } while whole.more
    #expect(n > 10 && whole.read == 1001)
    #expect(whole.applied == 501, "the 501 ops not seen before")
    #expect(!warnings.contains { $0.contains("no longer holds all") }, "\(warnings)")
    #expect(core.seen.faults.isEmpty, "\(core.seen.faults)")
}

@Test func ops_merged_in_a_slice_are_kept_if_their_file_vanishes_before_the_merge_ends() throws {
    // What a slice applied is in the model (and may be on a page already): the archive keeps it at
    // once, so a file deleted before the merge ends, and a restart, take none of it away.
    let t = TestWorkspace()
    try Durable.makeDirectory(t.root, mode: 0o755)
    try Durable.makeDirectory(Path.join(t.root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir(t.root), mode: 0o755)
    var o = WorkspaceOptions(root: t.root)
    o.stateDirectory = t.state()
    o.log = .silent
    let other = BlockID.random()
    let path = Path.join(opsDir(t.root), "ops-\(other).jsonl")
    let ops = pageAndCaptures(other, 1000)
    let core = try WorkspaceCore(options: o)
    try deliverByRename(path, encode(ops))
    let first = try core.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 8192))
    #expect(first.more && first.read > 0 && first.read < 1001)
    let merged = ops.prefix(first.read).filter { $0.kind == .createBlock }.map(\.id)
    #expect(merged.count == first.read - 1 && merged.allSatisfy { core.model.blocks[$0] != nil })
    core.close()
    try Sys.unlink(path)
    let again = try WorkspaceCore(options: o)
    defer { again.close() }
    #expect(merged.allSatisfy { again.model.blocks[$0] != nil }, "ops of the slice lost with their file")
}

@Test func another_producers_page_file_waits_while_a_merge_is_under_way() async throws {
    let other = BlockID.random()
    let t = TestWorkspace()
    t.syncSettleMs = 0  // nothing waits for work in transit: only the merge under way holds it
    let ws = try openWithOpsDir(t)
    try deliverByRename(Path.join(opsDir(t.root), "ops-\(other).jsonl"), encode(pageAndCaptures(other, 2000)))
    let first = try await ws.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 4096))
    #expect(first.more)
    _ = try await ws.projectDirtyPages()
    let page = t.journal(day1)
    // A sync tool delivers the page as another device wrote it, with a line typed there.
    let delivered = fileText(page) + "- typed on the phone\n"
    try deliverByRename(page, Array(delivered.utf8))
    try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
    let own = Path.join(opsDir(t.root), "ops-\(ws.actorID).jsonl")
    #expect(!fileText(own).contains("typed on the phone"), "taken while the merge was under way")
    #expect(await ws.waitingFiles == [page])
    #expect(await ws.nextPageJudgementMs == nil, "judged when the merge ends, not before")
    #expect(fileText(page) == delivered, "the delivered file is left as it is")
    var r = first
    while r.more { r = try await ws.mergeForeignOps(slice: MergeSlice(milliseconds: 60_000, bytes: 4096)) }
    _ = try await ws.judgeWaiting()
    #expect(fileText(own).contains("typed on the phone"), "taken once the merge was done")
    #expect(await ws.waitingFiles.isEmpty)
    #expect(fileText(page).contains("- capture 1999 of") && fileText(page).contains("typed on the phone"))
    await ws.close()
}
