// DrainSweepTests: the issue's "injected faults" loop over the mirror writer and drain — fail call
// N for every N; the writer leaves no final file when it fails, the drain keeps every capture
// file it could not make durable, and a retry once the fault is gone lands each capture once.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct DrainSweepTests {
    static let faults: [SysFault] = [.fail(.EIO), .fail(.ENOSPC), .fail(.EINTR), .shortWrite(5)]

    @Test(arguments: faults)
    func a_failed_delivery_leaves_no_final_file_and_no_temp(_ fault: SysFault) throws {
        let base = TempDir("sweep-deliver")
        func inbox(_ n: Int) -> String { Path.join(base.path, "r\(n)/inbox") }
        try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n in
            try FileManager.default.createDirectory(atPath: inbox(n), withIntermediateDirectories: true)
            try mirrorDeliver(Array(#"{"text":"x"}"#.utf8), name: "01A.json", inbox: inbox(n))
        } check: { o in
            let final = listDir(inbox(o.n)).filter { $0.hasSuffix(".json") }
            // "Not saved" means no final file, even when only the inbox fsync failed: otherwise
            // a drain could land it and the user's retry would double it.
            if !o.succeeded { #expect(final.isEmpty, "run \(o.n) failed but left \(final); calls \(o.log)") }
            if o.succeeded { #expect(final == ["01A.json"]) }
            #expect(listDir(Path.join(inbox(o.n), "tmp")).isEmpty, "run \(o.n) left a temp; calls \(o.log)")
        }
    }

    @Test(arguments: faults)
    func a_failed_drain_keeps_the_file_and_a_retry_lands_it_once(_ fault: SysFault) throws {
        let base = TempDir("sweep-drain")
        func root(_ n: Int) -> String { Path.join(base.path, "r\(n)") }
        let ids = ["01A", "01B"]
        try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n -> Int in
            try FileManager.default.createDirectory(atPath: Path.join(root(n), "inbox"), withIntermediateDirectories: true)
            for id in ids { try writeText(Path.join(root(n), "inbox/\(id).json"), "{}") }
            return try mirrorDrain(inbox: Path.join(root(n), "inbox"), log: try MirrorOpLog(Path.join(root(n), "ops.jsonl")))
        } check: { o in
            let inbox = Path.join(root(o.n), "inbox"), logPath = Path.join(root(o.n), "ops.jsonl")
            let logged = try MirrorOpLog.boot(path: logPath)
            let waiting = listDir(inbox).filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }
            #expect(Set(logged).union(waiting) == Set(ids), "run \(o.n) lost a capture; calls \(o.log)")
            // The fault is gone: the retry (the daemon's backoff) drains what is left.
            _ = try mirrorDrain(inbox: inbox, log: try MirrorOpLog(logPath))
            let raw = MirrorOpLog.records(try Durable.readRegularFile(logPath, limit: 1 << 20)).ids
            #expect(raw.sorted() == ids, "run \(o.n): log \(raw)")
            #expect(listDir(inbox).filter { $0.hasSuffix(".json") }.isEmpty)
        }
    }
}
