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
