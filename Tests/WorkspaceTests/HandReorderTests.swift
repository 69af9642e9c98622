// A reorder or re-indent by hand in a file another producer wrote (a phone without outld edited a
// projection, a sync tool delivered it) is a move once the file proves its producer had seen every
// create and move of the block (FileDiff.movable); an older projection moves nothing back.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// The file's blocks, each its `- ` line and the property lines under it.
func blockChunks(_ file: String) -> [String] {
    file.components(separatedBy: "- ").filter { !$0.isEmpty }.map { "- " + $0 }
}

/// Delivers `text` to `path` as Syncthing does: a temporary beside it, renamed over it (a new inode).
func deliver(_ text: String, to path: String) throws {
    let tmp = Path.join(Path.parent(of: path), ".syncthing.\(Path.lastComponent(path)).tmp")
    try? Sys.unlink(tmp)
    try Durable.publish(Array(text.utf8), to: path, via: tmp)
}

@Suite struct HandReorderTests {
    func threeBlocks() async throws -> (TestWorkspace, Workspace) {
        let t = TestWorkspace()
        t.syncSettleMs = 0   // nothing else is in transit: judge the delivered file at once
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("one"), capture("two"), capture("three")])
        _ = try await ws.projectDirtyPages()
        return (t, ws)
    }

    @Test func a_delivered_file_that_swaps_two_blocks_moves_them() async throws {
        let (t, ws) = try await threeBlocks()
        let page = t.journal(day1)
        let b = blockChunks(fileText(page))
        try deliver(b[1] + b[0] + b[2], to: page)
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["two", "one", "three"])
        // The next projection keeps it, and so does the op log.
        _ = try await ws.appendCaptures([capture("four")])
        _ = try await ws.projectDirtyPages()
        #expect(blockChunks(fileText(page)).map { $0.split(separator: "\n")[0] } == ["- two", "- one", "- three", "- four"])
        await ws.close()
        let again = try t.open()
        #expect(await texts(again) == ["two", "one", "three", "four"])
        await again.close()
    }

    @Test func a_delivered_older_projection_does_not_undo_a_move_made_here() async throws {
        let (t, ws) = try await threeBlocks()
        let page = t.journal(day1)
        let older = fileText(page)
        // Here, a person moves "three" to the top of this device's projection.
        let b = blockChunks(older)
        try writeText(page, b[2] + b[0] + b[1])
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["three", "one", "two"])
        // Then the projection from before that move arrives from another device.
        try deliver(older, to: page)
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["three", "one", "two"], "an older projection undid a move:\n\(fileText(page))")
        await ws.close()
    }

    @Test func a_delivered_reindent_is_a_move() async throws {
        let (t, ws) = try await threeBlocks()
        let page = t.journal(day1)
        let b = blockChunks(fileText(page))
        let indented = b[1].split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        try deliver(b[0] + indented + b[2], to: page)
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        _ = try await ws.appendCaptures([capture("four")])   // the page is projected again
        _ = try await ws.projectDirtyPages()
        #expect(fileText(page).contains("\n  - two\n"), "two is one's child now:\n\(fileText(page))")
        #expect(await texts(ws) == ["one", "two", "three", "four"])
        await ws.close()
        let again = try t.open()
        #expect(await again.journalMarkdown(day1)?.contains("\n  - two\n") == true)
        await again.close()
    }

    @Test func a_delivered_reorder_moves_only_blocks_whose_every_move_it_has_seen() async throws {
        // The file shows "two" but not that it was moved here after the file's producer saw it: its
        // place in the file may be the older one, so the model's stays; "three", moved on the phone
        // and never moved here, goes where the file says.
        let (t, ws) = try await threeBlocks()
        let page = t.journal(day1)
        let older = blockChunks(fileText(page))
        try writeText(page, older[1] + older[0] + older[2])
        try await ws.reconcile(path: page, origin: .editedHere)
        _ = try await ws.projectDirtyPages()
        #expect(await texts(ws) == ["two", "one", "three"])
        // The older projection with "three" moved to the top, by hand on a phone.
        try deliver(older[2] + older[0] + older[1], to: page)
        try await ws.reconcile(path: page, origin: .delivered(by: "syncthing"))
        _ = try await ws.projectDirtyPages()
        let got = await texts(ws)
        #expect(got.firstIndex(of: "two")! < got.firstIndex(of: "one")!, "the move made here was undone: \(got)")
        #expect(got.first == "three", "the phone's move was lost: \(got)")
        await ws.close()
    }
}
