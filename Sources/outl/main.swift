// outl: inspect and poke a workspace from a shell: show a day's journal, check that the projection and
// the op log agree, and `daily append` (the slow path: boot the whole workspace for one line), which
// `make bench` keeps as the baseline the daemon is compared against. Exit 75 when the workspace is
// locked by another process (outld), 64 on a usage error, 74 on an I/O error.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Workspace

let version = "outl 0.1.0"
let usage = """
usage: outl [--workspace DIR] show [YYYY-MM-DD]     print a day's journal (default today) from the op log
       outl [--workspace DIR] check                 check that journals/ and pages/ agree with the op log
       outl [--workspace DIR] daily append TEXT...  append one block to today's journal (boots the workspace)
       outl [--workspace DIR] reconcile             turn hand edits of every page file into ops, then project
       outl --help | --version
The workspace is DIR, else $OUTL_WORKSPACE, else ~/outl. A new day's journal file is named as the
workspace's newest one is (YYYY_MM_DD.md or YYYY-MM-DD.md; YYYY_MM_DD.md in a new workspace).
"""

func fail(_ code: Int32, _ message: String) -> Never {
    var line = Array("outl: \(message)\n".utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func say(_ text: String) {
    var b = Array(text.utf8)
    _ = b.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}

/// Today's date and "now" as RFC 3339 with the local offset.
func now() -> (JournalDay, String) {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    var t = ts.tv_sec
    var tm = Glibc.tm()
    localtime_r(&t, &tm)
    func p(_ v: Int, _ w: Int = 2) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
    let off = tm.tm_gmtoff / 60
    let sign = off < 0 ? "-" : "+"
    let stamp = "\(p(Int(tm.tm_year) + 1900, 4))-\(p(Int(tm.tm_mon) + 1))-\(p(Int(tm.tm_mday)))T"
        + "\(p(Int(tm.tm_hour))):\(p(Int(tm.tm_min))):\(p(Int(tm.tm_sec))).\(p(Int(ts.tv_nsec) / 1_000_000, 3))"
        + "\(sign)\(p(abs(off) / 60)):\(p(abs(off) % 60))"
    let day = JournalDay(year: Int(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday))!
    return (day, stamp)
}

func open(_ options: WorkspaceOptions) -> Workspace {
    do {
        return try Workspace(options: options)
    } catch WorkspaceError.locked(let pid) {
        fail(75, "the workspace \(options.root) is in use by another process"
             + (pid.map { " (pid \($0)); with outld running, capture with outl-capture instead" } ?? ""))
    } catch {
        fail(74, "cannot open the workspace \(options.root): \(error)")
    }
}

var args = Array(CommandLine.arguments.dropFirst())
var root = Path.environment("OUTL_WORKSPACE") ?? Path.join(Path.home(), "outl")
var stateDir = Path.environment("OUTL_STATE_DIR")
var rest: [String] = []
var i = 0
while i < args.count {
    let a = args[i]
    switch a {
    case "--help", "-h": say(usage + "\n"); exit(0)
    case "--version": say(version + "\n"); exit(0)
    case "--workspace", "--state-dir":
        guard i + 1 < args.count else { fail(64, "\(a) needs a directory\n" + usage) }
        if a == "--workspace" { root = Path.expandTilde(args[i + 1]) } else { stateDir = args[i + 1] }
        i += 2
        continue
    default:
        if a.hasPrefix("--workspace=") { root = Path.expandTilde(String(a.dropFirst(12))); i += 1; continue }
        rest = Array(args[i...])
        i = args.count
    }
    i += 1
}
guard let command = rest.first else { fail(64, "no command\n" + usage) }
var options = WorkspaceOptions(root: root)
options.stateDirectory = stateDir

switch command {
case "show":
    guard rest.count <= 2 else { fail(64, "show takes at most one date\n" + usage) }
    let day: JournalDay
    if rest.count == 2 {
        guard let d = JournalDay(parsing: rest[1]) else { fail(64, "\(rest[1]): not a date (YYYY-MM-DD)") }
        day = d
    } else {
        day = now().0
    }
    let ws = open(options)
    if let md = await ws.journalMarkdown(day) { say(md) } else {
        fail(1, "no journal page for \(day.iso)")
    }
case "check":
    guard rest.count == 1 else { fail(64, usage) }
    let ws = open(options)
    let problems = await ws.check()
    let s = await ws.bootSummary
    for p in problems { say(p + "\n") }
    if !problems.isEmpty { fail(1, "\(problems.count) page(s) disagree with the op log") }
    say("ok: \(s.ops) ops in \(s.files) file(s), \(s.pages) pages, \(s.blocks) blocks; the projection agrees\n")
case "daily":
    guard rest.count >= 3, rest[1] == "append" else { fail(64, "usage: outl daily append TEXT...") }
    let text = rest[2...].joined(separator: " ")
    guard text.contains(where: { !$0.isWhitespace }) else { fail(64, "empty text") }
    let (day, stamp) = now()
    let ws = open(options)
    let id = BlockIDs.fresh()
    do {
        _ = try await ws.appendCaptures([CaptureBlock(id: id, day: day, text: text, capturedAt: stamp, source: "cli")])
        _ = try await ws.projectDirtyPages()
    } catch {
        fail(74, "\(error)")
    }
    await ws.close()
    say(id + "\n")
case "reconcile":
    let ws = open(options)
    do {
        try await ws.reconcileAll()
        let written = try await ws.projectDirtyPages()
        for p in written { say("wrote \(p)\n") }
    } catch {
        fail(74, "\(error)")
    }
case "debug-boot":
    // Boots and prints what it read, with the wall time: bench/boot.sh drives this.
    var t0 = timespec(), t1 = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t0)
    let ws = open(options)
    clock_gettime(CLOCK_MONOTONIC, &t1)
    let s = await ws.bootSummary
    let secs = Double(t1.tv_sec - t0.tv_sec) + Double(t1.tv_nsec - t0.tv_nsec) / 1e9
    say("ops=\(s.ops) bytes=\(s.bytes) blocks=\(s.blocks) pages=\(s.pages) seconds=\(secs) ops_per_second=\(Int(Double(s.ops) / secs))\n")
case "debug-merge":
    // bench/merge.sh drives this: boots over OPS-FILE (another device's log), projects, then K times
    // delivers OPS-FILE grown by one more line of FULL-LOG as Syncthing does (temp file, rename) and
    // times mergeForeignOps and projectDirtyPages; prints the boot time and each step's median.
    guard rest.count == 4, let k = Int(rest[3]), k > 0 else { fail(64, "usage: outl debug-merge FULL-LOG OPS-FILE K") }
    func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        var a = timespec(), b = timespec()
        clock_gettime(CLOCK_MONOTONIC, &a)
        try await body()
        clock_gettime(CLOCK_MONOTONIC, &b)
        return Double(b.tv_sec - a.tv_sec) + Double(b.tv_nsec - a.tv_nsec) / 1e9
    }
    let full: [UInt8]
    do { full = try Durable.readRegularFile(rest[1], limit: 1 << 34) } catch { fail(66, "\(rest[1]): \(error)") }
    var ends: [Int] = []  // where each of the last K lines ends
    var at = full.count
    while ends.count < k, at > 0, let nl = full[..<(at - 1)].lastIndex(of: 10) { ends.append(at); at = nl + 1 }
    guard ends.count == k else { fail(65, "\(rest[1]): fewer than \(k) lines") }
    var ws: Workspace! = nil
    let boot = await seconds { ws = open(options) }
    let booted = await ws.bootSummary
    do {
        _ = try await ws.projectDirtyPages()
        var merges: [Double] = [], projections: [Double] = [], applied = 0
        for end in ends.reversed() {
            let tmp = Path.join(Path.parent(of: rest[2]), ".syncthing.\(Path.lastComponent(rest[2])).tmp")
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try full.withUnsafeBytes { try Sys.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[..<end])) }
            Sys.close(fd)
            try Sys.rename(tmp, rest[2])
            merges.append(try await seconds { applied += try await ws.mergeForeignOps().applied })
            projections.append(try await seconds { _ = try await ws.projectDirtyPages() })
        }
        let median = { (v: [Double]) in v.sorted()[v.count / 2] }
        say("boot_ops=\(booted.ops) boot_seconds=\(boot) merges=\(k) applied=\(applied) merge_seconds=\(median(merges)) "
            + "project_seconds=\(median(projections)) merge_project_seconds=\(median(zip(merges, projections).map { $0 + $1 }))\n")
    } catch {
        fail(74, "\(error)")
    }
    await ws.close()
case "debug-generate":
    // Writes N capture ops (days of 100 blocks) through the real encoder and appender: bench input.
    guard rest.count == 2, let n = Int(rest[1]), n > 0 else { fail(64, "usage: outl debug-generate N") }
    let ws = open(options)
    var batch: [CaptureBlock] = []
    var day = JournalDay(year: 2000, month: 1, day: 1)!
    for k in 0..<n {
        if k % 100 == 0 && k > 0 { day = day.next }
        batch.append(CaptureBlock(id: BlockIDs.fresh(), day: day, text: "capture number \(k): buy oat milk and call mum",
                                  capturedAt: "2026-12-01T23:58:07.120-05:00", source: "cli"))
        if batch.count == 10_000 || k == n - 1 {
            do { _ = try await ws.appendCaptures(batch) } catch { fail(74, "\(error)") }
            batch.removeAll(keepingCapacity: true)
        }
    }
    await ws.close()
default:
    fail(64, "\(command): unknown command\n" + usage)
}
