// JournalLog: the readable stderr line, the auto mode's $JOURNAL_STREAM check, and (where a
// journald is listening on the default socket) the native fields as journalctl shows them.
import Foundation
import Testing
import CaptureFormat
import Daemon
import SystemCalls
import TestSupport
import Workspace

@Suite(.serialized) struct JournalLogTests {
    @Test func journal_log_to_stderr_writes_one_readable_line_per_event() throws {
        let t = TempDir("journallog")
        let p = t.sub("stderr")
        let fd = try Sys.open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let log = JournalLog(mode: .stderr, stderrFD: fd)
        #expect(!log.usesJournal)
        log.drained(captureID: "01JDZ5K3M7Q8R9S0T1V2W3X4Y5", blockID: "0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
                    day: "2026-12-02", source: "cli", latencyUsec: 1234, inbox: "/home/u/outl/.outl/captures")
        log.rejected(captureID: "01JDZ5K3M7Q8R9S0T1V2W3X4Y6", reason: "not JSON", inbox: "/in")
        log.info("ready; 2 inboxes\nwatched", id: .ready)
        log.error("cannot boot: EIO")
        // Held lines come out in order when released; a line break in a source (a CRLF is one) is a space.
        log.holdLines()
        log.drained(captureID: "01JDZ5K3M7Q8R9S0T1V2W3X4Y7", blockID: "0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5c",
                    day: "2026-12-03", source: "two\r\nlines\rand\nmore", latencyUsec: 2_500_000, inbox: "/in", attachments: 2)
        log.warning("held too")
        log.releaseLines()
        Sys.close(fd)
        #expect(readText(p) == """
            outld: drained 01JDZ5K3M7Q8R9S0T1V2W3X4Y5 → 2026-12-02 (block 0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b, source cli, 1.2 ms)
            outld: warning: rejected 01JDZ5K3M7Q8R9S0T1V2W3X4Y6 in /in: not JSON (moved to rejected/)
            outld: ready; 2 inboxes watched
            outld: error: cannot boot: EIO
            outld: drained 01JDZ5K3M7Q8R9S0T1V2W3X4Y7 → 2026-12-03 (block 0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5c, source two lines and more, 2 attachments, 2.5 s)
            outld: warning: held too

            """)
    }

    /// The drain hands its ids and day as they are; the line spells them as their Strings do.
    @Test func a_drained_line_spells_the_capture_its_block_and_its_day_as_their_strings_do() throws {
        let t = TempDir("journallog")
        var lines: [String] = []
        let ids = [ULID(high: 0, low: 0), ULID(high: .max, low: .max), ULID(high: 0x0193_f7e3_1c2d_4e5f, low: 0x8a9b_0c1d_2e3f_4a5b)]
        let days = [JournalDay(year: 1, month: 1, day: 1)!, JournalDay(year: 2026, month: 12, day: 2)!, JournalDay(year: 9999, month: 12, day: 31)!]
        for typed in [true, false] {
            let p = t.sub(typed ? "typed" : "strings")
            let fd = try Sys.open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let log = JournalLog(mode: .stderr, stderrFD: fd)
            // The typed call writes a stderr line in one room of its own; a source with a line
            // break, attachments and every size of latency must come out as the Strings' call has them.
            let ends: [(source: String, attachments: Int, latency: UInt64)] = [
                ("cli", 0, 1234), ("two\r\nlines\rand\nmore", 2, 2_500_000), ("x", 1, 0), ("", 12, .max),
                (String(repeating: "long source ", count: 40), 0, 999_999),
            ]
            for (id, day) in zip(ids, days) {
                let block = BlockID(hi: id.high, lo: id.low)
                for e in ends {
                    if typed {
                        log.drained(capture: id, block: block, day: day, source: e.source, latencyUsec: e.latency,
                                    inbox: "/in", attachments: e.attachments)
                    } else {
                        log.drained(captureID: id.string, blockID: block.description, day: day.iso, source: e.source,
                                    latencyUsec: e.latency, inbox: "/in", attachments: e.attachments)
                    }
                }
            }
            Sys.close(fd)
            lines.append(readText(p) ?? "")
        }
        #expect(lines[0] == lines[1])
        #expect(lines[0].split(separator: "\n").count == 15, "\(lines[0])")
        #expect(lines[0].contains("source two lines and more, 2 attachments, 2.5 s)\n"))
        #expect(lines[0].contains("drained 7ZZZZZZZZZZZZZZZZZZZZZZZZZ → 2026-12-02 (block ffffffff-ffff-ffff-ffff-ffffffffffff,"))
        #expect(lines[0].contains("→ 0001-01-01 (block 00000000-0000-0000-0000-000000000000,"))
    }

    @Test func a_merge_names_the_device_and_the_blocks_it_deleted_on_one_line_each() throws {
        let t = TempDir("journallog")
        let p = t.sub("stderr")
        let fd = try Sys.open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let log = JournalLog(mode: .stderr, stderrFD: fd)
        let device = "01a23c25-be49-7f1c-97e1-fcb03edc25ae"
        log.merged(device: device, ops: 9, created: 1, edited: 1, moved: 0, deleted: 7,
                   deletedBlocks: [("0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "buy oat milk\\nthen…"),
                                   ("0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5c", "call mum")],
                   pages: ["journals/2026_12_02.md"])
        log.merged(device: device, ops: 1, created: 1, edited: 0, moved: 0, deleted: 0, deletedBlocks: [], pages: [])
        Sys.close(fd)
        #expect(readText(p) == """
            outld: merged 9 ops from device \(device): 1 created, 1 edited, 0 moved, 7 deleted
            outld: device \(device) deleted 7 blocks here: 0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b "buy oat milk\\nthen…", 0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5c "call mum" and 5 more
            outld: merged 1 op from device \(device): 1 created, 0 edited, 0 moved, 0 deleted

            """)
    }

    @Test func auto_mode_uses_the_journal_only_when_stderr_is_the_journal_stream() throws {
        let t = TempDir("journallog")
        let p = t.sub("stream")
        let fd = try Sys.open(p, O_WRONLY | O_CREAT, 0o600)
        defer { Sys.close(fd); unsetenv("JOURNAL_STREAM") }
        let st = try Sys.fstat(fd)
        unsetenv("JOURNAL_STREAM")
        #expect(!JournalLog(mode: .auto, stderrFD: fd).usesJournal)
        setenv("JOURNAL_STREAM", "\(st.st_dev):\(st.st_ino)", 1)
        #expect(JournalLog(mode: .auto, stderrFD: fd).usesJournal)
        setenv("JOURNAL_STREAM", "\(st.st_dev):\(st.st_ino + 1)", 1)  // inherited, but stderr was redirected
        #expect(!JournalLog(mode: .auto, stderrFD: fd).usesJournal)
        #expect(JournalLog(mode: .journal, stderrFD: fd).usesJournal)
    }

    @Test func message_ids_are_distinct_128_bit_lower_case_hex() {
        let ids = MessageID.allCases.map(\.rawValue)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }

    static var journaldListening: Bool {
        access("/run/systemd/journal/socket", W_OK) == 0 && access("/usr/bin/journalctl", X_OK) == 0
    }

    @Test(.enabled(if: journaldListening, "needs journald on /run/systemd/journal/socket and journalctl"))
    func journal_log_to_the_journal_stores_the_native_fields() throws {
        let captureID = "01TEST" + String(UInt64.random(in: 0...UInt64.max), radix: 32).uppercased()
        let log = JournalLog(mode: .journal)
        log.drained(captureID: captureID, blockID: "0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b", day: "2026-12-02",
                    source: "hotkey", latencyUsec: 4321, inbox: "/tmp/inbox")
        log.rejected(captureID: captureID, reason: "text is empty", inbox: "/tmp/inbox")
        // journald stores asynchronously: wait for both entries with a generous deadline.
        var entries: [[String: Any]] = []
        for _ in 0..<50 {
            let r = try run("/usr/bin/journalctl", ["--no-pager", "-o", "json", "OUTL_CAPTURE_ID=\(captureID)"])
            entries = r.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            if entries.count >= 2 { break }
            usleep(100_000)
        }
        try #require(entries.count == 2)
        let drained = entries.first { $0["MESSAGE_ID"] as? String == MessageID.drained.rawValue }
        #expect(drained?["OUTL_BLOCK_ID"] as? String == "0193f7e3-1c2d-4e5f-8a9b-0c1d2e3f4a5b")
        #expect(drained?["OUTL_JOURNAL_DAY"] as? String == "2026-12-02")
        #expect(drained?["OUTL_SOURCE"] as? String == "hotkey")
        #expect(drained?["OUTL_LATENCY_USEC"] as? String == "4321")
        #expect(drained?["OUTL_INBOX"] as? String == "/tmp/inbox")
        #expect(drained?["PRIORITY"] as? String == "6")
        #expect(drained?["SYSLOG_IDENTIFIER"] as? String == "outld")
        let rejected = entries.first { $0["MESSAGE_ID"] as? String == MessageID.rejected.rawValue }
        #expect(rejected?["OUTL_REASON"] as? String == "text is empty")
        #expect(rejected?["PRIORITY"] as? String == "4")
    }
}
