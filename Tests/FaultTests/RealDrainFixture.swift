// RealDrainFixture: one real workspace + inbox per run, booted the way outld boots (Workspace init,
// reconcileAll, drain), and the exactly-once checks every fault and power-loss test shares.
// Invariant: set-up and checks go through public APIs only (Inbox, Workspace, drain_capture_inbox).
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

/// An observer that forgets everything, for tests that only want the report.
final class SilentDrainObserver: DrainObserver {
    func drained(_ capture: DrainedCapture) {}
    func rejected(inbox: String, name: String, reason: String) {}
    func warning(inbox: String, name: String, message: String) {}
}

/// One workspace directory with its device state beside it (outside the workspace, as on a device).
struct RealRun {
    let dir: String
    var root: String { Path.join(dir, "ws") }
    var state: String { Path.join(dir, "state") }
    var inbox: String { Path.join(root, ".outl/captures") }
    static let day = "2026-12-02"
    static var journalRel: String { "journals/2026_12_02.md" }

    /// The capture texts are unique, so counting them in the op log and the page counts blocks.
    static func text(_ k: Int) -> String { "fault capture number \(k) zq" }

    /// Delivers `count` captures with the real writer; returns their ids in delivery order.
    func deliver(_ count: Int, from first: Int = 0) throws -> [ULID] {
        try Inbox.ensure(inbox)
        var gen = ULIDGenerator()
        return try (first..<(first + count)).map { k in
            let id = gen.next()
            let c = Capture(text: RealRun.text(k), capturedAt: "\(RealRun.day)T09:00:00+01:00", source: "fault")
            _ = try Inbox.deliver(CaptureFile.encode(c), id: id, to: inbox)
            return id
        }
    }

    func open(_ io: BatchIO) throws -> Workspace {
        var o = WorkspaceOptions(root: root)
        o.stateDirectory = state
        o.log = .silent
        return try Workspace(options: o)
    }

    /// outld's boot: open (takes the lock, reads the op log, cuts a torn tail), reconcile hand
    /// edits, then the first drain.
    func bootAndDrain(_ io: BatchIO) async throws -> (Workspace, DrainReport) {
        let ws = try open(io)
        try await ws.reconcileAll()
        let r = await drain_capture_inbox([inbox], into: ws, io: io, observer: SilentDrainObserver(), options: RealRun.options)
        return (ws, r)
    }

    /// Capture files read and unlinked on the ring whenever the BatchIO has one: outld leaves a
    /// pass of one file to plain syscalls (`ringFromFiles`), and these runs of one capture or a few
    /// must still cover the ring's calls, as a burst makes them.
    static var options: DrainOptions {
        var o = DrainOptions()
        o.inboxFilesOnRing = true
        return o
    }

    func pending() -> [String] { listDir(inbox).filter(CaptureName.isFinal) }
    func rejected() -> [String] { listDir(Path.join(inbox, Inbox.rejectedDirName)) }

    /// Op-log lines that create capture k (every actor file under .outl/ops).
    func opLines(_ k: Int) -> Int {
        let ops = Path.join(root, ".outl/ops")
        return listDir(ops).reduce(0) { n, f in
            n + (readText(Path.join(ops, f)) ?? "").split(separator: "\n").filter { $0.contains(RealRun.text(k)) }.count
        }
    }

    func journal() -> String { readText(Path.join(root, RealRun.journalRel)) ?? "" }

    func occurrences(_ needle: String, in hay: String) -> Int { hay.components(separatedBy: needle).count - 1 }

    /// The end state after a clean drain: each capture in `ks` once in the op log and once in the
    /// page, no other capture at all, inbox empty, nothing rejected.
    func expectExactlyOnce(_ ks: Range<Int>, _ context: @autoclosure () -> String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let page = journal()
        for k in ks {
            #expect(opLines(k) == 1, "capture \(k): \(opLines(k)) op lines; \(context())", sourceLocation: sourceLocation)
            #expect(occurrences(RealRun.text(k), in: page) == 1,
                    "capture \(k): \(occurrences(RealRun.text(k), in: page))× in the page; \(context())\n\(page)",
                    sourceLocation: sourceLocation)
        }
        #expect(pending().isEmpty, "inbox not empty: \(pending()); \(context())", sourceLocation: sourceLocation)
        #expect(rejected().isEmpty, "a good file was rejected: \(rejected()); \(context())", sourceLocation: sourceLocation)
    }
}
