// WorkspaceStart: what outld and `outld --once` do before they open the workspace, in one place.
// The daemon creates its workspace on first start, and the log says so; `--once` (a script's
// one-shot) never creates one, wherever its path came from, so a typo never becomes a directory.
// Nothing a peer can put inside the workspace stops a start: outl's own directories replaced by a
// link or a file are set right by the boot (FolderRepair), and anything else costs only what lives
// there. Each failure maps to the sysexits status that says what it is (Sysexits, shared by every
// program): 73 no such workspace, 77 permission or a read-only file system, 74 a full or failing
// disk, 69 unusable otherwise.
#if canImport(Glibc)
import Glibc
#endif
import BatchIO
import CaptureInbox
import OutlConfig
import SystemCalls
import Workspace

enum WorkspaceStart {
    /// nil when the workspace directory is there (or was just created); else the exit status,
    /// after logging why. `create`: make a missing workspace (the daemon only).
    static func prepare(_ config: OutlConfig, create: Bool, log: JournalLog) -> Int32? {
        let root = config.workspaceRoot
        let e: Errno
        do {
            let st = try Sys.statFollowingLinks(root)
            if st.st_mode & S_IFMT == S_IFDIR { return nil }
            log.error("the workspace \(root) is not a directory")
            return 73
        } catch {
            e = error as? Errno ?? Errno.EIO
        }
        guard e == .ENOENT else {
            log.error("cannot reach the workspace \(root): \(e)")
            return status(of: e)
        }
        // Only the daemon creates a workspace: `--once` (cron, a script, the drain path unit) must not
        // make a typo'd or not-yet-synced one every minute.
        if !create {
            log.error(OutlConfig.missingWorkspace(root, origin: config.workspaceOrigin))
            return 73
        }
        do {
            try Durable.makeDirectory(root, mode: 0o755)
        } catch {
            log.error("cannot create the workspace \(root): \(error)")
            return status(of: error)
        }
        log.info("created the workspace \(root) (from \(config.workspaceOrigin.rawValue)): it did not exist",
                 fields: ["OUTL_WORKSPACE": root])
        return nil
    }

    /// What other devices deleted here while no outld ran (Workspace.deletedWhileAway), said once
    /// at the start as a live merge says it.
    static func sayDeletedWhileAway(_ byDevice: [String: DeviceMerge], log: JournalLog) {
        for (device, d) in byDevice.sorted(by: { $0.key < $1.key }) {
            log.deletedHere(device: device, deleted: d.deleted, deletedBlocks: d.deletedBlocks.map { ($0.id, $0.firstWords) }, whileAway: true)
            log.takenAwayHere(device: device, count: d.takenAwayCount, shown: d.takenAway)
        }
    }

    /// The options every outld opening uses: the configured state directory and the workspace's
    /// own notes in outld's log (under outld's name, not outl's).
    static func options(_ config: OutlConfig, log: JournalLog) -> WorkspaceOptions {
        var w = WorkspaceOptions(root: config.workspaceRoot)
        w.stateDirectory = config.stateDirectory
        w.journalFileFormat = config.journalFileFormat.flatMap(JournalFileFormat.init(setting:))
        w.pageProperties = config.pageProperties.flatMap(PageProperties.init(setting:)) ?? .none
        w.log = workspaceLog(log)
        w.onPageFailure = { f, recovered in log.pageFailure(path: f.path, reason: f.reason, recovered: recovered) }
        // A pass never holds the loop (or a --once drain) for more than a slice: what is left is
        // written by the passes after it.
        w.pageSlice = PageBacklog.slice()
        return w
    }

    /// One way to say what happened: the workspace's levels and fields become journal entries.
    /// The events with a catalog entry of their own are named by the workspace (OUTL_EVENT).
    static func workspaceLog(_ log: JournalLog) -> WorkspaceLog {
        WorkspaceLog(sink: { level, message, fields in
            switch (level, fields[WorkspaceLog.event]) {
            case (_, WorkspaceLog.concurrentEdit?): log.warning(message, id: .concurrentEdit, fields: fields)
            case (_, WorkspaceLog.broughtBack?): log.warning(message, id: .broughtBack, fields: fields)
            case (_, WorkspaceLog.folderRepaired?): log.warning(message, id: .folderRepaired, fields: fields)
            case (.info, _): log.info(message, fields: fields)
            case (.warning, _): log.warning(message, fields: fields)
            case (.error, _): log.error(message, fields: fields)
            }
        })
    }

    /// Sets right a directory of outl's own that went away or was replaced (Workspace.setRightOwnDirectory).
    static func setRightOwnDirectory(_ dir: String, _ config: OutlConfig, log: JournalLog, mode: mode_t) throws {
        _ = try Workspace.setRightOwnDirectory(dir, root: config.workspaceRoot, stateDirectory: config.stateDirectory,
                                               log: workspaceLog(log), mode: mode)
    }

    /// The exit status for an error opening or preparing the workspace (not the lock: that is 75);
    /// a link inside the workspace where a directory belongs (one not outl's own) is 73.
    static func status(of error: Error) -> Int32 {
        let e: Errno?
        switch error {
        case is UnsafeComponent: return 73
        case let x as Errno: e = x
        case WorkspaceError.io(let x, _), WorkspaceError.archive(let x, _): e = x
        default: e = nil
        }
        guard let code = e?.code else { return Sysexits.unavailable }
        if code == ENOENT || code == ENOTDIR { return Sysexits.cantCreate }
        return Sysexits.of(errno: code, otherwise: Sysexits.unavailable)
    }

    /// Before a drain: an inbox or op log we may not write is a permission problem no retry
    /// fixes (77), said plainly, rather than a drain that defers forever. Only real directories are
    /// asked: a link or a file at one of their names is a peer's, set right or refused on its own.
    static func permissionProblem(_ config: OutlConfig) -> String? {
        func isDirectory(_ path: String) -> Bool { (try? Sys.lstat(path)).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false }
        let ops = Path.join(config.workspaceRoot, ".outl/ops")
        let dirs = config.drainedInboxes + [isDirectory(ops) ? ops : config.workspaceRoot]
        for dir in dirs where isDirectory(dir) || dir == config.workspaceRoot {
            do { try Sys.access(dir, R_OK | W_OK | X_OK) } catch { return "cannot drain \(dir): \(error)" }
        }
        return nil
    }
}
