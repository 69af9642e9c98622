// BadFileTests: every class of file that cannot become a block is set aside in rejected/ with a
// reason, never deleted, never read through a link, and never blocks the good files after it.
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct BadFileTests {
    /// Drops `bad` between two good captures, drains, and checks the outcome for all three.
    func expectRejected(_ label: String, reasonContains: String, _ makeBad: (DrainFixture, String) throws -> Void) async throws {
        let f = try DrainFixture()
        try f.drop("good before \(label)", at: "2026-12-02T09:00:00Z")
        let badName = CaptureName.fileName(for: f.generator.next())
        try makeBad(f, Path.join(f.inbox, badName))
        try f.drop("good after \(label)", at: "2026-12-02T09:00:00Z")
        let ws = try f.open()
        let obs = RecordingObserver()
        let report = await f.drain(ws, observer: obs)
        await ws.close()
        #expect(report.drained == 2, "\(label): \(report)")
        #expect(report.rejected == 1, "\(label)")
        let page = f.journal("2026-12-02")
        #expect(page.contains("good before \(label)") && page.contains("good after \(label)"))
        let rejected = Path.join(f.inbox, "rejected")
        #expect((try? Sys.lstat(Path.join(rejected, badName))) != nil, "\(label): the bad entry is kept in rejected/")
        let reason = readText(Path.join(rejected, badName + ".reason")) ?? ""
        #expect(reason.lowercased().contains(reasonContains.lowercased()), "\(label): reason was '\(reason)'")
        #expect(obs.rejections.map(\.name) == [badName])
        #expect(f.pending().isEmpty)
        let mode = try Sys.lstat(rejected).st_mode & 0o777
        #expect(mode == 0o700)
    }

    @Test func not_json_is_rejected() async throws {
        try await expectRejected("not json", reasonContains: "json") { _, p in try writeText(p, "buy oat milk\n") }
    }

    @Test func invalid_utf8_is_rejected() async throws {
        try await expectRejected("bad utf8", reasonContains: "utf-8") { _, p in
            try Data([0x7B, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]).write(to: URL(fileURLWithPath: p))
        }
    }

    @Test func over_one_mebibyte_is_rejected_unread() async throws {
        try await expectRejected("huge", reasonContains: "limit") { _, p in
            let big = "{\"text\":\"" + String(repeating: "a", count: 10 << 20) + "\"}"
            try writeText(p, big)
        }
    }

    @Test func empty_text_is_rejected() async throws {
        try await expectRejected("empty", reasonContains: "empty") { _, p in try writeText(p, #"{"text":"   \n\t "}"#) }
    }

    @Test func wrong_type_text_is_rejected() async throws {
        try await expectRejected("wrong type", reasonContains: "text") { _, p in try writeText(p, #"{"text":42}"#) }
    }

    @Test func duplicate_text_key_is_rejected() async throws {
        try await expectRejected("dup key", reasonContains: "duplicate") { _, p in try writeText(p, #"{"text":"a","text":"b"}"#) }
    }

    @Test func nul_byte_in_the_file_is_rejected() async throws {
        try await expectRejected("nul", reasonContains: "json") { _, p in
            try Data(Array(#"{"text":"a"#.utf8) + [0] + Array(#""}"#.utf8)).write(to: URL(fileURLWithPath: p))
        }
    }

    @Test func control_characters_from_another_writer_are_rejected() async throws {
        // Escaped in valid JSON, so only the capture rule (text is data) can refuse them.
        try await expectRejected("escape sequence", reasonContains: "text has the control character U+001B") { _, p in
            try writeText(p, #"{"text":"look \u001b]0;owned\u0007 here","source":"other"}"#)
        }
        try await expectRejected("nul", reasonContains: "text has the control character U+0000") { _, p in
            try writeText(p, #"{"text":"a\u0000b"}"#)
        }
        try await expectRejected("source", reasonContains: "source has the control character U+000A") { _, p in
            try writeText(p, #"{"text":"fine","source":"two\nlines"}"#)
        }
    }

    @Test func fifo_is_rejected_without_hanging() async throws {
        try await expectRejected("fifo", reasonContains: "fifo") { _, p in #expect(mkfifo(p, 0o600) == 0) }
    }

    @Test func directory_is_rejected() async throws {
        try await expectRejected("dir", reasonContains: "directory") { _, p in
            try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: false)
            try writeText(Path.join(p, "inside"), "x")
        }
    }

    @Test func symlink_is_rejected_and_never_followed() async throws {
        let target = TempDir("target")
        let secret = target.sub("secret.json")
        try writeText(secret, #"{"text":"secret that must not land"}"#)
        try await expectRejected("symlink", reasonContains: "symbolic link") { _, p in
            try FileManager.default.createSymbolicLink(atPath: p, withDestinationPath: secret)
        }
        #expect(readText(secret) == #"{"text":"secret that must not land"}"#)
    }

    @Test func hard_link_to_another_file_is_rejected_unread() async throws {
        let target = TempDir("target")
        let other = target.sub("notes.json")
        try writeText(other, #"{"text":"a file of mine that lives elsewhere"}"#)
        try await expectRejected("hard link", reasonContains: "hard links") { _, p in
            #expect(link(other, p) == 0)
        }
        #expect(readText(other) == #"{"text":"a file of mine that lives elsewhere"}"#, "the other name's file is untouched")
    }

    @Test func symlink_to_etc_passwd_is_rejected() async throws {
        try await expectRejected("passwd", reasonContains: "symbolic link") { _, p in
            try FileManager.default.createSymbolicLink(atPath: p, withDestinationPath: "/etc/passwd")
        }
    }

    @Test func file_of_another_user_is_rejected_unread() async throws {
        try await expectRejected("foreign", reasonContains: "owned by uid") { _, p in
            try writeText(p, #"{"text":"planted by someone else"}"#)
            #expect(chown(p, 65534, 65534) == 0)
        }
    }

    @Test func rejecting_the_same_name_twice_keeps_both() async throws {
        let f = try DrainFixture()
        let id = f.generator.next()
        let name = try f.dropRaw(Array("not json 1".utf8), id: id)
        let ws = try f.open()
        _ = await f.drain(ws)
        _ = try f.dropRaw(Array("not json 2".utf8), id: id)
        _ = await f.drain(ws)
        await ws.close()
        let rejected = listDir(Path.join(f.inbox, "rejected"))
        #expect(rejected.contains(name) && rejected.contains(name + ".1"))
        #expect(rejected.contains(name + ".reason") && rejected.contains(name + ".1.reason"))
    }

    @Test func unknown_fields_and_sources_are_accepted() async throws {
        let f = try DrainFixture()
        try f.dropRaw(Array(#"{"text":"from the future","source":"telepathy","captured_at":"2026-12-02T07:00:00Z","mood":"great"}"#.utf8))
        let ws = try f.open()
        let obs = RecordingObserver()
        let r = await f.drain(ws, observer: obs)
        await ws.close()
        #expect(r.drained == 1 && r.rejected == 0)
        #expect(obs.drainedCaptures.first?.source == "telepathy")
    }
}

/// Deletes one inbox file the moment the drain tries to open it: the race with another drainer
/// or a sync tool, made exact.
final class VanishOnOpen: SysInterposer {
    let path: String
    init(_ path: String) { self.path = path }
    func before(_ call: SysCall) -> SysFault? {
        if call.op == .open, call.path == path { unlink(path) }
        return nil
    }
    func after(_ call: SysCall, result: Int) {}
}

/// Appends `more` to the file at `path` between the drain's fstat and its read of it: a writer
/// not following the protocol, or a sync tool writing in place. Counts the opens of the path.
final class GrowAfterOpen: SysInterposer {
    let path: String, more: [UInt8]
    var opens = 0, armed = false, grown = false
    init(_ path: String, _ more: [UInt8]) { self.path = path; self.more = more }
    func before(_ call: SysCall) -> SysFault? {
        if call.op == .open, call.path == path { opens += 1; armed = !grown }
        if call.op == .pread || call.op == .read || call.op == .uringRead, armed, !grown, descriptor(call.fd, isFileAt: path) {
            grown = true
            let fd = open(path, O_WRONLY | O_APPEND)
            _ = more.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        return nil
    }
    func after(_ call: SysCall, result: Int) {}
}

@Suite(.serialized) struct OddInputTests {
    /// A capture file that grew after the drain took its size is read again, whole, and lands as
    /// it is then; the files read before and after it in the batch land as they are.
    @Test(arguments: [true, false])
    func a_capture_file_grown_after_its_size_was_taken_is_read_again_whole(plainIO: Bool) async throws {
        let f = try DrainFixture(plainIO: plainIO)
        try f.drop("first", at: "2026-12-02T09:00:00Z")
        // Cut short when its size is taken: only its whole, grown self is a capture.
        let grows = try f.dropRaw(Array(#"{"text":"gro"#.utf8))
        for k in 0..<5 { try f.drop("after \(k)", at: "2026-12-02T09:00:00Z") }
        let ws = try f.open()
        let grow = GrowAfterOpen(Path.join(f.inbox, grows), Array((#"ws","captured_at":"2026-12-02T09:00:00Z"}"# + String(repeating: " ", count: 300)).utf8))
        let r = try await withInterposer(grow) { await f.drain(ws) }
        await ws.close()
        #expect(grow.grown && grow.opens == 2, "grown \(grow.grown), opened \(grow.opens) times")
        #expect(r.drained == 7 && r.rejected == 0 && r.transientError == nil, "\(r)")
        let page = f.journal("2026-12-02")
        for text in ["first", "grows"] + (0..<5).map({ "after \($0)" }) {
            #expect(page.contains("- \(text)\n"), "\(text) is not in:\n\(page)")
        }
    }

    @Test func text_over_64_kib_on_one_line_is_rejected() async throws {
        let f = try DrainFixture()
        let name = try f.dropRaw(Array(("{\"text\":\"" + String(repeating: "x", count: 200_000) + "\"}").utf8))
        let ws = try f.open()
        let r = await f.drain(ws)
        await ws.close()
        #expect(r.rejected == 1)
        let reason = readText(Path.join(f.inbox, "rejected/\(name).reason")) ?? ""
        #expect(reason.contains("64"), "reason: \(reason)")
    }

    @Test func markdown_that_tries_to_open_blocks_and_properties_stays_one_block() async throws {
        let f = try DrainFixture()
        let hostile = "title line\n- fake sibling\n  - fake child\nid:: 00000000-0000-0000-0000-000000000000\nsource:: forged\n```\n- in a fence\n```\n# heading"
        let id = try f.drop(hostile, at: "2026-12-02T09:00:00Z", source: "cli")
        let ws = try f.open()
        #expect(await f.drain(ws).drained == 1)
        let blocks = await ws.journalBlocks(JournalDay(year: 2026, month: 12, day: 2)!)
        await ws.close()
        #expect(blocks.count == 1, "one capture must stay one block: \(blocks)")
        #expect(blocks.first?.id == id.uuidString)
        #expect(blocks.first?.text == hostile)
        // And the projection reads back as one block after a fresh boot (parse of what was written).
        let again = try f.open()
        try await again.reconcileAll()
        let reread = await again.journalBlocks(JournalDay(year: 2026, month: 12, day: 2)!)
        await again.close()
        #expect(reread.count == 1 && reread.first?.text == hostile)
    }

    @Test func names_not_of_the_final_form_are_left_where_they_are() async throws {
        let f = try DrainFixture()
        let good = f.generator.next().string
        let odd = [good.lowercased() + ".json", good + "X.json", good + ".json.json", good + ".JSON",
                   "8" + good.dropFirst() + ".json", good + ".json~", ".\(good).json", "\(good).json.part"]
        for n in odd { try writeText(Path.join(f.inbox, n), #"{"text":"should stay"}"#) }
        let ws = try f.open()
        let r = await f.drain(ws)
        await ws.close()
        #expect(r == DrainReport())
        for n in odd { #expect(FileManager.default.fileExists(atPath: Path.join(f.inbox, n)), "\(n) was touched") }
        #expect(listDir(Path.join(f.inbox, "rejected")).isEmpty)
    }

    @Test func file_vanishing_during_the_scan_is_skipped_and_the_rest_drain() async throws {
        let f = try DrainFixture()
        try f.drop("before", at: "2026-12-02T09:00:00Z")
        let gone = try f.drop("vanishes", at: "2026-12-02T09:00:00Z")
        try f.drop("after", at: "2026-12-02T09:00:00Z")
        let ws = try f.open()
        let r = try await withInterposer(VanishOnOpen(Path.join(f.inbox, CaptureName.fileName(for: gone)))) {
            await f.drain(ws)
        }
        await ws.close()
        #expect(r.drained == 2 && r.rejected == 0 && r.transientError == nil)
        let page = f.journal("2026-12-02")
        #expect(page.contains("before") && page.contains("after") && !page.contains("vanishes"))
    }

    @Test func inbox_and_capture_modes_are_private() async throws {
        let f = try DrainFixture()
        let id = try f.drop("private", at: "2026-12-02T09:00:00Z")
        #expect(try Sys.lstat(f.inbox).st_mode & 0o777 == 0o700)
        #expect(try Sys.lstat(Path.join(f.inbox, "tmp")).st_mode & 0o777 == 0o700)
        #expect(try Sys.lstat(Path.join(f.inbox, CaptureName.fileName(for: id))).st_mode & 0o777 == 0o600)
    }
}
