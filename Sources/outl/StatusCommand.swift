// StatusCommand: `outl status`, which answers "has my laptop's line reached this machine?": the
// workspace, this device's actor, every device's op log (ops, time of its last op, ops stamped too
// far ahead of this machine's clock) and every inbox with the captures waiting in it. Reads files
// only: no write lock, so it runs beside outld.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import Drain
import SystemCalls
import Workspace

enum StatusCommand {
    /// The report, one fact per line. `owner` is the pid of the running outld, if any.
    static func report(root: String, stateDirectory: String?, inboxes: [String], faults: [OpLogFault]) throws -> String {
        let me = WorkspaceLock.deviceActor(root: root, stateDirectory: stateDirectory)
        var out = "workspace  \(root)\n"
        out += "device     \(me ?? "(none yet: this device has written nothing here)")\n"
        if let pid = WorkspaceLock.owner(root: root, stateDirectory: stateDirectory) {
            if pid > 0 && LockProbe.isStopped(pid) {
                out += "outld      stopped (pid \(pid)): it drains nothing until it continues (kill -CONT \(pid))\n"
            } else {
                out += "outld      running" + (pid > 0 ? " (pid \(pid))" : "") + "\n"
            }
        } else {
            out += "outld      not running\n"
        }
        let logs = try Workspace.opLogSummaries(root: root)
        out += "op logs    \(logs.count)\n"
        for l in logs {
            var who = l.actor.isEmpty ? "unknown device" : "device \(l.actor)"
            if l.actor == me { who += " (this device)" }
            if l.conflictCopy { who += " (conflict copy \(l.file))" }
            let last = l.lastOpWall.map(localTime) ?? "no op yet"
            out += "  \(who)  \(l.ops) op\(l.ops == 1 ? "" : "s")  last op \(last)\n"
            if let a = l.aheadOfClock {
                // Said on its own line, since the last op's time above is then in the future.
                out += "    \(a.ops) op\(a.ops == 1 ? "" : "s") stamped beyond the \(StampsAhead.spelled(HLClock.maxAhead)) "
                out += "bound ahead of this machine's clock, up to \(StampsAhead.spelled(a.aheadMs)) "
                out += "(\(a.kind) \(a.id) at \(StampsAhead.spelled(a.furthest))): applied, not followed by the clock\n"
            }
        }
        for f in faults { out += "  fault: \(f)\n" }
        let failing = Workspace.recordedPageFailures(root: root, stateDirectory: stateDirectory)
        if !failing.isEmpty {
            out += "pages not written  \(failing.count)\n"
            for f in failing { out += "  \(f.path)  failing: \(f.reason) (since \(localTime(f.sinceMs)))\n" }
        }
        for (path, why) in misplaced(root: root) { out += "not a directory  \(path): \(why)\n" }
        let aside = Workspace.setAsideSummary(root: root, stateDirectory: stateDirectory)
        if aside.files > 0 {
            out += "set aside  \(aside.files) file\(aside.files == 1 ? "" : "s"), \(aside.bytes) bytes in \(aside.directory) (what others put where this device's own things belong)\n"
        }
        let told = recentNotices(root: root, stateDirectory: stateDirectory)
        if !told.isEmpty {
            out += "notices    \(told.count) in the last \(noticeDays) days, newest last\n"
            if told.count > noticesShown { out += "  (\(told.count - noticesShown) older: journalctl --user -u outld)\n" }
            for n in told.suffix(noticesShown) { out += "  \(localTime(n.atMs))  \(visible(n.message))\n" }
        }
        out += "inboxes    \(inboxes.count)\n"
        for r in InboxReport.read(inboxes, workspace: root) {
            let files = r.attachments == 0 ? "" : " (\(r.attachments) attachment\(r.attachments == 1 ? "" : "s"))"
            out += "  \(r.inbox)  \(r.waiting == 0 && r.attachments == 0 ? "empty" : "\(r.waiting) waiting\(files)")\n"
            if let why = r.unreadable { out += "    not read: \(visible(why))\n" }
            if r.setAside > 0 {
                out += "    \(r.setAside) set aside in rejected/; newest: \(visible(CaptureFile.oneLine(r.newestReason ?? "(no reason readable)", max: 160)))\n"
            }
        }
        return out
    }

    /// The workspace's directories that something else stands in for (a peer's link, FIFO or file),
    /// with what becomes of it: outl's own are set right by outld, the page folders are the person's.
    static func misplaced(root: String) -> [(path: String, why: String)] {
        Workspace.misplacedDirectories(root: root).map { d in
            let what = d.symlink ? "a symbolic link" : "not a directory"
            return (d.path, d.outlsOwn ? "\(what); outld sets it right when it next needs it (it is outl's own)"
                                       : "\(what), never followed; nothing is written in it until it is a directory again")
        }
    }

    /// How far back `status` shows what outld told this device's person, and how many it lists.
    static let noticeDays = 7
    static let noticesShown = 10

    /// The notices outld recorded here in the last `noticeDays` days, oldest first.
    static func recentNotices(root: String, stateDirectory: String?) -> [Notice] {
        let since = wallClockMilliseconds() - Int64(noticeDays) * 86_400_000
        return Workspace.recordedNotices(root: root, stateDirectory: stateDirectory).filter { $0.atMs >= since }
    }

    /// The same facts as one JSON document (`outl status --json`, its fields listed in outl(1)):
    /// times as RFC 3339 in the local offset and as ms since the epoch; null where a fact is unknown.
    /// Strings are as the files held them (JSON escapes every control character).
    static func json(root: String, stateDirectory: String?, inboxes: [String], faults: [OpLogFault]) throws -> [UInt8] {
        let me = WorkspaceLock.deviceActor(root: root, stateDirectory: stateDirectory)
        func time(_ ms: Int64?) -> JSONValue { .nullable(ms.map { Timestamp.local(epochMs: $0).rfc3339 }) }
        var outld: [(key: String, value: JSONValue)] = []
        if let pid = WorkspaceLock.owner(root: root, stateDirectory: stateDirectory) {
            outld = [("state", .string(pid > 0 && LockProbe.isStopped(pid) ? "stopped" : "running")),
                     ("pid", pid > 0 ? .int(pid) : .null)]
        } else {
            outld = [("state", .string("not running")), ("pid", .null)]
        }
        let logs: [JSONValue] = try Workspace.opLogSummaries(root: root).map { l in
            var ahead: JSONValue = .null
            if let a = l.aheadOfClock {
                ahead = .object([("ops", .int(a.ops)), ("furthest_ms_ahead", .int(a.aheadMs)),
                                 ("furthest_kind", .string(a.kind)), ("furthest_id", .string(a.id))])
            }
            return .object([("file", .string(l.file)), ("device", .nullable(l.actor.isEmpty ? nil : l.actor)),
                            ("this_device", .bool(!l.actor.isEmpty && l.actor == me)), ("conflict_copy", .bool(l.conflictCopy)),
                            ("ops", .int(l.ops)), ("bytes", .int(l.bytes)),
                            ("last_op", time(l.lastOpWall)), ("last_op_ms", l.lastOpWall.map { .int($0) } ?? .null),
                            ("ahead_of_clock", ahead)])
        }
        let failing: [JSONValue] = Workspace.recordedPageFailures(root: root, stateDirectory: stateDirectory).map { f in
            .object([("path", .string(f.path)), ("reason", .string(f.reason)), ("since", time(f.sinceMs)), ("since_ms", .int(f.sinceMs))])
        }
        let boxes: [JSONValue] = InboxReport.read(inboxes, workspace: root).map { r in
            .object([("path", .string(r.inbox)), ("waiting", .int(r.waiting)), ("attachments", .int(r.attachments)),
                     ("set_aside", .int(r.setAside)),
                     ("newest_set_aside_reason", .nullable(r.newestReason)), ("unreadable", .nullable(r.unreadable))])
        }
        let told: [JSONValue] = recentNotices(root: root, stateDirectory: stateDirectory).map { n in
            .object([("kind", .string(n.kind)), ("block", .string(n.block)), ("device", .string(n.device)),
                     ("time", time(n.atMs)), ("time_ms", .int(n.atMs)), ("message", .string(n.message))])
        }
        let aside = Workspace.setAsideSummary(root: root, stateDirectory: stateDirectory)
        let setAside = JSONValue.object([("directory", .string(aside.directory)), ("files", .int(aside.files)), ("bytes", .int(aside.bytes))])
        let notDirectories: [JSONValue] = misplaced(root: root).map { .object([("path", .string($0.path)), ("why", .string($0.why))]) }
        let faultList: [JSONValue] = faults.map { f in
            .object([("file", .string(f.file)), ("kind", .string(f.kind.rawValue)), ("ops_kept", .int(f.opsKept))])
        }
        return JSONValue.object([
            ("workspace", .string(root)), ("device", .nullable(me)), ("outld", .object(outld)),
            ("op_logs", .array(logs)), ("op_log_faults", .array(faultList)),
            ("pages_not_written", .array(failing)), ("not_directories", .array(notDirectories)), ("set_aside", setAside),
            ("notices", .array(told)), ("inboxes", .array(boxes)),
        ]).encoded()
    }

    /// Control characters escaped as outl-capture --list shows them (`\x1B`, `\u0085`): a reason
    /// quotes what a file (anyone's) held.
    static func visible(_ s: String) -> String {
        String(s.unicodeScalars.map { u -> String in
            guard u.value < 0x20 || (0x7F...0x9F).contains(u.value) else { return String(u) }
            let hex = String(u.value, radix: 16, uppercase: true)
            return u.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u00" + hex
        }.joined())
    }

    /// "2026-12-02 18:40:46 +0100": local time with its offset, as a person reads it.
    static func localTime(_ ms: Int64) -> String {
        var t = time_t(ms / 1000)
        var tm = tm()
        localtime_r(&t, &tm)
        var buf = [CChar](repeating: 0, count: 64)
        let n = strftime(&buf, buf.count, "%Y-%m-%d %H:%M:%S %z", &tm)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
