// Verdict: what a stage of the drain decided about one inbox file, and the one place that acts on
// it (Postfix pickup.c's habit: stages decide, one loop acts, so every outcome is seen in one place).
// Invariants: a file set aside is moved to rejected/, never deleted; a kept file stops the batch at
// its place in capture order, so it and every file after it wait for the next pass. A bad file that
// cannot be set aside (rejected/ is not a directory, or is full) stays where it is, is reported, and
// stops nothing: it would never land, so no good capture has to wait behind it.
import SystemCalls
import Workspace

enum Verdict<Value> {
    /// On its way to landing, with what this stage made of the file.
    case land(Value)
    /// Not a capture: set it aside in rejected/ with this one-line reason.
    case setAside(String)
    /// The machine is unwell (EIO, ENOSPC, EMFILE, …): keep it, and every file after it, for a retry.
    case keep(String)
    /// Gone before we got to it (another drainer, a sync tool): nothing to do.
    case gone
    /// Not whole yet (an attachment a sync tool is still delivering): leave it, hold back no other
    /// file, and look again by `retryAt` (seconds since the epoch) at the latest.
    case wait(String, retryAt: Int = 0)

    func map<Next>(_ transform: (Value) -> Next) -> Verdict<Next> { then { .land(transform($0)) } }

    /// The next stage's verdict on what this one made of the file.
    func then<Next>(_ stage: (Value) -> Verdict<Next>) -> Verdict<Next> {
        switch self {
        case .land(let v): return stage(v)
        case .setAside(let reason): return .setAside(reason)
        case .keep(let why): return .keep(why)
        case .gone: return .gone
        case .wait(let why, let at): return .wait(why, retryAt: at)
        }
    }
}

/// What the batch loop does with a file once its verdict was acted on.
enum Next<Value> {
    case proceed(Value)
    case skip
    /// A transient error: this file and every later one stay in the inbox.
    case stop
}

/// The acting half: sets files aside, keeps them, and keeps the batch's report and where it stopped.
struct Settlement {
    let observer: DrainObserver
    /// Where the entries acted on are (their paths, their attachments).
    let inboxes: PassInboxes
    var report = DrainReport()
    /// The place (in the pass's capture order) of the first file left for the next pass.
    var stoppedAt: Int?

    init(observer: DrainObserver, inboxes: PassInboxes) {
        self.observer = observer
        self.inboxes = inboxes
    }

    @inline(__always)
    mutating func act<Value>(on verdict: Verdict<Value>, for entry: PendingEntry) -> Next<Value> {
        switch verdict {
        case .land(let value):
            return .proceed(value)
        case .gone:
            return .skip
        case .setAside(let reason):
            setAside(entry, reason)
            return .skip
        case .keep(let why):
            report.transientError = "\(inboxes.fullPath(of: entry)): \(why)"
            return stop(at: entry)
        case .wait(let why, let at):
            report.waiting.append(WaitingCapture(path: inboxes.fullPath(of: entry), why: why, retryAt: at))
            observer.waiting(inbox: inboxes.path(of: entry), name: entry.name, why: why)
            return .skip
        }
    }

    private mutating func stop<Value>(at entry: PendingEntry) -> Next<Value> {
        stoppedAt = entry.place
        return .stop
    }

    /// Files whose verdict was "land" but whose op never became durable: all kept, and the batch
    /// counts as stopped after its last file if nothing stopped it earlier.
    mutating func keep(_ count: Int, because why: String, batchEnd: Int) {
        report.transientError = why
        report.deferred += count
        stoppedAt = stoppedAt ?? batchEnd
    }

    /// Reports each capture whose op is durable and whose file is gone (`copies`: second copies of
    /// an id from another inbox, deleted with the first and counted as duplicates).
    mutating func landed(_ landing: Landing, of entries: ArraySlice<PendingEntry>, _ outcomes: [AppendOutcome], copies: Int,
                         durableUsec: UInt64) {
        for (k, outcome) in zip(landing.places.indices, outcomes) {
            let duplicate = outcome == .alreadyPresent
            if duplicate { report.duplicates += 1 } else { report.drained += 1 }
            let place = landing.places[k]
            let id = entries[place].id
            let capturedUsec = id.timestampMs * 1000
            observer.drained(DrainedCapture(
                inbox: inboxes.path(of: entries[place]), capture: id, block: BlockID(capture: id), journalDay: landing.list.items[k].day,
                source: landing.list.source(of: k), duplicate: duplicate,
                latencyUsec: durableUsec > capturedUsec ? durableUsec - capturedUsec : 0, durableUsec: durableUsec,
                attachments: landing.list.items[k].assets.count))
        }
        report.duplicates += copies
    }

    /// Moves an entry to rejected/; when even that fails, the entry stays in the inbox, is reported,
    /// and the next pass tries again.
    private mutating func setAside(_ entry: PendingEntry, _ reason: String) {
        let inbox = inboxes.path(of: entry)
        do {
            try Rejection.setAside(inbox: inbox, directory: entry.directory, name: entry.name, reason: reason)
        } catch let e as Errno where e == .ENOENT {
            return  // it vanished meanwhile: nothing to set aside
        } catch {
            let why = "cannot set aside in \(Rejection.directoryName)/ (\(error)); kept in the inbox, not drained: \(reason)"
            report.unsettled.append(UnsettledCapture(path: inboxes.fullPath(of: entry), why: why, cause: error))
            observer.warning(inbox: inbox, name: entry.name, message: why)
            return
        }
        report.rejected += 1
        observer.rejected(inbox: inbox, name: entry.name, reason: reason)
        // Its attachments go with it (the capture's reason names them); one that cannot stays.
        for name in inboxes.attachmentFiles(of: entry) {
            do {
                try Rejection.moveAlong(inbox: inbox, directory: entry.directory, name: name)
            } catch let e as Errno where e == .ENOENT {
            } catch {
                observer.warning(inbox: inbox, name: name, message: "its capture was set aside, but the attachment stays: \(error)")
            }
        }
    }
}
