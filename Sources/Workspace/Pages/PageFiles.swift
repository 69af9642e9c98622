// PageFiles: the one owner of what this device knows about each page's file: its state (clean,
// stale, waiting, failing), the content its changes were last taken from, and the stray files that
// stand for a page without being its file (a second spelling, a sync tool's conflict copy), and where
// and as what each file was last left (PageIndex). Invariants: at boot every page is stale but those
// whose file and model are as last projected (StartCheck); a page absent from `states` is clean; one
// page's failure is that page's state and holds back no other page; the failing set is recorded for
// `outl status`.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// A page whose file could not be read or written: what, why, since when (for `outl status`).
public struct PageFailure: Sendable, Equatable, CustomStringConvertible {
    /// The page's file, relative to the workspace (`journals/2026_12_01.md`).
    public var path: String
    public var reason: String
    /// When the page first failed for this reason (ms since the epoch).
    public var sinceMs: Int64
    /// Tries so far: each one waits twice as long as the last, up to `PageFiles.maxRetryMs`.
    public var attempts: Int
    var retryAtMs: Int64 = 0

    public init(path: String, reason: String, sinceMs: Int64, attempts: Int) {
        self.path = path; self.reason = reason; self.sinceMs = sinceMs; self.attempts = attempts
    }

    public var description: String { "\(path): \(reason)" }
}

/// A page file problem the pass records as the page's `failing` state, never thrown past its page.
struct PageFileError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }

    /// The reason a person can act on, for what the kernel said about `path`.
    init(_ path: String, _ error: Error) {
        self.init(path: path, reason: PageFileError.reason(error))
    }

    static func reason(_ error: Error) -> String {
        switch error {
        case let u as UnsafeComponent: return u.description
        case let p as PageFileError: return p.reason
        case WorkspaceError.io(let e, _), WorkspaceError.archive(let e, _): return reason(e)
        case let e as Errno:
            switch e.code {
            case ELOOP: return "is a symbolic link, and nothing inside the workspace is followed"
            case EINVAL: return "is not a regular file (a FIFO, a device or a directory): left as it is"
            case EFBIG: return "is larger than the \(PageFiles.maxFileBytes >> 20) MiB a page file may hold: left as it is"
            case ENAMETOOLONG: return "its name is too long for this file system"
            default: return e.description
            }
        default: return "\(error)"
        }
    }

    init(path: String, reason: String) { self.path = path; self.reason = reason }
}

/// What a page's file is waiting for. A page absent from `PageFiles.states` is clean, or failing
/// (`PageFiles.failed`) until its retry is due.
enum PageState: Equatable {
    /// Its file may not show what the model says: reconciled, then written, at the next pass. The
    /// origin is who last changed the file, when an event said so.
    case stale(PageFileOrigin)
    /// Its file's changes may be another device's work whose ops are still in transit (or the file
    /// is empty, perhaps an editor between truncating and writing): not taken, not rewritten. The
    /// ctime is the file's when it was judged.
    case waiting(PageFileOrigin, ctimeMs: Int64)
}

/// A file that stands for a page without being its file, waiting before its changes are taken.
struct StrayFile: Equatable {
    enum Kind: Equatable {
        /// Another spelling of the page's file (the other journal spelling, another case of a name):
        /// what it adds is taken, nothing it lacks is deleted, then it is removed.
        case secondSpelling
        /// A sync tool's conflict copy: judged as another producer's file, then removed.
        case conflictCopy
    }
    var page: BlockID
    var kind: Kind
    var origin: PageFileOrigin
    var ctimeMs: Int64
}

final class PageFiles {
    /// The largest page file read or written: the reader's limit and the writer's are this one.
    static let maxFileBytes = 64 << 20
    /// The longest wait between two tries of a failing page.
    static let maxRetryMs: Int64 = 5 * 60_000

    private(set) var states: [BlockID: PageState] = [:]
    /// When each stale page was last marked so (a number that grows with every marking): a pass
    /// takes the most recently marked first, so a capture's page is written before a backlog of
    /// pages a start or a large merge left.
    private var markedAt: [BlockID: UInt64] = [:]
    private var markings: UInt64 = 0
    /// Pages stale now: what a pass in slices still has to write.
    var staleCount: Int { markedAt.count }
    /// Pages that waited at their last judgement (a page judged again while waiting is stale for a
    /// moment): so a wait is logged once, not at every judgement.
    private var wasWaiting = Set<BlockID>()
    /// Pages whose file could not be read or written, until one pass writes them.
    private(set) var failed: [BlockID: PageFailure] = [:]
    /// The file content each page's changes were last taken from, so they are taken once.
    var lastReconciled: [BlockID: [UInt8]] = [:]
    /// Stray files waiting (path relative to the root).
    private(set) var strays: [String: StrayFile] = [:]
    let records: ReconcilerRecords
    /// Each page file's stamp and model digest as last projected (or read unchanged).
    let index: PageIndex
    /// Stamps of this device's ops taken from another producer's file (OpHistory.adopted).
    private(set) var adopted: Set<HLC> = []
    private let adoptedRecord: String
    /// The record ends in a torn line (a crash in an append): the next append starts a new line,
    /// so the torn one cannot swallow the next stamp.
    private var adoptedTorn = false
    private let failingRecord: String
    private var failingWritten: [PageFailure] = []

    init(stateDir: String, records: ReconcilerRecords, pageProperties: PageProperties = .none, log: WorkspaceLog = .silent) {
        self.records = records
        index = PageIndex(stateDir: stateDir, pageProperties: pageProperties, log: log)
        failingRecord = Path.join(stateDir, "failing-pages")
        adoptedRecord = Path.join(stateDir, "adopted-ops")
        if let bytes = try? Durable.readRegularFile(adoptedRecord, limit: 64 << 20) {
            adoptedTorn = bytes.last.map { $0 != 10 } ?? false
            // "<wall> <counter> <actor>" per line; a torn last line is skipped.
            for line in bytes.split(separator: 10) {
                let f = String(decoding: line, as: UTF8.self).split(separator: " ")
                guard f.count == 3, let w = Int64(f[0]), let c = UInt32(f[1]), let a = BlockID(String(f[2])) else { continue }
                adopted.insert(HLC(wall: w, counter: c, actor: a))
            }
        }
        // What an earlier process recorded: rewritten by the first pass that finds otherwise (a
        // failing page's file is not as last projected, so it is stale at boot and tried again first).
        failingWritten = PageFiles.recordedFailures(stateDir: stateDir)
    }

    // MARK: states

    /// Marks pages stale (a commit or a merge changed them); a failing page waits for its retry
    /// (`retryDue`), a waiting one is judged again with the origin it had.
    func markStale<S: Sequence>(_ ids: S) where S.Element == BlockID {
        markings += 1
        for id in ids where failed[id] == nil {
            markedAt[id] = markings
            switch states[id] {
            case .stale?: continue
            case .waiting(let o, _)?: states[id] = .stale(o)
            case nil: states[id] = .stale(.unknown)
            }
        }
    }

    /// Marks one page stale because its file changed, as `origin` says (an unknown origin keeps
    /// what an earlier event said); a failing page is tried again at once.
    func fileChanged(_ id: BlockID, origin: PageFileOrigin) {
        var o = origin
        switch states[id] {
        case .stale(let old)? where origin == .unknown: o = old
        case .waiting(let old, _)? where origin == .unknown: o = old
        default: break
        }
        states[id] = .stale(o)
        markings += 1
        markedAt[id] = markings
    }

    /// The stale pages, the most recently marked first, then in id order (one scan: a pass takes
    /// them as a batch, then looks again for pages its own commits made stale).
    func staleBatch() -> [BlockID] {
        markedAt.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
    }

    /// Who changed a stale page's file; nil when the page is no longer stale.
    func staleOrigin(_ id: BlockID) -> PageFileOrigin? {
        if case .stale(let o)? = states[id] { return o }
        return nil
    }

    func clean(_ id: BlockID) { states[id] = nil; markedAt[id] = nil; wasWaiting.remove(id); vanished[id] = nil }

    // MARK: files that went away or changed under a write

    /// When each page's file was first found gone after a `.removed` event (ms since the epoch),
    /// until the page is written again or its file is read again.
    private(set) var vanished: [BlockID: Int64] = [:]

    /// Records that the page's file was found gone now, unless it was already; returns since when.
    func noteVanished(_ id: BlockID, now: Int64) -> Int64 {
        if let since = vanished[id] { return since }
        vanished[id] = now
        return now
    }

    func vanishedSince(_ id: BlockID) -> Int64? { vanished[id] }

    /// The page's file was read: whatever went away has come back.
    func fileRead(_ id: BlockID) { vanished[id] = nil }

    /// Pages whose write found their file changed since it was read, in this pass.
    private var supersededInPass = Set<BlockID>()

    /// A pass begins: every page may be judged again once after a write that found its file changed.
    func passBegins() { supersededInPass.removeAll(keepingCapacity: true) }

    /// Records that a write of the page found its file changed; true the first time in a pass.
    func supersededOnce(_ id: BlockID) -> Bool { supersededInPass.insert(id).inserted }

    /// Neither stale nor waiting nor failing: its file shows the model as last projected.
    func isClean(_ id: BlockID) -> Bool { states[id] == nil && failed[id] == nil }
    /// Makes the page wait; returns whether it was not waiting before its last pass (to log once).
    func wait(_ id: BlockID, origin: PageFileOrigin, ctimeMs: Int64) -> Bool {
        let new = !wasWaiting.contains(id)
        states[id] = .waiting(origin, ctimeMs: ctimeMs)
        markedAt[id] = nil
        wasWaiting.insert(id)
        return new
    }

    /// Waiting pages whose file is a copy cut short (CutShort): judged again when it changes, with
    /// no timer of their own.
    var cutShort = Set<BlockID>()

    /// Waiting pages and the ctime each file had when judged.
    var waiting: [(BlockID, Int64)] {
        states.compactMap { if case .waiting(_, let c) = $0.value { return ($0.key, c) } else { return nil } }
    }

    /// Records a failure of the page (it is no longer stale); returns the failure when it is new or
    /// its reason changed (to be logged once), nil when the page was failing so already.
    func fail(_ id: BlockID, _ error: PageFileError, now: Int64) -> PageFailure? {
        var f: PageFailure
        var news = true
        if let old = failed[id], old.reason == error.reason, old.path == error.path {
            f = old
            f.attempts += 1
            news = false
        } else {
            f = PageFailure(path: error.path, reason: error.reason, sinceMs: now, attempts: 1)
        }
        f.retryAtMs = now + min(PageFiles.maxRetryMs, Int64(1000) << Int64(min(f.attempts - 1, 20)))
        failed[id] = f
        states[id] = nil
        markedAt[id] = nil
        return news ? f : nil
    }

    /// The page's pass went through (written, or waiting): its failure, if it was failing (to be
    /// logged as recovered).
    func succeeded(_ id: BlockID) -> PageFailure? { failed.removeValue(forKey: id) }

    var failures: [PageFailure] { failed.values.sorted { $0.path < $1.path } }

    /// Ms until the next failing page's retry is due (0 when one is); nil when none fails.
    func nextRetryMs(now: Int64) -> Int64? { failed.values.map { max(0, $0.retryAtMs - now) }.min() }

    /// Failing pages whose retry is due become stale; returns ms until the next one is due, nil if none.
    func retryDue(now: Int64) -> Int64? {
        var next: Int64? = nil
        for (id, f) in failed {
            if f.retryAtMs <= now {
                if states[id] == nil { states[id] = .stale(.unknown); markedAt[id] = 0 }
            } else {
                next = min(next ?? Int64.max, f.retryAtMs - now)
            }
        }
        return next
    }

    /// Records the stamps of ops taken from another producer's file, durably before the ops are
    /// appended: a record lost would let such an op pass for evidence, and evidence deletes.
    func adopt(_ stamps: [HLC]) throws {
        let new = stamps.filter { !adopted.contains($0) }
        if new.isEmpty { return }
        var out: [UInt8] = adoptedTorn ? [10] : []
        for h in new { out.append(contentsOf: "\(h.wall) \(h.counter) \(h.actor)\n".utf8) }
        var created = false
        let fd: Int32
        do { fd = try Sys.open(adoptedRecord, O_WRONLY | O_APPEND | O_NOFOLLOW, 0) }
        catch let e as Errno where e == .ENOENT {
            fd = try Sys.open(adoptedRecord, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW, 0o600)
            created = true
        }
        defer { Sys.close(fd) }
        try Sys.writeAll(fd, out)
        try Sys.fsync(fd)
        // A record just made is durable only once its name is: the state directory is fsync'd too.
        if created { try Durable.syncDirectory(Path.parent(of: adoptedRecord)) }
        adoptedTorn = false
        adopted.formUnion(new)
    }

    // MARK: held back

    /// Per page, the blocks its file does not show because it would pass the page-file limit.
    private(set) var heldBack: [BlockID: [HeldBackBlock]] = [:]

    /// Records what the page's last rendering held back; returns the blocks newly held back (to be
    /// logged once each) and whether the page held some back before and now holds none.
    func noteHeldBack(_ blocks: [HeldBackBlock], of page: BlockID) -> (new: [HeldBackBlock], allShown: Bool) {
        let before = heldBack[page] ?? []
        heldBack[page] = blocks.isEmpty ? nil : blocks
        let known = Set(before.map(\.id))
        return (blocks.filter { !known.contains($0.id) }, blocks.isEmpty && !before.isEmpty)
    }

    // MARK: strays

    /// Strays that could not be read or removed, with the reason last logged: logged once each,
    /// and never holding back their page.
    private var strayFailures: [String: String] = [:]

    /// Records a stray's failure; returns whether it is new (or its reason changed), to be logged.
    func strayFailed(_ rel: String, reason: String) -> Bool {
        if strayFailures[rel] == reason { return false }
        strayFailures[rel] = reason
        return true
    }

    func holdStray(_ path: String, _ s: StrayFile) -> Bool {
        let new = strays[path] == nil
        strays[path] = s
        return new
    }

    func releaseStray(_ path: String) { strays[path] = nil; strayFailures[path] = nil }

    // MARK: the record `outl status` reads

    /// Writes the failing set to the state directory when it changed (by rename, never fsync'd: a
    /// record lost in a crash is written again by the next pass that meets the failure).
    func recordFailures(log: WorkspaceLog) {
        let now = failures
        if now.map({ [$0.path, $0.reason] }) == failingWritten.map({ [$0.path, $0.reason] }) { return }
        var out: [UInt8] = []
        for f in now {
            out.append(contentsOf: "\(f.sinceMs)\t\(PageFiles.oneLine(f.path))\t\(PageFiles.oneLine(f.reason))\n".utf8)
        }
        do {
            let tmp = failingRecord + ".tmp"
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            defer { Sys.close(fd) }
            try Sys.writeAll(fd, out)
            try Sys.rename(tmp, failingRecord)
            failingWritten = now
        } catch {
            log.warning("\(failingRecord): could not record the failing pages for `outl status` (\(error))")
        }
    }

    /// The failing pages a running outld recorded in `stateDir` (read by `outl status`, beside it).
    static func recordedFailures(stateDir: String) -> [PageFailure] {
        guard let bytes = try? Durable.readRegularFile(Path.join(stateDir, "failing-pages"), limit: 1 << 20) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard f.count == 3, let since = Int64(f[0]) else { return nil }
            return PageFailure(path: String(f[1]), reason: String(f[2]), sinceMs: since, attempts: 1)
        }
    }

    /// A name or reason on one line of the record: a file name may hold a tab or a newline.
    static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
