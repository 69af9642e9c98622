// WorkInTransit: whether a page file's changes that no op explains may be another device's work whose
// ops are still on their way, which must not be recorded here as this device's. Invariants: a file
// waits only if a sync tool delivered it or the workspace is synced, so a workspace nobody syncs never
// waits; its changes are taken once nothing that could explain them has arrived for `settleMs` times
// one more than the devices before this one (`turn`), so of the devices a phone's save reached, one
// takes it and the others find it explained by that one's ops.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

struct WorkInTransit {
    let root: String
    let opsDir: String
    /// This device's own op file's name: the one entry of the ops directory that is no other device's.
    let ownOpFile: String
    let settleMs: Int64

    /// Whether a file's unexplained content may be another device's work whose ops are still on
    /// their way: it was delivered by a sync tool, or the workspace is synced (another device's op
    /// file is here, or a sync tool's marker is: Syncthing's `.stfolder`, Dropbox's `.dropbox`,
    /// Nextcloud's and ownCloud's `.sync_*.db`).
    func mayHoldWorkInTransit(_ origin: PageFileOrigin) -> Bool {
        if case .delivered = origin { return true }
        if !otherOpFiles().isEmpty { return true }
        for marker in [".stfolder", ".dropbox"] where (try? Sys.lstat(Path.join(root, marker))) != nil { return true }
        let names = (try? Sys.readDirectory(root)) ?? []
        return names.contains { ($0.hasPrefix(".sync_") || $0.hasPrefix("._sync_")) && $0.hasSuffix(".db") }
    }

    /// Every entry of the ops directory but this device's own file: other devices' op files, their
    /// conflict copies and a sync tool's temporaries being written.
    func otherOpFiles() -> [String] {
        ((try? Sys.readDirectory(opsDir)) ?? []).filter { $0 != ownOpFile }.map { Path.join(opsDir, $0) }
    }

    /// How long (ms) nothing has arrived that could explain a file whose ctime is `fileCtimeMs`:
    /// since the newest ctime of the file itself and of every other device's entry in the ops
    /// directory (ctime, not mtime: sync tools set the sender's mtime; a rename sets ctime).
    func quietMs(fileCtimeMs: Int64) -> Int64 {
        func ctimeMs(_ p: String) -> Int64 {
            guard let st = try? Sys.lstat(p) else { return Int64.min }
            return WorkInTransit.ctimeMs(st)
        }
        let newest = otherOpFiles().reduce(fileCtimeMs) { max($0, ctimeMs($1)) }
        return newest == Int64.min ? Int64.max : wallClockMilliseconds() - newest
    }

    static func ctimeMs(_ st: stat) -> Int64 { Int64(st.st_ctim.tv_sec) * 1000 + Int64(st.st_ctim.tv_nsec) / 1_000_000 }

    /// This device's turn among the devices whose op files are here: how many have a lesser actor
    /// id. A page a sync tool delivers to several devices (a phone's save) carries the same
    /// unexplained changes to each; the first in turn takes them at the settle time, each later one
    /// a settle time after the one before, by when the first one's ops have come and explain them.
    func turn() -> Int {
        guard ownOpFile.hasPrefix("ops-"), ownOpFile.hasSuffix(".jsonl") else { return 0 }
        return otherOpFiles().filter { p in
            let n = Path.lastComponent(p)
            // Another device's own file (ops-<actor>.jsonl), not a conflict copy or a temporary.
            return n.hasPrefix("ops-") && n.hasSuffix(".jsonl") && n.utf8.count == ownOpFile.utf8.count && n < ownOpFile
        }.count
    }

    /// How long a file's unexplained changes wait on this device: the settle time, once more for
    /// each device before this one in turn.
    var waitMs: Int64 { settleMs * Int64(1 + turn()) }

    /// Whether a file's changes must wait now: they may be work in transit, and not enough quiet has passed.
    func mustWait(fileCtimeMs: Int64, origin: PageFileOrigin) -> Bool {
        mayHoldWorkInTransit(origin) && quietMs(fileCtimeMs: fileCtimeMs) < waitMs
    }

    /// Ms until a file waiting since `fileCtimeMs` is due to be judged again.
    func remainingMs(fileCtimeMs: Int64) -> Int64 {
        let wait = waitMs
        return max(0, wait - min(quietMs(fileCtimeMs: fileCtimeMs), wait))
    }
}
