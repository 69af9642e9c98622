// DrainEvents: what one drain pass did, reported per capture to an observer (the daemon's journal
// log, or a test) and in total as a `DrainReport`. No I/O here.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import SystemCalls
import Workspace

/// Receives one call per capture the drain settled, in the order they were settled.
public protocol DrainObserver: AnyObject {
    /// A capture's op is durable and its file is gone. `duplicate` means the block already existed
    /// (a replay after a crash, or a synced copy another device drained first).
    func drained(_ capture: DrainedCapture)
    /// A file was set aside in rejected/ with this one-line reason.
    func rejected(inbox: String, name: String, reason: String)
    /// Something worth a warning that did not stop the capture (e.g. unparsable captured_at).
    func warning(inbox: String, name: String, message: String)
    /// A capture was left in its inbox until its attachments are whole (said on every pass it
    /// waits; an observer that logs says it once).
    func waiting(inbox: String, name: String, why: String)
}

extension DrainObserver {
    /// By default a warning, each pass.
    public func waiting(inbox: String, name: String, why: String) {
        warning(inbox: inbox, name: name, message: "waits: \(why)")
    }
}

public struct DrainedCapture: Sendable {
    public var inbox: String
    /// The capture's id (as in its file name), its block's and its journal day, kept as they are:
    /// the log spells them into its line, and no String is made per capture for it.
    public var capture: ULID
    public var block: BlockID
    public var journalDay: JournalDay
    public var captureID: String { capture.string }
    /// Its UUID spelling.
    public var blockID: String { block.description }
    /// YYYY-MM-DD
    public var day: String { journalDay.iso }
    public var source: String
    public var duplicate: Bool
    /// From the capture's ULID time to the moment its op was durable, in microseconds.
    public var latencyUsec: UInt64
    /// That moment (wall clock, µs): the fdatasync of its batch returned.
    public var durableUsec: UInt64 = 0
    /// The attachments its block links (0 for a duplicate: its block was already made).
    public var attachments = 0
}

public struct DrainReport: Sendable, Equatable {
    public var drained = 0
    public var duplicates = 0
    public var rejected = 0
    /// Files left in the inbox because of a transient error (EIO, ENOSPC, EMFILE, …): retry later.
    public var deferred = 0
    /// The transient error that stopped the pass early, if any.
    public var transientError: String?
    /// Bad files that could not be set aside: still in their inbox, and nothing waited for them.
    public var unsettled: [UnsettledCapture] = []
    /// Captures left in their inbox until their attachments are whole (none held back another).
    public var waiting: [WaitingCapture] = []
    /// Inboxes not drained at all because a component inside the workspace is a link or no
    /// directory (never followed): one sentence each, naming it.
    public var refusedInboxes: [String] = []
    /// The pass listed only the first `DrainOptions.listingLimit` captures: more wait, for the next pass.
    public var more = false
    public init() {}

    public static func += (a: inout DrainReport, b: DrainReport) {
        a.drained += b.drained
        a.duplicates += b.duplicates
        a.rejected += b.rejected
        a.deferred += b.deferred
        a.transientError = b.transientError ?? a.transientError
        a.unsettled += b.unsettled
        a.waiting += b.waiting
        a.refusedInboxes += b.refusedInboxes
        a.more = a.more || b.more
    }
}

/// A capture whose attachments are not whole yet.
public struct WaitingCapture: Sendable, Equatable {
    public var path: String
    public var why: String
    /// When it is set aside if still not whole (seconds since the epoch): look again then.
    public var retryAt: Int
}

extension DrainReport {
    /// When a pass must look again at a waiting capture, nil when none waits.
    public var nextRetryAt: Int? { waiting.map(\.retryAt).min() }

    /// Another pass is owed at once: the listing stopped at its limit and this pass moved some
    /// capture on (one that moved nothing would list the same captures again).
    public var owesAnotherPass: Bool {
        more && transientError == nil && deferred == 0 && drained + duplicates + rejected > 0
    }
}

/// A bad file left in its inbox because rejected/ could not take it.
public struct UnsettledCapture: Sendable, Equatable {
    /// What would let it be set aside: a person (rejected/ is a file or a link, or may not be
    /// written) or time (a full disk, an I/O error).
    public enum Blocker: Sendable, Equatable { case notADirectory, permission, transient }
    public var path: String
    public var why: String
    public var blocker: Blocker

    init(path: String, why: String, cause: Error) {
        self.path = path
        self.why = why
        switch cause {
        case is UnsafeComponent: blocker = .notADirectory
        case let e as Errno where e.code == ENOTDIR || e.code == ELOOP || e.code == EEXIST: blocker = .notADirectory
        case let e as Errno where e.code == EACCES || e.code == EPERM: blocker = .permission
        default: blocker = .transient
        }
    }
}
