// OutlDaemon: outld's foreground service. Starts in order (log, signals, workspace + lock, watches,
// catch-up and first drain, READY=1), runs the loop of RunningDaemon, and stops in reverse.
// Invariant: the watches are added before the first scan, so a file landing in between is never missed.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureInbox
import OutlConfig
import SystemCalls
import Workspace

public final class OutlDaemon {
    let options: DaemonOptions
    let config: OutlConfig
    let log: JournalLog
    let signals: SignalSource

    public init(options: DaemonOptions, config: OutlConfig, log: JournalLog, signals: SignalSource) {
        self.options = options
        self.config = config
        self.log = log
        self.signals = signals
    }

    /// A start step that failed, after it logged why: the status outld exits with.
    struct StartFailed: Error { let status: Int32 }

    /// Runs until SIGTERM/SIGINT; returns the exit status.
    public func run() async -> Int32 {
        log.info("starting: outld \(outldVersion), pid \(getpid()), workspace \(config.workspaceRoot) (from \(config.workspaceOrigin.rawValue))",
                 id: .started, fields: ["OUTL_WORKSPACE": config.workspaceRoot])
        if let reason = ServiceNotifier.unavailableReason() {
            // systemd waits for READY=1 that could never come: fail now, not at TimeoutStartSec.
            log.error(reason)
            return 69
        }
        let io = BatchIO.make(forcePlain: options.io == .plain)
        let workspace: Workspace, watcher: InotifyWatcher
        do {
            if options.io == .uring && io.backend != .uring {
                log.error("io_uring was asked for (--io uring) but the kernel refused it")
                throw StartFailed(status: 69)
            }
            if let status = WorkspaceStart.prepare(config, create: true, log: log) { throw StartFailed(status: status) }
            workspace = try openWorkspace(io: io)
            do { watcher = try watchWorkspace() } catch {
                await workspace.close()
                throw error
            }
        } catch {
            return (error as? StartFailed)?.status ?? 70
        }
        writeSyncIgnore()

        let daemon = RunningDaemon(options: options, config: config, log: log, signals: signals,
                                   io: io, workspace: workspace, watcher: watcher)
        daemon.unwatchedPageDirectories = unwatchedPageDirectories
        daemon.reportStampsAhead(await workspace.stampsHeldBackAtBoot)
        WorkspaceStart.sayDeletedWhileAway(await workspace.deletedWhileAway, log: log)
        await daemon.catchUp()
        await daemon.drainNow()
        daemon.startWatchdog()
        // The boot's transient memory back to the kernel (main.swift keeps a pad of it otherwise).
        Heap.returnFreed()
        ServiceNotifier.ready()
        log.info("ready: workspace \(config.workspaceRoot), \(config.drainedInboxes.count) inbox(es), io \(io.backend)",
                 id: .ready, fields: ["OUTL_WORKSPACE": config.workspaceRoot])
        // Pages the start left (a device with ops but no page files) are written after READY=1,
        // a slice per turn of the loop.
        await daemon.scheduleSlice()
        daemon.publishStatus()

        let status = await daemon.loop()

        ServiceNotifier.stopping()
        log.info("stopping: \(daemon.drainLog.drained) drained, \(daemon.drainLog.rejected) rejected", id: .stopping)
        await workspace.close()
        return status
    }

    /// Boots the workspace and takes the device's write lock; a large op log asks systemd for more
    /// start time each second, since a boot may outlast TimeoutStartSec.
    private func openWorkspace(io: BatchIO) throws -> Workspace {
        let root = config.workspaceRoot
        var wopts = WorkspaceStart.options(config, log: log)
        var lastExtend: UInt64 = 0
        wopts.bootProgress = { read, total in
            let now = monotonicNanoseconds()
            if now - lastExtend > 1_000_000_000 {
                lastExtend = now
                ServiceNotifier.extendTimeout(usec: 5_000_000)
                ServiceNotifier.status("booting; \(read / 1_000_000) of \(total / 1_000_000) MB of op log read")
            }
        }
        do {
            return try Workspace(options: wopts)
        } catch let WorkspaceError.locked(pid) {
            let who = pid.map { "outld (pid \($0))" } ?? "another process"
            log.error("workspace \(root) is already served by \(who); not starting a second write actor")
            throw StartFailed(status: 75)
        } catch {
            log.error("cannot open the workspace \(root): \(error)")
            throw StartFailed(status: WorkspaceStart.status(of: error))
        }
    }

    /// journals/ or pages/ found not to be directories at the start: watched once they are.
    private var unwatchedPageDirectories: Set<String> = []

    /// Watches every inbox (created if a writer has not run yet), the page folders and the op logs.
    private func watchWorkspace() throws -> InotifyWatcher {
        let root = config.workspaceRoot
        // Each step says what it was doing: a read-only workspace fails at a create, not a watch.
        var step = "start inotify"
        do {
            let watcher = try InotifyWatcher()
            for inbox in config.drainedInboxes {
                step = "create the inbox \(inbox)"
                // An inbox a peer made a link costs only that inbox: each pass says it is refused
                // (the workspace's own, below .outl, the boot set right).
                do { try Inbox.ensure(inbox, workspace: root) } catch is UnsafeComponent { continue }
                step = "watch the inbox \(inbox)"
                try watcher.watchInbox(inbox)
            }
            // A journals/ or pages/ that is not a directory costs only its pages: the page passes
            // say so, and it is watched once it is one again (RunningDaemon.watchPageDirectories).
            for dir in ["journals", "pages"] {
                step = "create \(Path.join(root, dir))"
                if try !RunningDaemon.watchPages(dir, root: root, watcher: watcher) { unwatchedPageDirectories.insert(dir) }
            }
            let opsDir = Path.join(root, ".outl/ops")
            step = "create \(opsDir)"
            try WorkspaceStart.setRightOwnDirectory(opsDir, config, log: log, mode: 0o755)
            step = "watch \(opsDir)"
            try watcher.watchOps(opsDir)
            try watcher.watchOwn(Path.parent(of: opsDir))
            return watcher
        } catch {
            log.error("cannot \(step): \(error)")
            throw StartFailed(status: WorkspaceStart.status(of: error))
        }
    }

    /// Under Syncthing, a .stignore keeps outld's temporaries and device-local files on this device.
    private func writeSyncIgnore() {
        let path = Path.join(config.workspaceRoot, ".stignore")
        do {
            if try SyncIgnore.writeIfMissing(root: config.workspaceRoot) {
                log.info("wrote \(path) so Syncthing keeps outld's temporaries on this device")
            }
        } catch { log.warning("could not write \(path): \(error)") }
    }
}

func formatDuration(_ ns: UInt64) -> String {
    ns >= 1_000_000_000 ? "\(ns / 1_000_000_000) s" : "\(ns / 1_000_000) ms"
}
