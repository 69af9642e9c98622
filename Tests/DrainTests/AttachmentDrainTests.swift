// AttachmentDrainTests: a capture's attachments go from its inbox into assets/ under a name derived
// from their name, capture time and hash, are linked from its block, and leave the inbox after it;
// a replay or a second copy writes nothing twice; an attachment not yet whole makes only its own
// capture wait, then be set aside with its files; a bad one (a link, another capture's file, over
// the limit) is set aside at once; an existing asset is never overwritten with other bytes.
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct AttachmentDrainTests {
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 3000)
    let pdf = Array("%PDF-1.4 a small document".utf8)

    func drain(_ f: DrainFixture, options: DrainOptions = DrainOptions(), observer: DrainObserver = SilentDrainObserver()) async throws -> DrainReport {
        let ws = try f.open()
        let r = await drain_capture_inbox([f.inbox], into: ws, io: f.io, observer: observer, options: options)
        await ws.close()
        return r
    }

    @Test func a_capture_with_attachments_lands_with_its_assets_linked_and_leaves_the_inbox() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("look at [this] *now*", [("Screen shot (1).PNG", png), ("notes_v2.pdf", pdf)])
        let obs = RecordingObserver()
        let r = try await drain(f, observer: obs)
        #expect(r.drained == 1 && r.rejected == 0, "\(r)")
        let ms = id.timestampMs
        let shot = "Screen_shot_1_\(ms)_\(SHA256.hex(png).prefix(8)).png", notes = "notes_v2_\(ms)_\(SHA256.hex(pdf).prefix(8)).pdf"
        #expect(f.assets() == [shot, notes].sorted())
        #expect(f.assetBytes(shot) == png && f.assetBytes(notes) == pdf)
        // The asset's mtime is the capture's time, the same on every device that drains it.
        let st = try Sys.lstat(Path.join(f.root, "assets/\(shot)"))
        #expect(Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec / 1_000_000) == Int64(ms))
        let page = f.journal("2026-12-02")
        #expect(page.contains("- look at [this] *now*\n"), "the caption is the capture's own Markdown: \(page)")
        #expect(page.contains("  ![Screen shot (1).PNG](../assets/\(shot))"), "\(page)")
        #expect(page.contains("  [notes\\_v2.pdf](../assets/\(notes))"), "\(page)")
        #expect(listDir(f.inbox).sorted() == ["tmp"], "the capture and both attachments are gone")
        #expect(obs.drainedCaptures.map(\.attachments) == [2])
    }

    @Test func a_capture_of_attachments_alone_is_a_block_of_links() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("", [("a.png", png)])
        #expect(try await drain(f).drained == 1)
        let page = f.journal("2026-12-02")
        #expect(page.hasPrefix("- ![a.png](../assets/a_\(id.timestampMs)_\(SHA256.hex(png).prefix(8)).png)\n"), "\(page)")
    }

    @Test func drain_with_attachments_is_idempotent_after_a_crash() async throws {
        // A crash after the assets were durable and the op appended, before the files went: the
        // replay finds the block and writes no asset again; the same capture in a second inbox
        // (a synced copy) is only deleted.
        let f = try DrainFixture()
        let copyInbox = f.tmp.sub("device-inbox")
        let id = try f.dropWithAttachments("twice", [("a.png", png)])
        try f.dropWithAttachments("twice", [("a.png", png)], id: id, into: copyInbox)
        let saved = listDir(f.inbox).filter { $0 != "tmp" }
        let keep = f.tmp.sub("kept")
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        for n in saved { try FileManager.default.copyItem(atPath: Path.join(f.inbox, n), toPath: Path.join(keep, n)) }
        #expect(try await drain(f).drained == 1)
        let assetsAfterFirst = f.assets()
        let st = try Sys.lstat(Path.join(f.root, "assets/\(assetsAfterFirst[0])"))
        for n in saved { try FileManager.default.copyItem(atPath: Path.join(keep, n), toPath: Path.join(f.inbox, n)) }
        let ws = try f.open()
        let r = await drain_capture_inbox([f.inbox, copyInbox], into: ws, io: f.io, observer: SilentDrainObserver())
        await ws.close()
        #expect(r.drained == 0 && r.duplicates == 2, "\(r)")
        #expect(f.assets() == assetsAfterFirst)
        #expect(try Sys.lstat(Path.join(f.root, "assets/\(assetsAfterFirst[0])")).st_ino == st.st_ino, "the asset was not written again")
        #expect(f.opLines(mentioning: id.uuidString).count == 1)
        #expect(occurrences(of: "twice", in: f.journal("2026-12-02")) == 1)
        #expect(listDir(f.inbox).sorted() == ["tmp"] && listDir(copyInbox).sorted() == ["tmp"])
    }

    @Test func an_attachment_arriving_after_its_capture_makes_only_that_capture_wait() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("waits", [("a.png", png)])
        let att = CaptureName.attachmentFileName(for: id, index: 1)
        let away = f.tmp.sub("away")
        try FileManager.default.moveItem(atPath: Path.join(f.inbox, att), toPath: away)
        try f.drop("lands meanwhile", at: "2026-12-02T10:00:00Z")
        let r = try await drain(f)
        #expect(r.drained == 1 && r.rejected == 0 && r.transientError == nil, "\(r)")
        #expect(r.waiting.count == 1 && r.waiting[0].why.contains("has not arrived"), "\(r.waiting)")
        #expect(r.nextRetryAt != nil)
        #expect(f.journal("2026-12-02").contains("lands meanwhile") && !f.journal("2026-12-02").contains("waits"))
        #expect(f.pending() == [CaptureName.fileName(for: id)])
        // Half of it arrives (a sync tool writing in place): still waiting, nothing in assets/.
        try Data(png.prefix(100)).write(to: URL(fileURLWithPath: Path.join(f.inbox, att)))
        let half = try await drain(f)
        #expect(half.waiting.count == 1 && half.waiting[0].why.contains("100 of its 3008 bytes"), "\(half.waiting)")
        #expect(f.assets().isEmpty)
        // All of it: it lands.
        try FileManager.default.removeItem(atPath: Path.join(f.inbox, att))
        try FileManager.default.moveItem(atPath: away, toPath: Path.join(f.inbox, att))
        let r2 = try await drain(f)
        #expect(r2.drained == 1 && r2.waiting.isEmpty, "\(r2)")
        #expect(f.journal("2026-12-02").contains("waits"))
        #expect(f.assets().count == 1)
    }

    @Test func bytes_that_do_not_match_the_hash_wait_then_are_set_aside_with_their_capture() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("corrupt", [("a.png", png), ("b.pdf", pdf)])
        let att = CaptureName.attachmentFileName(for: id, index: 1)
        var other = png
        other[50] ^= 0xFF
        try FileManager.default.removeItem(atPath: Path.join(f.inbox, att))
        try Data(other).write(to: URL(fileURLWithPath: Path.join(f.inbox, att)))
        let r = try await drain(f)
        #expect(r.waiting.count == 1 && r.waiting[0].why.contains("do not match its sha256"), "\(r.waiting)")
        #expect(f.assets().isEmpty, "no asset and no temp is left: \(f.assets())")
        // Past the wait (0 s here; 24 hours by default), set aside with both its attachments.
        var o = DrainOptions()
        o.attachmentWaitSeconds = 0
        let obs = RecordingObserver()
        let r2 = try await drain(f, options: o, observer: obs)
        #expect(r2.rejected == 1 && r2.waiting.isEmpty, "\(r2)")
        let rejected = Path.join(f.inbox, "rejected")
        let reason = readText(Path.join(rejected, CaptureName.fileName(for: id) + ".reason")) ?? ""
        #expect(reason.contains("attachment 1 (a.png): its bytes do not match its sha256 yet, still after"), "\(reason)")
        #expect(listDir(rejected).sorted() == [CaptureName.fileName(for: id), CaptureName.fileName(for: id) + ".reason",
                                               att, CaptureName.attachmentFileName(for: id, index: 2)].sorted())
        #expect(listDir(f.inbox).sorted() == ["rejected", "tmp"])
        #expect(!f.journal("2026-12-02").contains("corrupt"))
    }

    @Test func bad_attachments_are_set_aside_at_once_and_hold_back_nothing() async throws {
        func expectSetAside(_ label: String, reason: String, options: DrainOptions = DrainOptions(),
                            _ spoil: (DrainFixture, ULID) throws -> Void) async throws {
            let f = try DrainFixture()
            let id = try f.dropWithAttachments(label, [("a.png", png)])
            try spoil(f, id)
            try f.drop("good after \(label)", at: "2026-12-02T10:00:00Z")
            let r = try await drain(f, options: options)
            #expect(r.drained == 1 && r.rejected == 1 && r.waiting.isEmpty, "\(label): \(r)")
            let text = readText(Path.join(f.inbox, "rejected/\(CaptureName.fileName(for: id)).reason")) ?? ""
            #expect(text.contains(reason), "\(label): \(text)")
            #expect(f.journal("2026-12-02").contains("good after \(label)"))
            #expect(f.assets().isEmpty, "\(label): \(f.assets())")
        }
        let secret = FileManager.default.temporaryDirectory.path + "/outl-secret-\(getpid())"
        try Data(png).write(to: URL(fileURLWithPath: secret))
        defer { try? FileManager.default.removeItem(atPath: secret) }
        try await expectSetAside("a link", reason: "is a symbolic link") { f, id in
            let att = Path.join(f.inbox, CaptureName.attachmentFileName(for: id, index: 1))
            try FileManager.default.removeItem(atPath: att)
            try FileManager.default.createSymbolicLink(atPath: att, withDestinationPath: secret)
        }
        try await expectSetAside("a hard link", reason: "hard links") { f, id in
            try FileManager.default.linkItem(atPath: Path.join(f.inbox, CaptureName.attachmentFileName(for: id, index: 1)), toPath: f.tmp.sub("other-name"))
        }
        try await expectSetAside("another capture's file", reason: "names only its own attachments") { f, id in
            // A capture file rewritten to name a file that is not its own (another capture's).
            let name = Path.join(f.inbox, CaptureName.fileName(for: id))
            let text = readText(name)!.replacingOccurrences(of: "\(id.string).1.att", with: "01ARZ3NDEKTSV4RRFFQ69G5FAV.1.att")
            try FileManager.default.removeItem(atPath: name)
            try writeText(name, text)
        }
        var small = DrainOptions()
        small.attachmentLimit = 1000
        try await expectSetAside("a path", reason: "file is not a plain file name") { f, id in
            let name = Path.join(f.inbox, CaptureName.fileName(for: id))
            let text = readText(name)!.replacingOccurrences(of: "\(id.string).1.att", with: "../../../etc/passwd")
            try FileManager.default.removeItem(atPath: name)
            try writeText(name, text)
        }
        try await expectSetAside("over the limit", reason: "over the attachment limit of 1000 bytes", options: small) { _, _ in }
        try await expectSetAside("a directory", reason: "not a regular file") { f, id in
            let att = Path.join(f.inbox, CaptureName.attachmentFileName(for: id, index: 1))
            try FileManager.default.removeItem(atPath: att)
            try FileManager.default.createDirectory(atPath: att, withIntermediateDirectories: false)
        }
    }

    @Test func an_existing_asset_with_other_bytes_is_never_overwritten() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("collides", [("a.png", png)])
        let short = "a_\(id.timestampMs)_\(SHA256.hex(png).prefix(8)).png"
        try FileManager.default.createDirectory(atPath: Path.join(f.root, "assets"), withIntermediateDirectories: true)
        try writeText(Path.join(f.root, "assets/\(short)"), "a peer's file")
        #expect(try await drain(f).drained == 1)
        let long = "a_\(id.timestampMs)_\(SHA256.hex(png)).png"
        #expect(f.assets() == [long, short].sorted())
        #expect(readText(Path.join(f.root, "assets/\(short)")) == "a peer's file")
        #expect(f.assetBytes(long) == png)
        #expect(f.journal("2026-12-02").contains("(../assets/\(long))"))
    }

    @Test func a_linked_assets_directory_is_refused_and_only_its_capture_waits() async throws {
        let f = try DrainFixture()
        let elsewhere = f.tmp.sub("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: Path.join(f.root, "assets"), withDestinationPath: elsewhere)
        let id = try f.dropWithAttachments("kept", [("a.png", png)])
        try f.drop("text lands", at: "2026-12-02T10:00:00Z")
        let obs = RecordingObserver()
        let r = try await drain(f, observer: obs)
        #expect(r.drained == 1 && r.rejected == 0 && r.transientError == nil, "\(r)")
        #expect(r.waiting.count == 1 && r.waiting[0].why.contains("assets/ refused"), "\(r.waiting)")
        #expect(obs.warnings.contains { $0.contains("waits: attachment 1 (a.png): assets/ refused") }, "\(obs.warnings)")
        #expect(listDir(elsewhere).isEmpty, "nothing written through the link")
        #expect(f.pending() == [CaptureName.fileName(for: id)])
    }

    @Test func attachments_left_behind_by_a_landed_capture_are_removed_and_others_kept() async throws {
        let f = try DrainFixture()
        let landed = try f.dropWithAttachments("landed", [("a.png", png)])
        let att = CaptureName.attachmentFileName(for: landed, index: 1)
        try FileManager.default.copyItem(atPath: Path.join(f.inbox, att), toPath: f.tmp.sub("copy"))
        #expect(try await drain(f).drained == 1)
        // A crash between deleting the capture file and its attachment leaves this:
        try FileManager.default.copyItem(atPath: f.tmp.sub("copy"), toPath: Path.join(f.inbox, att))
        // ...and a writer between publishing an attachment and its capture file leaves this:
        let early = f.generator.next()
        let earlyName = CaptureName.attachmentFileName(for: early, index: 1)
        try writeText(Path.join(f.inbox, earlyName), "on its way")
        _ = try await drain(f)
        #expect(listDir(f.inbox).sorted() == [earlyName, "tmp"])
    }

    /// A pass holds at most `listingLimit` attachment names too (the first captures' first): a
    /// capture whose names were cut still lands whole (its file names its attachments), and the
    /// names left are deleted by a later pass, which finds their capture landed.
    @Test func attachments_past_the_listing_limit_are_deleted_by_a_later_pass_once_their_capture_landed() async throws {
        let f = try DrainFixture()
        let id = try f.dropWithAttachments("three files", [("a.pdf", pdf), ("b.png", png), ("c.txt", Array("text".utf8))])
        let later = try f.dropWithAttachments("after it", [("d.pdf", pdf + [1])])
        var options = DrainOptions()
        options.listingLimit = 2
        let r = try await drain(f, options: options)
        #expect(r.drained == 2 && r.rejected == 0 && !r.more, "\(r)")
        #expect(f.assets().count == 4, "\(f.assets())")
        let page = f.journal("2026-12-02")
        #expect(page.contains("(../assets/a_") && page.contains("(../assets/b_") && page.contains("(../assets/c_") && page.contains("(../assets/d_"), "\(page)")
        // Kept: the first two names of the first capture; left: its third and the next one's.
        let left = [CaptureName.attachmentFileName(for: id, index: 3), CaptureName.attachmentFileName(for: later, index: 1)]
        #expect(listDir(f.inbox).sorted() == (left + ["tmp"]).sorted())
        #expect(try await drain(f, options: options).drained == 0)
        #expect(listDir(f.inbox).sorted() == ["tmp"])
    }
}
