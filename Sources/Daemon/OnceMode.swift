// OnceMode: `outld --once` for scripts and the outld-drain.path unit. Never a second write actor:
// when a running outld owns the workspace it is asked to drain (SIGUSR1) and we wait for the files
// that were waiting to leave the inbox; otherwise we take the lock, drain, and exit.
// Exit 75 only for what a retry can fix (a busy owner, a lock, a transient I/O error); a missing
// workspace at --workspace, a linked inbox or a bad file its rejected/ cannot take is 73, a
// permission problem 77, an unusable workspace 69. A bad file kept never stops the others.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import OutlConfig
import SystemCalls
import Workspace

public enum OnceMode {
    /// Returns the exit status; prints a one-line summary on stdout when anything was waiting or
    /// went wrong (always with --verbose), so a cron job is quiet when there was nothing to do.
    public static func run(options: DaemonOptions, config: OutlConfig, log: JournalLog) async -> Int32 {
        let root = config.workspaceRoot
        if let status = WorkspaceStart.prepare(config, create: false, log: log) { return status }
        let deadline = monotonicNanoseconds() + UInt64(options.timeoutSeconds * 1e9)
        while true {
            if let owner = WorkspaceLock.owner(root: root, stateDirectory: config.stateDirectory) {
                switch askOwner(owner, config: config, deadline: deadline) {
                case .done(let summary, let total):
                    // The owner's pages count as this run's: one it could not write is exit 74 here too.
                    let failing = Workspace.recordedPageFailures(root: root, stateDirectory: config.stateDirectory)
                    if total > 0 || options.verbose || !failing.isEmpty {
                        print(summary + (failing.isEmpty ? "" : ", \(failing.count) page(s) not written (\(failing[0].path))"))
                    }
                    return failing.isEmpty ? 0 : 74
                case .timedOut(let left):
                    print("timed out after \(formatSeconds(options.timeoutSeconds)): \(left) capture(s) still waiting; outld (pid \(owner)) owns \(root)")
                    return 75
                case .ownerGone:
                    continue  // it exited between the check and the signal: drain ourselves
                }
            }
            if let problem = WorkspaceStart.permissionProblem(config) {
                log.error(problem)
                return 77
            }
            let io = BatchIO.make(forcePlain: options.io == .plain)
            let workspace: Workspace
            do {
                var wopts = WorkspaceStart.options(config, log: log)
                if isatty(2) == 1 { wopts.bootProgress = bootProgressLine() }
                workspace = try Workspace(options: wopts)
            } catch WorkspaceError.locked {
                if monotonicNanoseconds() >= deadline {
                    print("timed out after \(formatSeconds(options.timeoutSeconds)): the workspace \(root) stayed locked")
                    return 75
                }
                continue  // an outld started meanwhile: ask it instead
            } catch {
                log.error("cannot open the workspace \(root): \(error)")
                return WorkspaceStart.status(of: error)
            }
            WorkspaceStart.sayDeletedWhileAway(await workspace.deletedWhileAway, log: log)
            return await drain(workspace, io: io, config: config, log: log, verbose: options.verbose)
        }
    }

    /// The drain itself, with the lock held; the summary line says what happened.
    static func drain(_ workspace: Workspace, io: BatchIO, config: OutlConfig, log: JournalLog, verbose: Bool = false) async -> Int32 {
        let observer = DrainLog(log)
        for inbox in config.drainedInboxes where (try? Sys.lstat(inbox)) == nil {
            try? Inbox.ensure(inbox, workspace: config.workspaceRoot)
        }
        await DrainPass.catchUp(config.drainedInboxes, workspace: workspace, log: log)
        // A pass lists at most DrainOptions.listingLimit captures: more passes drain the rest.
        var report = await DrainPass.run(config.drainedInboxes, workspace: workspace, io: io, observer: observer,
                                         log: log, options: DrainPass.options(config))
        var last = report
        while last.owesAnotherPass {
            last = await DrainPass.run(config.drainedInboxes, workspace: workspace, io: io, observer: observer,
                                       log: log, options: DrainPass.options(config))
            report.addingLaterPass(last)
        }
        await finishPages(workspace, log: log)
        let failing = await workspace.failingPages
        await workspace.close()
        for line in report.refusedInboxes { log.error(line) }
        var line = "drained \(report.drained), rejected \(report.rejected)"
        if report.duplicates > 0 { line += ", \(report.duplicates) already present" }
        if report.deferred > 0 { line += ", \(report.deferred) left waiting (\(report.transientError ?? "transient error"))" }
        if let w = report.waiting.first {
            line += ", \(report.waiting.count) waiting for attachments (\(w.why))"
        }
        if !report.unsettled.isEmpty {
            line += ", \(report.unsettled.count) bad file(s) kept in the inbox (cannot set aside: \(report.unsettled[0].path))"
        }
        if !report.refusedInboxes.isEmpty { line += ", \(report.refusedInboxes.count) inbox(es) refused" }
        if report.more { line += ", more waiting behind captures that could not move (a pass lists \(DrainPass.options(config).listingLimit))" }
        if !failing.isEmpty { line += ", \(failing.count) page(s) not written (\(failing[0].path))" }
        let quiet = report.drained == 0 && report.rejected == 0 && report.duplicates == 0 && report.deferred == 0 && report.waiting.isEmpty
            && report.unsettled.isEmpty && report.refusedInboxes.isEmpty && failing.isEmpty && !report.more
        if !quiet || verbose { print(line) }
        return status(of: report, failingPages: failing.count)
    }

    /// The boot's progress as a line on the terminal, once it has taken a moment, rewritten at most
    /// ten times a second and cleared once the op log is read.
    static func bootProgressLine() -> (Int, Int) -> Void {
        var shownNs: UInt64 = 0
        let started = monotonicNanoseconds()
        return { read, total in
            if read >= total {
                if shownNs > 0 { ProgressLine.clear() }
                return
            }
            // A short boot shows nothing; a long one a line rewritten ten times a second.
            let now = monotonicNanoseconds()
            guard now - started >= ProgressLine.after, now - shownNs >= 100_000_000 else { return }
            shownNs = monotonicNanoseconds()
            ProgressLine.show("outld: reading the op log: \(read >> 20) of \(total >> 20) MiB")
        }
    }

    /// Writes the pages the passes in slices left, before the workspace closes; on a terminal, with
    /// a progress line on stderr (none otherwise, so cron stays quiet).
    static func finishPages(_ workspace: Workspace, log: JournalLog) async {
        var backlog = PageBacklog()
        let progress = isatty(2) == 1
        var shownNs: UInt64 = 0
        let started = monotonicNanoseconds()
        // Each pass writes at least one page, and a page left stale again is one its own hand
        // edits made stale: the bound only guards against a pass that writes nothing forever.
        var passes = 0
        let bound = await workspace.stalePages * 4 + 16
        while passes < bound {
            let left = await workspace.stalePages
            if left == 0 { break }
            _ = backlog.update(left: left)
            let now = monotonicNanoseconds()
            if progress, now - started >= ProgressLine.after, now - shownNs >= 100_000_000 {
                ProgressLine.show("outld: \(backlog.status)")
                shownNs = monotonicNanoseconds()
            }
            do { _ = try await workspace.projectDirtyPages() } catch {
                log.warning("projection: \(error)")
                break
            }
            passes += 1
        }
        if progress && shownNs > 0 { ProgressLine.clear() }
    }

    /// A problem a person must fix outranks one that time fixes: 77 (rejected/ may not be
    /// written), 73 (an inbox or its rejected/ is a link or no directory), 74 (a page file could not
    /// be read or written; the captures are in the op log), 75 (retry later: a transient error, a
    /// capture whose attachments are not whole yet, or captures left behind a listing's worth that
    /// could not move), 0.
    static func status(of report: DrainReport, failingPages: Int = 0) -> Int32 {
        let blockers = report.unsettled.map(\.blocker)
        if blockers.contains(.permission) { return 77 }
        if blockers.contains(.notADirectory) || !report.refusedInboxes.isEmpty { return 73 }
        if failingPages > 0 { return 74 }
        if report.deferred > 0 || report.transientError != nil || blockers.contains(.transient) || !report.waiting.isEmpty
            || report.more { return 75 }
        return 0
    }

    enum Asked { case done(String, waiting: Int), timedOut(Int), ownerGone }

    /// Snapshots what is waiting, watches the inboxes, signals the owner, and waits until every
    /// snapshotted file has left its inbox (drained or set aside). Watch first, then check, so a
    /// removal between the two is not missed. A snapshot holds at most a drain pass's worth of
    /// names, the first in capture order (the owner drains them first); once they are gone, the
    /// next snapshot is taken, until one holds every name left.
    static func askOwner(_ pid: Int32, config: OutlConfig, deadline: UInt64) -> Asked {
        let limit = DrainPass.options(config).listingLimit
        var (waiting, cut) = snapshot(config, limit: limit)
        // Every capture waiting, counted whole: a cut snapshot holds only the first of them.
        func left() -> Int { cut ? pending_count(config.drainedInboxes, workspace: config.workspaceRoot) : waiting.count }
        guard let watcher = try? InotifyWatcher() else { return .timedOut(left()) }
        for inbox in config.drainedInboxes { try? watcher.watchInbox(inbox) }
        if kill(pid, SIGUSR1) != 0 { return errno == ESRCH ? .ownerGone : .timedOut(left()) }
        var total = waiting.count
        while true {
            waiting.removeAll { (try? Sys.lstat(Path.join($0.inbox, $0.name))) == nil }
            if waiting.isEmpty && cut {
                (waiting, cut) = snapshot(config, limit: limit)
                total += waiting.count
                continue
            }
            if waiting.isEmpty {
                return .done("drained by outld (pid \(pid)): \(total) capture(s) were waiting, none left", waiting: total)
            }
            if kill(pid, 0) != 0 && errno == ESRCH { return .ownerGone }
            let now = monotonicNanoseconds()
            if now >= deadline { return .timedOut(left()) }
            // Wake on the inbox changing, or at least every second to notice a dead owner.
            var p = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min((deadline - now) / 1_000_000 + 1, 1000))
            _ = poll(&p, 1, ms)
            _ = try? watcher.readEvents()
        }
    }

    /// The first `limit` final-form names waiting, in capture order across the inboxes (a copy of
    /// one id in inbox order), and whether more wait.
    static func snapshot(_ config: OutlConfig, limit: Int) -> (names: [(inbox: String, name: String)], cut: Bool) {
        let ranks = Dictionary(config.drainedInboxes.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
        var kept = SmallestKept<(inbox: String, name: String)>(limit: limit) { a, b in
            a.name != b.name ? a.name < b.name : ranks[a.inbox, default: 0] < ranks[b.inbox, default: 0]
        }
        for inbox in Set(config.drainedInboxes) {
            guard let fd = try? Inbox.open(inbox, workspace: config.workspaceRoot) else { continue }
            fd.closeAfter {
                try? fd.readDirectory(path: inbox) { bytes in
                    if CaptureName.ulid(ofBytes: bytes) != nil { kept.offer((inbox, String(decoding: bytes, as: UTF8.self))) }
                }
            }
        }
        return (kept.takeSorted(), kept.cut)
    }

    static func formatSeconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }
}

extension DrainReport {
    /// A later pass of the same run added in: what it moved is added; what it left in the inbox
    /// (files waiting, files kept, refused inboxes) the earlier pass may have left too, and each is
    /// said once.
    mutating func addingLaterPass(_ later: DrainReport) {
        var later = later
        let waitingPaths = Set(waiting.map(\.path)), unsettledPaths = Set(unsettled.map(\.path)), refused = Set(refusedInboxes)
        later.waiting.removeAll { waitingPaths.contains($0.path) }
        later.unsettled.removeAll { unsettledPaths.contains($0.path) }
        later.refusedInboxes.removeAll { refused.contains($0) }
        more = false
        self += later
    }
}
