// PeerOpsProcessTests: the real outld beside a peer whose op file is written by hand (as a sync tool
// delivers it: a temporary name, then a rename): a peer's clock decades or minutes ahead does not
// drag this device's stamps and is reported, a hand edit after it wins, and a peer's deletes are
// named in the log with the device, the blocks' ids and their first words.
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

final class PeerHome {
    let tmp = TempDir("outld-peer")
    var home: String { tmp.sub("home") }
    var workspace: String { Path.join(home, "outl") }
    var opsDir: String { Path.join(workspace, ".outl/ops") }
    var page: String { Path.join(workspace, "journals/2026_12_02.md") }
    let peer = BlockID.random()
    var process: Process? = nil
    var logPath = ""

    init() throws { try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true) }

    var env: [String: String] {
        ["HOME": home, "XDG_CONFIG_HOME": Path.join(home, ".config"), "XDG_STATE_HOME": Path.join(home, ".local/state")]
    }

    func start() throws {
        logPath = tmp.sub("outld-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binPath("outld"))
        p.arguments = ["--log", "stderr"]
        var e = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OUTL_") && $0.key != "NOTIFY_SOCKET" && $0.key != "JOURNAL_STREAM" && $0.key != "WATCHDOG_USEC" }
        for (k, v) in env { e[k] = v }
        p.environment = e
        p.standardError = FileHandle(forWritingAtPath: logPath)
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        process = p
        #expect(wait { self.log.contains("ready") }, "\(log)")
    }

    func stop() {
        guard let p = process else { return }
        if p.isRunning { kill(p.processIdentifier, SIGTERM) }
        p.waitUntilExit()
        process = nil
    }

    var log: String { readText(logPath) ?? "" }
    var journal: String { readText(page) ?? "" }

    func capture(_ text: String) throws {
        let r = try run(binPath("outl-capture"), ["--quiet", "--at", "2026-12-02T10:00:00Z", text], env: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(wait { self.journal.contains("- \(text)") }, "\(text) never reached the journal:\n\(journal)\n\(log)")
    }

    /// This device's own ops, as its file holds them.
    func ownOps() throws -> [Op] {
        let name = listDir(opsDir).first { $0.hasPrefix("ops-") && $0 != "ops-\(peer).jsonl" }!
        var ops: [Op] = []
        _ = try OpLogReader.readFile(Path.join(opsDir, name), writable: false, sink: { op, _ in ops.append(op.op()) },
                                     progress: { _ in })
        return ops
    }

    func blockID(_ text: String) throws -> BlockID {
        try #require(try ownOps().first { $0.kind == .createBlock && $0.text == text }).id
    }

    /// The peer's op file, delivered whole as Syncthing delivers it.
    func deliverPeer(_ ops: [Op]) throws {
        var bytes: [UInt8] = []
        for op in ops { OpEncoder.append(op, to: &bytes) }
        let path = Path.join(opsDir, "ops-\(peer).jsonl")
        let tmp = Path.join(opsDir, ".syncthing.ops-\(peer).jsonl.tmp")
        try Data(bytes).write(to: URL(fileURLWithPath: tmp))
        try Sys.rename(tmp, path)
    }

    func wait(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

@Suite(.serialized) struct PeerOpsProcessTests {
    static let thirtyYears: Int64 = 30 * 366 * 86_400_000  // 30 years and some days, whatever the leap years

    @Test func far_future_peer_edit_then_a_hand_edit_the_edit_wins_and_no_local_op_is_in_the_future() throws {
        let h = try PeerHome()
        defer { h.stop() }
        try h.start()
        try h.capture("as captured")
        let id = try h.blockID("as captured")
        var edit = Op(hlc: HLC(wall: wallClockMilliseconds() + Self.thirtyYears, counter: UInt32.max, actor: h.peer),
                      kind: .updateBlock, id: id)
        edit.text = "from the future"
        try h.deliverPeer([edit])
        #expect(h.wait { h.journal.contains("- from the future") }, "\(h.journal)\n\(h.log)")
        #expect(h.log.contains("device \(h.peer): 1 op stamped up to 30 years ahead of this machine's clock"), "\(h.log)")
        #expect(h.log.contains("ub \(id)"), "the log names the op: \(h.log)")
        // The person sees the line and fixes it in the file.
        try writeText(h.page, h.journal.replacingOccurrences(of: "- from the future", with: "- fixed by hand"))
        #expect(h.wait { h.log.contains("hand edit(s) turned into ops") }, "\(h.log)")
        try h.capture("next line")
        #expect(h.journal.contains("- fixed by hand") && !h.journal.contains("from the future"), "the edit was reverted:\n\(h.journal)")
        let next = try #require(try h.ownOps().first { $0.text == "next line" })
        #expect(next.hlc.wall <= wallClockMilliseconds(), "the next local op carries a future time: \(next.hlc)")
        // outl status says which device is ahead, and how far.
        let status = try run(binPath("outl"), ["status"], env: h.env)
        #expect(status.stdout.contains("stamped beyond the 5 min bound ahead of this machine's clock, up to 30 years"),
                "\(status.stdout)\(status.stderr)")
        // A restart boots the same ops: the edit still wins, and the boot reports the peer again.
        h.stop()
        try h.start()
        #expect(h.log.contains("device \(h.peer): 1 op stamped up to 30 years ahead"), "\(h.log)")
        try h.capture("after the restart")
        #expect(h.journal.contains("- fixed by hand") && !h.journal.contains("from the future"), "\(h.journal)")
        #expect(try h.ownOps().allSatisfy { $0.hlc.wall <= wallClockMilliseconds() || $0.kind == .updateBlock })
    }

    @Test func a_peer_ten_minutes_fast_has_its_captures_shown_at_once_and_moves_no_clock_here() throws {
        let h = try PeerHome()
        defer { h.stop() }
        try h.start()
        try h.capture("typed here first")
        let day = JournalDay(year: 2026, month: 12, day: 2)!
        let fast = wallClockMilliseconds() + 10 * 60_000
        var page = Op(hlc: HLC(wall: fast, counter: 0, actor: h.peer), kind: .createPage, id: BlockID.journalPage(day))
        page.text = day.iso
        var block = Op(hlc: HLC(wall: fast + 1, counter: 0, actor: h.peer), kind: .createBlock, id: BlockID.random())
        block.page = BlockID.journalPage(day); block.pos = HLC(wall: fast + 1, counter: 0, actor: h.peer).positionKey
        block.text = "from the fast laptop"
        try h.deliverPeer([page, block])
        #expect(h.wait(5) { h.journal.contains("- from the fast laptop") }, "not shown at once:\n\(h.journal)\n\(h.log)")
        #expect(h.log.contains("device \(h.peer): 2 ops stamped up to 9 min ahead")
                || h.log.contains("device \(h.peer): 2 ops stamped up to 10 min ahead"), "\(h.log)")
        try h.capture("typed here after")
        let mine = try h.ownOps()
        #expect(mine.allSatisfy { $0.hlc.wall <= wallClockMilliseconds() }, "this clock followed the fast one: \(mine.map(\.hlc))")
        #expect(h.journal.range(of: "- from the fast laptop")!.lowerBound < h.journal.range(of: "- typed here after")!.lowerBound,
                "a capture drained now goes at the end:\n\(h.journal)")
    }

    /// A peer that floods today's page past the 64 MiB a page file may hold (17 blocks of 4.1 MB,
    /// each an op line within the reader's 4 MiB): the page is written without its largest block,
    /// the log and `outl check` name the device, and a capture made here still lands.
    @Test func a_peer_flooding_a_page_past_the_limit_is_held_back_and_captures_still_land() throws {
        let h = try PeerHome()
        defer { h.stop() }
        try h.start()
        try h.capture("typed here first")
        let day = JournalDay(year: 2026, month: 12, day: 2)!
        let now = wallClockMilliseconds()
        var ops = [Op(hlc: HLC(wall: now, counter: 0, actor: h.peer), kind: .createPage, id: BlockID.journalPage(day))]
        ops[0].pageKind = .journal; ops[0].text = day.iso
        for i in 0..<17 {
            let hlc = HLC(wall: now + Int64(i) + 1, counter: 0, actor: h.peer)
            var b = Op(hlc: hlc, kind: .createBlock, id: BlockID.random())
            b.page = BlockID.journalPage(day); b.pos = hlc.positionKey
            b.text = "flood \(i) " + String(repeating: "x", count: 4_100_000 + i)
            ops.append(b)
        }
        let largest = ops[17].id
        try h.deliverPeer(ops)
        #expect(h.wait(60) { h.log.contains("block \(largest)") }, "\(h.log.suffix(2000))")
        let line = h.log.split(separator: "\n").first { $0.contains("block \(largest)") }.map(String.init) ?? ""
        #expect(line.contains("device \(h.peer)") && line.contains("is not shown in \(h.page)") && line.contains("64 MiB"), "\(line)")
        try h.capture("typed here after the flood")
        let size = try Sys.lstat(h.page).st_size
        #expect(size <= 64 << 20, "a page file of \(size) bytes")
        let page = h.journal
        #expect(page.contains("- typed here first") && page.contains("- flood 15 ") && !page.contains("- flood 16 "))
        h.stop()
        let check = try run(binPath("outl"), ["check"], env: h.env)
        #expect(check.status != 0 && check.stdout.contains("block \(largest) from device \(h.peer)"), "\(check.stdout)\(check.stderr)")
    }

    @Test func merge_from_a_device_logs_the_blocks_it_deleted() throws {
        let h = try PeerHome()
        defer { h.stop() }
        try h.start()
        let long = "buy oat milk, then call the plumber about the sink"
        try h.capture(long)
        try h.capture("keep me")
        let id = try h.blockID(long)
        try h.deliverPeer([Op(hlc: HLC(wall: wallClockMilliseconds(), counter: 0, actor: h.peer), kind: .deleteBlock, id: id)])
        #expect(h.wait { !h.journal.contains(long) }, "\(h.journal)")
        #expect(h.journal.contains("- keep me"))
        #expect(h.wait { h.log.contains("deleted 1 block here") }, "\(h.log)")
        let line = h.log.split(separator: "\n").first { $0.contains("deleted 1 block here") }.map(String.init) ?? ""
        #expect(line == "outld: device \(h.peer) deleted 1 block here: \(id) \"buy oat milk, then call the plumber abou…\"",
                "\(line)")
        #expect(h.log.contains("merged 1 op from device \(h.peer): 0 created, 0 edited, 0 moved, 1 deleted"), "\(h.log)")
    }
}
