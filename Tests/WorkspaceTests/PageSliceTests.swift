// PageSlice: a pass over stale pages bounded by a slice writes at most that much and leaves the rest
// stale for the next pass, the most recently marked pages first: a capture's page is written before
// a backlog a start left, and every page is written in the end.
import SystemCalls
import TestSupport
import Testing
@testable import Workspace

@Suite struct PageSliceTests {
    @Test func a_pass_in_slices_writes_a_captures_page_before_the_backlog_and_every_page_in_the_end() async throws {
        let t = TestWorkspace()
        let days = (0..<20).map { k in (0..<k).reduce(day1) { d, _ in d.next } }
        do {
            let ws = try t.open()
            for (k, d) in days.enumerated() { _ = try await ws.appendCaptures([capture("line \(k)", day: d)]) }
            await ws.close()  // ops, and no page file yet: a device that received only the op log
        }
        var o = WorkspaceOptions(root: t.root)
        o.stateDirectory = t.state()
        o.log = .silent
        o.pageSlice = PageSlice(milliseconds: 60_000, pages: 3)
        let ws = try Workspace(options: o)
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
}
