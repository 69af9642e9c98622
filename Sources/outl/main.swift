// outl: inspect and poke a workspace from a shell: show a day's journal and check that the
// projection and the op log agree (both read-only, so they work beside a running outld), and
// `daily append` and `reconcile` (which take the device write lock: the slow path `make bench`
// keeps as the baseline the daemon is compared against). The workspace, inboxes and state directory
// come from OutlConfig like every other program's; outl never creates a workspace.
// Exit (Sysexits, shared by every program): 0 ok, 1 a difference or no page, 64 usage, 65 bad text,
// 73 no workspace, 74 I/O error, 75 locked by another process (outld), 77 permission denied or a
// read-only file system, 78 bad configuration.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import OutlConfig
import SystemCalls
import Workspace

let version = "outl 0.1.0"
let usage = """
usage: outl [options] show [--details|--json] [DAY]  print a day's journal from the op log
       outl [options] check                       check that journals/ and pages/ agree with the op log
       outl [options] daily append [--] TEXT...   append one block to today's journal
       outl [options] daily append -              the same, the text read from standard input
       outl [options] status [--json]             every device's op log and every inbox
       outl [options] reconcile                   turn hand edits of page files into ops, then project
       outl help | version                        this text, or the version
options (before or after the command; after --, words are text):
       --workspace DIR  --state-dir DIR  --json (show, status: one JSON document)  --help  --version
       --details (show: each capture's captured-at and source too, which its page leaves out)
DAY is YYYY-MM-DD, today (the default), yesterday or tomorrow, in the local time zone.
The workspace is --workspace, else $OUTL_WORKSPACE, else `workspace =` in
~/.config/outl/outld.conf, else ~/outl. The device-local state is under --state-dir, else
$OUTL_STATE_DIR, else $XDG_STATE_HOME/outl (~/.local/state/outl).
show, check and status read without the write lock, beside a running outld; daily append and
reconcile take it. A new day's journal file is named as the workspace's newest one is
(YYYY_MM_DD.md or YYYY-MM-DD.md). See outl(1).
"""

func fail(_ code: Int32, _ message: String) -> Never {
    var line = Array("outl: \(message)\n".utf8)
    _ = line.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func usageError(_ message: String) -> Never { fail(64, "\(message) (see outl --help)") }

func say(_ text: String) {
    var b = Array(text.utf8)
    _ = b.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}

/// Today's date and "now" as RFC 3339 with the local offset, after warning once about an unknown $TZ.
func now() -> (JournalDay, String) {
    if let w = TimeZoneCheck.warning() { var l = Array("outl: warning: \(w)\n".utf8); _ = l.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) } }
    let t = Timestamp.local(epochMs: Int64(ULIDGenerator.nowMs()))
    return (JournalDay(year: t.year, month: t.month, day: t.day)!, t.rfc3339)
}

/// The arguments as the kernel gave them: one that is not UTF-8 is refused, never repaired.
func arguments() -> [String] {
    var out: [String] = []
    for i in 1..<Int(CommandLine.argc) {
        guard let p = CommandLine.unsafeArgv[i] else { continue }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
        guard let s = String(validating: bytes, as: UTF8.self) else {
            fail(65, "argument \(i) is not UTF-8 (byte \(UTF8Check.firstInvalidOffset(bytes) ?? 0))")
        }
        out.append(s)
    }
    return out
}

/// Opens the configured workspace; `write` takes the device write lock, else reads only. Only the
/// bench's generator may create the directory; every command a person runs needs it to exist.
func open(_ config: OutlConfig, write: Bool, create: Bool = false) -> Workspace {
    let root = config.workspaceRoot
    if create { try? Durable.makeDirectory(root, mode: 0o755) }
    let st: stat
    do { st = try Sys.statFollowingLinks(root) } catch {
        let e = error as? Errno ?? Errno.EIO
        if e.code != ENOENT && e.code != ENOTDIR { fail(Sysexits.of(e, otherwise: Sysexits.ioError), "cannot reach the workspace \(root): \(e)") }
        fail(Sysexits.cantCreate, OutlConfig.missingWorkspace(root, origin: config.workspaceOrigin))
    }
    if st.st_mode & S_IFMT != S_IFDIR { fail(73, "the workspace \(root) (from \(config.workspaceOrigin.rawValue)) is not a directory") }
    var options = WorkspaceOptions(root: root, readOnly: !write)
    options.stateDirectory = config.stateDirectory
    // Pages rendered as outld renders them (check compares them; reconcile and daily append write them).
    options.pageProperties = config.pageProperties.flatMap(PageProperties.init(setting:)) ?? .none
    do {
        return try Workspace(options: options)
    } catch WorkspaceError.locked(let pid) {
        fail(75, "the workspace \(root) is in use by another process"
             + (pid.map { " (pid \($0)); with outld running, capture with outl-capture instead" } ?? ""))
    } catch let e as UnsafeComponent {
        fail(73, "refused: \(e)")
    } catch WorkspaceError.io(let e, let path) {
        fail(Sysexits.of(e, otherwise: Sysexits.ioError), "cannot open the workspace \(root): \(path): \(e)")
    } catch {
        fail(Sysexits.of(error, otherwise: Sysexits.ioError), "cannot open the workspace \(root): \(error)")
    }
}

/// The text of `daily append`: the words, or standard input when the one word is `-` (given
/// before any `--`), by the capture text rule.
func appendText(_ words: ArraySlice<String>, stdin: Bool) -> String {
    var w = words
    if stdin {
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = (try? buf.withUnsafeMutableBytes { try Sys.read(0, into: $0) }) ?? -1
            if n < 0 { fail(74, "cannot read standard input") }
            if n == 0 { break }
            bytes.append(contentsOf: buf[0..<n])
            if bytes.count > CaptureFile.maxFileBytes { fail(65, "standard input is over 1 MiB") }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else {
            fail(65, "standard input is not UTF-8 (byte \(UTF8Check.firstInvalidOffset(bytes) ?? 0))")
        }
        w = [s]
    }
    guard !w.isEmpty else { usageError("daily append needs TEXT, or - for standard input") }
    do {
        return try CaptureFile.checkedText(w.joined(separator: " "))
    } catch CaptureFormatError.textEmpty {
        fail(64, "empty text (nothing visible in it)")
    } catch {
        fail(65, "\(error)")
    }
}

/// The local calendar day `offset` days from today (yesterday is -1): today's date at noon UTC,
/// moved by whole days with the format's own calendar, so no time of day or daylight-saving shift
/// lands on the wrong date.
func localDay(offset: Int) -> JournalDay {
    let today = now().0
    let noon = Timestamp(rfc3339: "\(today.iso)T12:00:00Z")!  // a valid day's noon always parses
    let t = Timestamp.from(epochMs: noon.epochMilliseconds + Int64(offset) * 86_400_000, offsetSeconds: 0)
    return JournalDay(year: t.year, month: t.month, day: t.day)!
}

// MARK: the command line

// Options may come before or after the command; after `--` every word is an argument.
var args = arguments()
var workspaceFlag: String?
var stateFlag: String?
var rest: [String] = []
var afterDoubleDash = -1  // the index in `rest` where the words after `--` start, -1 when none
var wantsHelp = false, wantsVersion = false, wantsJSON = false, wantsDetails = false
var i = 0
while i < args.count {
    let a = args[i]
    i += 1
    if afterDoubleDash >= 0 || a == "-" || !a.hasPrefix("-") { rest.append(a); continue }
    switch a {
    case "--": afterDoubleDash = rest.count
    case "--help", "-h": wantsHelp = true
    case "--version", "-V": wantsVersion = true
    case "--json": wantsJSON = true
    case "--details": wantsDetails = true
    case "--workspace", "--state-dir":
        guard i < args.count, !args[i].isEmpty else { usageError("\(a) needs a directory") }
        if a == "--workspace" { workspaceFlag = args[i] } else { stateFlag = args[i] }
        i += 1
    default:
        if a.hasPrefix("--workspace=") { workspaceFlag = String(a.dropFirst(12)); continue }
        if a.hasPrefix("--state-dir=") { stateFlag = String(a.dropFirst(12)); continue }
        usageError("unknown option \(a)")
    }
}
if wantsHelp || rest.first == "help" { say(usage + "\n"); exit(0) }
if wantsVersion || rest.first == "version" { say(version + "\n"); exit(0) }
guard let command = rest.first else { usageError("no command") }
if wantsJSON && command != "status" && command != "show" { usageError("--json goes with show and status only") }
if wantsDetails && command != "show" { usageError("--details goes with show only") }

let config: OutlConfig
do {
    config = try OutlConfig.resolve(workspace: workspaceFlag, stateDirectory: stateFlag)
} catch let e as ConfigError {
    fail(e.exitStatus, e.description)
}

switch command {
case "show":
    guard rest.count <= 2 else { usageError("show takes at most one day") }
    let day: JournalDay
    switch rest.count == 2 ? rest[1] : "today" {
    case "today": day = localDay(offset: 0)
    case "yesterday": day = localDay(offset: -1)
    case "tomorrow": day = localDay(offset: 1)
    case let w:
        guard let d = JournalDay(parsing: w) else { usageError("\(w): not a day (YYYY-MM-DD, today, yesterday or tomorrow)") }
        day = d
    }
    let ws = open(config, write: false)
    if wantsJSON {
        guard let blocks = await ws.journalOutline(day) else { fail(1, "no journal page for \(day.iso)") }
        var doc = JSONValue.object([
            ("day", .string(day.iso)), ("page", .string(BlockID.journalPage(day).description)),
            ("blocks", .array(blocks.map { b in
                .object([("id", .string(b.id)), ("parent", .nullable(b.parent)), ("depth", .int(b.depth)), ("text", .string(b.text)),
                         ("properties", .array(b.properties.map { .array([.string($0.key), .string($0.value)]) }))])
            })),
        ]).encoded()
        _ = doc.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    } else if let md = await ws.journalMarkdown(day, details: wantsDetails) { say(md) } else {
        fail(1, "no journal page for \(day.iso)")
    }
case "check":
    guard rest.count == 1 else { usageError("check takes no arguments") }
    let ws = open(config, write: false)
    let problems = await ws.check()
    let s = await ws.bootSummary
    for p in problems { say(p + "\n") }
    if !problems.isEmpty { fail(1, "\(problems.count) page(s) disagree with the op log") }
    say("ok: \(s.ops) ops in \(s.files) file(s), \(s.pages) pages, \(s.blocks) blocks; the projection agrees\n")
case "daily":
    guard rest.count >= 2, rest[1] == "append" else { usageError("usage: outl daily append TEXT...") }
    // `-` is standard input only as the one word, given before any `--`.
    let text = appendText(rest[2...], stdin: rest.count == 3 && rest[2] == "-" && (afterDoubleDash < 0 || afterDoubleDash > 2))
    let (day, stamp) = now()
    let ws = open(config, write: true)
    let id = BlockIDs.fresh()
    do {
        _ = try await ws.appendCaptures([CaptureBlock(id: id, day: day, text: text, capturedAt: stamp, source: "cli")])
        _ = try await ws.projectDirtyPages()
    } catch {
        fail(74, "\(error)")
    }
    await ws.close()
    say(id + "\n")
case "status":
    guard rest.count == 1 else { usageError("status takes no arguments") }
    let ws = open(config, write: false)   // the same checks as the other commands; reads only
    let faults = await ws.opLogFaults
    await ws.close()
    do {
        if wantsJSON {
            var doc = try StatusCommand.json(root: config.workspaceRoot, stateDirectory: config.stateDirectory,
                                             inboxes: config.drainedInboxes, faults: faults)
            _ = doc.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
        } else {
            say(try StatusCommand.report(root: config.workspaceRoot, stateDirectory: config.stateDirectory,
                                         inboxes: config.drainedInboxes, faults: faults))
        }
    } catch {
        fail(74, "\(error)")
    }
case "reconcile":
    guard rest.count == 1 else { usageError("reconcile takes no arguments") }
    let ws = open(config, write: true)
    do {
        try await ws.reconcileAll()
        let written = try await ws.projectDirtyPages()
        for p in written { say("wrote \(p)\n") }
    } catch {
        fail(74, "\(error)")
    }
case "debug-boot":
    // Boots and prints what it read, with the wall time: bench/boot.sh drives this.
    let t0 = monotonicNanoseconds()
    let ws = open(config, write: true)
    let secs = Double(monotonicNanoseconds() - t0) / 1e9
    let s = await ws.bootSummary
    say("ops=\(s.ops) bytes=\(s.bytes) blocks=\(s.blocks) pages=\(s.pages) seconds=\(secs) ops_per_second=\(Int(Double(s.ops) / secs))\n")
case "debug-memory":
    // Boots, then says where the memory went: each part of the model, and the process's resident
    // memory now and at its peak (bench/scale.sh prints it).
    guard rest.count == 1 else { usageError("debug-memory takes no arguments") }
    let ws = open(config, write: true)
    let s = await ws.bootSummary
    let parts = await ws.memoryUse
    let perOp = { (b: Int) in s.ops > 0 ? String(b / s.ops) : "-" }
    let mib = { (b: Int) in String(Double(b / 10_486) / 100) }
    var out = "ops=\(s.ops) blocks=\(s.blocks) pages=\(s.pages)\n"
    for p in parts { out += "\(mib(p.bytes)) MiB \(perOp(p.bytes)) B/op  \(p.name)\n" }
    let model = parts.reduce(0) { $0 + $1.bytes }
    out += "\(mib(model)) MiB \(perOp(model)) B/op  the model in all\n"
    if let r = ProcessMemory.resident() {
        out += "\(mib(r.now)) MiB \(perOp(r.now)) B/op  resident (VmRSS); peak \(mib(r.peak)) MiB (VmHWM)\n"
    }
    say(out)
case "debug-merge":
    // bench/merge.sh drives this: boots over OPS-FILE (another device's log), projects, then K times
    // delivers OPS-FILE grown by one more line of FULL-LOG as Syncthing does and times
    // mergeForeignOps and projectDirtyPages (DebugMerge); prints the boot time and each step's median.
    guard rest.count == 4, let k = Int(rest[3]), k > 0 else { fail(64, "usage: outl debug-merge FULL-LOG OPS-FILE K") }
    let full: [UInt8]
    do { full = try Durable.readRegularFile(rest[1], limit: 1 << 34) } catch { fail(66, "\(rest[1]): \(error)") }
    var ends: [Int] = []  // where each of the last K lines ends
    var at = full.count
    while ends.count < k, at > 0, let nl = full[..<(at - 1)].lastIndex(of: 10) { ends.append(at); at = nl + 1 }
    guard ends.count == k else { fail(65, "\(rest[1]): fewer than \(k) lines") }
    let t0 = monotonicNanoseconds()
    let ws = open(config, write: true)
    let boot = Double(monotonicNanoseconds() - t0) / 1e9
    let booted = await ws.bootSummary
    do {
        let t = try DebugMerge.run(ws, full: full, ends: ends.reversed(), opsFile: rest[2])
        let median = { (v: [Double]) in v.sorted()[v.count / 2] }
        say("boot_ops=\(booted.ops) boot_seconds=\(boot) merges=\(k) applied=\(t.applied) merge_seconds=\(median(t.merges)) "
            + "project_seconds=\(median(t.projections)) merge_project_seconds=\(median(zip(t.merges, t.projections).map { $0 + $1 }))\n")
    } catch {
        fail(74, "\(error)")
    }
    await ws.close()
case "debug-generate":
    // Writes N capture ops (days of 100 blocks) through the real encoder and appender: bench input.
    guard rest.count == 2, let n = Int(rest[1]), n > 0 else { usageError("usage: outl debug-generate N") }
    let ws = open(config, write: true, create: true)
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
    usageError("\(command): unknown command")
}
