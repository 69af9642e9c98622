// DrainLog: forwards what the drain settled to the journal (or stderr) and keeps the running
// totals that STATUS= and the --once summary report. One entry per capture, as SPEC 6.1 asks.
import Drain

final class DrainLog: DrainObserver {
    let log: JournalLog
    private(set) var drained = 0
    private(set) var duplicates = 0
    private(set) var rejected = 0

    init(_ log: JournalLog) { self.log = log }

    func drained(_ c: DrainedCapture) {
        if c.duplicate { duplicates += 1 } else { drained += 1 }
        log.drained(captureID: c.captureID, blockID: c.blockID, day: c.day, source: c.source,
                    latencyUsec: c.latencyUsec, inbox: c.inbox, duplicate: c.duplicate)
    }

    func rejected(inbox: String, name: String, reason: String) {
        rejected += 1
        log.rejected(captureID: String(name.prefix(26)), reason: reason, inbox: inbox)
    }

    func warning(inbox: String, name: String, message: String) {
        var fields: [String: String] = [:]
        if !inbox.isEmpty { fields["OUTL_INBOX"] = inbox }
        if name.count >= 26 { fields["OUTL_CAPTURE_ID"] = String(name.prefix(26)) }
        log.warning(name.isEmpty ? message : "\(name): \(message)", fields: fields)
    }
}
