// WriterFaultTests: the REAL writer path (Inbox.ensure + Inbox.deliver, what outl-capture calls)
// under a fault at every file operation, and under every power cut after deliver returned.
// Invariant checked: success ⇒ exactly one parseable <ULID>.json and an empty tmp/; failure ⇒ no
// final file and no temp; after "saved" every crash state holds the whole capture.
import CaptureFormat
import CaptureInbox
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct WriterFaultTests {
    static let faults: [SysFault] = [.fail(.EIO), .fail(.ENOSPC), .fail(.EINTR), .shortWrite(7)]

    @Test(arguments: faults)
    func a_delivery_is_all_or_nothing_under_a_fault_at_every_call(_ fault: SysFault) throws {
        let base = TempDir("wf-deliver")
        func inbox(_ n: Int) -> String { Path.join(base.path, "r\(n)/.outl/captures") }
        var gen = ULIDGenerator()
        let id = gen.next()
        let bytes = CaptureFile.encode(Capture(text: "buy oat milk", capturedAt: "2026-12-02T09:00:00+01:00", source: "cli"))
        let outcomes = try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n -> String in
            try Inbox.ensure(inbox(n))
            return try Inbox.deliver(bytes, id: id, to: inbox(n))
        } check: { o in
            let finals = listDir(inbox(o.n)).filter(CaptureName.isFinal)
            if o.succeeded {
                #expect(finals == [CaptureName.fileName(for: id)], "run \(o.n): \(finals); calls \(o.log)")
                let got = try Durable.readRegularFile(Path.join(inbox(o.n), finals[0]), limit: 1 << 20)
                #expect(got == bytes, "run \(o.n): final file differs")
                #expect((try CaptureFile.decode(got)).text == "buy oat milk")
            } else {
                #expect(finals.isEmpty, "run \(o.n) failed (\(o.error!)) but left \(finals); calls \(o.log)")
            }
            #expect(listDir(Path.join(inbox(o.n), Inbox.tempDirName)).isEmpty, "run \(o.n) left a temp; calls \(o.log)")
        }
        #expect(outcomes.count > 5, "the writer path has more calls than that: \(outcomes[0].log)")
        if fault == .fail(.EINTR) || fault == .shortWrite(7) {
            #expect(outcomes.allSatisfy { $0.succeeded }, "EINTR and short writes are absorbed by Sys")
        } else {
            #expect(outcomes.contains { !$0.succeeded && $0.injected })
            // Every op kind of the path was hit once: open, write, fsync, rename, dir fsync, mkdir.
            let kinds = Set(outcomes[0].log.map { String($0.split(separator: " ")[0]) })
            for k in ["open", "write", "fsync", "rename", "mkdir"] { #expect(kinds.contains(k), "\(kinds)") }
        }
    }

    @Test func a_delivered_capture_survives_every_crash_state_after_deliver_returned() throws {
        let dir = TempDir("wf-pl")
        let inbox = dir.sub(".outl/captures")
        var gen = ULIDGenerator()
        let ids = [gen.next(), gen.next()]
        var savedAt: [ULID: Int] = [:]
        let fs = RecordingFS(root: dir.path)
        try withInterposer(fs) {
            try Inbox.ensure(inbox)
            for (k, id) in ids.enumerated() {
                _ = try Inbox.deliver(CaptureFile.encode(Capture(text: "capture \(k)")), id: id, to: inbox)
                savedAt[id] = fs.count
            }
        }
        var checked = 0
        for state in fs.allCrashStates() {
            for (k, id) in ids.enumerated() {
                let rel = ".outl/captures/" + CaptureName.fileName(for: id)
                if let got = state.contents(rel) {
                    // Before "saved", the final name holds the whole capture or nothing: never torn.
                    #expect((try? CaptureFile.decode(got))?.text == "capture \(k)", "\(state)\n\(fs.opDescriptions)")
                } else {
                    #expect(state.point < savedAt[id]!, "\(state): \(id) lost after it was saved\n\(fs.opDescriptions)")
                }
            }
            checked += 1
        }
        #expect(checked > 10)
    }
}
