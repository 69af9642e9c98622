// FullDiskTests: a real ENOSPC under a running outld. The workspace sits on a tiny tmpfs that the
// test fills; the capture waits in a device-local inbox on another file system. outld must keep
// the file, say so, back off (not spin), and drain it once space is back — with no SIGUSR1.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct FullDiskTests {
    @Test(.enabled(if: canMountTmpfs, "needs to mount a tmpfs (root or CAP_SYS_ADMIN)"))
    func full_disk_keeps_the_capture_and_retries_with_backoff() throws {
        let h = try OutlHome()
        let mountPoint = h.tmp.sub("smallfs")
        let refused = mountTmpfs(at: mountPoint, size: "256k")
        try #require(refused == nil, "cannot mount a tmpfs: \(refused ?? "")")
        defer { unmountTmpfs(mountPoint) }
        let root = Path.join(mountPoint, "ws")
        let inbox = h.tmp.sub("device-inbox")
        let notify = try NotifySocket()
        // The same error is said again every 1.5 s here (5 minutes by default), not once and then never.
        let d = try h.start(["--workspace", root, "--inbox", inbox], extraEnv: ["NOTIFY_SOCKET": notify.path, "OUTL_ERROR_REMINDER_MS": "1500"])
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")

        // Fill the file system to the last byte.
        let filler = Path.join(mountPoint, "filler")
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        let chunk = [UInt8](repeating: 0x61, count: 4096)
        while write(fd, chunk, chunk.count) > 0 {}
        while write(fd, chunk, 1) > 0 {}
        close(fd)

        let r = try run(binPath("outl-capture"), ["--inbox", inbox, "--quiet", "--at", "2026-12-02T10:00:00Z", "written while the disk is full"], env: h.env)
        #expect(r.status == 0, "the capture itself lands on another file system: \(r.stderr)")
        #expect(eventually { d.log.contains("retrying") }, "outld says it will retry: \(d.log)")
        // The second failed attempt (the backoff doubled) has kept the file too.
        #expect(notify.waitFor { $0.contains("STATUS=retrying in 200 ms") }, "\(notify.messages)")
        #expect(listDir(inbox).contains { $0.hasSuffix(".json") }, "the capture file is kept while the disk is full")
        #expect(listDir(Path.join(inbox, "rejected")).isEmpty, "a full disk never rejects a good file")
        let retriesBefore = d.log.components(separatedBy: "retrying").count
        #expect(eventually(20) { d.log.contains("drain still deferred after ") && d.log.contains(" capture(s) waiting: ") }, "\(d.log)")

        try FileManager.default.removeItem(atPath: filler)
        // No signal: the backoff timer alone must bring the drain back.
        #expect(eventually(40) { (readText(Path.join(root, "journals/2026_12_02.md")) ?? "").contains("written while the disk is full") }, "\(d.log)")
        #expect(eventually { !listDir(inbox).contains { $0.hasSuffix(".json") } }, "the file goes once its page is written")
        #expect(eventually { d.log.contains("recovered") }, "\(d.log)")
        // Backoff, not a spin: the error is logged once per distinct error, not per attempt.
        #expect(retriesBefore < 5, "logged \(retriesBefore) retry lines")
        #expect(d.stop() == 0)
    }
}
