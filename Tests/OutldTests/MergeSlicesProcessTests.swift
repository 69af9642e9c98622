// Merge slices, with the real outld: another device's long op log delivered while outld runs is read
// a slice per turn of the loop; a capture made meanwhile lands between two slices, STATUS= says how
// far the merge is, and the journal says once, at its end, what that device's ops did.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct MergeSlicesProcessTests {
    @Test func a_capture_lands_between_the_slices_of_a_large_merge_and_status_says_how_far() throws {
        // The other device: 20,000 captures over 200 days, its op log only.
        let other = try OutlHome()
        let g = try run(binPath("outl"), ["--workspace", other.workspace, "debug-generate", "20000"], env: other.env)
        #expect(g.status == 0, "\(g.stderr)")
        let theirs = other.opsFiles()
        #expect(theirs.count == 1)
        let device = String(theirs[0].dropFirst(4).prefix(36))

        let h = try OutlHome()
        let notify = try NotifySocket()
        let d = try h.start([], extraEnv: ["NOTIFY_SOCKET": notify.path, "OUTL_MERGE_SLICE_BYTES": "512"])
        #expect(notify.waitFor { $0.contains("READY=1") })
        // Delivered as a sync tool delivers a file: a temporary renamed over the name.
        let ops = Path.join(h.workspace, ".outl/ops")
        let tmp = Path.join(ops, ".syncthing.\(theirs[0]).tmp")
        try FileManager.default.copyItem(atPath: Path.join(other.workspace, ".outl/ops/\(theirs[0])"), toPath: tmp)
        try Sys.rename(tmp, Path.join(ops, theirs[0]))
        #expect(notify.waitFor { $0.contains("STATUS=merging ") }, "\(notify.messages.suffix(3))\n\(d.log)")
        let id = try h.captureID("captured during the merge")
        // Read as systemd reads it: a notify socket left unread fills up and blocks outld's STATUS=.
        #expect(eventually(60) { notify.receive(); return h.journal().contains("captured during the merge") }, "\(d.log)")
        #expect(eventually(120) { notify.receive(); return d.log.contains("merged 20200 ops from device \(device)") }, "\(d.log)")
        #expect(eventually(120) { notify.receive(); return listDir(Path.join(h.workspace, "journals")).count == 201 },
                "\(listDir(Path.join(h.workspace, "journals")).count) pages")
        #expect(d.stop() == 0)
        let log = d.log
        // The capture landed while the merge was still reading: its drain is logged before the merge's end.
        let landed = log.range(of: id)?.lowerBound, merged = log.range(of: "ops read in")?.lowerBound
        #expect(landed != nil && merged != nil && landed! < merged!, "\(log)")
        #expect(log.components(separatedBy: "merged 20200 ops from device").count == 2, "one entry for all the slices: \(log)")
        notify.receive()
        // STATUS= said how far, with an estimate of the whole within a tenth of the truth (20,000
        // captures and 200 pages).
        let progress = notify.messages.compactMap { m -> (Int, Int)? in
            guard let r = m.range(of: "STATUS=merging ") else { return nil }
            let f = m[r.upperBound...].split(separator: ";")[0].replacingOccurrences(of: ",", with: "").split(separator: " ")
            return f.count >= 4 ? (Int(f[0]) ?? -1, Int(f[3]) ?? -1) : nil
        }
        #expect(progress.contains { $0.0 > 0 && $0.0 < $0.1 && abs($0.1 - 20_200) < 2_020 }, "\(notify.messages)")
        #expect(notify.messages.contains { $0.contains("STATUS=merging ") && $0.contains("from device \(device.prefix(8))…") })
        // The page of a day the other device captured on, as that device would show it.
        #expect((readText(Path.join(h.workspace, "journals/2000_01_01.md")) ?? "").contains("- capture number 99: buy oat milk"))
    }
}
