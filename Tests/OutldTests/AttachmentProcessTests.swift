// Attachments with the real binaries (issue 20): outl-capture --attach, a running outld drains
// the capture into assets/ and the journal; an attachment a sync tool delivers after its capture
// wakes outld (inotify) and the capture lands then; one that never comes is set aside when its wait
// ends, by outld's own timer; --once says what waits and exits 75.
import CaptureFormat
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct AttachmentProcessTests {
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<20_000).map { UInt8($0 % 241) }

    func assets(_ h: OutlHome) -> [String] { listDir(Path.join(h.workspace, "assets")) }

    @Test func a_running_outld_lands_a_capture_with_its_attachment_and_waits_for_a_late_one() throws {
        let h = try OutlHome()
        let d = try h.start()
        defer { d.stop() }
        let shot = h.tmp.sub("shot.png")
        try Data(png).write(to: URL(fileURLWithPath: shot))
        let r = try h.capture(["a caption"], extra: ["--attach", shot, "--at", "2026-12-02T10:00:00Z"])
        #expect(r.status == 0, "\(r.stderr)")
        let id = ULID(string: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))!
        let asset = "shot_\(id.timestampMs)_\(SHA256.hex(png).prefix(8)).png"
        #expect(eventually { h.journal().contains("![shot.png](../assets/\(asset))") }, "\(h.journal())\n\(d.log)")
        #expect(assets(h) == [asset])
        #expect((try? Durable.readRegularFile(Path.join(h.workspace, "assets/\(asset)"), limit: 1 << 20)) == png)
        #expect(eventually { listDir(h.inbox).sorted() == ["tmp"] }, "\(listDir(h.inbox))")
        #expect(eventually { d.log.contains("source cli, 1 attachment,") }, "\(d.log)")  // said after its files go

        // A capture whose attachment a sync tool brings later: its file first, the attachment after.
        let late = h.tmp.sub("late")
        try FileManager.default.createDirectory(atPath: late, withIntermediateDirectories: true)
        let r2 = try h.capture(["late attachment"], extra: ["--inbox", late, "--attach", shot, "--at", "2026-12-02T11:00:00Z"])
        #expect(r2.status == 0, "\(r2.stderr)")
        let id2 = ULID(string: r2.stdout.trimmingCharacters(in: .whitespacesAndNewlines))!
        let att = CaptureName.attachmentFileName(for: id2, index: 1)
        try FileManager.default.moveItem(atPath: Path.join(late, CaptureName.fileName(for: id2)), toPath: Path.join(h.inbox, CaptureName.fileName(for: id2)))
        #expect(eventually { d.log.contains("waits for its attachments: attachment 1 (shot.png): has not arrived") }, "\(d.log)")
        #expect(!h.journal().contains("late attachment"))
        try FileManager.default.moveItem(atPath: Path.join(late, att), toPath: Path.join(h.inbox, att))
        #expect(eventually { h.journal().contains("- late attachment\n") }, "\(h.journal())\n\(d.log)")
        #expect(assets(h).count == 2)
        #expect(eventually { listDir(h.inbox).sorted() == ["tmp"] }, "\(listDir(h.inbox))")
    }

    @Test func an_attachment_that_never_comes_is_set_aside_when_its_wait_ends() throws {
        let h = try OutlHome()
        let shot = h.tmp.sub("shot.png")
        try Data(png).write(to: URL(fileURLWithPath: shot))
        let r = try h.capture(["never whole"], extra: ["--attach", shot, "--at", "2026-12-02T10:00:00Z", "--quiet"])
        let id = ULID(string: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))!
        try FileManager.default.removeItem(atPath: Path.join(h.inbox, CaptureName.attachmentFileName(for: id, index: 1)))
        // --once: it waits, says so, and exits 75 (try again later).
        let once = try h.outld(["--once"])
        #expect(once.status == 75 && once.stdout.contains("1 waiting for attachments (attachment 1 (shot.png): has not arrived)"),
                "\(once.status) \(once.stdout) \(once.stderr)")
        // A running outld with a 3-second wait sets it aside by its own timer, with no event to wake it.
        let d = try h.start(extraEnv: ["OUTL_ATTACHMENT_WAIT_SECONDS": "3"])
        defer { d.stop() }
        #expect(eventually(30) { listDir(Path.join(h.inbox, "rejected")).contains(CaptureName.fileName(for: id)) }, "\(d.log)")
        // The file is set aside first and the line said after it: waited for, not read at once
        // (read at once, it failed about one run in thirty).
        #expect(eventually { d.log.contains("has not arrived, still after") }, "\(d.log)")
        #expect(h.pending().isEmpty && !h.journal().contains("never whole"))
    }
}
