// RunningDaemon: outld's state once started (the workspace, its watches, the timers) and the loop
// that sleeps in poll(2) on inotify and signalfd with no polling, until SIGTERM or SIGINT.
// Invariant: the watchdog is pinged from this loop only, so a stuck drain stops the pings and
// systemd restarts outld; every sleep ends at the earliest deadline some timer owes.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureInbox
import Drain
import OutlConfig
import SystemCalls
import Workspace

/// outld's poll slots, named as OpenBSD's ntpd names its PFD_* slots.
enum PollSlot: Int, CaseIterable {
    case inotify
    case signals
}

/// What one turn of the loop owes besides its timers.
struct Wake {
    /// Drain the inboxes: a capture arrived, an inbox came back, or SIGUSR1 asked.
    var drain = false
    /// Reload the configuration and catch up as at start: SIGHUP, or the kernel dropped events.
    var rescan = false
    /// Why, for the log: which of those it was.
    var rescanWhy: [String] = []

    mutating func add(_ other: Wake) {
        drain = drain || other.drain
        rescan = rescan || other.rescan
        rescanWhy += other.rescanWhy.filter { !rescanWhy.contains($0) }
    }
}

/// The loop's timers, each a monotonic deadline in nanoseconds, nil when not armed.
struct Deadlines {
    /// The next WATCHDOG=1 ping (nil without a watchdog).
    var watchdog: UInt64? = nil
    /// The next drain after a transient error, per the backoff.
    var retry: UInt64? = nil
    /// Letting go of the io_uring ring (and the kernel worker it keeps) a while after the last
    /// drain, so a quiet daemon is fully quiet yet a burst keeps its ring.
    var ringRelease: UInt64? = nil
    /// Judging again the page files whose changes wait for other devices' ops.
    var judgeWaiting: UInt64? = nil
    /// Draining again when a capture waiting for its attachments is due to be set aside.
    var attachmentWait: UInt64? = nil
    /// The next slice of a page backlog: due at once, after whatever the turn that set it handled.
    var pageSlice: UInt64? = nil
    /// The next slice of a live merge that stopped with more to read: the same.
    var mergeSlice: UInt64? = nil
    /// The next drain pass when the last one listed only the first DrainOptions.listingLimit
    /// captures: due at once, after the turn's signals and watchdog, with no event to wait for.
    var moreToList: UInt64? = nil

    var earliest: UInt64? {
        [watchdog, retry, ringRelease, judgeWaiting, attachmentWait, pageSlice, mergeSlice, moreToList].compactMap { $0 }.min()
    }

    static func isDue(_ deadline: UInt64?, now: UInt64) -> Bool { deadline.map { now >= $0 } ?? false }
}

final class RunningDaemon {
    let options: DaemonOptions
    var config: OutlConfig
    let log: JournalLog
    let signals: SignalSource
    let io: BatchIO
    let workspace: Workspace
    let watcher: InotifyWatcher
    let drainLog: DrainLog
    var drainOptions: DrainOptions { DrainPass.options(config) }

    var deadlines = Deadlines()
    var backoff = Backoff()
    /// A failing drain: since when, how many attempts, when it was last said (errorReminder).
    var failingSince: UInt64 = 0
    var failedAttempts = 0
    var lastErrorLogged: UInt64 = 0
    /// How often a drain that keeps failing the same way is said again.
    static var errorReminder: UInt64 {
        UInt64(Path.environment("OUTL_ERROR_REMINDER_MS").flatMap { UInt64($0) } ?? 300_000) * 1_000_000
    }
    var watchdogEvery: UInt64? = nil    // ns between WATCHDOG=1 pings (half of WatchdogSec)
    var lastError: String? = nil
    /// The inboxes the last pass refused (a link inside the workspace), each logged once.
    var lastRefused: Set<String> = []
    /// What the last merge of other devices' ops did (for STATUS=).
    var lastMerge: String? = nil
    /// Pages still to write, a slice per turn of the loop (STATUS= says how far).
    var backlog = PageBacklog()
    /// A live merge read a slice per turn of the loop (STATUS= says how far); pages wait for its end.
    var merge = MergeProgress()
    var lastStatusNs: UInt64 = 0

    static let ringIdleRelease: UInt64 = 10_000_000_000
    /// The settle window: when a wake-up brings several arrivals at once (a burst is under way),
    /// wait until the inbox has been quiet this long (capped at `settleCap`) so the burst becomes
    /// one batch with one fdatasync. A lone arrival is drained at once: its latency is the point.
    static let settleQuietMs: Int32 = 1
    static let settleCap: UInt64 = 5_000_000

    init(options: DaemonOptions, config: OutlConfig, log: JournalLog, signals: SignalSource,
         io: BatchIO, workspace: Workspace, watcher: InotifyWatcher) {
        self.options = options
        self.config = config
        self.log = log
        self.signals = signals
        self.io = io
        self.workspace = workspace
        self.watcher = watcher
        self.drainLog = DrainLog(log)
    }

    /// What a start or a rescan owes before it drains: other devices' ops merged (so a page they
    /// projected is explained by them, not taken for an edit), the hand edits made while nothing
    /// watched, and the page files that wait judged.
    func catchUp() async {
        await mergeOtherDevices()
        await DrainPass.catchUp(config.drainedInboxes, workspace: workspace, log: log)
        await judgeWaiting()
    }

    func startWatchdog() {
        guard let us = ServiceNotifier.watchdogInterval() else { return }
        watchdogEvery = us * 1000 / 2
        deadlines.watchdog = monotonicNanoseconds()
    }

    /// Runs until SIGTERM/SIGINT (0) or a poll(2) that cannot go on (70).
    func loop() async -> Int32 {
        var fds = PollSlot.allCases.map { slot in
            pollfd(fd: slot == .inotify ? watcher.fd : signals.fd, events: Int16(POLLIN), revents: 0)
        }
        while true {
            pingWatchdogIfDue()
            for i in fds.indices { fds[i].revents = 0 }
            // EINTR (a stop and continue) just comes round again, with a timeout computed afresh.
            if poll(&fds, nfds_t(fds.count), pollTimeoutMs()) < 0 && errno != EINTR {
                log.error("poll failed: \(Errno.current)")
                return 70
            }
            var wake = Wake()
            // The passes over stale pages this turn makes share one slice, so a capture waits one.
            await workspace.startTurn(writingBacklog: !merge.active)
            if fds[PollSlot.signals.rawValue].revents != 0 {
                if let status = handleSignals(&wake) { return status }
            }
            if fds[PollSlot.inotify.rawValue].revents != 0 { wake.add(await handleWatchEvents()) }
            await runDueTimers(&wake)
            if wake.rescan {
                log.info("rescanning: \(wake.rescanWhy.isEmpty ? "asked" : wake.rescanWhy.joined(separator: ", "))")
                reloadConfig()
                for inbox in config.drainedInboxes {  // new in the configuration, or removed meanwhile
                    do { try prepareInbox(inbox) } catch { log.warning("cannot prepare inbox \(inbox): \(error)") }
                }
                watchOpDirectory()
                await catchUp()
                wake.drain = true
            }
            if wake.drain && !isWaitingToRetry { await drainNow() }
            await scheduleSlice()
        }
    }

    /// Whatever this turn did may have left stale pages (a start without page files, a large merge,
    /// a slice that ran out of time): the next slice is due at once, so the next turn writes it
    /// after it has looked at inotify and the signals. Not while a merge is read in slices: a page
    /// it touches would be written again by its next slice (a drain still writes its own page).
    func scheduleSlice() async {
        let left = await workspace.stalePages
        switch backlog.update(left: left) {
        case .started:
            log.info("writing \(left) page(s) in slices of at most \(PageBacklog.slice().milliseconds) ms; captures are drained between them")
        case .finished(let n, let ns):
            log.info("wrote the \(n) page(s) left to write in \(formatDuration(ns))")
            publishStatus()
        case .none:
            break
        }
        deadlines.pageSlice = left > 0 && !merge.active ? monotonicNanoseconds() : nil
        if backlog.active || merge.active, monotonicNanoseconds() - lastStatusNs >= 200_000_000 { publishStatus() }
    }

    private var isWaitingToRetry: Bool {
        deadlines.retry.map { monotonicNanoseconds() < $0 } ?? false
    }

    /// Reads the signalfd; returns the exit status when asked to stop.
    private func handleSignals(_ wake: inout Wake) -> Int32? {
        for s in signals.read() {
            switch s.signo {
            case SIGTERM, SIGINT:
                log.info("received \(s.signo == SIGTERM ? "SIGTERM" : "SIGINT") from pid \(s.pid): stopping")
                return 0
            case SIGHUP:
                wake.rescan = true
                wake.rescanWhy.append("SIGHUP from pid \(s.pid): outld.conf read again (journal-file-format, page-properties and the workspace take a restart)")
            case SIGUSR1:
                wake.drain = true
                backoff.succeeded()  // an explicit request retries now, not after the backoff
                deadlines.retry = nil
            default:
                break
            }
        }
        return nil
    }

    private func runDueTimers(_ wake: inout Wake) async {
        let now = monotonicNanoseconds()
        if Deadlines.isDue(deadlines.retry, now: now) { wake.drain = true }
        if Deadlines.isDue(deadlines.attachmentWait, now: now) { wake.drain = true; deadlines.attachmentWait = nil }
        if Deadlines.isDue(deadlines.moreToList, now: now) { wake.drain = true; deadlines.moreToList = nil }
        if Deadlines.isDue(deadlines.judgeWaiting, now: now) {
            await judgeWaiting()
            await projectDirtyPages()
        }
        if Deadlines.isDue(deadlines.mergeSlice, now: now) {
            deadlines.mergeSlice = nil
            await mergeOtherDevices()
            if !merge.active {
                await judgeWaiting()
                await projectDirtyPages()
            }
        }
        // A capture to drain goes first: the drain's own pass writes its page, then a slice of the
        // backlog, and the next slice is scheduled after it.
        if Deadlines.isDue(deadlines.pageSlice, now: now), !wake.drain {
            deadlines.pageSlice = nil
            await projectDirtyPages()
        }
        if Deadlines.isDue(deadlines.ringRelease, now: now) {
            io.releaseRing()
            deadlines.ringRelease = nil
        }
    }

    /// What one read of the inotify queue found.
    private struct WatchBatch {
        var wake = Wake()
        var arrivals = 0
        /// The last event for a path wins: it says who wrote the bytes now there.
        var changedPages: [String: PageFileOrigin] = [:]
        var opsChanged = false
    }

    /// Reads pending inotify events (waiting out a short settle window for bursts), merges what
    /// other devices' op logs gained, and reconciles the page files that changed.
    private func handleWatchEvents() async -> Wake {
        var batch = WatchBatch()
        let start = monotonicNanoseconds()
        while true {
            do { try readWatchEvents(into: &batch) } catch {
                log.warning("reading inotify events: \(error)")
                return Wake(drain: true, rescan: true, rescanWhy: ["inotify events could not be read (\(error))"])
            }
            guard batch.arrivals > 1, monotonicNanoseconds() - start < RunningDaemon.settleCap else { break }
            var p = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, RunningDaemon.settleQuietMs) <= 0 { break }  // quiet (or interrupted): go
        }
        // Other devices' ops first, so a page they projected is explained by them, not taken as edits.
        if batch.opsChanged { await mergeOtherDevices() }
        // Each changed file marked, then one pass for them all (one per file would write a slice
        // of any backlog each time); a merge under way does not hold back a person's edit.
        for (path, origin) in batch.changedPages.sorted(by: { $0.key < $1.key }) {
            do { try await workspace.reconcile(path: path, origin: origin, project: false) } catch { log.warning("reconcile \(path): \(error)") }
        }
        // With a capture to drain, the drain's pass takes them (after its own page).
        if !batch.changedPages.isEmpty && !batch.wake.drain {
            do { _ = try await workspace.projectDirtyPages() } catch { log.warning("projection: \(error)") }
        }
        if !batch.changedPages.isEmpty || batch.opsChanged {
            if batch.wake.drain {
                deadlines.judgeWaiting = monotonicNanoseconds()  // the next turn, after the drain
            } else {
                await judgeWaiting()
                await projectDirtyPages()
            }
        }
        return batch.wake
    }

    private func readWatchEvents(into batch: inout WatchBatch) throws {
        for e in try watcher.readEvents() {
            switch e {
            case .captureArrived: batch.wake.drain = true; batch.arrivals += 1
            case .overflow:
                batch.wake.rescan = true
                batch.wake.rescanWhy.append("the kernel dropped inotify events (queue overflow)")
            case .inboxGone(let dir):
                log.warning("inbox \(dir) was removed; creating it again")
                do { try prepareInbox(dir) } catch { log.error("cannot re-create inbox \(dir): \(error)") }
                batch.wake.drain = true
            case .inboxReturned: batch.wake.drain = true
            case .pageChanged(let path, let origin): batch.changedPages[path] = origin
            case .opsChanged: batch.opsChanged = true
            case .opsGone, .ownGone:
                // Made (or set right) again and watched; the merge finds what is there now, and this
                // device's own op log is written again from its archive.
                watchOpDirectory()
                let own = Path.join(config.workspaceRoot, ".outl")
                for inbox in config.drainedInboxes where DirectoryWalk.components(of: inbox, below: own) != nil {
                    do { try prepareInbox(inbox) } catch { log.warning("cannot prepare inbox \(inbox): \(error)") }
                }
                batch.opsChanged = true
                batch.wake.drain = true
            case .pagesGone(let dir):
                unwatchedPageDirectories.insert(Path.lastComponent(dir))
                watchPageDirectories()
            case .fileRemoved: break
            }
        }
    }

    /// Re-reads outld.conf and the environment (SIGHUP): inboxes added there are watched and
    /// drained from now on. The workspace itself cannot change under a running daemon.
    private func reloadConfig() {
        let fresh: OutlConfig
        do {
            fresh = try options.resolveConfig()
        } catch {
            log.warning("keeping the old configuration: \(error)")
            return
        }
        var inboxes = fresh.drainedInboxes
        if fresh.workspaceRoot != config.workspaceRoot {
            log.warning("the configured workspace changed to \(fresh.workspaceRoot); restart outld to switch (still serving \(config.workspaceRoot))")
            inboxes.removeAll { $0 == OutlConfig.inboxOf(root: fresh.workspaceRoot) }
            inboxes.insert(OutlConfig.inboxOf(root: config.workspaceRoot), at: 0)
        }
        if fresh.journalFileFormat != config.journalFileFormat {
            log.warning("journal-file-format changed; restart outld to switch (new days are still named as before)")
        }
        if fresh.pageProperties != config.pageProperties {
            log.warning("page-properties changed; restart outld to switch (pages are still written as before)")
        }
        for inbox in inboxes where !config.drainedInboxes.contains(inbox) {
            log.info("now draining inbox \(inbox)")
        }
        for inbox in config.drainedInboxes where !inboxes.contains(inbox) {
            watcher.unwatch(inbox)
            log.info("no longer draining inbox \(inbox)")
        }
        config.drainedInboxes = inboxes
    }

    /// Makes an inbox there again and watches it; the workspace's own inbox (below .outl), if a peer
    /// replaced it by a link or a file, is set right first (Workspace.setRightOwnDirectory).
    private func prepareInbox(_ inbox: String) throws {
        try WorkspaceStart.setRightOwnDirectory(inbox, config, log: log, mode: 0o700)
        try Inbox.ensure(inbox, workspace: config.workspaceRoot)
        try watcher.watchInbox(inbox)
    }

    /// `.outl` and `.outl/ops` made (set right if a peer replaced them) and watched again: after one
    /// went away (with the inboxes below `.outl`), and at a rescan.
    func watchOpDirectory() {
        let root = config.workspaceRoot, ops = Path.join(root, ".outl/ops")
        do {
            try WorkspaceStart.setRightOwnDirectory(ops, config, log: log, mode: 0o755)
            try watcher.watchOps(ops)
            try watcher.watchOwn(Path.join(root, ".outl"))
        } catch { log.error("cannot watch \(ops) again: \(error); other devices' ops are merged at the next rescan") }
    }

    /// `dir` (journals or pages) made if missing and watched, without following a link: false (and
    /// not watched) when a link or a file stands there, a peer's doing that only its pages pay for.
    static func watchPages(_ dir: String, root: String, watcher: InotifyWatcher) throws -> Bool {
        let path = Path.join(root, dir)
        do { try DirectoryWalk.open(path, beneath: root, create: 0o755).close() } catch is UnsafeComponent { return false }
        try watcher.watchPages(path)
        return true
    }

    /// Page directories not watched since they were found not to be directories.
    var unwatchedPageDirectories: Set<String> = []

    /// Watches the page directories that are directories again (called as failing pages are retried).
    func watchPageDirectories() {
        for dir in unwatchedPageDirectories.sorted() {
            if (try? RunningDaemon.watchPages(dir, root: config.workspaceRoot, watcher: watcher)) == true {
                unwatchedPageDirectories.remove(dir)
                log.info("\(Path.join(config.workspaceRoot, dir)) is a directory again: hand edits in it are watched")
            }
        }
    }

    /// Merges what other devices' op files gained, a slice of it: the pages it touches are dirty,
    /// and the caller projects them once the merge is done. A merge that stops with more to read
    /// goes on at the next turn of the loop (`deadlines.mergeSlice`). One journal entry per device
    /// that brought new ops, when the merge is done, for all its slices.
    private func mergeOtherDevices() async {
        let slice: MergeReport
        do { slice = try await workspace.mergeForeignOps(slice: MergeProgress.slice()) } catch {
            log.warning("merging other devices' ops: \(error)")
            // A merge under way tries again in a second (the op directory may be back by then).
            deadlines.mergeSlice = merge.active ? monotonicNanoseconds() + 1_000_000_000 : nil
            return
        }
        let report: MergeReport
        switch merge.add(slice) {
        case .started:
            deadlines.mergeSlice = monotonicNanoseconds()
            log.info("merging other devices' ops in slices of at most \(MergeProgress.slice().milliseconds) ms (about \(slice.bytesLeft >> 20) MiB to read); captures are drained between them")
            publishStatus()
            return
        case .going:
            deadlines.mergeSlice = monotonicNanoseconds()
            if monotonicNanoseconds() - lastStatusNs >= 200_000_000 { publishStatus() }
            return
        case .finished(let whole, let slices, let ns):
            deadlines.mergeSlice = nil
            report = whole
            if slices > 1 { log.info("merged \(whole.read) ops read in \(slices) slices over \(formatDuration(ns))") }
        }
        for name in report.reread {
            log.info("\(name) changed before what was already read; read it again from its start")
        }
        reportStampsAhead(report.heldBack)
        guard report.applied > 0 else { publishStatus(); return }
        for (device, n) in report.appliedByActor.sorted(by: { $0.key < $1.key }) {
            let d = report.byDevice[device] ?? DeviceMerge()
            log.merged(device: device, ops: n, created: d.created, edited: d.edited, moved: d.moved, deleted: d.deleted,
                       deletedBlocks: d.deletedBlocks.map { ($0.id, $0.firstWords) }, pages: report.dirtyPages,
                       takenAway: (d.takenAwayCount, d.takenAway))
        }
        lastMerge = report.appliedByActor.count == 1
            ? "merged \(report.applied) ops from device \(report.appliedByActor.keys.first!.prefix(8))…"
            : "merged \(report.applied) ops from \(report.appliedByActor.count) devices"
        publishStatus()
    }

    /// One warning per device whose ops were stamped beyond the clock's bound (at the boot, or in a merge).
    func reportStampsAhead(_ held: HeldBackStamps) {
        for (device, a) in held.sorted(by: { $0.key < $1.key }) {
            log.clockAhead(device: device, ops: a.ops, stamp: StampsAhead.spelled(a.furthest),
                           ahead: StampsAhead.spelled(a.aheadMs), aheadMs: a.aheadMs, kind: a.kind, target: a.id,
                           bound: StampsAhead.spelled(HLClock.maxAhead))
        }
    }

    /// Judges the page files that wait for other devices' ops, and sets when to judge them next;
    /// not while a merge is read in slices (they wait for its end, which judges them).
    private func judgeWaiting() async {
        if !unwatchedPageDirectories.isEmpty { watchPageDirectories() }
        guard !merge.active else { deadlines.judgeWaiting = nil; return }
        do {
            deadlines.judgeWaiting = try await workspace.judgeWaiting()
                .map { monotonicNanoseconds() + UInt64($0) * 1_000_000 + 1_000_000 }
        } catch {
            log.warning("judging synced page files: \(error)")
            deadlines.judgeWaiting = monotonicNanoseconds() + 1_000_000_000
        }
    }

    /// Writes the stale pages (a slice of them); not while a merge is read in slices (its end does).
    private func projectDirtyPages() async {
        guard !merge.active else { return }
        do { _ = try await workspace.projectDirtyPages() } catch { log.warning("projection: \(error)") }
        await scheduleNextPageJudgement()
    }

    /// A pass may leave a page waiting or failing (its retry then has a time): judged again when due,
    /// whatever pass left it so, not only after the next event.
    private func scheduleNextPageJudgement() async {
        guard let ms = await workspace.nextPageJudgementMs else { return }
        let at = monotonicNanoseconds() + UInt64(ms) * 1_000_000 + 1_000_000
        deadlines.judgeWaiting = min(deadlines.judgeWaiting ?? at, at)
    }

    func drainNow() async {
        let report = await DrainPass.run(config.drainedInboxes, workspace: workspace, io: io, observer: drainLog,
                                         log: log, options: drainOptions)
        if io.holdsRing { deadlines.ringRelease = monotonicNanoseconds() + RunningDaemon.ringIdleRelease }
        deadlines.moreToList = report.owesAnotherPass ? monotonicNanoseconds() : nil
        await scheduleNextPageJudgement()
        // A capture waiting for its attachments is looked at again when it is due to be set aside
        // (an attachment arriving before that wakes the loop through inotify).
        deadlines.attachmentWait = report.nextRetryAt.map { at in
            monotonicNanoseconds() + UInt64(max(0, at - time(nil)) + 1) * 1_000_000_000
        }
        for line in report.refusedInboxes where !lastRefused.contains(line) { log.error(line) }
        lastRefused = Set(report.refusedInboxes)
        // A bad file that rejected/ could not take for want of space is retried like any transient
        // error; one kept by a person's problem (rejected/ is a file or a link) waits for the next pass.
        let stuck = report.unsettled.first { $0.blocker == .transient }.map { "\($0.path): \($0.why)" }
        if let err = report.transientError ?? stuck {
            let wait = backoff.failed()
            deadlines.retry = monotonicNanoseconds() + wait
            let now = monotonicNanoseconds()
            if err != lastError {
                log.error("drain deferred \(report.deferred) capture(s): \(err); retrying in \(formatDuration(wait))", id: .retrying)
                failingSince = now
                failedAttempts = 0
                lastErrorLogged = now
            } else if now - lastErrorLogged >= RunningDaemon.errorReminder {
                // A long outage (a full disk) is said again now and then, not once and then never.
                log.error("drain still deferred after \(failedAttempts + 1) attempts over \(formatDuration(now - failingSince)): "
                          + "\(report.deferred) capture(s) waiting: \(err); retrying in \(formatDuration(wait))", id: .retrying)
                lastErrorLogged = now
            }
            failedAttempts += 1
            lastError = err
        } else {
            if lastError != nil { log.info("drain recovered: the inbox drains again") }
            backoff.succeeded()
            deadlines.retry = nil
            lastError = nil
        }
        publishStatus()
    }

    func publishStatus() {
        let waiting = pending_count(config.drainedInboxes, workspace: config.workspaceRoot)
        var s = deadlines.retry != nil ? "retrying in \(formatDuration(backoff.delay))"
            : merge.active ? merge.status : backlog.active ? backlog.status : "idle"
        s += "; \(drainLog.drained) drained, \(drainLog.rejected) rejected, "
        s += waiting == 0 ? "inbox empty" : "\(waiting) waiting"
        if let m = lastMerge { s += "; \(m)" }
        if let e = lastError { s += "; last error: \(e)" }
        lastStatusNs = monotonicNanoseconds()
        ServiceNotifier.status(s)
    }

    private func pingWatchdogIfDue() {
        guard let every = watchdogEvery else { return }
        let now = monotonicNanoseconds()
        if Deadlines.isDue(deadlines.watchdog, now: now) {
            ServiceNotifier.watchdog()
            deadlines.watchdog = now + every
        }
    }

    /// Sleeps until the next thing owed: -1 when idle without a watchdog (no wake-ups at all).
    private func pollTimeoutMs() -> Int32 {
        guard let d = deadlines.earliest else { return -1 }
        let now = monotonicNanoseconds()
        if d <= now { return 0 }
        return Int32(min((d - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
}
