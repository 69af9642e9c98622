// PageFilesOwnerTests: the page-file layer as a user meets it, with the real outld, outl and
// outl-capture: another spelling of a day beside a synced workspace deletes nothing, one page that
// cannot be written holds back no other (and says so), and no
// restart grows the op log without a person's edit.
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct PageFilesOwnerTests {
    /// Lines of every op file, and whether any is a delete ("k":"db").
    func opLines(_ h: OutlHome) -> [String] {
        h.opsFiles().flatMap { (readText(Path.join(h.workspace, ".outl/ops/\($0)")) ?? "").split(separator: "\n").map(String.init) }
    }

    func deletes(_ h: OutlHome) -> [String] { opLines(h).filter { $0.contains(#""k":"db""#) } }

    /// A second device's op file in the workspace: outl-capture and outld --once with another state
    /// directory (another actor), as a synced peer would leave it.
    func addSecondDevice(_ h: OutlHome) throws {
        let other = ["XDG_STATE_HOME": h.tmp.sub("other-state")]
        let c = try run(binPath("outl-capture"), ["--quiet", "--at", "2026-12-01T09:00:00Z", "from the other device"],
                        env: h.env.merging(other) { $1 })
        #expect(c.status == 0, "\(c.stderr)")
        let r = try h.outld(["--once"], extraEnv: other)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(h.opsFiles().count == 2, "two devices' op logs: \(h.opsFiles())")
    }

    @Test(arguments: ["with text", "empty, then typed into"])
    func the_obsidian_spelling_of_a_day_in_a_synced_workspace_deletes_nothing(_ how: String) throws {
        let h = try OutlHome()
        for t in ["first line", "second line", "third line"] { _ = try h.captureID(t) }
        #expect(try h.outld(["--once"]).status == 0)
        try addSecondDevice(h)
        let d = try h.start(extraEnv: ["OUTL_SYNC_SETTLE_MS": "300"])
        defer { d.stop() }
        #expect(eventually { d.log.contains("outld: ready") }, "\(d.log)")
        let iso = Path.join(h.workspace, "journals/2026-12-02.md")
        if how == "with text" {
            try writeText(iso, "- from obsidian\n")
        } else {
            try writeText(iso, "")
            usleep(2_000_000)
            try writeText(iso, "- from obsidian\n")
        }
        #expect(eventually(30) { !FileManager.default.fileExists(atPath: iso) && h.journal().contains("from obsidian") },
                "the other spelling was not taken and removed:\n\(d.log)")
        d.stop()
        let page = h.journal()
        for t in ["first line", "second line", "third line", "from obsidian"] {
            #expect(page.components(separatedBy: "- \(t)").count == 2, "\(t) is not in the day once:\n\(page)")
        }
        #expect(deletes(h).isEmpty, "delete ops nobody made: \(deletes(h))\n\(d.log)")
        let check = try run(binPath("outl"), ["check"], env: h.env)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func the_obsidian_spelling_made_while_outld_was_down_deletes_nothing() throws {
        let h = try OutlHome()
        for t in ["first line", "second line"] { _ = try h.captureID(t) }
        #expect(try h.outld(["--once"]).status == 0)
        try addSecondDevice(h)
        let iso = Path.join(h.workspace, "journals/2026-12-02.md")
        try writeText(iso, "- typed while outld was down\n")
        // The settle: the file is a second spelling in a synced workspace, so it waits that long.
        usleep(400_000)
        let r = try h.outld(["--once"], extraEnv: ["OUTL_SYNC_SETTLE_MS": "300"])
        #expect(r.status == 0, "\(r.stderr)")
        let page = h.journal()
        for t in ["first line", "second line", "typed while outld was down"] { #expect(page.contains("- \(t)"), "\(t):\n\(page)") }
        #expect(!FileManager.default.fileExists(atPath: iso), "\(r.stderr)")
        #expect(deletes(h).isEmpty, "delete ops nobody made: \(deletes(h))")
    }

    @Test(arguments: ["fifo", "70 MB file"])
    func one_page_that_cannot_be_written_holds_back_no_other(_ what: String) throws {
        let h = try OutlHome()
        _ = try h.captureID("on the first", at: "2026-12-01T10:00:00Z")
        #expect(try h.outld(["--once"]).status == 0)
        let bad = Path.join(h.workspace, "journals/2026_12_01.md")
        try FileManager.default.removeItem(atPath: bad)
        if what == "fifo" {
            #expect(mkfifo(bad, 0o644) == 0)
        } else {
            let fd = open(bad, O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0 && ftruncate(fd, 70 << 20) == 0)
            close(fd)
        }
        _ = try h.captureID("on the second")
        _ = try h.captureID("later on the first", at: "2026-12-01T11:00:00Z")
        let r = try h.outld(["--once"])
        #expect(r.status == 74, "status \(r.status): \(r.stdout)\(r.stderr)")
        #expect(h.journal().contains("on the second"), "the other day's capture did not land:\n\(r.stderr)")
        #expect(r.stderr.contains("journals/2026_12_01.md"), "the failing page is not named: \(r.stderr)")
        #expect(opLines(h).contains { $0.contains("later on the first") }, "the capture is not in the op log")
        let st = try run(binPath("outl"), ["status"], env: h.env)
        #expect(st.stdout.contains("pages not written") && st.stdout.contains("journals/2026_12_01.md"), "\(st.stdout)")
        if what == "fifo" {
            var s = stat()
            #expect(lstat(bad, &s) == 0 && (s.st_mode & S_IFMT) == S_IFIFO, "the FIFO was replaced")
        } else {
            #expect((try? FileManager.default.attributesOfItem(atPath: bad)[.size] as? Int) == 70 << 20)
        }
        // Fixed by the person: the page is written again, with what was captured meanwhile.
        try FileManager.default.removeItem(atPath: bad)
        let again = try h.outld(["--once"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(h.journal("2026_12_01").contains("later on the first"))
        let st2 = try run(binPath("outl"), ["status"], env: h.env)
        #expect(!st2.stdout.contains("pages not written"), "\(st2.stdout)")
    }

    @Test func a_running_outld_logs_a_failing_page_once_and_goes_on() throws {
        let h = try OutlHome()
        _ = try h.captureID("on the first", at: "2026-12-01T10:00:00Z")
        #expect(try h.outld(["--once"]).status == 0)
        let bad = Path.join(h.workspace, "journals/2026_12_01.md")
        try FileManager.default.removeItem(atPath: bad)
        #expect(mkfifo(bad, 0o644) == 0)
        let d = try h.start()
        defer { d.stop() }
        for i in 1...3 {
            _ = try h.captureID("first day \(i)", at: "2026-12-01T1\(i):00:00Z")
            _ = try h.captureID("second day \(i)")
            #expect(eventually { h.journal().contains("second day \(i)") }, "\(d.log)")
        }
        // A script's `outld --once` beside it is told the page was not written, as if it had drained.
        _ = try h.captureID("first day 4", at: "2026-12-01T14:00:00Z")
        let once = try h.outld(["--once"])
        #expect(once.status == 74 && once.stdout.contains("1 page(s) not written (journals/2026_12_01.md)"), "\(once.status) \(once.stdout)")
        d.stop()
        let failing = d.log.components(separatedBy: "\n").filter { $0.contains("journals/2026_12_01.md") && $0.contains("not a regular file") }
        #expect(failing.count == 1, "logged \(failing.count) times:\n\(d.log)")
        #expect(failing.first?.contains("this page is not written until that changes") == true, "\(failing)")
    }

    @Test func ten_restarts_make_no_op_without_a_persons_edit() throws {
        let h = try OutlHome()
        _ = try h.captureID("a line")
        try Durable.makeDirectory(Path.join(h.workspace, "pages"), mode: 0o755)
        try writeText(Path.join(h.workspace, "pages/Reading.md"), "- r2\n")
        try writeText(Path.join(h.workspace, "pages/reading.md"), "- r3\n")
        let quick = ["OUTL_SYNC_SETTLE_MS": "0"]
        #expect(try h.outld(["--once"], extraEnv: quick).status == 0)
        try addSecondDevice(h)
        #expect(try h.outld(["--once"], extraEnv: quick).status == 0)
        let first = opLines(h).count
        for i in 2...10 {
            let r = try h.outld(["--once"], extraEnv: quick)
            #expect(r.status == 0, "run \(i): \(r.stderr)")
            #expect(opLines(h).count == first, "run \(i) grew the op log \(first) → \(opLines(h).count)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Path.join(h.workspace, "pages"))
        #expect(files.count == 1, "\(files)")
        let page = readText(Path.join(h.workspace, "pages/\(files.first ?? "")")) ?? ""
        #expect(page.contains("- r2") && page.contains("- r3"), "\(page)")
        #expect(deletes(h).isEmpty)
    }
}
