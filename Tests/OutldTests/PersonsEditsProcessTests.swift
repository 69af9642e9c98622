// A person's edits reach the op log exactly once, as a person makes them, with the real outld running:
// a phone's save that Syncthing 1.19 delivers by unlinking the old file and then renaming its
// temporary in, and a stale editor buffer saved after a capture landed (issue 48).
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemCalls
import Testing
import TestSupport

/// Replaces `path` with `text` as Syncthing 1.19 does on a device receiving a file: its temporary
/// `.syncthing.NAME.tmp` written and fsync'd, the old file unlinked, then the temporary renamed to
/// the name (lib/model/folder_sendrecv.go, performFinish). Between the two it waits until outld
/// begins writing a file in `outlTmp` (it then has read the name empty and renames its projection
/// there next), or `gapMs` at most: the moment a sync tool's rename threw a phone's save away.
func replaceLikeSyncthing(_ path: String, _ text: String, outlTmp: String, gapMs: Int32) {
    let tmp = Path.join(Path.parent(of: path), ".syncthing.\(Path.lastComponent(path)).tmp")
    let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0, "cannot write \(tmp)")
    let bytes = Array(text.utf8)
    precondition(write(fd, bytes, bytes.count) == bytes.count)
    fsync(fd)
    close(fd)
    let watch = inotify_init1(Int32(IN_NONBLOCK))
    precondition(watch >= 0 && inotify_add_watch(watch, outlTmp, UInt32(IN_CREATE)) >= 0, "cannot watch \(outlTmp)")
    unlink(path)
    var p = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
    _ = poll(&p, 1, gapMs)
    close(watch)
    precondition(rename(tmp, path) == 0)
}
extension PageFilesHome {
    /// This device's own op file delivered into `to`'s ops directory, as Syncthing does.
    func carryOwnOps(to: PageFilesHome) throws {
        let own = try #require(opFiles().first { f in !peers.contains { f.hasSuffix("ops-\($0).jsonl") } })
        try FileManager.default.createDirectory(atPath: to.opsDir, withIntermediateDirectories: true)
        let name = Path.lastComponent(own), tmp = Path.join(to.opsDir, ".syncthing.\(name).tmp")
        try Data((readText(own) ?? "").utf8).write(to: URL(fileURLWithPath: tmp))
        try Sys.rename(tmp, Path.join(to.opsDir, name))
        let actor = String(name.dropFirst(4).dropLast(6))
        if !to.peers.contains(actor) { to.peers.append(actor) }
    }
}

@Suite(.serialized) struct PersonsEditsProcessTests {
    /// The phone edits a capture's text in every round; each save is delivered with its rename as
    /// late as outld's write of the page begins, or sooner, from at once to 200 ms.
    @Test func a_phones_saves_delivered_by_unlink_then_rename_all_land_on_a_running_outld() throws {
        let w = try PageFilesHome()
        try w.capture("from the laptop")
        try w.capture("left alone")
        let d = try w.start()
        let page = w.path(w.todayFile)
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- left alone") == 1 }, "\(w.text(w.todayFile) ?? "no file")")
        var previous = "from the laptop"
        try FileManager.default.createDirectory(atPath: w.path(".outl/tmp"), withIntermediateDirectories: true)
        for (round, gap) in [0, 1, 5, 50, 50, 200].enumerated() {
            let edited = "edited on the phone, round \(round)"
            let now = w.text(w.todayFile) ?? ""
            #expect(now.contains("- \(previous)\n"), "round \(round): \(now)")
            replaceLikeSyncthing(page, now.replacingOccurrences(of: "- \(previous)\n", with: "- \(edited)\n"),
                                 outlTmp: w.path(".outl/tmp"), gapMs: Int32(gap))
            #expect(eventually(20) { w.ownOps().contains("\"t\":\"\(edited)\"") },
                    "round \(round) (a \(gap) ms gap): the phone's edit never became an op\n\(w.text(w.todayFile) ?? "no file")\n\(d.log)")
            #expect(eventually { w.text(w.todayFile)?.contains("- \(edited)\n") == true }, "round \(round): \(w.text(w.todayFile) ?? "no file")")
            previous = edited
        }
        #expect(pageFilesCount(w.text(w.todayFile), "- left alone") == 1)
        #expect(pageFilesCount(w.text(w.todayFile), "- from the laptop") == 0)
        #expect(w.stop(d) == 0)
        // A fresh start from the op log alone shows the last edit.
        try Sys.unlink(page)
        let r = try w.once()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(w.text(w.todayFile)?.contains("- \(previous)\n") == true, "\(w.text(w.todayFile) ?? "no file")")
    }

    /// Finding 1 as a person meets it in vim: the buffer was loaded before "gamma" landed, and the
    /// line typed in it is a new block; gamma keeps its text, capture time and source.
    @Test func a_stale_buffer_saved_after_a_capture_landed_changes_nothing_it_did_not_show() throws {
        let w = try PageFilesHome()
        let d = try w.start()
        let page = w.path(w.todayFile)
        try w.capture("alpha")
        try w.capture("beta")
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- beta") == 1 })
        let buffer = w.text(w.todayFile) ?? ""
        try w.capture("gamma")
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- gamma") == 1 })
        // vim's :w writes the buffer in place.
        try writeText(page, buffer + "- saved from a stale buffer\n")
        #expect(eventually { w.text(w.todayFile)?.contains("- saved from a stale buffer\n  id:: ") == true }, "\(w.text(w.todayFile) ?? "")\n\(d.log)")
        let shown = w.text(w.todayFile) ?? ""
        for line in ["alpha", "beta", "gamma", "saved from a stale buffer"] {
            #expect(pageFilesCount(shown, "- \(line)") == 1, "\(line):\n\(shown)")
        }
        // gamma keeps its record (shown by outl show --details), which its page leaves out.
        let details = try w.outl(["show", "--details"]).stdout
        let gamma = details.components(separatedBy: "- gamma\n").dropFirst().first ?? ""
        #expect(gamma.hasPrefix("  captured-at:: ") && gamma.contains("  source:: "), "\(details)")
        #expect(!shown.contains("captured-at::") && !shown.contains("source::"), "\(shown)")
        #expect(!w.ownOps().contains("\"k\":\"ub\""), "a stale save changed a block:\n\(w.ownOps())")
        #expect(w.stop(d) == 0)
    }

    /// Finding 4 as a person meets it in vim: `dd` on the line `- last capture` alone deletes that
    /// block, and its property lines left behind never join the block above.
    @Test(arguments: ["last capture", "second"])
    func dd_on_a_bullet_line_alone_deletes_that_block_and_no_other_changes(_ gone: String) throws {
        let w = try PageFilesHome()
        let d = try w.start()
        for text in ["first", "second", "last capture"] { try w.capture(text) }
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- last capture") == 1 })
        let before = w.text(w.todayFile) ?? ""
        try writeText(w.path(w.todayFile), before.replacingOccurrences(of: "- \(gone)\n", with: ""))
        #expect(eventually { w.ownOps().contains("\"k\":\"db\"") }, "the deletion never became an op:\n\(d.log)")
        // Written again without the leftover lines: two blocks, each with its own properties once.
        #expect(eventually { (w.text(w.todayFile) ?? "").components(separatedBy: "id::").count == 3 }, "\(w.text(w.todayFile) ?? "")")
        let after = w.text(w.todayFile) ?? ""
        let details = try w.outl(["show", "--details"]).stdout
        #expect(details.components(separatedBy: "captured-at::").count == 3 && !after.contains(gone), "\(details)\n\(after)")
        #expect(!w.ownOps().contains("\"k\":\"ub\""), "a block was changed:\n\(w.ownOps())")
        #expect(w.stop(d) == 0)
        let r = try w.outl(["show", "--json"])
        #expect(!r.stdout.contains(gone), "\(r.stdout)")
    }

    /// The id:: under the block line `line` of a page's text.
    func id(under line: String, in text: String) -> String? {
        let after = text.components(separatedBy: line + "\n").dropFirst().first ?? ""
        for l in after.split(separator: "\n") {
            if l.hasPrefix("- ") { return nil }
            if l.hasPrefix("  id:: ") { return String(l.dropFirst(7)) }
        }
        return nil
    }

    /// Finding 5 as a person meets it: a peer rewrote a line with the largest stamp the reader took
    /// (now refused: outside the one range), or with the very top of the range; the person fixes
    /// the line by hand, and after a restart the fix is still on the page.
    @Test(arguments: ["past the range", "at the top of the range"])
    func a_hand_fix_of_a_line_a_peer_stamped_at_the_limit_survives_a_restart(_ how: String) throws {
        let w = try PageFilesHome()
        var d = try w.start()
        try w.capture("as captured")
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- as captured") == 1 })
        let block = try #require(id(under: "- as captured", in: w.text(w.todayFile) ?? ""))
        var peer = PageFilesPeer()
        peer.wall = how == "past the range" ? 999_999_999_999_999_999 : 253_402_300_799_999
        peer.counter = Int(UInt32.max)
        peer.updateBlock(id: block, text: "from the peer")
        if how == "past the range" {
            // A later line of the same peer, with an honest stamp: it wins only if the one past
            // the range was refused (applied, that one's stamp would beat it).
            peer.wall = Int64(Date().timeIntervalSince1970 * 1000)
            peer.counter = 0
            peer.updateBlock(id: block, text: "the peer's honest edit")
            try w.deliver(peer)
            #expect(eventually { pageFilesCount(w.text(w.todayFile), "- the peer's honest edit") == 1 },
                    "\(w.text(w.todayFile) ?? "")\n\(d.log)")
            #expect(w.stop(d) == 0)
            return
        }
        try w.deliver(peer)
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- from the peer") == 1 }, "\(w.text(w.todayFile) ?? "")\n\(d.log)")
        try writeText(w.path(w.todayFile), (w.text(w.todayFile) ?? "").replacingOccurrences(of: "- from the peer\n", with: "- fixed by hand\n"))
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- fixed by hand") == 1 && d.log.contains("top of the stamp range") },
                "\(w.text(w.todayFile) ?? "")\n\(d.log)")
        #expect(w.stop(d) == 0)
        d = try w.start()
        #expect(!d.log.contains("invalid line"), "\(d.log)")
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- fixed by hand") == 1 }, "after a restart:\n\(w.text(w.todayFile) ?? "")")
        #expect(w.stop(d) == 0)
    }

    /// Finding 3 as two people meet it: two devices, each with its outld, apart; each person edits
    /// the same line in their own journal; the op logs then travel both ways (as Syncthing carries
    /// them). Both pages end alike, with both people's words, and the journal says so.
    @Test func two_outlds_apart_editing_one_line_both_keep_every_word() throws {
        let a = try PageFilesHome(), b = try PageFilesHome()
        let da = try a.start(), db = try b.start()
        func carry(_ from: PageFilesHome, _ to: PageFilesHome) throws { try from.carryOwnOps(to: to) }
        try a.capture("call the plumber")
        #expect(eventually { pageFilesCount(a.text(a.todayFile), "- call the plumber") == 1 })
        try carry(a, b)
        #expect(eventually { pageFilesCount(b.text(b.todayFile), "- call the plumber") == 1 }, "\(db.log)")
        // Apart: each person edits the line in their own editor.
        for (w, words) in [(a, "before friday"), (b, "ask about the boiler")] {
            try writeText(w.path(w.todayFile), (w.text(w.todayFile) ?? "").replacingOccurrences(of: "- call the plumber\n", with: "- call the plumber, \(words)\n"))
        }
        #expect(eventually { a.ownOps().contains("before friday") && b.ownOps().contains("ask about the boiler") })
        try carry(a, b)
        try carry(b, a)
        for (w, d) in [(a, da), (b, db)] {
            #expect(eventually { pageFilesCount(w.text(w.todayFile), "- call the plumber, before friday") == 1
                        && pageFilesCount(w.text(w.todayFile), "- call the plumber, ask about the boiler") == 1 },
                    "\(w.text(w.todayFile) ?? "")\n\(d.log)")
        }
        // The device that kept the older text as a block says so, in its journal and in `outl
        // status`; both end with one page.
        #expect(eventually { (da.log + db.log).contains("changed its text at once") })
        let told = try a.outl(["status"]).stdout + b.outl(["status"]).stdout
        #expect(told.contains("notices    1 in the last 7 days") && told.contains("changed its text at once"), "\(told)")
        let json = [try a.outl(["status", "--json"]).stdout, try b.outl(["status", "--json"]).stdout]
        let kinds = json.compactMap { doc -> [String]? in
            guard let d = try? JSONSerialization.jsonObject(with: Data(doc.utf8)) as? [String: Any],
                  let n = d["notices"] as? [[String: Any]] else { return nil }
            return n.compactMap { $0["kind"] as? String }
        }
        // One device said it, or both when each found the two texts before the other's kept block came.
        let said = kinds.flatMap { $0 }
        #expect(kinds.count == 2 && !said.isEmpty && said.allSatisfy { $0 == "concurrent-edit" }, "\(json)")
        try carry(a, b)
        try carry(b, a)
        #expect(eventually { a.text(a.todayFile) == b.text(b.todayFile) }, "\(a.text(a.todayFile) ?? "")\n---\n\(b.text(b.todayFile) ?? "")")
        #expect(a.stop(da) == 0 && b.stop(db) == 0)
    }

    /// A line a deletes by hand while b's outld is not running: b's next start says who deleted
    /// it, as a live merge would have, and the start after it does not say it again.
    @Test func a_deletion_that_arrived_while_outld_was_not_running_is_said_at_the_next_start() throws {
        let a = try PageFilesHome(), b = try PageFilesHome()
        try a.capture("keep or not")
        try a.capture("stays")
        #expect(try a.once().status == 0)
        try a.carryOwnOps(to: b)
        #expect(try b.once().status == 0)
        #expect(pageFilesCount(b.text(b.todayFile), "- keep or not") == 1)
        // a's person deletes the line (its bullet and property lines); a's outld takes it.
        var lines = (a.text(a.todayFile) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let at = try #require(lines.firstIndex(of: "- keep or not"))
        var end = at + 1
        while end < lines.count, lines[end].hasPrefix("  ") { end += 1 }
        lines.removeSubrange(at..<end)
        try writeText(a.path(a.todayFile), lines.joined(separator: "\n"))
        #expect(try a.once().status == 0)
        #expect(a.ownOps().contains("\"k\":\"db\""), "\(a.ownOps())")
        try a.carryOwnOps(to: b)
        let first = try b.once()
        #expect(first.status == 0 && first.stderr.contains("deleted 1 block here while outld was not running")
                    && first.stderr.contains("keep or not"), "\(first.stderr)")
        #expect(pageFilesCount(b.text(b.todayFile), "- keep or not") == 0)
        let again = try b.once()
        #expect(again.status == 0 && !again.stderr.contains("deleted"), "\(again.stderr)")
    }
}
