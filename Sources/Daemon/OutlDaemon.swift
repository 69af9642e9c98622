// OutlDaemon: outld's foreground service. Start in order (log, signals, workspace + lock, watches,
// first drain, READY=1), loop on inotify/signalfd with no polling, stop in reverse on SIGTERM.
// Invariant: watches are added before every scan, so a file landing in between is never missed;
// the watchdog is pinged from this loop, so a stuck drain stops the pings and systemd restarts us.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureInbox
import Drain
import OutlConfig
import SystemCalls
import Workspace

public final class OutlDaemon {
    let options: DaemonOptions
    var config: OutlConfig
    let log: JournalLog
    let signals: SignalSource
    let drainLog: DrainLog
    var io: BatchIO
    var workspace: Workspace!
    var watcher: InotifyWatcher!
    var backoff = Backoff()
    var retryAt: UInt64? = nil          // monotonic ns of the next retry after a transient error
    var watchdogEvery: UInt64? = nil    // ns between WATCHDOG=1 pings (half of WatchdogSec)
    var lastPing: UInt64 = 0
    var lastError: String? = nil
    /// When to let go of the io_uring ring (and the kernel worker it keeps): a while after the
    /// last drain, so a quiet daemon is fully quiet yet a burst keeps its ring.
    var ringReleaseAt: UInt64? = nil
    /// When page files whose changes wait for other devices' ops are due to be judged again.
    var judgeWaitingAt: UInt64? = nil
    /// Other devices' ops merged since start, and what the last merge did (for STATUS=).
    var merged = 0
    var lastMerge: String? = nil
    static let ringIdleRelease: UInt64 = 10_000_000_000
    let drainOptions = DrainOptions.fromEnvironment()

    /// The settle window: when a wake-up brings several arrivals at once (a burst is under way),
    /// wait until the inbox has been quiet this long (capped at `settleCap`) so the burst becomes
    /// one batch with one fdatasync. A lone arrival is drained at once: its latency is the point.
    static let settleQuietMs: Int32 = 1
    static let settleCap: UInt64 = 5_000_000

    public init(options: DaemonOptions, config: OutlConfig, log: JournalLog, signals: SignalSource) {
        self.options = options
        self.config = config
        self.log = log
        self.signals = signals
        self.drainLog = DrainLog(log)
        self.io = BatchIO.make(forcePlain: options.io == .plain)
    }

    /// Runs until SIGTERM/SIGINT; returns the exit status.
    public func run() async -> Int32 {
        let root = config.workspaceRoot
        if options.io == .uring && io.backend != .uring {
            log.error("io_uring was asked for (--io uring) but the kernel refused it")
            return 69
        }
        // 1. The workspace (created on first start) and the device's write lock.
        if let status = WorkspaceStart.prepare(config, createNamed: true, log: log) { return status }
        var wopts = WorkspaceStart.options(config, io: io, log: log)
        var lastExtend: UInt64 = 0
        wopts.bootProgress = { read, total in
            // A large workspace may take longer than TimeoutStartSec: ask for more, each second.
            let now = monotonicNanoseconds()
            if now - lastExtend > 1_000_000_000 {
                lastExtend = now
                ServiceNotifier.extendTimeout(usec: 5_000_000)
                ServiceNotifier.status("booting; \(read / 1_000_000) of \(total / 1_000_000) MB of op log read")
            }
        }
        do {
            workspace = try Workspace(options: wopts)
        } catch let WorkspaceError.locked(pid) {
            let who = pid.map { "outld (pid \($0))" } ?? "another process"
            log.error("workspace \(root) is already served by \(who); not starting a second write actor")
            return 75
        } catch {
            log.error("cannot open the workspace \(root): \(error)")
            return WorkspaceStart.status(of: error)
        }

        // 2. Watches before the first scan.
        do {
            watcher = try InotifyWatcher()
            for inbox in config.drainedInboxes { try prepareInbox(inbox) }
            for dir in ["journals", "pages"] {
                let path = Path.join(root, dir)
                try Durable.makeDirectory(path, mode: 0o755)
                try watcher.watchPages(path)
            }
            let opsDir = Path.join(root, ".outl/ops")
            try Durable.makeDirectory(opsDir, mode: 0o755)
            try watcher.watchOps(opsDir)
        } catch {
            log.error("cannot watch the inboxes of \(root): \(error)")
            await workspace.close()
            return 69
        }
        sweep_stale_temps(config.drainedInboxes)
        do {
            if try SyncIgnore.writeIfMissing(root: root) {
                log.info("wrote \(Path.join(root, ".stignore")) so Syncthing keeps outld's temporaries on this device")
            }
        } catch { log.warning("could not write \(Path.join(root, ".stignore")): \(error)") }

        // 3. Hand edits made while we were down, then the first full drain.
        await mergeOtherDevices()
        do { try await workspace.reconcileAll() } catch { log.warning("reconcile at boot: \(error)") }
        await judgeWaiting()
        await drainNow()
        if let us = ServiceNotifier.watchdogInterval() { watchdogEvery = us * 1000 / 2 }
        ServiceNotifier.ready()
        log.info("ready: workspace \(root), \(config.drainedInboxes.count) inbox(es), io \(io.backend)",
                 fields: ["OUTL_WORKSPACE": root])
        publishStatus()

        // 4. The loop.
        let status = await loop()

        // 5. Stop in reverse.
        ServiceNotifier.stopping()
        log.info("stopping: \(drainLog.drained) drained, \(drainLog.rejected) rejected")
        await workspace.close()
        return status
    }

    /// Re-reads outld.conf and the environment (SIGHUP): inboxes added there are watched and
    /// drained from now on. The workspace itself cannot change under a running daemon.
    func reloadConfig() {
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
        for inbox in inboxes where !config.drainedInboxes.contains(inbox) {
            log.info("now draining inbox \(inbox)")
        }
        for inbox in config.drainedInboxes where !inboxes.contains(inbox) {
            watcher.unwatch(inbox)
            log.info("no longer draining inbox \(inbox)")
        }
        config.drainedInboxes = inboxes
    }

    /// Creates an inbox if it is missing (a writer may not have run yet) and watches it.
    func prepareInbox(_ inbox: String) throws {
        try Inbox.ensure(inbox)
        try watcher.watchInbox(inbox)
    }

    private func loop() async -> Int32 {
        var fds = [pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            pingWatchdog()
            let timeout = pollTimeoutMs()
            fds[0].revents = 0
            fds[1].revents = 0
            let n = poll(&fds, 2, timeout)
            if n < 0 && errno != EINTR {
                log.error("poll failed: \(Errno.current)")
                return 70
            }
            var wantDrain = false
            var wantRescan = false
            for s in signals.read() {
                switch s.signo {
                case SIGTERM, SIGINT:
                    log.info("received \(s.signo == SIGTERM ? "SIGTERM" : "SIGINT") from pid \(s.pid): stopping")
                    return 0
                case SIGHUP:
                    wantRescan = true
                case SIGUSR1:
                    wantDrain = true
                    backoff.succeeded()  // an explicit request retries now, not after the backoff
                    retryAt = nil
                default:
                    break
                }
            }
            if fds[0].revents != 0 {
                let (drain, rescan) = await handleWatchEvents(settle: true)
                wantDrain = wantDrain || drain
                wantRescan = wantRescan || rescan
            }
            if let r = retryAt, monotonicNanoseconds() >= r { wantDrain = true }
            if let t = judgeWaitingAt, monotonicNanoseconds() >= t {
                await judgeWaiting()
                do { _ = try await workspace.projectDirtyPages() } catch { log.warning("projection: \(error)") }
            }
            if let t = ringReleaseAt, monotonicNanoseconds() >= t {
                io.releaseRing()
                ringReleaseAt = nil
            }
            if wantRescan {
                reloadConfig()
                log.info("rescanning (SIGHUP or inotify overflow)")
                for inbox in config.drainedInboxes { try? prepareInbox(inbox) }
                sweep_stale_temps(config.drainedInboxes)
                await mergeOtherDevices()
                do { try await workspace.reconcileAll() } catch { log.warning("reconcile: \(error)") }
                await judgeWaiting()
                wantDrain = true
            }
            if wantDrain && (retryAt == nil || monotonicNanoseconds() >= retryAt!) {
                await drainNow()
            }
        }
    }

    /// Reads pending inotify events (waiting out a short settle window for bursts).
    /// Returns whether a drain and/or a full rescan is due.
    private func handleWatchEvents(settle: Bool) async -> (Bool, Bool) {
        var drain = false, rescan = false
        let start = monotonicNanoseconds()
        var changedPages: [String: PageFileOrigin] = [:]
        var opsChanged = false
        var arrivals = 0
        while true {
            let events: [WatchEvent]
            do { events = try watcher.readEvents() } catch {
                log.warning("reading inotify events: \(error)")
                return (true, true)
            }
            for e in events {
                switch e {
                case .captureArrived: drain = true; arrivals += 1
                case .overflow: rescan = true
                case .inboxGone(let dir):
                    log.warning("inbox \(dir) was removed; creating it again")
                    do { try prepareInbox(dir) } catch { log.error("cannot re-create inbox \(dir): \(error)") }
                    drain = true
                case .inboxReturned: drain = true
                // The last event for a path wins: it says who wrote the bytes now there.
                case .pageChanged(let path, let origin): changedPages[path] = origin
                case .opsChanged: opsChanged = true
                case .fileRemoved: break
                }
            }
            guard settle, arrivals > 1, monotonicNanoseconds() - start < OutlDaemon.settleCap else { break }
            var p = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, OutlDaemon.settleQuietMs) <= 0 { break }
        }
        // Other devices' ops first, so a page they projected is explained by them, not taken as edits.
        if opsChanged { await mergeOtherDevices() }
        for (path, origin) in changedPages.sorted(by: { $0.key < $1.key }) {
            do { try await workspace.reconcile(path: path, origin: origin) } catch { log.warning("reconcile \(path): \(error)") }
        }
        if !changedPages.isEmpty || opsChanged {
            await judgeWaiting()
            do { _ = try await workspace.projectDirtyPages() } catch { log.warning("projection: \(error)") }
        }
        return (drain, rescan)
    }

    /// Merges what other devices' op files gained; the pages it touches are dirty, and the caller
    /// projects them. One journal entry per device that brought new ops.
    private func mergeOtherDevices() async {
        let report: MergeReport
        do { report = try await workspace.mergeForeignOps() } catch {
            log.warning("merging other devices' ops: \(error)")
            return
        }
        for name in report.reread {
            log.info("\(name) changed before what was already read; read it again from its start")
        }
        guard report.applied > 0 else { return }
        for (device, n) in report.appliedByActor.sorted(by: { $0.key < $1.key }) {
            log.info("merged \(n) op\(n == 1 ? "" : "s") from device \(device)", id: .merged,
                     fields: ["OUTL_DEVICE": device, "OUTL_MERGED_OPS": "\(n)",
                              "OUTL_PAGES": report.dirtyPages.joined(separator: " ")])
        }
        merged += report.applied
        lastMerge = report.appliedByActor.count == 1
            ? "merged \(report.applied) ops from device \(report.appliedByActor.keys.first!.prefix(8))…"
            : "merged \(report.applied) ops from \(report.appliedByActor.count) devices"
        publishStatus()
    }

    /// Judges the page files that wait for other devices' ops, and sets when to judge them next.
    private func judgeWaiting() async {
        do {
            if let ms = try await workspace.judgeWaiting() {
                judgeWaitingAt = monotonicNanoseconds() + UInt64(ms) * 1_000_000 + 1_000_000
            } else {
                judgeWaitingAt = nil
            }
        } catch {
            log.warning("judging synced page files: \(error)")
            judgeWaitingAt = monotonicNanoseconds() + 1_000_000_000
        }
    }

    private func drainNow() async {
        log.holdLines()
        let report = await drain_capture_inbox(config.drainedInboxes, into: workspace, io: io,
                                               observer: drainLog, options: drainOptions)
        log.releaseLines()
        drainLog.passFinished()
        if io.holdsRing { ringReleaseAt = monotonicNanoseconds() + OutlDaemon.ringIdleRelease }
        if let err = report.transientError {
            let wait = backoff.failed()
            retryAt = monotonicNanoseconds() + wait
            if err != lastError {
                log.error("drain deferred \(report.deferred) capture(s): \(err); retrying in \(formatDuration(wait))")
            }
            lastError = err
        } else {
            if lastError != nil { log.info("drain recovered: the inbox drains again") }
            backoff.succeeded()
            retryAt = nil
            lastError = nil
        }
        publishStatus()
    }

    private func publishStatus() {
        let waiting = pending_count(config.drainedInboxes)
        var s = retryAt == nil ? "idle" : "retrying in \(formatDuration(backoff.delay))"
        s += "; \(drainLog.drained) drained, \(drainLog.rejected) rejected, "
        s += waiting == 0 ? "inbox empty" : "\(waiting) waiting"
        if let m = lastMerge { s += "; \(m)" }
        if let e = lastError { s += "; last error: \(e)" }
        ServiceNotifier.status(s)
    }

    private func pingWatchdog() {
        guard let every = watchdogEvery else { return }
        let now = monotonicNanoseconds()
        if now - lastPing >= every {
            ServiceNotifier.watchdog()
            lastPing = now
        }
    }

    /// Sleep until the next thing we owe someone: a watchdog ping, a retry, or letting go of the
    /// ring. -1 when idle without a watchdog: no wake-ups at all.
    private func pollTimeoutMs() -> Int32 {
        let now = monotonicNanoseconds()
        var deadline: UInt64? = nil
        if let every = watchdogEvery { deadline = lastPing + every }
        if let r = retryAt { deadline = min(deadline ?? r, r) }
        if let t = ringReleaseAt { deadline = min(deadline ?? t, t) }
        if let t = judgeWaitingAt { deadline = min(deadline ?? t, t) }
        guard let d = deadline else { return -1 }
        if d <= now { return 0 }
        return Int32(min((d - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
}

func formatDuration(_ ns: UInt64) -> String {
    ns >= 1_000_000_000 ? "\(ns / 1_000_000_000) s" : "\(ns / 1_000_000) ms"
}
