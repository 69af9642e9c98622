// Inbox.deliver in-process, under the Sys interposer: the durable steps happen in order, and
// failing any one of them (SQLite-style, every N) leaves either a durable capture or nothing at all.
import Foundation
import Testing
import CaptureFormat
import CaptureInbox
import SystemCalls
import TestSupport

/// Records the calls under `prefix` (by path, and by the fds opened there) and can fail the
/// `failOccurrence`-th call of `failOp`. Occurrences are counted on completion (`after`) because
/// `Sys.write` consults the interposer twice per call (short-write check, then the call itself).
final class InboxRecorder: SysInterposer, @unchecked Sendable {
    let prefix: String
    var fds: Set<Int32> = []
    var log: [String] = []
    let failOp: SysOp?
    let failOccurrence: Int
    var done: [SysOp: Int] = [:]
    let lock = NSLock()

    init(prefix: String, fail: (SysOp, Int)? = nil) {
        self.prefix = prefix; failOp = fail?.0; failOccurrence = fail?.1 ?? 0
    }

    func mine(_ c: SysCall) -> Bool {
        if let p = c.path { return p.hasPrefix(prefix) }
        return c.fd >= 0 && fds.contains(c.fd)
    }

    func before(_ c: SysCall) -> SysFault? {
        lock.lock(); defer { lock.unlock() }
        guard mine(c), c.op == failOp, done[c.op, default: 0] == failOccurrence else { return nil }
        return .fail(.EIO)
    }

    func after(_ c: SysCall, result: Int) {
        lock.lock(); defer { lock.unlock() }
        guard mine(c) else { return }
        done[c.op, default: 0] += 1
        let short = (c.path.map { String($0.dropFirst(prefix.count)) }) ?? "fd"
        log.append("\(c.op.rawValue) \(short)\(result < 0 ? " !" : "")")
        if c.op == .open && result >= 0 { fds.insert(Int32(result)) }
        if c.op == .close { fds.remove(c.fd) }
    }
}

@Suite(.serialized) struct DeliveryTests {
    @Test func delivery_fsyncs_the_file_renames_then_fsyncs_the_inbox() throws {
        let t = TempDir("outl-deliver")
        let inbox = t.sub("inbox")
        try Inbox.ensure(inbox)
        let rec = InboxRecorder(prefix: t.path)
        var gen = ULIDGenerator()
        let id = gen.next()
        let path = try withInterposer(rec) {
            try Inbox.deliver(CaptureFile.encode(Capture(text: "x")), id: id, to: inbox)
        }
        let tmp = "/inbox/tmp/\(id.string).\(getpid()).tmp"
        // The inbox and its tmp/ are opened first (the writes are relative to them, so no link
        // swapped in meanwhile redirects them); the file is durable before its name, the name after.
        #expect(rec.log == ["open /inbox", "open /inbox/tmp", "open \(tmp)", "write fd", "fsync fd", "close fd",
                            "rename \(tmp)", "fsync fd", "close fd", "close fd"])
        #expect(path == inbox + "/" + id.string + ".json")
        #expect(try CaptureFile.decode(Array(FileManager.default.contents(atPath: path)!)).text == "x")
    }

    @Test func failing_any_step_leaves_a_durable_capture_or_nothing() throws {
        let steps: [(SysOp, Int)] = [(.open, 0), (.open, 1), (.open, 2), (.write, 0), (.fsync, 0), (.close, 0),
                                     (.rename, 0), (.fsync, 1), (.close, 1), (.close, 2)]
        for (n, step) in steps.enumerated() {
            let t = TempDir("outl-deliver")
            let inbox = t.sub("inbox")
            try Inbox.ensure(inbox)
            var gen = ULIDGenerator()
            let rec = InboxRecorder(prefix: t.path, fail: step)
            var ok = true
            let id = gen.next()
            withInterposer(rec) {
                do {
                    _ = try Inbox.deliver(CaptureFile.encode(Capture(text: "x")), id: id, to: inbox)
                } catch {
                    ok = false
                    #expect(error as? Errno == .EIO)
                }
            }
            let finals = listDir(inbox).filter(CaptureName.isFinal)
            #expect(listDir(inbox + "/tmp").isEmpty, "step \(n): temp left: \(rec.log)")
            #expect(finals.count == (ok ? 1 : 0), "step \(n): \(rec.log)")
            // Only a failed close may be shrugged off; every other failure must surface.
            if ok { #expect(step.0 == .close, "step \(n) failed silently: \(rec.log)") }
            #expect(rec.log.contains { $0.hasSuffix(" !") }, "step \(n) was never reached: \(rec.log)")
        }
    }

    @Test func ensure_creates_parents_and_tmp_at_0700_whatever_the_umask() throws {
        let t = TempDir("outl-ensure")
        let old = umask(0)
        defer { umask(old) }
        try Inbox.ensure(t.sub("a/b/captures"))
        #expect(mode(of: t.sub("a/b/captures")) == 0o700)
        #expect(mode(of: t.sub("a/b/captures/tmp")) == 0o700)
    }

    @Test func pending_lists_only_final_names_in_order_and_stale_temps_go() throws {
        let t = TempDir("outl-pending")
        let inbox = t.sub("inbox")
        try Inbox.ensure(inbox)
        #expect(try Inbox.pending(t.sub("missing")) == [])
        for n in ["01ARZ3NDEKTSV4RRFFQ69G5FAV.json", "01ARYZ6S41TSV4RRFFQ69G5FAV.json", "x.json",
                  ".syncthing.a.tmp", "01ARZ3NDEKTSV4RRFFQ69G5FAV.json~"] {
            try writeText(inbox + "/" + n, "{}")
        }
        #expect(try Inbox.pending(inbox) == ["01ARYZ6S41TSV4RRFFQ69G5FAV.json", "01ARZ3NDEKTSV4RRFFQ69G5FAV.json"])
        try writeText(inbox + "/tmp/old.1.tmp", "")
        try writeText(inbox + "/tmp/new.2.tmp", "")
        var times = [timespec(tv_sec: time(nil) - 37 * 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 37 * 3600, tv_nsec: 0)]
        utimensat(AT_FDCWD, inbox + "/tmp/old.1.tmp", &times, 0)
        Inbox.removeStaleTemps(inbox)
        #expect(listDir(inbox + "/tmp") == ["new.2.tmp"])
    }
}
