// DrainLog: forwards what the drain settled to the journal (or stderr) and keeps the running
// totals that STATUS= and the --once summary report. One entry per capture, as SPEC 6.1 asks.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import Drain
import SystemCalls

final class DrainLog: DrainObserver {
    let log: JournalLog
    private(set) var drained = 0
    private(set) var duplicates = 0
    private(set) var rejected = 0

    /// `OUTL_BENCH_TRACE=FILE`: make bench reads "capture-id durable-us projected-us" lines here.
    private let traceFD: Int32?
    private var traced: [(String, UInt64)] = []

    init(_ log: JournalLog) {
        self.log = log
        if let path = getenv("OUTL_BENCH_TRACE") {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            traceFD = fd >= 0 ? fd : nil
        } else {
            traceFD = nil
        }
    }

    /// Called after a pass returned (its pages projected): writes the trace lines of the pass. A
    /// capture is projected when the last page file of its pass was made durable (the pass's
    /// bookkeeping after that, the archive's fdatasync among it, holds no line from its page); a pass
    /// that wrote no page after the capture was durable counts until it returned.
    func passFinished(lastPageDurable: UInt64) {
        guard let fd = traceFD, !traced.isEmpty else { return }
        let returned = wallClockMicroseconds()
        var text = ""
        for (id, durable) in traced {
            let projected = lastPageDurable >= durable ? lastPageDurable : returned
            text += "\(id) \(durable) \(projected)\n"
        }
        traced.removeAll()
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }

    func drained(_ c: DrainedCapture) {
        if traceFD != nil { traced.append((c.captureID, c.durableUsec)) }
        if c.duplicate { duplicates += 1 } else { drained += 1 }
        if c.duplicate {
            // A replay after a crash or a synced copy: the block exists, only the file went.
            log.info("\(c.captureID) was already in the journal for \(c.day) (block \(c.blockID)); removed the copy",
                     fields: ["OUTL_CAPTURE_ID": c.captureID, "OUTL_BLOCK_ID": c.blockID, "OUTL_INBOX": c.inbox])
        } else {
            log.drained(capture: c.capture, block: c.block, day: c.journalDay, source: c.source,
                        latencyUsec: c.latencyUsec, inbox: c.inbox, attachments: c.attachments)
        }
    }

    func rejected(inbox: String, name: String, reason: String) {
        rejected += 1
        // The drain considers final-form names only, so every rejected name carries its id.
        log.rejected(captureID: CaptureName.captureID(of: name) ?? name, reason: reason, inbox: inbox)
    }

    /// Captures already said to wait, with why: said again only when the reason changes.
    private var saidWaiting: [String: String] = [:]

    func waiting(inbox: String, name: String, why: String) {
        let key = Path.join(inbox, name)
        guard saidWaiting[key] != why else { return }
        if saidWaiting.count > 10_000 { saidWaiting.removeAll() }  // bounded: a flood says its lines again
        saidWaiting[key] = why
        log.info("\(name): waits for its attachments: \(why)",
                   fields: ["OUTL_INBOX": inbox, "OUTL_CAPTURE_ID": CaptureName.captureID(of: name) ?? name])
    }

    func warning(inbox: String, name: String, message: String) {
        var fields: [String: String] = [:]
        if !inbox.isEmpty { fields["OUTL_INBOX"] = inbox }
        if let id = CaptureName.captureID(of: name) { fields["OUTL_CAPTURE_ID"] = id }
        log.warning(name.isEmpty ? message : "\(name): \(message)", fields: fields)
    }
}
