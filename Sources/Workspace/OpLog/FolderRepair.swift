// FolderRepair: sets right a directory of this device's own in the workspace (`.outl`, `.outl/ops`,
// `.outl/tmp`, the workspace inbox) that a peer or a sync tool replaced by a link, a FIFO or a file:
// refused, it would stop the service at every start. The entry is taken away without being followed
// (OwnDirectory), a regular file's bytes set aside (SetAside, durably, before the file is removed), and
// each repair said once: a warning with its own journal entry, and a notice for `outl status`. Read-only
// opens have none (nothing is changed).
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class FolderRepair {
    /// The directories below the workspace that only outl writes into.
    static let ownPrefix = ".outl"

    let root: String
    let setAside: SetAside
    let log: WorkspaceLog
    /// Told each repair's sentence (WorkspaceCore records it for `outl status`).
    var onRepair: ((String) -> Void)?

    init(root: String, setAside: SetAside, log: WorkspaceLog) {
        self.root = root
        self.setAside = setAside
        self.log = log
    }

    /// `rel` (below `.outl`) opened from the workspace, made when missing, set right when not a directory.
    func open(_ rel: String, mode: mode_t = 0o755) throws -> FileDescriptor {
        let path = Path.join(root, rel)
        do {
            return try OwnDirectory.open(path, beneath: root, mode: mode, keepingUpTo: SetAside.maxFileBytes, removing: removing)
        } catch let e as Errno { throw WorkspaceError.io(e, path: path) }
    }

    /// Keeps a regular file's bytes and says what is removed where an own directory belongs
    /// (OwnDirectory removes it only after this returns).
    func removing(_ r: OwnDirectory.Found) {
        var kept = ""
        if let bytes = r.bytes, !bytes.isEmpty {
            do { kept = "; its bytes are kept in " + (try setAside.keep(bytes, what: Path.lastComponent(r.path))) }
            catch { kept = "; its bytes could not be kept (\(error))" }
        }
        let message = "\(r.path) was \(r.what), where outl's own directory belongs (a peer's or a sync tool's doing): "
            + "removed without following it, and the directory made again\(kept)"
        log.warning(message, [WorkspaceLog.event: WorkspaceLog.folderRepaired, "OUTL_PATH": r.path])
        onRepair?(message)
    }

    /// HeldDirectories' hook: its directories below `.outl` are set right the same way.
    var heldDirectoriesHook: (prefix: String, keepingUpTo: Int, removing: (OwnDirectory.Found) -> Void) {
        (FolderRepair.ownPrefix, SetAside.maxFileBytes, { [weak self] r in self?.removing(r) })
    }
}
