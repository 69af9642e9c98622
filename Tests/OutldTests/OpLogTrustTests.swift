// OpLogTrustTests: the op logs under a sync tool, with the real outld: this device's own file renamed
// over, deleted, cut or given lines of others while outld runs or is down, and another device's file
// deleted or cut; every capture stays exactly once, and nothing is deleted because a file lost ops.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct OpLogTrustTests {
    var opsDir: (OutlHome) -> String { { Path.join($0.workspace, ".outl/ops") } }

    /// This device's own op file (the one whose actor the state directory holds).
    func ownFile(_ h: OutlHome) -> String {
        let actor = (readText(Path.join(stateDir(h), "actor")) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        return Path.join(opsDir(h), "ops-\(actor).jsonl")
    }

    func stateDir(_ h: OutlHome) -> String {
        let base = Path.join(h.home, ".local/state/outl")
        return Path.join(base, listDir(base).first { $0.hasPrefix("ws-") } ?? "none")
    }

    /// Lines of `file` that carry `text`.
    func count(_ text: String, in file: String) -> Int {
        (readText(file) ?? "").split(separator: "\n").filter { $0.contains(text) }.count
    }

    /// Writes `bytes` at `path` as Syncthing delivers a file: a temporary in the same directory,
    /// renamed over the name.
    func deliver(_ text: String, to path: String) throws {
        let tmp = Path.join(Path.parent(of: path), ".syncthing.\(Path.lastComponent(path)).tmp")
        try writeText(tmp, text)
        try Sys.rename(tmp, path)
    }

    /// A valid op line of another device: its last op line.
    func foreignLine() throws -> String {
        let other = try OutlHome()
        _ = try other.captureID("a line of another device")
        #expect(try other.outld(["--once"]).status == 0)
        let file = Path.join(opsDir(other), other.opsFiles()[0])
        return String((readText(file) ?? "").split(separator: "\n").last ?? "") + "\n"
    }

    @Test(arguments: ["an identical copy renamed over it", "a copy with lines of others", "an older copy", "a deletion"])
    func own_op_log_replaced_while_outld_runs_keeps_every_capture(_ how: String) throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("line before")
        #expect(eventually { h.journal().contains("- line before") })
        let own = ownFile(h)
        let was = readText(own) ?? ""
        switch how {
        case "an identical copy renamed over it": try deliver(was, to: own)
        case "a copy with lines of others": try deliver(was + "garbage a peer appended\n" + foreignLine(), to: own)
        case "an older copy": try deliver(String(was.split(separator: "\n")[0]) + "\n", to: own)
        default: try Sys.unlink(own)
        }
        #expect(eventually { d.log.contains("written again from this device's archive") }, "\(d.log)")
        _ = try h.captureID("line after")
        #expect(eventually { h.journal().contains("- line after") })
        #expect(d.stop() == 0)
        #expect(count("line before", in: own) == 1 && count("line after", in: own) == 1, "\(how): \(readText(own) ?? "")")
        #expect(count("garbage", in: own) == 0 && count("another device", in: own) == 0, "\(how): \(readText(own) ?? "")")
        if how == "a copy with lines of others" {
            let aside = Path.join(stateDir(h), "set-aside")
            let kept = listDir(aside).map { readText(Path.join(aside, $0)) ?? "" }.joined()
            #expect(!FileManager.default.fileExists(atPath: Path.join(h.workspace, ".outl/set-aside")), "set aside inside the synced folder")
            #expect(kept.contains("garbage a peer appended") && kept.contains("a line of another device"), "set aside: \(kept)")
        }
        // A fresh start from the files alone: each capture once, in the op log and the journal.
        try Sys.unlink(Path.join(h.workspace, "journals/2026_12_02.md"))
        #expect(try h.outld(["--once"]).status == 0)
        #expect(h.journal().components(separatedBy: "- line before").count == 2, "\(how):\n\(h.journal())")
        #expect(h.journal().components(separatedBy: "- line after").count == 2, "\(how):\n\(h.journal())")
        #expect(!h.journal().contains("another device"), "\(how): a stray line was applied:\n\(h.journal())")
    }

    @Test(arguments: ["an older copy", "a deletion", "a copy with lines of others"])
    func own_op_log_replaced_while_outld_is_down_is_written_again_from_the_archive(_ how: String) throws {
        let h = try OutlHome()
        _ = try h.captureID("first line")
        _ = try h.captureID("second line", at: "2026-12-02T11:00:00Z")
        #expect(try h.outld(["--once"]).status == 0)
        let own = ownFile(h)
        let was = readText(own) ?? ""
        switch how {
        case "an older copy": try deliver(String(was.split(separator: "\n")[0]) + "\n", to: own)
        case "a deletion": try Sys.unlink(own)
        default: try deliver(was + foreignLine(), to: own)
        }
        _ = try h.captureID("third line", at: "2026-12-02T12:00:00Z")
        let r = try h.outld(["--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("written again from this device's archive"), "\(how): \(r.stderr)")
        for line in ["first line", "second line", "third line"] {
            #expect(count(line, in: own) == 1, "\(how): \(line) in \(readText(own) ?? "")")
            #expect(h.journal().components(separatedBy: "- \(line)").count == 2, "\(how): \(line):\n\(h.journal())")
        }
        #expect(!h.journal().contains("another device"), "\(how): a stray line was applied:\n\(h.journal())")
    }

    @Test(arguments: ["deleted", "cut"])
    func another_devices_op_log_deleted_or_cut_keeps_its_blocks_and_writes_no_delete(_ how: String) throws {
        let laptop = try OutlHome(), desktop = try OutlHome()
        for (i, line) in ["laptop one", "laptop two", "laptop three"].enumerated() {
            _ = try laptop.captureID(line, at: "2026-12-02T1\(i):00:00Z")
        }
        #expect(try laptop.outld(["--once"]).status == 0)
        let name = laptop.opsFiles()[0]
        let theirs = Path.join(opsDir(desktop), name)
        try FileManager.default.createDirectory(atPath: opsDir(desktop), withIntermediateDirectories: true)
        let full = readText(Path.join(opsDir(laptop), name)) ?? ""
        try deliver(full, to: theirs)
        _ = try desktop.captureID("desktop one")
        #expect(try desktop.outld(["--once"]).status == 0)
        #expect(desktop.journal().contains("- laptop three") && desktop.journal().contains("- desktop one"), "\(desktop.journal())")
        // The sync tool deletes the laptop's file (a phone deleted it), or delivers a cut copy.
        if how == "deleted" { try Sys.unlink(theirs) } else { try deliver(String(full.split(separator: "\n")[0]) + "\n", to: theirs) }
        _ = try desktop.captureID("desktop two", at: "2026-12-02T13:00:00Z")
        let r = try desktop.outld(["--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains(name) && r.stderr.contains("kept from this device's archive"), "\(how): \(r.stderr)")
        let page = desktop.journal()
        for line in ["laptop one", "laptop two", "laptop three", "desktop one", "desktop two"] {
            #expect(page.components(separatedBy: "- \(line)").count == 2, "\(how): \(line):\n\(page)")
        }
        let mine = ownFile(desktop)
        #expect(count("\"k\":\"db\"", in: mine) == 0, "\(how): a delete op was written: \(readText(mine) ?? "")")
        #expect(count("laptop", in: mine) == 0, "\(how): the laptop's lines were recorded as this device's: \(readText(mine) ?? "")")
        let status = try run(binPath("outl"), ["status"], env: desktop.env)
        #expect(status.stdout.contains("fault: \(name)"), "\(how): \(status.stdout)")
        // The file whole again: the fault is gone.
        try deliver(full, to: theirs)
        #expect(try desktop.outld(["--once"]).status == 0)
        let healed = try run(binPath("outl"), ["status"], env: desktop.env)
        #expect(!healed.stdout.contains("fault:"), "\(how): \(healed.stdout)")
    }
}

/// renameat2(2), declared only under _GNU_SOURCE; flag 2 is RENAME_EXCHANGE.
@_silgen_name("renameat2") private func c_renameat2(_ fromDir: Int32, _ from: UnsafePointer<CChar>, _ toDir: Int32,
                                                    _ to: UnsafePointer<CChar>, _ flags: UInt32) -> Int32
func exchange(_ a: String, _ b: String) -> Int32 { c_renameat2(AT_FDCWD, a, AT_FDCWD, b, 2) }

extension OpLogTrustTests {
    /// What a peer (or a sync tool) can leave where one of outl's own directories belongs.
    enum Misplaced: String, CaseIterable { case link, fifo, file }

    /// Puts `what` at `rel` in one step (renameat2 RENAME_EXCHANGE, so a running outld sees the
    /// directory go and the replacement there at once), moving the directory, with what it held, to
    /// `outside` (the link's target); returns `outside`.
    func misplace(_ what: Misplaced, at rel: String, in h: OutlHome) throws -> String {
        let outside = h.tmp.sub("outside-\(UUID().uuidString)")
        let path = Path.join(h.workspace, rel), swap = Path.join(Path.parent(of: path), ".peer-swap")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        switch what {
        case .link: try FileManager.default.createSymbolicLink(atPath: swap, withDestinationPath: outside)
        case .fifo: #expect(mkfifo(swap, 0o644) == 0)
        case .file: try writeText(swap, "what a peer wrote\n")
        }
        #expect(exchange(swap, path) == 0, "renameat2: \(errno)")
        try FileManager.default.moveItem(atPath: swap, toPath: outside)
        return outside
    }

    func isDirectory(_ path: String) -> Bool { ((try? Sys.lstat(path))?.st_mode ?? 0) & S_IFMT == S_IFDIR }

    /// A link, a FIFO or a file where `.outl/ops` or `.outl/tmp` belongs stops nothing: `outld --once`
    /// sets it right (never following it), drains, exits 0; a file's bytes are kept in the state
    /// directory; each capture stays once; and a daemon started after it serves.
    @Test(arguments: [".outl/ops", ".outl/tmp"], Misplaced.allCases)
    func a_directory_of_outls_own_replaced_by_a_link_fifo_or_file_is_set_right(_ rel: String, _ what: Misplaced) throws {
        let h = try OutlHome()
        _ = try h.captureID("first line")
        #expect(try h.outld(["--once"]).status == 0)
        let outside = try misplace(what, at: rel, in: h)
        let before = listDir(outside).map { ($0, readText(Path.join(outside, $0)) ?? "") }
        _ = try h.captureID("second line", at: "2026-12-02T11:00:00Z")
        let once = try h.outld(["--once"])
        let path = Path.join(h.workspace, rel)
        #expect(once.status == 0, "\(rel) \(what): \(once.status) \(once.stderr)")
        #expect(once.stderr.contains("\(path) was a \(what == .link ? "symbolic link" : what == .fifo ? "FIFO" : "file of")"), "\(once.stderr)")
        #expect(isDirectory(path), "\(rel) \(what): not a directory again")
        #expect(h.pending().isEmpty, "\(rel) \(what): a capture still waits: \(h.pending())")
        for line in ["first line", "second line"] {
            #expect(count(line, in: ownFile(h)) == 1, "\(rel) \(what): \(line) in \(readText(ownFile(h)) ?? "")")
            #expect(h.journal().components(separatedBy: "- \(line)").count == 2, "\(rel) \(what):\n\(h.journal())")
        }
        if what == .file {
            let aside = Path.join(stateDir(h), "set-aside")
            #expect(listDir(aside).map { readText(Path.join(aside, $0)) ?? "" } == ["what a peer wrote\n"], "\(listDir(aside))")
        }
        let after = listDir(outside).map { ($0, readText(Path.join(outside, $0)) ?? "") }
        #expect(after.map(\.0) == before.map(\.0) && after.map(\.1) == before.map(\.1), "\(rel): the link's target changed: \(after.map(\.0))")
        let status = try run(binPath("outl"), ["status"], env: h.env)
        #expect(status.status == 0 && status.stdout.contains("notices") && status.stdout.contains(path), "\(status.stdout)")
        // The start after it serves.
        let d = try h.start()
        _ = try h.captureID("third line", at: "2026-12-02T12:00:00Z")
        #expect(eventually { h.journal().contains("- third line") }, "\(rel) \(what): \(d.log)")
        #expect(d.stop() == 0)
    }

    /// The same while outld runs: the next capture lands, and a peer's op file delivered after the
    /// repair is merged (the op directory is watched again).
    @Test(arguments: Misplaced.allCases)
    func op_directory_replaced_while_outld_runs_is_set_right_and_watched_again(_ what: Misplaced) throws {
        let h = try OutlHome()
        let d = try h.start()
        _ = try h.captureID("before")
        #expect(eventually { h.journal().contains("- before") }, "\(d.log)")
        _ = try misplace(what, at: ".outl/ops", in: h)
        _ = try h.captureID("after", at: "2026-12-02T11:00:00Z")
        #expect(eventually { h.journal().contains("- after") }, "\(what): \(d.log)")
        #expect(eventually { isDirectory(opsDir(h)) && count("before", in: ownFile(h)) == 1 }, "\(what): \(d.log)")
        let other = try OutlHome()
        _ = try other.captureID("from a peer", at: "2026-12-02T12:00:00Z")
        #expect(try other.outld(["--once"]).status == 0)
        let theirs = other.opsFiles()[0]
        try deliver(readText(Path.join(opsDir(other), theirs)) ?? "", to: Path.join(opsDir(h), theirs))
        #expect(eventually { h.journal().contains("- from a peer") }, "\(what): \(d.log)")
        #expect(d.stop() == 0)
        #expect(count("before", in: ownFile(h)) == 1 && count("after", in: ownFile(h)) == 1, "\(readText(ownFile(h)) ?? "")")
    }
}
