// CaptureBatchTests: a call's captures appended as one batch (CaptureList, CaptureBatch), as the drain
// appends them: what applying them leaves in the model, against a replay of the ops they wrote.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// A call's captures raise each page's greatest top-level position once, with the greatest of its
/// captures there (the batch raises it, not each capture's apply): the model holds what a replay of
/// the ops gives. Captures come in runs of two pages with ids out of order, and a peer's block far
/// ahead on one page makes its captures take positions after that one, not their stamps'.
@Test func a_calls_captures_leave_each_page_the_greatest_position_a_replay_gives() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let day2 = day1.next
    let peer = BlockID.random()
    var ahead = captureOps(peer, 1)
    ahead[0].pos = "zzzzzzzzzzzzzzzz"
    try deliverPeerOps(t.root, peer, ahead)
    _ = try await ws.mergeForeignOps()
    let onDay1: Set = [0, 1, 2, 5, 6, 10, 11]
    _ = try await ws.appendCaptures((0..<12).map { capture("line \($0)", day: onDay1.contains($0) ? day1 : day2) })
    _ = try await ws.appendCaptures([capture("after", day: day2), capture("after too", day: day1)])
    var replay = Model()
    for op in try ahead + ownOps(t.root, ws) { replay.apply(op) }
    for day in [day1, day2] {
        let page = BlockID.journalPage(day)
        let live = await ws.maxTopPos(ofPage: page)
        #expect(live != nil && live != "" && live == replay.pages[page]?.maxTopPos, "\(day.iso): \(live ?? "-")")
    }
    #expect(await ws.maxTopPos(ofPage: BlockID.journalPage(day1)).map { $0 > ahead[0].pos } == true)
    await ws.close()
}
