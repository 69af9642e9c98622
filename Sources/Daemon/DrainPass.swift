// DrainPass: the one drain pass the daemon and `outld --once` share, and what a start owes first.
// Log lines are held while a pass runs so a burst writes them together; trace lines for the
// benchmark are written only after the pass returned, its pages projected.
import BatchIO
import Drain
import OutlConfig
import Workspace

enum DrainPass {
    /// What is owed before the first pass of a start or a rescan: the writer temporaries a killed
    /// writer left, then the hand edits made while nothing watched the pages.
    static func catchUp(_ inboxes: [String], workspace: Workspace, log: JournalLog) async {
        sweep_stale_temps(inboxes, workspace: workspace.root)
        do { try await workspace.reconcileAll() } catch { log.warning("reconcile: \(error)") }
    }

    /// The drain's options: the environment's (for tests and benchmarks), outld.conf's attachment limit.
    static func options(_ config: OutlConfig) -> DrainOptions {
        var o = DrainOptions.fromEnvironment()
        if let limit = config.attachmentLimit { o.attachmentLimit = limit }
        return o
    }

    /// Drains every inbox once through the workspace's write actor.
    static func run(_ inboxes: [String], workspace: Workspace, io: BatchIO, observer: DrainLog,
                    log: JournalLog, options: DrainOptions) async -> DrainReport {
        log.holdLines()
        let report = await drain_capture_inbox(inboxes, into: workspace, io: io, observer: observer, options: options)
        log.releaseLines()
        observer.passFinished(lastPageDurable: await workspace.lastPagePublishedUsec)
        return report
    }
}
