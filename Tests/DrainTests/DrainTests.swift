// DrainTests: drain_capture_inbox against a real workspace and real files: order, idempotence,
// the capture's own day, partial files, every class of bad file, and two devices converging.
import BatchIO
import CaptureFormat
import CaptureInbox
@testable import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct DrainTests {
    @Test func drain_appends_in_capture_order() async throws {
        let f = try DrainFixture()
        let a = try f.drop("first line", at: "2026-12-02T09:00:00.000Z")
        let b = try f.drop("second line", at: "2026-12-02T09:00:01.000Z")
        let c = try f.drop("third line", at: "2026-12-02T09:00:02.000Z")
        // mtimes out of order: the last capture looks oldest, the first newest.
        for (id, secondsAgo) in [(a, 10.0), (b, 1000.0), (c, 100000.0)] {
            let path = Path.join(f.inbox, CaptureName.fileName(for: id))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -secondsAgo)], ofItemAtPath: path)
        }
        let ws = try f.open()
        let report = await f.drain(ws)
        await ws.close()
        #expect(report.drained == 3)
        let page = f.journal("2026-12-02")
        let i1 = try #require(page.range(of: "first line")).lowerBound
        let i2 = try #require(page.range(of: "second line")).lowerBound
        let i3 = try #require(page.range(of: "third line")).lowerBound
        #expect(i1 < i2 && i2 < i3)
        #expect(f.pending().isEmpty)
    }

    @Test func a_captures_block_id_is_its_ulid_in_uuid_spelling() throws {
        // The ULID specification's example and the largest id (SPEC section 4).
        let b = try #require(ULID(string: "01ARZ3NDEKTSV4RRFFQ69G5FAV"))
        #expect(BlockID(capture: b).description == "01563e3a-b5d3-d676-4c61-efb99302bd5b")
        let max = try #require(ULID(string: "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"))
        #expect(BlockID(capture: max).description == "ffffffff-ffff-ffff-ffff-ffffffffffff")
        #expect(BlockID(BlockID(capture: b).description) == BlockID(capture: b))
    }

    @Test func drain_is_idempotent_after_a_crash() async throws {
        let f = try DrainFixture()
        let id = try f.drop("survives a crash", at: "2026-12-02T10:00:00Z")
        let name = CaptureName.fileName(for: id)
        let saved = try Data(contentsOf: URL(fileURLWithPath: Path.join(f.inbox, name)))
        var ws = try f.open()
        #expect(await f.drain(ws).drained == 1)
        await ws.close()
        // The crash: the op is durable but the file came back (the delete never reached disk).
        try saved.write(to: URL(fileURLWithPath: Path.join(f.inbox, name)))
        ws = try f.open()  // a fresh boot replays the op log
        let again = await f.drain(ws)
        await ws.close()
        #expect(again.drained == 0)
        #expect(again.duplicates == 1)
        #expect(occurrences(of: "survives a crash", in: f.journal("2026-12-02")) == 1)
        #expect(f.opLines(mentioning: id.uuidString).filter { $0.contains("survives a crash") }.count == 1)
        #expect(f.pending().isEmpty)
    }

    @Test func capture_lands_in_the_day_it_was_made() async throws {
        let f = try DrainFixture()
        // 23:58 at UTC-10 is already the next day in UTC and in Tokyo: the offset decides.
        try f.drop("late in Honolulu", at: "2026-12-01T23:58:07.120-10:00")
        let ws = try f.open()
        _ = await f.drain(ws)
        await ws.close()
        #expect(f.journal("2026-12-01").contains("late in Honolulu"))
        #expect(!f.journal("2026-12-02").contains("late in Honolulu"))
    }

    @Test func capture_stamped_yesterday_creates_yesterdays_page() async throws {
        let f = try DrainFixture()
        let yesterday = Date(timeIntervalSinceNow: -86400)
        let fmt = ISO8601DateFormatter()
        fmt.formatOptions = [.withInternetDateTime]
        fmt.timeZone = TimeZone(secondsFromGMT: 0)
        let stamp = fmt.string(from: yesterday)
        try f.drop("from yesterday", at: stamp)
        let ws = try f.open()
        _ = await f.drain(ws)
        await ws.close()
        #expect(f.journal(String(stamp.prefix(10))).contains("from yesterday"))
    }

    @Test func missing_captured_at_uses_the_ulid_time_with_a_warning() async throws {
        let f = try DrainFixture()
        try f.drop("no stamp", at: nil)
        let ws = try f.open()
        let obs = RecordingObserver()
        _ = await f.drain(ws, observer: obs)
        await ws.close()
        #expect(f.journal(localToday()).contains("no stamp"))
        #expect(obs.warnings.contains { $0.contains("captured_at") })
    }

    @Test func partial_file_is_ignored() async throws {
        let f = try DrainFixture()
        let tmpFile = Path.join(f.inbox, "tmp/\(f.generator.next().string).123.tmp")
        try writeText(tmpFile, #"{"text":"half writ"#)
        try writeText(Path.join(f.inbox, ".syncthing.foo.json.tmp"), #"{"text":"sync temp"}"#)
        try writeText(Path.join(f.inbox, "notes.json~"), #"{"text":"backup"}"#)
        let ws = try f.open()
        let report = await f.drain(ws)
        await ws.close()
        #expect(report == DrainReport())
        #expect(FileManager.default.fileExists(atPath: tmpFile))
        #expect(FileManager.default.fileExists(atPath: Path.join(f.inbox, ".syncthing.foo.json.tmp")))
        #expect(listDir(Path.join(f.inbox, "rejected")).isEmpty)
    }

    @Test func multi_line_text_stays_one_block_with_its_properties() async throws {
        let f = try DrainFixture()
        let id = try f.drop("line one\n- looks like a bullet\nid:: not-a-property", at: "2026-12-02T08:00:00+01:00", source: "hotkey")
        let ws = try f.open()
        let obs = RecordingObserver()
        _ = await f.drain(ws, observer: obs)
        // Its record stays in the model (outl show --details), off its page.
        let details = await ws.journalMarkdown(JournalDay(year: 2026, month: 12, day: 2)!, details: true) ?? ""
        await ws.close()
        let page = f.journal("2026-12-02")
        #expect(page.contains("line one") && page.components(separatedBy: "\n- ").count == 1, "\(page)")
        #expect(!page.contains("2026-12-02T08:00:00+01:00") && !page.contains("hotkey"), "\(page)")
        #expect(details.contains("  captured-at:: 2026-12-02T08:00:00+01:00\n  source:: hotkey\n"), "\(details)")
        #expect(obs.drainedCaptures.map(\.blockID) == [id.uuidString])
        #expect(obs.drainedCaptures.first?.source == "hotkey")
        #expect(obs.drainedCaptures.first?.day == "2026-12-02")
    }

    @Test func one_capture_drained_by_two_devices_is_one_block() async throws {
        let f = try DrainFixture()
        let rootB = f.tmp.sub("wsB")
        let inboxB = Path.join(rootB, ".outl/captures")
        try Inbox.ensure(inboxB)
        let id = try f.drop("synced to both", at: "2026-12-02T11:00:00Z")
        let name = CaptureName.fileName(for: id)
        try FileManager.default.copyItem(atPath: Path.join(f.inbox, name), toPath: Path.join(inboxB, name))
        // Two devices: separate state dirs, so separate actors; each drains its own copy.
        let a = try f.open()
        let b = try f.open(root: rootB, state: f.tmp.sub("stateB"))
        #expect(await f.drain(a).drained == 1)
        #expect(await f.drain(b, inboxes: [inboxB]).drained == 1)
        await a.close()
        await b.close()
        // The sync tool exchanges the op logs.
        for (from, to) in [(f.root, rootB), (rootB, f.root)] {
            for log in listDir(Path.join(from, ".outl/ops")) where log.hasPrefix("ops-") {
                let dst = Path.join(to, ".outl/ops/\(log)")
                if !FileManager.default.fileExists(atPath: dst) {
                    try FileManager.default.copyItem(atPath: Path.join(from, ".outl/ops/\(log)"), toPath: dst)
                }
            }
        }
        for (root, state) in [(f.root, f.state), (rootB, f.tmp.sub("stateB"))] {
            let ws = try f.open(root: root, state: state)
            _ = try await ws.projectDirtyPages()
            try await ws.reconcileAll()
            _ = try await ws.projectDirtyPages()
            await ws.close()
            #expect(occurrences(of: "synced to both", in: f.journal("2026-12-02", root: root)) == 1)
        }
    }

    /// Nearly every capture is read in place (CaptureFile.decodeInPlace: no String made); the rest
    /// are decoded. One batch of both lands exactly what appending each decoded capture as Strings
    /// lands: the same journal pages, byte for byte, and the same source and day in each drained line.
    @Test func captures_read_in_place_and_decoded_land_alike_in_one_batch() async throws {
        let f = try DrainFixture()
        let at = "2026-12-02T09:00:00.000+01:00"
        let shapes: [(text: String, source: String?)] = [
            ("plain line", "cli"), ("no source", nil), ("  padded  ", "cli"), ("ends in é", "cli"), ("🧪 starts non-ASCII", "hotkey"),
            ("quote \" and \\ backslash", "cli"), ("two\nlines", "cli"), ("C:\\Users\\bob", "cli"), ("- [ ] task", "cli"),
            ("&amp; <2026-12-05 Sat>", "ünï source"), ("x\u{7F}y", "cli"), ("last plain", "script"),
        ]
        var ids: [ULID] = []
        var files: [[UInt8]] = []
        for (n, shape) in shapes.enumerated() {
            let stamp = "2026-12-0\(2 + n % 2)T09:00:0\(n % 10).000+01:00"
            let bytes = CaptureFile.encode(Capture(text: shape.text, capturedAt: n == 0 ? at : stamp, source: shape.source))
            ids.append(try f.drop(shape.text, at: n == 0 ? at : stamp, source: shape.source))
            files.append(bytes)
        }
        let inPlace = files.filter { $0.withUnsafeBufferPointer { CaptureFile.decodeInPlace($0) } != nil }.count
        #expect(inPlace >= 4 && inPlace <= files.count - 4, "both paths in the batch: \(inPlace) of \(files.count) read in place")
        let ws = try f.open()
        let obs = RecordingObserver()
        #expect(await f.drain(ws, observer: obs).drained == shapes.count)
        await ws.close()
        // The same captures, decoded, appended as Strings to a second workspace.
        let other = f.tmp.sub("other"), otherState = f.tmp.sub("other-state")
        let ws2 = try f.open(root: other, state: otherState)
        var blocks: [CaptureBlock] = []
        for (id, bytes) in zip(ids, files) {
            let d = try CaptureFile.decode(bytes)
            let t = try #require(d.capturedAt)
            let day = try #require(JournalDay(year: t.calendarDay.year, month: t.calendarDay.month, day: t.calendarDay.day))
            blocks.append(CaptureBlock(blockID: BlockID(capture: id), day: day, text: d.text, capturedAt: try #require(d.capturedAtRaw), source: d.source))
        }
        #expect(try await ws2.appendCaptures(blocks) == Array(repeating: .created, count: blocks.count))
        _ = try await ws2.projectDirtyPages()
        await ws2.close()
        for day in ["2026-12-02", "2026-12-03"] {
            #expect(!f.journal(day).isEmpty && f.journal(day) == f.journal(day, root: other), "\(day)")
        }
        #expect(obs.drainedCaptures.map(\.source) == blocks.map(\.source))
        #expect(obs.drainedCaptures.map(\.day) == blocks.map(\.day.iso))
    }

    @Test func captures_in_two_inboxes_merge_in_capture_order() async throws {
        let f = try DrainFixture()
        let local = f.tmp.sub("device-inbox")
        try Inbox.ensure(local)
        try f.drop("one", at: "2026-12-02T12:00:00Z")
        try f.drop("two", at: "2026-12-02T12:00:00Z", into: local)
        try f.drop("three", at: "2026-12-02T12:00:00Z")
        let ws = try f.open()
        let r = await f.drain(ws, inboxes: [f.inbox, local])
        await ws.close()
        #expect(r.drained == 3)
        let page = f.journal("2026-12-02")
        let order = ["one", "two", "three"].compactMap { page.range(of: "- \($0)")?.lowerBound ?? page.range(of: $0)?.lowerBound }
        #expect(order.count == 3 && order == order.sorted())
        #expect(listDir(local).filter { CaptureName.isFinal($0) }.isEmpty)
    }

    @Test func a_directory_listing_leaves_out_dot_and_dot_dot_only() throws {
        // "." and ".." are told by their bytes before any String is made: names that only start
        // like them are still listed, through the descriptor and the path alike.
        let t = TempDir("listing")
        let names = [".", "..", ".hidden", "..twodots", "...", "a"]
        for name in names.dropFirst(2) { try Data().write(to: URL(fileURLWithPath: Path.join(t.path, name))) }
        let expected = [".hidden", "..twodots", "...", "a"].sorted()
        #expect(try Sys.readDirectory(t.path).sorted() == expected)
        let dir = try FileDescriptor.open(t.path, O_RDONLY | O_DIRECTORY)
        defer { dir.close() }
        #expect(try dir.readDirectory(path: t.path).sorted() == expected)
    }

    @Test func one_id_in_two_inboxes_lands_once_and_both_files_go() async throws {
        // The drain tells a copy by its id standing next to the last landed one (capture order):
        // captures before and after it, and a first copy that is not a capture, must not fool it.
        let f = try DrainFixture()
        let local = f.tmp.sub("device-inbox")
        try Inbox.ensure(local)
        try f.drop("before", at: "2026-12-02T12:00:00Z")
        let twice = try f.drop("in both inboxes", at: "2026-12-02T12:00:00Z")
        let name = CaptureName.fileName(for: twice)
        try FileManager.default.copyItem(atPath: Path.join(f.inbox, name), toPath: Path.join(local, name))
        try f.drop("after", at: "2026-12-02T12:00:00Z", into: local)
        // A bad first copy (set aside) and a good second one: the good one lands.
        let broken = f.generator.next()
        _ = try f.dropRaw(Array("not json".utf8), id: broken)
        try f.drop("its good copy", at: "2026-12-02T12:00:00Z", into: local, id: broken)
        let ws = try f.open()
        let r = await f.drain(ws, inboxes: [f.inbox, local])
        await ws.close()
        #expect(r.drained == 4 && r.duplicates == 1 && r.rejected == 1, "\(r)")
        let page = f.journal("2026-12-02")
        for text in ["before", "in both inboxes", "after", "its good copy"] {
            #expect(occurrences(of: "- \(text)\n", in: page) == 1, "\(text)")
        }
        #expect(listDir(f.inbox).filter { CaptureName.isFinal($0) }.isEmpty)
        #expect(listDir(local).filter { CaptureName.isFinal($0) }.isEmpty)
    }
}

/// Where the ring helps and where it only costs: on tmpfs a capture file is read and unlinked with
/// plain syscalls (the ring handed reads to io-wq workers there, for more CPU than the reads), on a
/// disk both go on io_uring once a pass has `ringFromFiles` files (two); a pass of one file, and the
/// op log's append always, use plain syscalls (an unlink or fdatasync on the ring runs on an io-wq
/// worker, which only adds wake-ups when there is nothing to overlap). Counted at the seam.
@Suite(.serialized) struct InboxRingChoiceTests {
    static let memory = "/dev/shm", disk = "/var/tmp"
    static func fileSystem(_ path: String) -> Int? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_DIRECTORY) else { return nil }
        defer { fd.close() }
        return Sys.fileSystemType(fd.rawValue)
    }
    static let ringHere = BatchIO.make(forcePlain: false).backend == .uring
    static let bothHere = ringHere && fileSystem(memory) == 0x0102_1994 && fileSystem(disk).map { $0 != 0x0102_1994 } == true

    /// The ring's reads and unlinks of one drain of `count` captures in a workspace under `base`.
    func ringCalls(under base: String, count: Int = ringFromFiles) async throws -> (reads: Int, unlinks: Int, drained: Int) {
        let f = try DrainFixture(under: base)
        for k in 0..<count { try f.drop("line \(k)", at: "2026-12-02T09:00:0\(k).000Z") }
        let ws = try f.open()
        let reads = FaultInjector(match: SysMatch(ops: [.uringRead], under: f.inbox))
        let unlinks = FaultInjector(match: SysMatch(ops: [.uringUnlink], under: f.inbox))
        let report = await withInterposer(Both(reads, unlinks)) { await f.drain(ws) }
        await ws.close()
        #expect(f.pending().isEmpty)
        return (reads.count, unlinks.count, report.drained)
    }

    @Test(.enabled(if: bothHere, "needs io_uring, a tmpfs at /dev/shm and a disk at /var/tmp"))
    func capture_files_on_tmpfs_are_read_and_unlinked_with_plain_syscalls_and_on_a_disk_on_the_ring() async throws {
        let n = ringFromFiles
        let onMemory = try await ringCalls(under: Self.memory)
        #expect(onMemory.drained == n && onMemory.reads == 0 && onMemory.unlinks == 0, "\(onMemory)")
        let onDisk = try await ringCalls(under: Self.disk)
        #expect(onDisk.drained == n && onDisk.reads >= n && onDisk.unlinks == n, "\(onDisk)")
    }

    @Test(.enabled(if: bothHere, "needs io_uring, a tmpfs at /dev/shm and a disk at /var/tmp"))
    func a_pass_of_one_capture_file_reads_and_unlinks_it_with_plain_syscalls_on_a_disk_too() async throws {
        let one = try await ringCalls(under: Self.disk, count: 1)
        #expect(one.drained == 1 && one.reads == 0 && one.unlinks == 0, "\(one)")
    }

    @Test(.enabled(if: bothHere, "needs io_uring, a tmpfs at /dev/shm and a disk at /var/tmp"))
    func the_op_log_is_appended_with_write_and_fdatasync_on_io_uring_too() async throws {
        let f = try DrainFixture(under: Self.disk)
        #expect(f.io.backend == .uring)
        for k in 0..<ringFromFiles { try f.drop("line \(k)", at: "2026-12-02T09:00:0\(k).000Z") }
        let ws = try f.open()
        let ops = Path.join(f.root, ".outl/ops")
        let plain = FaultInjector(match: SysMatch(ops: [.write, .fdatasync], under: ops))
        let ring = FaultInjector(match: SysMatch(ops: [.uringRead, .uringUnlink], under: f.inbox))
        let report = await withInterposer(Both(plain, ring)) { await f.drain(ws) }
        await ws.close()
        #expect(report.drained == ringFromFiles && f.pending().isEmpty)
        let kinds = plain.log.map { $0.split(separator: " ")[0] }
        #expect(kinds.contains("write") && kinds.last == "fdatasync", "\(plain.log)")
        // The same drain still read and unlinked its files on the ring.
        #expect(ring.log.filter { $0.hasPrefix("uringUnlink") }.count == ringFromFiles, "\(ring.log)")
    }
}

/// With plain syscalls a capture file is opened, checked, read and closed before the next one is
/// opened, as the C floor does: holding a whole batch open at once (4,096 files) made the kernel's
/// side of the same calls slower (a tmpfs burst of 10,000 in C: 1.2x the time).
@Suite(.serialized) struct PlainReadOrderTests {
    @Test func with_plain_syscalls_each_capture_file_is_read_and_closed_before_the_next_is_opened() async throws {
        let f = try DrainFixture(plainIO: true)
        for k in 0..<3 { try f.drop("line \(k)", at: "2026-12-02T09:00:0\(k).000Z") }
        let ws = try f.open()
        let calls = FaultInjector(match: SysMatch(ops: [.open, .fstat, .pread, .close], under: f.inbox))
        let report = await withInterposer(calls) { await f.drain(ws) }
        await ws.close()
        #expect(report.drained == 3 && f.pending().isEmpty)
        let onCaptures = calls.log.filter { $0.hasSuffix(".json") }.map { $0.split(separator: " ")[0] }
        #expect(onCaptures == Array(repeating: ["open", "fstat", "pread", "close"], count: 3).flatMap { $0 }, "\(calls.log)")
    }
}

/// A batch reads capture files only until they hold `batchBytes`, then the next batch goes on: a
/// file may hold 1 MiB, and a batch of 4,096 such files had held 4 GiB at once. Each batch is one
/// durable append (its captures share the moment it became durable), in capture order, none lost.
@Suite struct BatchBytesTests {
    @Test(arguments: [true, false])
    func a_batch_reads_no_more_than_its_bytes_and_the_next_batch_goes_on(plainIO: Bool) async throws {
        let f = try DrainFixture(plainIO: plainIO)
        // 300 KB each: a newer writer's field, which the drain reads and ignores.
        let filler = String(repeating: "x", count: 300_000)
        for k in 0..<12 {
            let json = "{\"text\":\"big \(k)\",\"captured_at\":\"2026-12-02T09:00:00Z\",\"source\":\"test\",\"note\":\"\(filler)\"}"
            try f.dropRaw(Array(json.utf8))
        }
        let ws = try f.open()
        var options = DrainOptions()
        options.batchBytes = 1 << 20
        let observer = RecordingObserver()
        let report = await drain_capture_inbox([f.inbox], into: ws, io: f.io, observer: observer, options: options)
        await ws.close()
        #expect(report.drained == 12 && f.pending().isEmpty)
        // Four files reach 1 MiB: three batches of four.
        let batches = Dictionary(grouping: observer.drainedCaptures, by: \.durableUsec).values.map(\.count)
        #expect(batches.sorted() == [4, 4, 4], "\(batches)")
        let page = f.journal("2026-12-02")
        let places = (0..<12).compactMap { page.range(of: "- big \($0)\n")?.lowerBound }
        #expect(places.count == 12 && places == places.sorted())
    }

    /// A peer can fill an inbox with millions of names: a pass holds at most `listingLimit` of them,
    /// the first in capture order across inboxes, and says there are more; the next pass goes on
    /// where it stopped, so the whole inbox lands in capture order, one id's two copies once.
    @Test func a_pass_lists_at_most_its_limit_and_the_next_goes_on_in_capture_order() async throws {
        let f = try DrainFixture()
        let local = f.tmp.sub("device-inbox")
        try Inbox.ensure(local)
        var ids: [ULID] = []
        for i in 0..<23 { ids.append(try f.drop("line \(i)", at: "2026-12-02T12:00:00Z", into: i % 3 == 0 ? local : nil)) }
        // One id in both inboxes (its copy stands next to it in capture order), written out of
        // order: a listing is in directory order, never in name order.
        let copied = CaptureName.fileName(for: ids[7])
        try FileManager.default.copyItem(atPath: Path.join(f.inbox, copied), toPath: Path.join(local, copied))
        let ws = try f.open()
        var options = DrainOptions()
        options.listingLimit = 5
        var passes: [DrainReport] = []
        while passes.count < 10 {
            let observer = RecordingObserver()
            let r = await drain_capture_inbox([f.inbox, local], into: ws, io: f.io, observer: observer, options: options)
            passes.append(r)
            #expect(r.drained + r.duplicates <= 5, "\(r)")
            // The first captures waiting, and none after them: what this pass drained is the
            // smallest ids left.
            let left = Set(listDir(f.inbox).compactMap(CaptureName.ulid(of:)) + listDir(local).compactMap(CaptureName.ulid(of:)))
            for c in observer.drainedCaptures { #expect(left.allSatisfy { $0 >= c.capture }, "\(c.capture) drained before a smaller id") }
            if !r.owesAnotherPass { break }
        }
        await ws.close()
        // 24 files, five at a time: 5, 5, 5, 5, 4, the last not cut.
        #expect(passes.map(\.more) == [true, true, true, true, false], "\(passes)")
        #expect(passes.reduce(0) { $0 + $1.drained } == 23 && passes.reduce(0) { $0 + $1.duplicates } == 1)
        let page = f.journal("2026-12-02")
        let places = (0..<23).compactMap { page.range(of: "- line \($0)\n")?.lowerBound }
        #expect(places.count == 23 && places == places.sorted(), "\(page)")
        #expect(f.pending().isEmpty && listDir(local).filter { CaptureName.isFinal($0) }.isEmpty)
    }

    @Test func smallest_kept_keeps_the_first_in_order_and_says_when_it_cut() {
        var rng = SystemRandomNumberGenerator()
        for (count, limit) in [(0, 3), (3, 3), (4, 3), (1000, 1), (1000, 100), (1000, 999), (1000, 1000), (1000, 5000)] {
            let values = (0..<count).map { $0 * 2 }.shuffled(using: &rng)
            var kept = SmallestKept<Int>(limit: limit, by: <)
            for v in values { kept.offer(v) }
            #expect(kept.cut == (count > limit), "\(count) offered, \(limit) kept")
            #expect(kept.takeSorted() == Array((0..<min(count, limit)).map { $0 * 2 }), "\(count) offered, \(limit) kept")
        }
    }
}

/// Two interposers asked in turn: each counts what it matches; the first fault wins.
private final class Both: SysInterposer, @unchecked Sendable {
    let a: SysInterposer, b: SysInterposer
    init(_ a: SysInterposer, _ b: SysInterposer) { self.a = a; self.b = b }
    func before(_ call: SysCall) -> SysFault? { a.before(call) ?? b.before(call) }
    func after(_ call: SysCall, result: Int) { a.after(call, result: result); b.after(call, result: result) }
}
