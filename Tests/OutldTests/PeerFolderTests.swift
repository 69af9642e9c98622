// PeerFolderTests: what a buggy or hostile peer can do to the workspace's folders, with the real
// outld: journals/ or pages/ replaced by a link, a FIFO or a file costs only the pages in it, at a start
// and while outld runs; what is set aside from this device's own op log stays on this device and
// within its bounds, however often a peer writes there.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct PeerFolderTests {
    typealias Misplaced = OpLogTrustTests.Misplaced

    func stateDir(_ h: OutlHome) -> String { OpLogTrustTests().stateDir(h) }

    /// `journals/` or `pages/` replaced: `--once` makes every capture durable and acknowledged, writes
    /// every other page, says the fault in one line and exits 74; a daemon starts and serves; the
    /// folder back, its pages are written again. Nothing is written through the link.
    @Test(arguments: ["journals", "pages"], Misplaced.allCases)
    func a_page_folder_replaced_by_a_link_fifo_or_file_costs_only_its_pages(_ rel: String, _ what: Misplaced) throws {
        let h = try OutlHome()
        _ = try h.captureID("journal one")
        #expect(try h.capture(["page one"], extra: ["--quiet", "--page", "Foo"]).status == 0)
        #expect(try h.outld(["--once"]).status == 0)
        let outside = try OpLogTrustTests().misplace(what, at: rel, in: h)
        let before = listDir(outside).sorted()
        _ = try h.captureID("journal two", at: "2026-12-02T11:00:00Z")
        #expect(try h.capture(["page two"], extra: ["--quiet", "--page", "Foo"]).status == 0)

        let once = try h.outld(["--once"])
        let path = Path.join(h.workspace, rel)
        #expect(once.status == 74, "\(rel) \(what): \(once.status) \(once.stderr)")
        #expect(h.pending().isEmpty, "\(rel) \(what): captures wait: \(h.pending())")
        let said = once.stderr.split(separator: "\n").filter { $0.contains(path) }
        #expect(said.count == 1 && said[0].contains("no page in it is written"), "\(rel) \(what): \(once.stderr)")
        let other = rel == "journals" ? (readText(Path.join(h.workspace, "pages/Foo.md")) ?? "") : h.journal()
        #expect(other.contains(rel == "journals" ? "- page two" : "- journal two"), "\(rel) \(what): \(other)")
        let status = try run(binPath("outl"), ["status"], env: h.env)
        #expect(status.stdout.contains("pages not written  1") && status.stdout.contains("not a directory  \(path)"), "\(status.stdout)")

        // A restart serves: a capture is acknowledged, and the folder set back is written again.
        let d = try h.start()
        _ = try h.captureID("journal three", at: "2026-12-02T12:00:00Z")
        #expect(try h.capture(["page three"], extra: ["--quiet", "--page", "Foo"]).status == 0)
        #expect(eventually { h.pending().isEmpty && d.log.contains("ready") }, "\(rel) \(what): \(d.log)")
        #expect(listDir(outside).sorted() == before, "\(rel) \(what): written through the link: \(listDir(outside))")
        try Sys.unlink(path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let page = { rel == "journals" ? h.journal() : (readText(Path.join(h.workspace, "pages/Foo.md")) ?? "") }
        let word = rel == "journals" ? "journal" : "page"
        #expect(eventually { ["one", "two", "three"].allSatisfy { page().contains("- \(word) \($0)") } }, "\(rel) \(what): \(page())\n\(d.log)")
        #expect(d.stop() == 0)
    }

    /// A page file a buggy peer delivers cut short (inside a block's text, or inside a property) is
    /// nobody's edit: with no settle time at all, at once and after a restart, nothing in it becomes
    /// an op, and it waits until a whole file comes; a daemon says it too.
    @Test(arguments: ["- buy oat mi", "id:: "])
    func a_page_file_cut_short_by_a_peer_is_never_an_edit(_ cutAfter: String) throws {
        let h = try OutlHome()
        _ = try h.captureID("buy oat milk and bread")
        _ = try h.captureID("call the plumber", at: "2026-12-02T11:00:00Z")
        #expect(try h.outld(["--once"]).status == 0)
        let path = Path.join(h.workspace, "journals/2026_12_02.md"), own = OpLogTrustTests().ownFile(h)
        let whole = h.journal(), opsBefore = readText(own) ?? ""
        // The last occurrence: inside the last block's properties, or the first block's text.
        let cut = String(whole[..<whole.range(of: cutAfter, options: cutAfter.hasPrefix("-") ? [] : .backwards)!.upperBound])
        try OpLogTrustTests().deliver(cut, to: path)
        let noSettle = ["OUTL_SYNC_SETTLE_MS": "0"]
        for run in ["once", "a restart"] {
            let r = try h.outld(["--once"], extraEnv: noSettle)
            #expect(r.status == 0 && r.stderr.contains("cut short"), "\(run): \(r.stderr)")
            #expect(readText(own) == opsBefore, "\(run): the cut copy became ops:\n\(readText(own) ?? "")")
            #expect(h.journal() == cut, "\(run): \(h.journal())")
        }
        // A capture meanwhile is durable; the whole file delivered is nobody's edit either, and
        // the page is written again, every block whole.
        _ = try h.captureID("after the cut", at: "2026-12-02T12:00:00Z")
        #expect(try h.outld(["--once"], extraEnv: noSettle).status == 0)
        #expect(h.journal() == cut && (readText(own) ?? "").contains("after the cut"), "\(h.journal())")
        try OpLogTrustTests().deliver(whole, to: path)
        #expect(try h.outld(["--once"], extraEnv: noSettle).status == 0)
        #expect(h.journal().hasPrefix(whole) && h.journal().contains("- after the cut"), "\(h.journal())")
        // Delivered while outld runs: said, and nothing taken.
        let d = try h.start(extraEnv: noSettle)
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        let opsNow = readText(own) ?? "", now = h.journal()
        let cutAgain = String(now[..<now.range(of: cutAfter, options: cutAfter.hasPrefix("-") ? [] : .backwards)!.upperBound])
        try OpLogTrustTests().deliver(cutAgain, to: path)
        #expect(eventually { d.log.contains("cut short") }, "\(d.log)")
        #expect(d.stop() == 0)
        #expect(readText(own) == opsNow && h.journal() == cutAgain, "\(readText(own) ?? "")\n\(h.journal())")
    }

    /// A peer that writes into this device's own op log again and again: each time outld keeps the
    /// foreign lines in the state directory (never in the synced folder), and what it keeps stays
    /// within 32 files and 64 MiB, the oldest dropped with a line, each file at most 16 MiB.
    @Test func what_is_set_aside_stays_on_this_device_within_its_bounds() throws {
        let h = try OutlHome()
        _ = try h.captureID("my line")
        #expect(try h.outld(["--once"]).status == 0)
        let own = OpLogTrustTests().ownFile(h), aside = Path.join(stateDir(h), "set-aside")
        // Ended by a whole op of another device: a last line that is not one is a torn tail, cut.
        let foreign = try OpLogTrustTests().foreignLine()
        var dropped = 0
        func writeInto(_ junk: String) throws {
            let was = readText(own) ?? ""
            try OpLogTrustTests().deliver(was + junk + foreign, to: own)
            let r = try h.outld(["--once"])
            #expect(r.status == 0 && r.stderr.contains("set aside in \(aside)"), "\(r.stderr)")
            dropped += r.stderr.components(separatedBy: "dropped, the oldest set-aside file").count - 1
        }
        // Many small writes: the count is bounded.
        for k in 0..<36 { try writeInto("junk line \(k) from a peer\n") }
        let files = listDir(aside)
        #expect(files.count == 32 && dropped == 4, "\(files.count) files, \(dropped) dropped: \(files)")
        #expect(files.compactMap { readText(Path.join(aside, $0)) }.joined().contains("junk line 35"), "the newest is kept")
        // A few large ones: the bytes are bounded (each 20 MB write keeps its first 16 MiB).
        let line = String(repeating: "x", count: 1023) + "\n"
        for _ in 0..<5 { try writeInto(String(repeating: line, count: 20_000)) }
        let sizes = listDir(aside).map { Int(((try? Sys.lstat(Path.join(aside, $0)))?.st_size) ?? 0) }
        let total = sizes.reduce(0, +)
        #expect(sizes.allSatisfy { $0 <= 16 << 20 } && total <= 64 << 20, "set aside: \(sizes.count) files, \(total) bytes")
        #expect(sizes.filter { $0 == 16 << 20 }.count == 4, "the four newest large ones are kept whole to the limit: \(sizes)")
        #expect(!FileManager.default.fileExists(atPath: Path.join(h.workspace, ".outl/set-aside")), "set aside inside the synced folder")
        let status = try run(binPath("outl"), ["status"], env: h.env)
        #expect(status.stdout.contains("set aside  \(sizes.count) files, \(total) bytes in \(aside)"), "\(status.stdout)")
        #expect(!(readText(own) ?? "").contains("junk") && !(readText(own) ?? "").contains("xxxx"), "the op log keeps only this device's ops")
        #expect(h.journal().components(separatedBy: "- ").count == 2 && !h.journal().contains("junk"), "\(h.journal())")
    }
}
