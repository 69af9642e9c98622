// SeveralDevicesTests: outld as one device among several sharing a folder, and as the one write actor
// of a workspace on this machine whatever the environment. Real binaries, private HOMEs.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct SeveralDevicesTests {
    @Test func second_outld_with_another_state_directory_exits_75_naming_the_first() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        // Another state directory and another spelling of the same workspace (a symlink): the
        // device-local lock differs, the workspace's does not.
        let alias = h.tmp.sub("alias")
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: h.workspace)
        let second = try h.outld(["--workspace", alias],
                                 extraEnv: ["XDG_STATE_HOME": h.tmp.sub("other-state")])
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("pid \(d.pid)"), "stderr: \(second.stderr)")
        #expect(h.opsFiles().count <= 1, "a second actor left an ops file: \(h.opsFiles())")
        #expect(!FileManager.default.fileExists(atPath: h.tmp.sub("other-state/outl")),
                "the refused outld minted device state")
        #expect(d.stop() == 0)
    }

    /// The journal without the block whose first line is `- text` (its property lines go too).
    func withoutBlock(_ file: String, _ text: String) -> String {
        var out: [Substring] = []
        var skipping = false
        for line in file.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "- \(text)" { skipping = true; continue }
            if skipping && line.hasPrefix("  ") { continue }
            skipping = false
            out.append(line)
        }
        return out.joined(separator: "\n")
    }

    @Test(arguments: ["in place", "by rename"])
    func a_running_outld_honours_a_hand_deletion_of_the_newest_block(saved how: String) throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try h.captureID("older line")
        #expect(eventually { h.journal().contains("- older line") })
        _ = try h.captureID("newest line")
        #expect(eventually { h.journal().contains("- newest line") })
        let page = Path.join(h.workspace, "journals/2026_12_02.md")
        let edited = withoutBlock(h.journal(), "newest line")
        if how == "in place" {
            try writeText(page, edited)
        } else {
            // As gedit saves: a temporary in the same directory renamed over the file.
            let tmp = Path.join(h.workspace, "journals/.goutputstream-AB12CD")
            try writeText(tmp, edited)
            try Sys.rename(tmp, page)
        }
        #expect(eventually { d.log.contains("hand edit(s) turned into ops") }, "\(d.log)")
        _ = try h.captureID("next line")
        #expect(eventually { h.journal().contains("- next line") })
        #expect(!h.journal().contains("newest line"), "saved \(how): the deleted block came back:\n\(h.journal())")
        #expect(h.journal().contains("- older line"))
        #expect(d.stop() == 0)
    }

    @Test func outld_writes_a_stignore_into_a_syncthing_folder_that_has_none() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: Path.join(h.workspace, ".stfolder"), withIntermediateDirectories: true)
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        let ignore = readText(Path.join(h.workspace, ".stignore")) ?? ""
        #expect(ignore.contains("/.outl/tmp") && ignore.contains("/.outl/captures/tmp") && ignore.contains("/assets/.outl-*.tmp"), "\(ignore)")
        #expect(d.stop() == 0)
        // A person's own .stignore is never touched.
        try writeText(Path.join(h.workspace, ".stignore"), "// mine\n")
        let again = try h.start()
        #expect(eventually { again.log.contains("ready") })
        #expect(readText(Path.join(h.workspace, ".stignore")) == "// mine\n")
        #expect(again.stop() == 0)
    }

    /// Copies `rel` from one device's workspace to another's as Syncthing does: a temporary
    /// `.syncthing.NAME.tmp` in the target directory, renamed over the file.
    func deliver(_ rel: String, from: OutlHome, to: OutlHome) throws {
        let src = Path.join(from.workspace, rel), dst = Path.join(to.workspace, rel)
        let tmp = Path.join(Path.parent(of: dst), ".syncthing.\(Path.lastComponent(dst)).tmp")
        try FileManager.default.createDirectory(atPath: Path.parent(of: dst), withIntermediateDirectories: true)
        try writeText(tmp, readText(src) ?? "")
        try Sys.rename(tmp, dst)
    }

    @Test func a_page_delivered_before_its_ops_waits_for_them_and_is_never_recorded_here() throws {
        let laptop = try OutlHome(), desktop = try OutlHome()
        _ = try laptop.captureID("line from the laptop")
        #expect(try laptop.outld(["--once"]).status == 0)
        #expect(laptop.journal().contains("- line from the laptop"))
        let d = try desktop.start(extraEnv: ["OUTL_SYNC_SETTLE_MS": "60000"])
        #expect(eventually { d.log.contains("ready") })
        _ = try desktop.captureID("line from the desktop")
        #expect(eventually { desktop.journal().contains("- line from the desktop") })
        let own = Path.join(Path.join(desktop.workspace, ".outl/ops"), desktop.opsFiles().first!)
        // The laptop's page lands first: its block's op is not here, so nothing is taken from it.
        try deliver("journals/2026_12_02.md", from: laptop, to: desktop)
        #expect(eventually { d.log.contains("waiting for other devices' ops") }, "\(d.log)")
        #expect(!(readText(own) ?? "").contains("line from the laptop"), "the desktop recorded the laptop's capture")
        // Then the laptop's op log: merged live, the page explained, both lines shown.
        try deliver(".outl/ops/\(laptop.opsFiles().first!)", from: laptop, to: desktop)
        #expect(eventually { desktop.journal().contains("- line from the laptop") && desktop.journal().contains("- line from the desktop") },
                "\(desktop.journal())\n\(d.log)")
        #expect(eventually { d.log.contains("merged 2 ops from device") }, "\(d.log)")
        #expect(!(readText(own) ?? "").contains("line from the laptop"), "the desktop recorded the laptop's capture")
        #expect(d.stop() == 0)
    }

    @Test func outl_status_shows_every_devices_op_log_and_inbox_beside_a_running_outld() throws {
        let laptop = try OutlHome(), desktop = try OutlHome()
        _ = try laptop.captureID("line from the laptop")
        #expect(try laptop.outld(["--once"]).status == 0)
        let d = try desktop.start()
        #expect(eventually { d.log.contains("ready") })
        _ = try desktop.captureID("line from the desktop")
        #expect(eventually { desktop.pending().isEmpty })
        try deliver(".outl/ops/\(laptop.opsFiles().first!)", from: laptop, to: desktop)
        d.signal(SIGSTOP)   // a capture that waits shows in the inbox's count
        _ = try desktop.captureID("waiting line")
        let r = try run(binPath("outl"), ["status"], env: desktop.env)
        d.signal(SIGCONT)
        #expect(r.status == 0, "\(r.stderr)")
        let laptopActor = String(laptop.opsFiles().first!.dropFirst(4).dropLast(6))
        let desktopActor = String(desktop.opsFiles().filter { !$0.contains(laptopActor) }.first!.dropFirst(4).dropLast(6))
        #expect(r.stdout.contains("outld      stopped (pid \(d.pid))"), "\(r.stdout)")  // SIGSTOPped above
        #expect(r.stdout.contains("device     \(desktopActor)"), "\(r.stdout)")
        #expect(r.stdout.contains("device \(laptopActor)  2 ops  last op 2026-"), "\(r.stdout)")
        #expect(r.stdout.contains("device \(desktopActor) (this device)  2 ops"), "\(r.stdout)")
        #expect(r.stdout.contains("\(desktop.inbox)  1 waiting"), "\(r.stdout)")
        #expect(d.stop() == 0)
    }
}
