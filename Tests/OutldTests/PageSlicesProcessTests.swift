// Page slices, with the real outld: a device that has the op log but no page file is ready after
// the boot and writes its pages afterwards, a slice per turn of its loop; a capture made meanwhile
// lands between two slices, its page first; STATUS= says how far the writing is; `outld --once`
// writes every page before it exits, with a progress line only on a terminal.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct PageSlicesProcessTests {
    /// 500 days of 100 captures in the op log, and no page file.
    func opsOnly() throws -> OutlHome {
        let h = try OutlHome()
        let r = try run(binPath("outl"), ["--workspace", h.workspace, "debug-generate", "50000"], env: h.env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(listDir(Path.join(h.workspace, "journals")).isEmpty)
        return h
    }

    @Test func a_capture_lands_between_the_slices_of_a_first_projection_and_status_says_how_far() throws {
        let h = try opsOnly()
        let notify = try NotifySocket()
        let d = try h.start([], extraEnv: ["NOTIFY_SOCKET": notify.path, "OUTL_PAGE_SLICE_PAGES": "1"])
        #expect(notify.waitFor { $0.contains("READY=1") })
        let id = try h.captureID("captured while the pages are written")
        #expect(eventually(60) { h.journal().contains("captured while the pages are written") }, "\(d.log)")
        // The capture's page was written while pages of the backlog were still to write.
        let written = listDir(Path.join(h.workspace, "journals")).count
        #expect(written < 501, "all \(written) pages were written before the capture landed")
        #expect(notify.waitFor(60) { $0.contains("STATUS=idle") && $0.contains("1 drained") }, "\(notify.messages.suffix(3))\n\(d.log)")
        #expect(listDir(Path.join(h.workspace, "journals")).count == 501)
        let progress = notify.messages.compactMap { m -> (Int, Int)? in
            guard let r = m.range(of: "STATUS=writing pages: ") else { return nil }
            let f = m[r.upperBound...].split(separator: ";")[0].replacingOccurrences(of: ",", with: "").split(separator: " ")
            return f.count == 3 ? (Int(f[0]) ?? -1, Int(f[2]) ?? -1) : nil
        }
        #expect(progress.contains { $0.0 > 0 && $0.0 < $0.1 && $0.1 >= 490 }, "\(notify.messages)")
        #expect(d.stop() == 0)
        // The drain's entry comes before the backlog's end in the log.
        let log = d.log
        let landed = log.range(of: id)?.lowerBound, done = log.range(of: "page(s) left to write in")?.lowerBound
        #expect(landed != nil && done != nil && landed! < done!, "\(log)")
    }

    @Test func outld_once_writes_every_page_and_shows_progress_only_on_a_terminal() throws {
        let h = try opsOnly()
        let quiet = try h.outld(["--once"], extraEnv: ["OUTL_PAGE_SLICE_PAGES": "7", "OUTL_PROGRESS_AFTER_MS": "0"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(listDir(Path.join(h.workspace, "journals")).count == 500)
        #expect(!quiet.stderr.contains("writing pages") && !quiet.stderr.contains("\r"), "\(quiet.stderr)")

        // On a terminal (script(1) gives it one): the line, rewritten in place, then erased.
        let g = try opsOnly()
        let env = g.env.merging(["OUTL_PAGE_SLICE_PAGES": "7", "OUTL_PROGRESS_AFTER_MS": "0"]) { $1 }
        let cmd = "'\(binPath("outld"))' --once --log stderr"
        let tty = try run("/usr/bin/script", ["-qefc", cmd, "/dev/null"], env: env)
        #expect(tty.status == 0, "\(tty.stdout)\(tty.stderr)")
        #expect(tty.stdout.contains("\r\u{1B}[Koutld: writing pages: "), "\(tty.stdout.debugDescription)")
        #expect(listDir(Path.join(g.workspace, "journals")).count == 500)
    }
}
