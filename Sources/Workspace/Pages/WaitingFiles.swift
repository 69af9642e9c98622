// WaitingFiles: page files whose changes no op explains yet, while what they show may be another
// device's work whose ops are still in transit, which must not be recorded here as this device's.
// Invariants: a file waits only if a sync tool delivered it or the workspace is synced, so a workspace
// nobody syncs never waits; a waiting file is not rewritten; its changes are taken once nothing that
// could explain them has arrived for `settleMs`.
import SystemCalls

struct WaitingFiles {
    let root: String
    let opsDir: String
    /// This device's own op file's name: the one entry of the ops directory that is no other device's.
    let ownOpFile: String
    let settleMs: Int64
    /// Each waiting file's path → the page it stands for and who delivered it.
    private(set) var entries: [String: (page: BlockID, origin: PageFileOrigin)] = [:]

    init(root: String, opsDir: String, ownOpFile: String, settleMs: Int64) {
        self.root = root
        self.opsDir = opsDir
        self.ownOpFile = ownOpFile
        self.settleMs = settleMs
    }

    func contains(_ path: String) -> Bool { entries[path] != nil }

    /// Who delivered a waiting file; nil when it does not wait.
    func origin(of path: String) -> PageFileOrigin? { entries[path]?.origin }

    var paths: [String] { entries.keys.sorted() }

    /// Makes `path` wait; returns whether it was not waiting already.
    mutating func hold(_ path: String, page: BlockID, origin: PageFileOrigin) -> Bool {
        let new = entries[path] == nil
        entries[path] = (page, origin)
        return new
    }

    mutating func release(_ path: String) { entries[path] = nil }

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

    /// How long (ms) nothing has arrived that could explain `path`: since the newest ctime of the
    /// file itself and of every other device's entry in the ops directory (ctime, not mtime: sync
    /// tools set the sender's mtime; a rename sets ctime).
    func quietMs(_ path: String) -> Int64 {
        func ctimeMs(_ p: String) -> Int64 {
            guard let st = try? Sys.lstat(p) else { return Int64.min }
            return Int64(st.st_ctim.tv_sec) * 1000 + Int64(st.st_ctim.tv_nsec) / 1_000_000
        }
        let newest = otherOpFiles().reduce(ctimeMs(path)) { max($0, ctimeMs($1)) }
        return newest == Int64.min ? Int64.max : wallClockMilliseconds() - newest
    }

    /// Whether `path`'s changes must wait now: they may be work in transit, and not enough quiet has passed.
    func mustWait(_ path: String, origin: PageFileOrigin) -> Bool {
        mayHoldWorkInTransit(origin) && quietMs(path) < settleMs
    }

    /// Ms until the next judgement of the waiting files is due; nil when none waits.
    func nextJudgementMs() -> Int64? {
        entries.keys.map(quietMs).min().map { max(0, settleMs - min($0, settleMs)) }
    }
}
