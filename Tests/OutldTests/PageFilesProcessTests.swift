// PageFilesProcessTests: the page files of journals/ and pages/ as a person and their other devices
// leave them, met by the real outld, outl-capture and outl on real temporary workspaces.
import Foundation
import Glibc
import SystemCalls
import Testing
import TestSupport

/// Today in the zone the children inherit from this process, in both spellings of a journal file.
struct PageFilesDay {
    let iso: String, stem: String
    init() {
        var t = time(nil)
        var tm = tm()
        localtime_r(&t, &tm)
        let y = Int(tm.tm_year) + 1900, m = Int(tm.tm_mon) + 1, d = Int(tm.tm_mday)
        func pad(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        iso = "\(y)-\(pad(m))-\(pad(d))"
        stem = "\(y)_\(pad(m))_\(pad(d))"
    }
}

/// Another device's op file, spelled line by line as its outld would write it. OutldTests does not
/// link the Workspace module, so the line format (CRC32C of the JSON, a space, the JSON) is spelled
/// here; a line that failed its CRC would be skipped and the test would prove nothing, so each
/// test that delivers one also checks that the peer's op was read (see `PageFilesHome.deliver`).
struct PageFilesPeer {
    /// A forger may sign with another device's actor (OpLogTrustTests, the op-file name rule).
    var actor = UUID().uuidString.lowercased()
    var bytes: [UInt8] = []
    var wall = Int64(Date().timeIntervalSince1970 * 1000)
    var counter = 0

    static func newID() -> String { UUID().uuidString.lowercased() }

    mutating func createPage(id: String, journal: Bool, name: String) {
        append("cp", id, [("pk", quoted(journal ? "j" : "p")), ("t", quoted(name))])
    }

    mutating func createBlock(id: String, page: String, text: String) {
        let pos = base36(UInt64(wall), 9) + base36(UInt64(counter), 4) + "i"
        append("cb", id, [("pg", quoted(page)), ("pa", quoted("")), ("pos", quoted(pos)), ("t", quoted(text)), ("pr", "{}")])
    }

    mutating func updateBlock(id: String, text: String) {
        append("ub", id, [("t", quoted(text)), ("pr", "{}")])
    }

    private mutating func append(_ kind: String, _ id: String, _ fields: [(String, String)]) {
        var json = "{\"k\":\"\(kind)\",\"w\":\(wall),\"c\":\(counter),\"a\":\"\(actor)\",\"id\":\"\(id)\""
        for (k, v) in fields { json += ",\"\(k)\":\(v)" }
        json += "}"
        let body = Array(json.utf8)
        bytes += Array(hex8(crc32c(body)).utf8) + [32] + body + [10]
        counter += 1
    }

    private func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where u.value < 32: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    private func base36(_ v: UInt64, _ width: Int) -> String {
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyz")
        var v = v, out = [Character](repeating: "0", count: width)
        for i in stride(from: width - 1, through: 0, by: -1) { out[i] = digits[Int(v % 36)]; v /= 36 }
        return String(out)
    }

    private func hex8(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }

    /// CRC-32C (Castagnoli, reflected), as the op log's lines carry it.
    private func crc32c(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0x82F6_3B78 : 0) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

/// What a bounded run of a program gave: `timedOut` when it had to be killed.
struct PageFilesRun {
    var status: Int32
    var signaled: Bool
    var timedOut: Bool
    var stdout: String
    var stderr: String
}

/// One device's workspace (OutlHome) with a short sync settle, bounded runs and op-log reading.
final class PageFilesHome {
    let h: OutlHome
    var peers: [String] = []
    let today = PageFilesDay()

    init() throws { h = try OutlHome() }

    var workspace: String { h.workspace }
    var opsDir: String { Path.join(workspace, ".outl/ops") }
    /// Files waiting for other devices' ops are judged after 300 ms of quiet, not 10 s.
    var env: [String: String] { h.env.merging(["OUTL_SYNC_SETTLE_MS": "300"]) { $1 } }

    func path(_ rel: String) -> String { Path.join(workspace, rel) }
    func text(_ rel: String) -> String? { readText(path(rel)) }
    var todayFile: String { "journals/\(today.stem).md" }

    func capture(_ text: String, day: String? = nil) throws {
        let r = try run(binPath("outl-capture"), ["--quiet", "--at", "\(day ?? today.iso)T12:00:00Z", text], env: env)
        #expect(r.status == 0, "outl-capture \(text): \(r.status) \(r.stderr)")
    }

    /// Any program run to its end, or killed after `seconds` (outld must never hang on a page file).
    func bounded(_ exe: String, _ args: [String], seconds: Double = 60) throws -> PageFilesRun {
        let dir = TempDir("pagefiles-run")
        let outPath = dir.sub("stdout"), errPath = dir.sub("stderr")
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        var e = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OUTL_") }
        for (k, v) in env { if v.isEmpty { e.removeValue(forKey: k) } else { e[k] = v } }
        p.environment = e
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        p.standardError = FileHandle(forWritingAtPath: errPath)
        try p.run()
        let finished = eventually(seconds) { !p.isRunning }
        if !finished { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        return PageFilesRun(status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal, timedOut: !finished,
                            stdout: readText(outPath) ?? "", stderr: readText(errPath) ?? "")
    }

    func once(seconds: Double = 60) throws -> PageFilesRun {
        try bounded(binPath("outld"), ["--once", "--log", "stderr"], seconds: seconds)
    }

    func outl(_ args: [String]) throws -> PageFilesRun {
        try bounded(binPath("outl"), ["--workspace", workspace] + args, seconds: 60)
    }

    func start() throws -> RunningOutld {
        let d = try h.start(extraEnv: ["OUTL_SYNC_SETTLE_MS": "300"])
        #expect(eventually { d.log.contains("ready") }, "outld never got ready:\n\(d.log)")
        return d
    }

    /// SIGTERM, then SIGKILL if it does not stop: nil when it had to be killed (it hung).
    func stop(_ d: RunningOutld, seconds: Double = 15) -> Int32? {
        if d.process.isRunning { d.signal(SIGTERM) }
        if !eventually(seconds, { !d.process.isRunning }) {
            d.signal(SIGKILL)
            d.process.waitUntilExit()
            return nil
        }
        d.process.waitUntilExit()
        return d.process.terminationStatus
    }

    func opFiles() -> [String] {
        listDir(opsDir).filter { $0.hasPrefix("ops-") && $0.hasSuffix(".jsonl") }.map { Path.join(opsDir, $0) }
    }

    /// This device's own op file: the one no peer of the test wrote.
    func ownOps() -> String {
        let own = opFiles().first { f in !peers.contains { f.hasSuffix("ops-\($0).jsonl") } }
        return own.flatMap(readText) ?? ""
    }

    func allOps() -> String { opFiles().compactMap(readText).joined() }

    func lineCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for f in opFiles() { counts[Path.lastComponent(f)] = (readText(f) ?? "").split(separator: "\n").count }
        return counts
    }

    /// Delivered as Syncthing delivers a file: a temporary in the same directory, renamed into place.
    func deliver(_ peer: PageFilesPeer) throws {
        try FileManager.default.createDirectory(atPath: opsDir, withIntermediateDirectories: true)
        let tmp = Path.join(opsDir, ".syncthing.ops-\(peer.actor).jsonl.tmp")
        try Data(peer.bytes).write(to: URL(fileURLWithPath: tmp))
        try Sys.rename(tmp, Path.join(opsDir, "ops-\(peer.actor).jsonl"))
        peers.append(peer.actor)
    }

    /// `outl status` lists every op log with its number of ops: the peer's must be read whole,
    /// or the test's hand-spelled lines were not what outld reads.
    func expectPeerRead(_ peer: PageFilesPeer, ops: Int) throws {
        let s = try outl(["status"])
        #expect(s.stdout.contains("device \(peer.actor)  \(ops) op"), "the peer's op file was not read:\n\(s.stdout)\(s.stderr)")
    }
}

/// How many lines of `text` are exactly `line`.
func pageFilesCount(_ text: String?, _ line: String) -> Int {
    (text ?? "").split(separator: "\n", omittingEmptySubsequences: false).filter { $0 == line }.count
}

/// (type, inode, size, mtime) of what is at `path`, not following a link.
func pageFilesIdentity(_ path: String) -> [Int]? {
    var st = stat()
    guard lstat(path, &st) == 0 else { return nil }
    return [Int(st.st_mode & S_IFMT), Int(st.st_ino), Int(st.st_size), Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec)]
}

@Suite(.serialized) struct PageFilesProcessTests {
    static let deleteOp = "\"k\":\"db\""   // OpEncoder spells deleteBlock as "db"

    // MARK: 1. the other spelling of a day

    @Test(arguments: ["written while outld runs", "created empty and typed into 2 s later", "made while outld was stopped"])
    func the_obsidian_spelling_of_a_day_with_two_devices_deletes_nothing(_ how: String) throws {
        let w = try PageFilesHome()
        let captured = ["first capture", "second capture", "third capture"]
        for c in captured { try w.capture(c) }
        let first = try w.once()
        #expect(first.status == 0, "\(first.stderr)")
        let logseq = w.todayFile, obsidian = "journals/\(w.today.iso).md"
        #expect(captured.allSatisfy { pageFilesCount(w.text(logseq), "- \($0)") == 1 }, "\(w.text(logseq) ?? "no file")")
        // Another device shares the folder: content no op explains now waits for the settle.
        var peer = PageFilesPeer()
        // A journal day under its canonical id (the day's derived id: a page under any other id is refused).
        peer.createPage(id: "6a6f7572-6e61-8000-8000-00000135290a", journal: true, name: "2026-11-30")
        try w.deliver(peer)
        try w.expectPeerRead(peer, ops: 1)

        let typed: String
        let d: RunningOutld
        switch how {
        case "written while outld runs":
            d = try w.start()
            typed = "from obsidian"
            try writeText(w.path(obsidian), "- \(typed)\n")
        case "created empty and typed into 2 s later":
            d = try w.start()
            typed = "typed later"
            try writeText(w.path(obsidian), "")
            usleep(2_000_000)   // the person types after Obsidian made the note
            try writeText(w.path(obsidian), "- \(typed)\n")
        default:
            typed = "from obsidian"
            try writeText(w.path(obsidian), "- \(typed)\n")
            d = try w.start()
        }
        let expected = captured + [typed]
        let merged = eventually(20) { w.text(obsidian) == nil && (w.text(logseq) ?? "").contains("- \(typed)") }
        _ = eventually(5) { expected.allSatisfy { pageFilesCount(w.text(logseq), "- \($0)") == 1 } }
        let stopped = w.stop(d)
        let page = w.text(logseq) ?? "no file"
        #expect(merged, "the Obsidian file was never taken and removed:\n\(page)\n\(d.log)")
        for line in expected {
            #expect(pageFilesCount(page, "- \(line)") == 1, "\(how): '\(line)' is not in the day's file once:\n\(page)\n\(d.log)")
        }
        #expect(!w.allOps().contains(Self.deleteOp), "\(how): a delete no person made:\n\(w.allOps())")
        #expect(w.text(obsidian) == nil, "the Obsidian spelling is still there")
        let check = try w.outl(["check"])
        #expect(check.status == 0, "outl check: \(check.stdout)\(check.stderr)")
        #expect(stopped == 0, "outld: \(String(describing: stopped))\n\(d.log)")
    }

    // MARK: 2. one page that cannot be written

    /// A capture on 2026-12-01 projected, then its file replaced by `kind` while outld is stopped.
    func homeWithBlockedPage(_ kind: String) throws -> (PageFilesHome, String, [Int]?) {
        let w = try PageFilesHome()
        try w.capture("on the first of December", day: "2026-12-01")
        let first = try w.once()
        #expect(first.status == 0, "\(first.stderr)")
        let blocked = w.path("journals/2026_12_01.md")
        #expect(w.text("journals/2026_12_01.md")?.contains("- on the first of December") == true)
        try FileManager.default.removeItem(atPath: blocked)
        if kind == "a FIFO" {
            #expect(mkfifo(blocked, 0o644) == 0)
        } else {
            let line = Array("- filler line of a very large page\n".utf8)
            var big: [UInt8] = []
            big.reserveCapacity(70 << 20)
            while big.count < 70 << 20 { big += line }
            try Data(big).write(to: URL(fileURLWithPath: blocked))
        }
        return (w, blocked, pageFilesIdentity(blocked))
    }

    static let reasons = ["a FIFO": ["fifo", "not a regular file", "pipe"],
                          "a 70 MB file": ["too large", "too big", "larger than", "exceeds", "limit"]]

    @Test(arguments: ["a FIFO", "a 70 MB file"])
    func one_page_that_cannot_be_written_never_holds_back_another(_ kind: String) throws {
        let (w, blocked, before) = try homeWithBlockedPage(kind)
        try w.capture("today despite the blocked page")
        let r = try w.once()
        #expect(!r.timedOut, "outld --once hung on \(kind)")
        #expect(r.status == 74, "\(kind): exit \(r.status), the captures are durable but a page was not written:\n\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("drained 1"), "no drain line: \(r.stdout)")
        #expect(w.text(w.todayFile)?.contains("- today despite the blocked page") == true,
                "\(kind) held back today's journal:\n\(w.text(w.todayFile) ?? "no file")\n\(r.stderr)")
        let naming = r.stderr.split(separator: "\n").filter { $0.contains("journals/2026_12_01.md") }
        #expect(!naming.isEmpty, "stderr does not name the failing file:\n\(r.stderr)")
        #expect(naming.contains { l in Self.reasons[kind]!.contains { l.lowercased().contains($0) } },
                "stderr does not say why \(kind) cannot be written:\n\(r.stderr)")
        let status = try w.outl(["status"])
        #expect(status.stdout.split(separator: "\n").contains { $0.contains("2026_12_01.md") && $0.lowercased().contains("fail") },
                "outl status does not list the failing page:\n\(status.stdout)\(status.stderr)")
        #expect(pageFilesIdentity(blocked) == before, "\(kind) was replaced or changed")
    }

    @Test(arguments: ["a FIFO", "a 70 MB file"])
    func a_running_outld_logs_a_page_it_cannot_write_once_and_goes_on(_ kind: String) throws {
        let (w, blocked, before) = try homeWithBlockedPage(kind)
        let d = try w.start()
        let lines = ["later capture one", "later capture two", "later capture three"]
        for line in lines {
            try w.capture(line)
            #expect(eventually(10) { w.text(w.todayFile)?.contains("- \(line)") == true },
                    "\(kind): '\(line)' never landed:\n\(w.text(w.todayFile) ?? "no file")\n\(d.log)")
        }
        let stopped = w.stop(d)
        #expect(stopped != nil, "outld hung on \(kind):\n\(d.log)")
        let naming = d.log.split(separator: "\n").filter { $0.contains("journals/2026_12_01.md") }
        #expect(naming.count == 1, "\(kind): logged \(naming.count) times, not once for the page:\n\(d.log)")
        #expect(pageFilesIdentity(blocked) == before, "\(kind) was replaced or changed")
    }

    // MARK: 3. a long name

    @Test func a_page_of_a_long_name_is_written() throws {
        let w = try PageFilesHome()
        let name = String(repeating: "漢", count: 83)   // 249 bytes: with ".md", 3 under NAME_MAX
        try FileManager.default.createDirectory(atPath: w.path("pages"), withIntermediateDirectories: true)
        try writeText(w.path("pages/\(name).md"), "- a line\n")
        try w.capture("a capture beside the long name")
        let r = try w.once()
        #expect(r.status == 0 && !r.timedOut, "exit \(r.status):\n\(r.stdout)\(r.stderr)")
        #expect(w.ownOps().contains("\"t\":\"a line\""), "the line is not in the op log:\n\(w.ownOps())\n\(r.stderr)")
        let holders = listDir(w.path("pages")).filter { (w.text("pages/\($0)") ?? "").contains("- a line") }
        #expect(holders.count == 1, "files holding the line: \(holders)")
        #expect(holders.allSatisfy { (w.text("pages/\($0)") ?? "").contains("id:: ") },
                "no id was written into the page:\n\(holders.map { w.text("pages/\($0)") ?? "" })\n\(r.stderr)")
        #expect(w.text(w.todayFile)?.contains("- a capture beside the long name") == true, "\(r.stderr)")
    }

    // MARK: 4. a linked journals/ or pages/

    /// The link costs only the pages in it: today's capture is durable and acknowledged either way;
    /// a linked journals/ fails its pages (one line, exit 74), a linked pages/ costs nothing here.
    @Test(arguments: ["journals", "pages"])
    func a_symlinked_page_directory_costs_only_its_pages_and_its_target_is_never_read(_ linked: String) throws {
        let w = try PageFilesHome()
        let target = w.h.tmp.sub("elsewhere")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try writeText(Path.join(target, "secret.md"), "- SECRET-LINE-42\n")
        try FileManager.default.createDirectory(atPath: w.workspace, withIntermediateDirectories: true)
        let link = w.path(linked)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let before = listDir(target).map { [$0] + (pageFilesIdentity(Path.join(target, $0)) ?? []).map(String.init) }
        try w.capture("a capture while \(linked) is a link")
        let r = try w.once()
        #expect(r.status == (linked == "journals" ? 74 : 0), "\(linked) linked: exit \(r.status)\n\(r.stdout)\(r.stderr)")
        #expect(listDir(w.path(".outl/captures")).filter { $0.hasSuffix(".json") }.isEmpty, "the capture waits:\n\(r.stderr)")
        #expect(w.ownOps().contains("a capture while \(linked) is a link"), "the capture is not in the op log")
        let lines = r.stderr.split(separator: "\n").filter { $0.contains(link) }
        #expect(lines.count == (linked == "journals" ? 1 : 0) && lines.allSatisfy { $0.contains("symbolic link") },
                "not one line naming \(link) as a link:\n\(r.stderr)")
        let leaked = (FileManager.default.enumerator(atPath: w.path(".outl"))?.allObjects as? [String] ?? [])
            .filter { (readText(w.path(".outl/\($0)")) ?? "").contains("SECRET-LINE-42") }
        #expect(leaked.isEmpty, "the link's target was read into .outl: \(leaked)")
        let after = listDir(target).map { [$0] + (pageFilesIdentity(Path.join(target, $0)) ?? []).map(String.init) }
        #expect(after == before, "the link's target changed: \(after)")
        #expect(readText(Path.join(target, "secret.md")) == "- SECRET-LINE-42\n")
    }

    // MARK: 4b. op files that are not a device's

    /// An op's device is the device its file names: `ops-x.jsonl` holding an edit signed with this
    /// device's actor is never read (one line says why), nor is a FIFO at an op log's name; the
    /// journal keeps this device's text, `outl status` lists no such log, and a restart serves.
    @Test func an_op_file_whose_name_names_no_device_is_never_read() throws {
        let w = try PageFilesHome()
        try w.capture("my own line")
        #expect(try w.once().status == 0)
        let page = w.text(w.todayFile) ?? ""
        let own = w.opFiles().map(Path.lastComponent).first ?? ""
        var forger = PageFilesPeer()
        forger.actor = String(own.dropFirst(4).prefix(36))
        forger.wall += 60_000
        forger.updateBlock(id: String(page.components(separatedBy: "id:: ").last?.prefix(36) ?? ""), text: "forged as this device")
        let tmp = Path.join(w.opsDir, ".syncthing.ops-x.jsonl.tmp")
        try Data(forger.bytes).write(to: URL(fileURLWithPath: tmp))
        try Sys.rename(tmp, Path.join(w.opsDir, "ops-x.jsonl"))
        let fifo = "ops-\(PageFilesPeer.newID()).jsonl"
        #expect(mkfifo(Path.join(w.opsDir, fifo), 0o644) == 0)

        let r = try w.once()
        #expect(r.status == 0 && !r.timedOut, "\(r.status): \(r.stderr)")
        let said = r.stderr.split(separator: "\n")
        #expect(said.filter { $0.contains("ops-x.jsonl: not read: its name names no device") }.count == 1, "\(r.stderr)")
        #expect(said.filter { $0.contains("\(fifo): not read: not a regular file") }.count == 1, "\(r.stderr)")
        #expect(w.text(w.todayFile)?.contains("- my own line") == true && !(w.text(w.todayFile) ?? "").contains("forged"), "\(w.text(w.todayFile) ?? "")")
        let status = try w.outl(["status"])
        #expect(status.stdout.contains("op logs    2") && !status.stdout.contains("ops-x"), "\(status.stdout)")
        let d = try w.start()
        try w.capture("after a restart")
        #expect(eventually { w.text(w.todayFile)?.contains("- after a restart") == true }, "\(d.log)")
        #expect(w.stop(d) == 0)
        #expect(!(w.text(w.todayFile) ?? "").contains("forged") && !d.log.contains("merged"), "\(d.log)")
    }

    // MARK: 4c. a create that takes a block off its day

    /// The canonical id of a journal day's page, as every device derives it ("journa" and the day).
    static func journalPageID(_ yyyymmdd: Int) -> String {
        let hex = String(yyyymmdd, radix: 16)
        return "6a6f7572-6e61-8000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// A peer's create of a capture's block id on another day, with an earlier stamp, takes the
    /// block off its day (the least stamp's create wins, on every device alike): said like a
    /// deletion, naming the block, its first words and where it went, while outld runs and at the
    /// next start when it came while none ran. A create stamped before 2000 is refused outright.
    @Test func a_create_that_takes_a_block_off_its_day_is_said_like_a_deletion() throws {
        let w = try PageFilesHome()
        try w.capture("the capture a peer wants")
        try w.capture("the second capture")
        #expect(try w.once().status == 0)
        // Each capture's id, the first after its line (both have one time, so either may come first).
        let page = w.text(w.todayFile) ?? ""
        let ids = ["- the capture a peer wants", "- the second capture"].map { line in
            String(page.components(separatedBy: line).last?.components(separatedBy: "id:: ").dropFirst().first?.prefix(36) ?? "")
        }
        let elsewhere = Self.journalPageID(20_200_101)
        func forge(_ id: String, wall: Int64) -> PageFilesPeer {
            var p = PageFilesPeer()
            p.wall = wall
            p.createPage(id: elsewhere, journal: true, name: "2020-01-01")
            p.createBlock(id: id, page: elsewhere, text: "the peer's words")
            return p
        }
        let d = try w.start()
        // Stamped in 1970: never read as ops (the next start says why); stamped in 2000: it wins, and is said.
        let old = forge(ids[0], wall: 1)
        try w.deliver(old)
        let forger = forge(ids[0], wall: 946_684_800_001)
        try w.deliver(forger)
        #expect(eventually { d.log.contains("took 1 block off its page here") }, "\(d.log)")
        let said = d.log.split(separator: "\n").first { $0.contains("took 1 block") }.map(String.init) ?? ""
        #expect(said.contains(forger.actor) && said.contains(ids[0]) && said.contains("\"the capture a peer wants\"")
                && said.contains("journals/2020_01_01.md"), "\(said)")
        #expect(d.log.contains("0 edited, 1 moved"), "\(d.log)")
        #expect(w.stop(d) == 0)
        // Another while no outld runs: said at the next start.
        try w.deliver(forge(ids[1], wall: 946_684_800_001))
        let r = try w.once()
        #expect(r.stderr.contains("took 1 block off its page here") && r.stderr.contains(ids[1]), "\(r.stderr)")
        #expect(r.stderr.contains("ops-\(old.actor).jsonl: left an incomplete or invalid tail"), "\(r.stderr)")
        #expect(!d.log.contains(old.actor) && !r.stderr.contains("device \(old.actor)"), "the 1970 ops were applied")
    }

    // MARK: 4d. a peer that rewrites its log

    /// A peer's log of `count` blocks on today's page, `tag` in each text.
    func peerLog(_ w: PageFilesHome, actor: String, tag: String, count: Int, wall: Int64) -> PageFilesPeer {
        var p = PageFilesPeer()
        p.actor = actor
        p.wall = wall
        let page = Self.journalPageID(Int(w.today.iso.replacingOccurrences(of: "-", with: ""))!)
        p.createPage(id: page, journal: true, name: w.today.iso)
        for k in 0..<count { p.createBlock(id: PageFilesPeer.newID(), page: page, text: "\(tag) \(k)") }
        return p
    }

    /// A peer that replaces its log by new content again and again (here 3,000 ops each time) adds
    /// nothing after the first: each version is said once, with its device, while outld runs and at
    /// a start; this device's page, archive and op count stay as they were. A log that lost its tail
    /// and grew again (keeping most of what it had) is read as ever, however much it adds.
    @Test func a_peer_that_rewrites_its_log_to_new_content_grows_nothing_here() throws {
        let w = try PageFilesHome()
        try w.capture("mine")
        #expect(try w.once().status == 0)
        let actor = PageFilesPeer().actor, wall = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let first = peerLog(w, actor: actor, tag: "first", count: 3000, wall: wall)
        try w.deliver(first)
        let base = try runMeasuringPeakRSS(binPath("outld"), ["--once", "--log", "stderr"], env: w.env)
        #expect(base.status == 0, "\(base.stderr)")
        let d = try w.start()
        #expect(eventually { pageFilesCount(w.text(w.todayFile), "- first 2999") == 1 }, "\(d.log)")
        let blocks = { (w.text(w.todayFile) ?? "").components(separatedBy: "\n- ").count }
        let before = blocks()
        // This device's archive of the peer's log: its size is the bound of what the peer costs here.
        let states = Path.join(w.h.home, ".local/state/outl")
        let archive = Path.join(states, (listDir(states).first { $0.hasPrefix("ws-") } ?? "") + "/seen/ops-\(actor).jsonl")
        let archived = { Int(((try? Sys.lstat(archive))?.st_size) ?? -1) }
        let archivedBefore = archived()
        for round in 1...3 {
            try w.deliver(peerLog(w, actor: actor, tag: "round \(round)", count: 3000, wall: wall + Int64(round) * 600_000))
            #expect(eventually { d.log.components(separatedBy: "rewrote its op log").count - 1 == round }, "round \(round): \(d.log)")
        }
        #expect(blocks() == before && !(w.text(w.todayFile) ?? "").contains("round"), "a rewritten log was read")
        #expect(archivedBefore > 0 && archived() == archivedBefore, "the archive grew: \(archivedBefore) to \(archived()) bytes")
        #expect(w.stop(d) == 0)
        let said = d.log.split(separator: "\n").filter { $0.contains("rewrote its op log") }
        #expect(said.allSatisfy { $0.contains("device \(actor)") && $0.contains("3001 ops this device never saw, 0 of the 3001 it had") }, "\(said)")
        // A start after the three versions: said again, nothing read; its peak memory within 8 MiB of
        // the start before them (the rewrites grew it 16 to 51 MB when they were read).
        let again = try runMeasuringPeakRSS(binPath("outld"), ["--once", "--log", "stderr"], env: w.env)
        #expect(again.stderr.contains("device \(actor) rewrote its op log") && blocks() == before, "\(again.stderr)")
        #expect(again.peakRSSKiB <= base.peakRSSKiB + 8192, "peak RSS \(base.peakRSSKiB) KiB before, \(again.peakRSSKiB) KiB after")
        try w.expectPeerRead(first, ops: 3001)
        // Cut and grown again, as a restore would leave it: read, all 1,500 new ops.
        var grown = first
        grown.bytes = Array(first.bytes.prefix(first.bytes.count / 2))
        grown.bytes = Array(grown.bytes[..<(grown.bytes.lastIndex(of: 10)! + 1)])
        let more = peerLog(w, actor: actor, tag: "grown", count: 1500, wall: wall + 3_000_000)
        grown.bytes += more.bytes[(more.bytes.firstIndex(of: 10)! + 1)...]
        try w.deliver(grown)
        let r = try w.once()
        #expect(r.status == 0 && pageFilesCount(w.text(w.todayFile), "- grown 1499") == 1 && !r.stderr.contains("rewrote"), "\(r.stderr)")
    }

    // MARK: 5. a peer's journal page under another id

    @Test func a_peers_journal_page_under_a_non_canonical_id_takes_over_nothing() throws {
        let w = try PageFilesHome()
        try w.capture("mine before the impostor")
        let first = try w.once()
        #expect(first.status == 0, "\(first.stderr)")
        let d = try w.start()
        var peer = PageFilesPeer()
        let impostor = PageFilesPeer.newID()
        peer.createPage(id: impostor, journal: true, name: w.today.iso)
        peer.createBlock(id: PageFilesPeer.newID(), page: impostor, text: "impostor line")
        try w.deliver(peer)
        #expect(eventually(10) { d.log.contains(peer.actor) }, "the peer's ops were never merged:\n\(d.log)")
        try w.capture("mine after the impostor")
        #expect(eventually(10) { w.text(w.todayFile)?.contains("- mine after the impostor") == true },
                "\(w.text(w.todayFile) ?? "no file")\n\(d.log)")
        // Past the 300 ms settle, whatever outld would copy onto the impostor it has copied.
        _ = eventually(2) { w.ownOps().split(separator: "\n").filter { $0.contains("\"k\":\"cb\"") }.count > 2 }
        let stopped = w.stop(d)
        // A restart reconciles every file again: still nothing taken over.
        let again = try w.once()
        let page = w.text(w.todayFile) ?? "no file"
        #expect(page.contains("- mine before the impostor") && page.contains("- mine after the impostor"), "\(page)")
        #expect(!page.contains("impostor line"), "the impostor's line is in today's file:\n\(page)")
        let created = w.ownOps().split(separator: "\n").filter { $0.contains("\"k\":\"cb\"") }
        #expect(created.count == 2, "this device created blocks beside its 2 captures:\n\(created.joined(separator: "\n"))")
        let check = try w.outl(["check"])
        let said = (d.log + again.stderr + check.stdout + check.stderr).lowercased()
        #expect(said.contains("refused") || said.contains("not the canonical"),
                "nobody says the page was refused:\n\(d.log)\(again.stderr)\(check.stdout)\(check.stderr)")
        #expect(stopped == 0)
    }

    // MARK: 6. restarts

    @Test func no_restart_makes_the_op_log_grow_without_a_persons_edit() throws {
        let w = try PageFilesHome()
        try FileManager.default.createDirectory(atPath: w.path("pages"), withIntermediateDirectories: true)
        try writeText(w.path("pages/Reading.md"), "- r2\n")
        var peer = PageFilesPeer()
        let reading = PageFilesPeer.newID()
        peer.createPage(id: reading, journal: false, name: "Reading")
        peer.createBlock(id: PageFilesPeer.newID(), page: reading, text: "r1")
        try w.deliver(peer)
        var counts: [[String: Int]] = []
        for run in 1...10 {
            // Each start comes once every file has been quiet for the 300 ms settle, as a restart
            // after a while does: a file left waiting by one run is judged by the next.
            usleep(400_000)
            let r = try w.once()
            #expect(r.status == 0 && !r.timedOut, "run \(run): exit \(r.status)\n\(r.stderr)")
            counts.append(w.lineCounts())
        }
        try w.expectPeerRead(peer, ops: 2)
        for (i, c) in counts.enumerated().dropFirst() {
            #expect(c == counts[0], "run \(i + 1) grew the op log: \(counts[0]) then \(c)\n\(w.allOps())")
        }
        // The hand file's line is one person's edit, recorded once, whichever page takes it.
        let r2 = w.allOps().split(separator: "\n").filter { $0.contains("\"k\":\"cb\"") && $0.contains("\"t\":\"r2\"") }
        #expect(r2.count == 1, "r2 was recorded \(r2.count) times:\n\(w.allOps())")
        for name in listDir(w.path("pages")) {
            let blocks = (w.text("pages/\(name)") ?? "").split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("- ") }
            #expect(Set(blocks).count == blocks.count, "pages/\(name) holds a line twice:\n\(w.text("pages/\(name)") ?? "")")
        }
    }

    // MARK: 7. case

    @Test func foo_md_and_Foo_md_are_one_page() throws {
        let w = try PageFilesHome()
        let d = try w.start()
        try FileManager.default.createDirectory(atPath: w.path("pages"), withIntermediateDirectories: true)
        try writeText(w.path("pages/Foo.md"), "- upper line\n")
        #expect(eventually(10) { w.text("pages/Foo.md")?.contains("id:: ") == true }, "Foo.md was never taken:\n\(d.log)")
        try writeText(w.path("pages/foo.md"), "- lower line\n")
        func oneFile() -> Bool {
            let files = ["pages/Foo.md", "pages/foo.md"].compactMap(w.text)
            return files.count == 1 && pageFilesCount(files[0], "- upper line") == 1 && pageFilesCount(files[0], "- lower line") == 1
        }
        let merged = eventually(15) { oneFile() }
        let stopped = w.stop(d)
        #expect(merged, "Foo.md and foo.md are two pages:\nFoo.md: \(w.text("pages/Foo.md") ?? "none")\nfoo.md: \(w.text("pages/foo.md") ?? "none")\n\(d.log)")
        #expect(!w.allOps().contains(Self.deleteOp), "a delete no person made:\n\(w.allOps())")
        #expect(w.allOps().contains("\"t\":\"upper line\"") && w.allOps().contains("\"t\":\"lower line\""),
                "a line was dropped from the op log:\n\(w.allOps())")
        #expect(stopped == 0)
    }

    // MARK: 8. a reorder delivered by the sync tool

    /// The file's blocks (a `- ` line and the property lines under it) in the order `order` names.
    func reordered(_ file: String, _ order: [String]) -> String {
        var blocks: [String: [Substring]] = [:]
        var current: String? = nil
        for line in file.split(separator: "\n") {
            if line.hasPrefix("- ") { current = String(line.dropFirst(2)) }
            if let c = current { blocks[c, default: []].append(line) }
        }
        return order.map { (blocks[$0] ?? []).joined(separator: "\n") + "\n" }.joined()
    }

    @Test func a_reorder_by_hand_on_a_phone_is_kept() throws {
        let w = try PageFilesHome()
        try w.capture("line A")
        try w.capture("line B")
        let first = try w.once()
        #expect(first.status == 0, "\(first.stderr)")
        let d = try w.start()
        let journal = w.path(w.todayFile)
        let swapped = reordered(w.text(w.todayFile) ?? "", ["line B", "line A"])
        #expect(swapped.contains("id:: "))
        // A phone's Logseq swapped them; Syncthing renames its temporary over the journal.
        let tmp = w.path("journals/.syncthing.\(w.today.stem).md.tmp")
        try writeText(tmp, swapped)
        try Sys.rename(tmp, journal)
        _ = eventually(5) { w.ownOps().contains("\"k\":\"mb\"") || d.log.contains("turned into ops") }
        try w.capture("line third")
        #expect(eventually(10) { w.text(w.todayFile)?.contains("- line third") == true }, "\(d.log)")
        let stopped = w.stop(d)
        let order = (w.text(w.todayFile) ?? "").split(separator: "\n").filter { $0.hasPrefix("- ") }
        #expect(order == ["- line B", "- line A", "- line third"], "the reorder was undone:\n\(w.text(w.todayFile) ?? "")\n\(d.log)")
        #expect(stopped == 0)
    }

    // MARK: 9. a stale editor buffer

    @Test func a_stale_editor_save_does_not_duplicate() throws {
        let w = try PageFilesHome()
        try w.capture("captured before typing")
        let d = try w.start()
        #expect(eventually(10) { w.text(w.todayFile)?.contains("- captured before typing") == true }, "\(d.log)")
        let journal = w.path(w.todayFile)
        let old = (w.text(w.todayFile) ?? "") + "- typed by hand\n"
        try writeText(journal, old)
        #expect(eventually(10) { pageFilesCount(w.text(w.todayFile), "- typed by hand") == 1 && w.text(w.todayFile) != old },
                "no id was added under the typed line:\n\(d.log)")
        // The editor still holds the buffer it saved (no id line under the typed block): saved again
        // as is, then with the line edited, then once more; outld answers each save before the next.
        let edited = old.replacingOccurrences(of: "- typed by hand\n", with: "- typed by hand, edited\n")
        for buffer in [old, edited, edited] {
            try writeText(journal, buffer)
            _ = eventually(3) { w.text(w.todayFile) != buffer }
        }
        _ = eventually(3) { w.text(w.todayFile).map { pageFilesCount($0, "- typed by hand, edited") == 1 && $0 != edited } == true }
        let stopped = w.stop(d)
        let expected: [Substring] = ["- captured before typing", "- typed by hand, edited"]
        let page = w.text(w.todayFile) ?? ""
        #expect(page.split(separator: "\n").filter { $0.hasPrefix("- ") } == expected, "stale saves made:\n\(page)\n\(d.log)")
        let shown = try w.outl(["show", w.today.iso])
        #expect(shown.stdout.split(separator: "\n").filter { $0.hasPrefix("- ") } == expected,
                "the op log holds:\n\(shown.stdout)\(shown.stderr)")
        // A restart projects what the op log holds: still one typed block.
        let again = try w.once()
        let restarted = w.text(w.todayFile) ?? ""
        #expect(again.status == 0 && restarted.split(separator: "\n").filter { $0.hasPrefix("- ") } == expected,
                "after a restart:\n\(restarted)\n\(again.stderr)")
        #expect(stopped == 0)
    }

    // MARK: 10. depth

    @Test func a_1500_deep_chain_is_shown() throws {
        let w = try PageFilesHome()
        try FileManager.default.createDirectory(atPath: w.path("pages"), withIntermediateDirectories: true)
        let depth = 1500
        var chain = ""
        for n in 1...depth { chain += String(repeating: "  ", count: n - 1) + "- level \(n)\n" }
        try writeText(w.path("pages/Deep.md"), chain)
        // Bounded as a hang is, not timed: the run should end in seconds, and an endless one must not stall the suite.
        let r = try w.once(seconds: 120)
        #expect(!r.timedOut, "outld --once still ran after 120 s on a 1500-line page")
        #expect(r.status == 0 && !r.signaled, "exit \(r.status) signaled \(r.signaled):\n\(r.stderr.prefix(2000))")
        let page = w.text("pages/Deep.md") ?? ""
        let lines = page.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let levels = lines.filter { $0.hasPrefix("- level ") }
        #expect(levels == (1...depth).map { "- level \($0)" }, "the file holds \(levels.count) of \(depth) levels")
        #expect(lines.filter { $0.hasPrefix("id:: ") }.count == depth, "not every level has its id:\n\(page.prefix(600))")
        let created = w.ownOps().split(separator: "\n").filter { $0.contains("\"k\":\"cb\"") }.count
        #expect(created == depth, "the op log holds \(created) of \(depth) levels")
        guard r.status == 0 && !r.timedOut else { return }   // a restart of a run that never ended proves nothing more
        let counts = w.lineCounts()
        let again = try w.once(seconds: 120)
        #expect(again.status == 0 && !again.signaled && !again.timedOut, "restart: exit \(again.status)\n\(again.stderr.suffix(2000))")
        #expect(w.text("pages/Deep.md") == page, "the restart changed the page")
        #expect(w.lineCounts() == counts, "the restart grew the op log: \(counts) then \(w.lineCounts())")
    }
}
