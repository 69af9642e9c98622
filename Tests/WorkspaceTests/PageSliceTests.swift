// PageSlice: a pass over stale pages bounded by a slice writes at most that much and leaves the rest
// stale for the next pass, the most recently marked pages first: a capture's page is written before
// a backlog a start left, and every page is written in the end.
import SystemCalls
import TestSupport
import Testing
@testable import Workspace

@Suite struct PageSliceTests {
    /// A workspace with the ops of captures on 20 days and no page file yet (a device that received
    /// only the op log), opened with `slice`.
    func twentyStalePages(_ t: TestWorkspace, slice: PageSlice) async throws -> Workspace {
        let days = (0..<20).map { k in (0..<k).reduce(day1) { d, _ in d.next } }
        do {
            let ws = try t.open()
            for (k, d) in days.enumerated() { _ = try await ws.appendCaptures([capture("line \(k)", day: d)]) }
            await ws.close()
        }
        var o = WorkspaceOptions(root: t.root)
        o.stateDirectory = t.state()
        o.log = .silent
        o.pageSlice = slice
        return try Workspace(options: o)
    }

    @Test func a_pass_in_slices_writes_a_captures_page_before_the_backlog_and_every_page_in_the_end() async throws {
        let t = TestWorkspace()
        let ws = try await twentyStalePages(t, slice: PageSlice(milliseconds: 60_000, pages: 3))
        #expect(await ws.stalePages == 20)
        #expect(try await ws.projectDirtyPages().count == 3)
        #expect(await ws.stalePages == 17)
        // A capture now: its page is the first the next slice writes.
        let late = JournalDay(year: 2027, month: 1, day: 1)!
        _ = try await ws.appendCaptures([capture("captured meanwhile", day: late)])
        let next = try await ws.projectDirtyPages()
        #expect(next.first == t.journal(late), "\(next)")
        #expect(next.count == 3)
        var passes = 2
        while await ws.stalePages > 0 { _ = try await ws.projectDirtyPages(); passes += 1 }
        #expect(passes == 7)  // 21 pages, 3 a pass
        #expect(await ws.check() == [])
        await ws.close()
    }

    /// A daemon's turn holds several passes (an event's, a timer's, a drain's): they share one slice,
    /// so a capture waits at most one slice of backlog; each still writes the page most recently
    /// marked. While a merge is under way a turn writes no backlog, only that one page a pass.
    @Test func the_passes_of_a_turn_share_one_slice_and_each_writes_the_page_most_recently_marked() async throws {
        let t = TestWorkspace()
        let ws = try await twentyStalePages(t, slice: PageSlice(milliseconds: 60_000, pages: 5))
        await ws.startTurn(writingBacklog: true)
        #expect(try await ws.projectDirtyPages().count == 5)
        // The same turn: its slice is spent, and a capture's page is still written, alone.
        let late = JournalDay(year: 2027, month: 1, day: 1)!
        _ = try await ws.appendCaptures([capture("captured meanwhile", day: late)])
        #expect(try await ws.projectDirtyPages() == [t.journal(late)])
        #expect(try await ws.projectDirtyPages().count == 1)  // at least one a pass, as ever
        #expect(await ws.stalePages == 14)
        // A new turn has a whole slice again.
        await ws.startTurn(writingBacklog: true)
        #expect(try await ws.projectDirtyPages().count == 5)
        // A turn while a merge is under way: one page a pass, the most recently marked.
        await ws.startTurn(writingBacklog: false)
        let later = late.next
        _ = try await ws.appendCaptures([capture("captured during a merge", day: later)])
        #expect(try await ws.projectDirtyPages() == [t.journal(later)])
        #expect(await ws.stalePages == 9)
        await ws.startTurn(writingBacklog: true)
        while await ws.stalePages > 0 { _ = try await ws.projectDirtyPages(); await ws.startTurn(writingBacklog: true) }
        #expect(await ws.check() == [])
        await ws.close()
    }
}
