// StartCheck: which pages a start (or a rescan) need not read. A page whose file is still at the path
// and with the stamp PageIndex recorded when it was last projected, and whose model still has the
// digest recorded then, shows the model; every other page is checked as before (read, its changes
// taken, written). Limit: an edit in place that keeps the file's size and lands within the same
// timestamp tick as outld's own write leaves the stamp as recorded (since Linux 6.13 a timestamp
// read, as publish reads it, makes the next change's fine-grained, so this needs an older kernel);
// inotify still reports it to a running outld, and it is taken at the page's next projection, which
// reads the file first.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

extension WorkspaceCore {
    /// The digest a PageIndex entry records: the model's (PageDigest) and the page-file limit, which
    /// decides what a file holds back.
    func startDigest(_ id: BlockID) -> UInt64 {
        DigestHasher.mix(model.renderDigest(of: id) &+ UInt64(truncatingIfNeeded: maxPageBytes))
    }

    /// The pages whose file may not show the model: all but those StartCheck finds as last left.
    func pagesToCheckAtStart() -> [BlockID] {
        let dirs = PageDirectories(directories)
        return model.pages.keys.filter { !showsTheModel($0, dirs: dirs) }
    }

    /// The page's file is as last projected and the model renders it as then.
    func showsTheModel(_ id: BlockID, dirs: PageDirectories) -> Bool {
        guard let e = pages.index.entries[id], fileAsLeft(id, e, dirs: dirs) else { return false }
        return startDigest(id) == e.digest
    }

    /// Whether the page's file (or its absence) is at the path and has the stamp `e` recorded, and no
    /// other spelling of it stands beside it.
    func fileAsLeft(_ id: BlockID, _ e: PageIndexEntry, dirs: PageDirectories) -> Bool {
        guard let loc = try? location(of: id, dirs: dirs), loc.otherSpellings.isEmpty,
              PageIndexEntry.pathHash(loc.rel) == e.pathHash else { return false }
        let stamp: FileStamp?
        do {
            guard let d = try dirs.existing(loc.dir) else { return e.stamp == nil }
            stamp = FileStamp(try d.stat(loc.name, fullPath: Path.join(root, loc.rel)))
        } catch let x as Errno where x == .ENOENT {
            stamp = nil
        } catch {
            return false
        }
        return stamp == e.stamp
    }
}
