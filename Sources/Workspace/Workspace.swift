// Workspace: the one writer of a workspace, as a Swift actor. The drain and the daemon call it; reads
// come from its state. Invariant: one instance per device and workspace (the device write lock).
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// Where the workspace says what happened: one sink with a level and journal fields
/// (OUTL_OPS_FILE, OUTL_PAGE, OUTL_PAGE_FILE, OUTL_DEVICE), which outld turns into journal entries.
/// `log("…")` is an info line; a fault in a file or a record kept is a warning.
public struct WorkspaceLog {
    public enum Level: Sendable { case info, warning, error }
    public typealias Sink = (Level, String, [String: String]) -> Void
    let sink: Sink

    public init(sink: @escaping Sink) { self.sink = sink }
    /// Every level as one line to `info` (tests, the read-only tools).
    public init(_ info: @escaping (String) -> Void) { sink = { _, m, _ in info(m) } }

    public static var silent: WorkspaceLog { WorkspaceLog { _ in } }

    /// The field that names an event with a journal catalog entry of its own, and those events.
    public static let event = "OUTL_EVENT"
    public static let concurrentEdit = "concurrent-edit"
    public static let broughtBack = "brought-back"
    public static let folderRepaired = "folder-repaired"

    func callAsFunction(_ message: String, _ fields: [String: String] = [:]) { sink(.info, message, fields) }
    func warning(_ message: String, _ fields: [String: String] = [:]) { sink(.warning, message, fields) }
    func error(_ message: String, _ fields: [String: String] = [:]) { sink(.error, message, fields) }
}

public struct WorkspaceOptions {
    public var root: String
    public var stateDirectory: String?   // device-local dir for actor id + lock; default
                                         // $XDG_STATE_HOME/outl (~/.local/state/outl), keyed by
                                         // the workspace's real path. Tests pass a temp dir.
    public var appender: DurableAppender // default PlainAppender()
    public var bootProgress: ((_ bytesRead: Int, _ totalBytes: Int) -> Void)?  // for EXTEND_TIMEOUT_USEC
    /// Where what happened goes (a torn tail cut: a warning; hand edits reconciled: info); default:
    /// stderr.
    public var log: WorkspaceLog?
    /// How long the other devices' op files must have been quiet before a page file's changes that
    /// no op explains are taken as edits (they may be another device's work whose ops are still
    /// in transit). Default 10 s; `$OUTL_SYNC_SETTLE_MS` overrides it (tests).
    public var syncSettleMs: Int64 = Path.environment("OUTL_SYNC_SETTLE_MS").flatMap { Int64($0) } ?? 10_000
    /// How a new day's journal file is named (outld.conf `journal-file-format`); either is read.
    /// nil: as the workspace's newest journal file is named, Logseq's when it has none (`outl`,
    /// which reads no outld.conf, so follows what outld writes).
    public var journalFileFormat: JournalFileFormat? = nil
    /// Which of a capture's record its page shows (outld.conf `page-properties`): by default none,
    /// so a page holds only what a person typed (and the ids its app hides).
    public var pageProperties = PageProperties.none
    /// Told when a page becomes failing (its file cannot be read or written; `recovered` false, once
    /// per page and reason) and when it is written again (`recovered` true); default: `log`.
    public var onPageFailure: ((PageFailure, _ recovered: Bool) -> Void)? = nil
    /// How much one pass over stale pages writes before it returns, leaving the rest stale for the
    /// next (`stalePages` counts them): outld's loop drains, answers signals and pings the watchdog
    /// between slices. nil (the default): a pass writes every stale page.
    public var pageSlice: PageSlice? = nil
    /// Open to read only, beside a running writer: no write lock, no actor id minted, no torn
    /// tail cut, nothing written anywhere; every write method throws `.readOnly`.
    public var readOnly: Bool
    public init(root: String, readOnly: Bool = false) {
        self.root = root
        self.stateDirectory = nil
        self.appender = PlainAppender()
        self.bootProgress = nil
        self.log = nil
        self.readOnly = readOnly
    }
}

/// A bound on one pass over stale pages: it stops once it has written `pages` pages or spent
/// `milliseconds`, whichever comes first (at least one page, so it always gets on).
public struct PageSlice: Sendable, Equatable {
    public var milliseconds: Int
    public var pages: Int
    var nanoseconds: UInt64 { UInt64(max(0, milliseconds)) * 1_000_000 }

    public init(milliseconds: Int, pages: Int = Int.max) {
        self.milliseconds = milliseconds
        self.pages = pages
    }
}

/// How much one live merge may read before it leaves the rest for the next call (a daemon's loop
/// reads a big delivery in slices and drains between them): a time, and bytes (tests make it small).
public struct MergeSlice: Sendable, Equatable {
    public var milliseconds: Int
    public var bytes: Int

    public init(milliseconds: Int, bytes: Int = Int.max) {
        self.milliseconds = milliseconds
        self.bytes = bytes
    }
}

public struct BootSummary: Sendable {
    public var files: Int
    public var bytes: Int
    public var ops: Int
    public var invalidLines: Int
    public var cutBytes: Int
    public var pages: Int
    public var blocks: Int
}

/// What one `mergeForeignOps` did.
public struct MergeReport: Sendable, Equatable {
    /// Ops that changed the model, per device: the actor id (UUID spelling) that stamped them.
    public var appliedByActor: [String: Int] = [:]
    /// Ops that changed the model (the sum of `appliedByActor`). An op applied before (a file read
    /// again, a conflict copy) or older than what it would overwrite changes nothing and is not counted.
    public var applied = 0
    /// Valid ops read from what the files gained, the ones that changed nothing included.
    public var read = 0
    /// Files read again from their start because their prefix changed (re-applying is harmless).
    public var reread: [String] = []
    /// Pages the merge touched, relative to the root as the journal setting names them
    /// (`journals/2026_12_02.md`), in order; they are
    /// dirty, so the next `projectDirtyPages` writes those whose bytes change.
    public var dirtyPages: [String] = []
    /// What the ops that changed the model did, per device (the actor id that stamped them).
    public var byDevice: [String: DeviceMerge] = [:]
    /// Ops read (applied or not) whose stamps were too far ahead for this device's clock to adopt.
    public var heldBack: HeldBackStamps = [:]
    /// A merge in slices stopped for its slice with more to read: call `mergeForeignOps` again.
    public var more = false
    /// Bytes of whole op lines read, and (when `more`) about how many are left to read.
    public var bytesRead = 0
    public var bytesLeft = 0

    public init() {}

    /// The reports of a merge's slices as one: counts summed, lists joined, `more` and
    /// `bytesLeft` the later slice's.
    public mutating func add(_ o: MergeReport) {
        for (a, n) in o.appliedByActor { appliedByActor[a, default: 0] += n }
        applied += o.applied
        read += o.read
        reread += o.reread.filter { !reread.contains($0) }
        if !o.dirtyPages.isEmpty { dirtyPages = Array(Set(dirtyPages).union(o.dirtyPages)).sorted() }
        for (d, m) in o.byDevice { byDevice[d, default: DeviceMerge()].add(m) }
        for (d, h) in o.heldBack {
            if let mine = heldBack[d] { heldBack[d] = mine.joined(h) } else { heldBack[d] = h }
        }
        more = o.more
        bytesRead += o.bytesRead
        bytesLeft = o.bytesLeft
    }
}

/// What one device's ops did in one merge, for "who deleted my line?".
public struct DeviceMerge: Sendable, Equatable {
    /// Blocks that did not exist here before.
    public var created = 0
    /// Blocks whose text or properties changed (an update, or a create with an earlier stamp).
    public var edited = 0
    public var moved = 0
    /// Blocks that were live here and are deleted now.
    public var deleted = 0
    /// The first `deletedShown` of them, in the order their deletes were read.
    public var deletedBlocks: [DeletedBlock] = []
    /// Blocks that were live here and left their page because this device's create of them lost to
    /// the device's (an earlier stamp, another page): a forgery, or a bug; said like a deletion.
    /// Counted in `moved`; the first `deletedShown`, with the page each left (its file's name).
    public var takenAway: [TakenAway] = []
    public var takenAwayCount = 0
    /// Edits of blocks that have not arrived yet: applied when they do.
    public var waiting = 0
    /// Pages created and preambles set.
    public var pages = 0

    /// A bound on what one log entry carries, whatever a device deleted.
    public static let deletedShown = 5

    public init() {}

    /// Another slice's counts of the same device added to these.
    mutating func add(_ o: DeviceMerge) {
        created += o.created; edited += o.edited; moved += o.moved; deleted += o.deleted
        waiting += o.waiting; pages += o.pages
        deletedBlocks += o.deletedBlocks.prefix(max(0, DeviceMerge.deletedShown - deletedBlocks.count))
        takenAwayCount += o.takenAwayCount
        takenAway += o.takenAway.prefix(max(0, DeviceMerge.deletedShown - takenAway.count))
    }
}

/// A block another device deleted: its id and how it began, safe to print.
/// A block another device's create took off its page here (DeviceMerge.takenAway): the page files it
/// left and went to, as the workspace names them.
public struct TakenAway: Sendable, Equatable {
    public var block: DeletedBlock
    public var from: String
    public var to: String
}

public struct DeletedBlock: Sendable, Equatable {
    public var id: String
    public var firstWords: String

    public init(id: String, firstWords: String) { self.id = id; self.firstWords = firstWords }

    public static let shownCharacters = 40

    /// The first `shownCharacters` characters of `text`, control characters (and line separators)
    /// spelled as escapes so a block's text cannot forge or break a log line; "…" when cut.
    public static func firstWords(_ text: String) -> String {
        var out = ""
        var n = 0
        for c in text {
            if n == shownCharacters { out += "…"; break }
            n += 1
            for u in c.unicodeScalars {
                switch u.value {
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0x5C: out += "\\\\"
                case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029:
                    out += "\\u{" + String(u.value, radix: 16) + "}"
                default: out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }
}

public actor Workspace {
    public nonisolated let root: String
    /// This device's actor id; read-only, the one already minted (all zeros when there is none).
    public nonisolated let actorID: String
    public nonisolated let readOnly: Bool
    let core: WorkspaceCore

    /// Takes the lock, boots (reads + merges all ops). Throws `.locked` at once if another process
    /// holds the device write lock. With `options.readOnly`, only boots.
    public init(options: WorkspaceOptions) throws {
        let c = try WorkspaceCore(options: options)
        core = c
        root = options.root
        actorID = c.actor.description
        readOnly = options.readOnly
    }

    /// One batch: creates the day pages that are missing, appends one block per capture at the end
    /// of its day's page (Create of an existing id → .alreadyPresent, no op), writes all ops with
    /// ONE appendDurably, and returns only when they are durable. Does NOT write Markdown.
    public func appendCaptures(_ blocks: [CaptureBlock]) throws -> [AppendOutcome] {
        try writable()
        return try core.appendCaptures(blocks)
    }

    /// The same for captures whose strings are bytes (the drain's: no String per capture).
    public func appendCaptures(_ list: CaptureList) throws -> [AppendOutcome] {
        try writable()
        return try core.appendCaptures(list)
    }

    /// Which of `ids` are blocks of the model (live or deleted): a capture whose block is known
    /// needs nothing more brought in.
    public func knownBlocks(_ ids: [BlockID]) -> Set<BlockID> {
        Set(ids.filter { core.model.blocks[$0] != nil })
    }

    /// Writes the Markdown of every page changed since the last call (reconciling each file's
    /// hand edits first). Returns the paths written. A page whose file cannot be read or written is
    /// failing (`failingPages`) and holds back no other; only an op-log failure is thrown.
    public func projectDirtyPages() throws -> [String] { try writable(); return try core.projectStalePages() }

    /// When a page file was last made durable (wall clock, µs; 0: never in this process).
    public var lastPagePublishedUsec: UInt64 { core.lastPublishedUsec }

    /// A daemon's loop starts a turn: the passes over stale pages until the next call share one
    /// slice between them, its time and its pages (each still writes the page most recently marked,
    /// a capture's or an edit's), or, without `writingBacklog` (a merge under way, whose later
    /// slices would mark the same pages again), write that one page each. Without slices (`--once`)
    /// it changes nothing.
    public func startTurn(writingBacklog: Bool) {
        core.turnLeft = core.slice.map { writingBacklog ? ($0.nanoseconds, $0.pages) : (0, 0) }
    }

    /// Pages whose file may not show the model yet: what passes in slices still have to write.
    public var stalePages: Int { core.pages.staleCount }

    /// Pages whose file could not be read or written at their last try (retried with backoff).
    public var failingPages: [PageFailure] { core.pages.failures }

    /// The failing pages the running writer of `root` last recorded (for `outl status` beside it).
    public static func recordedPageFailures(root: String, stateDirectory: String?) -> [PageFailure] {
        PageFiles.recordedFailures(stateDir: DeviceState.directory(root: root, stateDirectory: stateDirectory))
    }

    /// What outld told this device's person about their edits (two edits made at once, a deleted
    /// block brought back), oldest first, as recorded in the state directory (read by `outl status`).
    public static func recordedNotices(root: String, stateDirectory: String?) -> [Notice] {
        NoticeRecord.read(Path.join(DeviceState.directory(root: root, stateDirectory: stateDirectory), NoticeRecord.fileName))
    }

    /// Sets right a directory of outl's own below `<root>/.outl` (an inbox there) that a peer or a
    /// sync tool replaced by a link, a FIFO or a file (FolderRepair), making it when missing; true
    /// when `path` is such a directory now. Anything not below `.outl` is left as it is (false).
    /// Needs no open workspace: the daemon calls it for an inbox that went away.
    public static func setRightOwnDirectory(_ path: String, root: String, stateDirectory: String?, log: WorkspaceLog,
                                            mode: mode_t = 0o700) throws -> Bool {
        guard let parts = DirectoryWalk.components(of: path, below: root), parts.first == FolderRepair.ownPrefix else { return false }
        let stateDir = DeviceState.directory(root: root, stateDirectory: stateDirectory)
        let repair = FolderRepair(root: root, setAside: SetAside(stateDir: stateDir, log: log), log: log)
        repair.record(in: NoticeRecord(stateDir: stateDir, writable: true))
        try repair.open(parts.joined(separator: "/"), mode: mode).close()
        return true
    }

    /// The workspace's directories that something else stands in for (a link, a FIFO or a file), in
    /// `outl status`'s order: outl's own (below `.outl`, which outld sets right: FolderRepair), then the
    /// person's (`journals`, `pages`, `assets`: never removed, their pages or attachments wait).
    public static func misplacedDirectories(root: String) -> [(path: String, symlink: Bool, outlsOwn: Bool)] {
        let own = [FolderRepair.ownPrefix] + WorkspaceCore.ownDirectories
        return (own + ["journals", "pages", "assets"]).compactMap { rel in
            let path = Path.join(root, rel)
            do { try DirectoryWalk.open(path, beneath: root).close() } catch let u as UnsafeComponent where u.path == path {
                return (path, u.kind == .symlink, own.contains(rel))
            } catch {}
            return nil
        }
    }

    /// What this device keeps set aside (SetAside: what others put where its own things belong).
    public static func setAsideSummary(root: String, stateDirectory: String?) -> SetAsideSummary {
        let dir = Path.join(DeviceState.directory(root: root, stateDirectory: stateDirectory), SetAside.directoryName)
        let files = SetAside.files(dir)
        return SetAsideSummary(directory: dir, files: files.count, bytes: files.reduce(0) { $0 + $1.bytes })
    }

    /// A file under journals/ or pages/ changed on disk (inotify): reconcile it now, reading it as
    /// `origin` says (a person's edit here, a sync tool's delivery, or unknown).
    /// Without `project`, the page is only marked: the next `projectDirtyPages` takes its changes.
    public func reconcile(path: String, origin: PageFileOrigin = .unknown, project: Bool = true) throws {
        try writable()
        try core.reconcile(path: path, origin: origin, project: project)
    }

    /// Judges again the page files whose changes wait for other devices' ops, and the failing pages
    /// whose retry is due, then writes what no longer waits (call after a merge and when the
    /// returned delay has passed). Returns ms until the next judgement, nil if none.
    public func judgeWaiting() throws -> Int64? { try writable(); return try core.judgeWaiting() }

    /// Ms until a waiting page file or a failing page is due to be judged again; nil when none is.
    public var nextPageJudgementMs: Int64? { core.nextPageJudgementMs() }

    /// Page files whose changes wait for other devices' ops.
    public var waitingFiles: [String] { core.waitingPaths }

    public func reconcileAll() throws { try writable(); try core.reconcileAll() }

    private func writable() throws { if readOnly { throw WorkspaceError.readOnly } }

    /// The ops the boot read stamped too far ahead of this machine's clock to be adopted, per device.
    public var stampsHeldBackAtBoot: HeldBackStamps { core.heldBackAtBoot }

    /// Blocks other devices deleted while no outld ran here that this device's page files still
    /// showed, by device: what a live merge would have said (`DeviceMerge.deleted`, `deletedBlocks`).
    public var deletedWhileAway: [String: DeviceMerge] { core.deletedWhileAway }

    /// Merges what other devices' op files (`.outl/ops/ops-*.jsonl` but this device's own, conflict
    /// copies included) gained since the boot or the last merge: only new bytes are read while a file's
    /// prefix is unchanged (whatever its inode), a file whose prefix changed is read again, a missing
    /// file (a sync tool between unlink and rename) or an incomplete last line is left for the next
    /// call. The clock observes every op read, so a later local op is ordered after all of them, but
    /// for ops stamped beyond `HLClock.maxAhead`, applied yet held back from the clock (`heldBack`).
    /// The touched pages are marked dirty; call `projectDirtyPages()` to write them. With a `slice`,
    /// stops once it is spent (at a line, after at least one) with `more` set: the next call goes on.
    /// While a merge is under way, changes of page files that no edit here explains wait for its end.
    public func mergeForeignOps(slice: MergeSlice? = nil) throws -> MergeReport { try core.mergeForeignOps(slice: slice) }

    /// A merge in slices stopped with more to read (`MergeReport.more`).
    public var mergeUnderWay: Bool { core.mergeUnderWay }

    /// Releases the lock; the instance must not be used afterwards.
    public func close() { core.close() }

    // MARK: reads

    public var bootSummary: BootSummary {
        let s = core.bootStats
        return BootSummary(files: s.files, bytes: s.bytes, ops: s.ops, invalidLines: s.badLines,
                           cutBytes: s.cutBytes, pages: core.model.pages.count, blocks: core.model.blocks.count)
    }

    /// Where the model's memory goes, part by part (`outl debug-memory`).
    public var memoryUse: [MemoryPart] {
        core.model.memoryUse() + [MemoryPart(name: "kept page renderings", bytes: core.renderCache.bytesKept)]
    }

    /// The Markdown the op log says `day`'s journal should hold (nil if the day has no page).
    /// `details`: with every capture's record (captured-at, source), whatever its page shows.
    public func journalMarkdown(_ day: JournalDay, details: Bool = false) -> String? {
        let id = BlockID.journalPage(day)
        guard core.model.pages[id]?.known == true else { return nil }
        return String(decoding: details ? core.renderWhole(id, showing: .all) : core.render(id), as: UTF8.self)
    }

    /// One block of a page in file order (`outl show --json`): flat, with its parent and depth, so
    /// a page nested to any depth is listed without recursion.
    public struct OutlineBlock: Sendable {
        public var id: String
        /// nil at the top level.
        public var parent: String?
        public var depth: Int
        public var text: String
        public var properties: [Property]
    }

    /// The live blocks of a day's page in file order (nil if the day has no page).
    public func journalOutline(_ day: JournalDay) -> [OutlineBlock]? {
        let page = BlockID.journalPage(day)
        guard core.model.pages[page]?.known == true else { return nil }
        var ancestors: [BlockID] = []  // of the block at hand: its depth is their count
        return core.model.outline(of: page).map { e in
            ancestors.removeLast(ancestors.count - e.depth)
            let parent = ancestors.last
            ancestors.append(e.id)
            let (text, props) = core.model.blocks.shownContent(ofRow: e.row, showing: .all)
            return OutlineBlock(id: e.id.description, parent: parent?.description, depth: e.depth, text: text, properties: props)
        }
    }

    /// The live blocks of a day's page in order, as (id, text).
    public func journalBlocks(_ day: JournalDay) -> [(id: String, text: String)] {
        var out: [(id: String, text: String)] = []
        func walk(_ nodes: [TreeNode]) {
            for n in nodes { out.append((n.id.description, core.model.blocks[n.id]!.text)); walk(n.children) }
        }
        walk(core.model.tree(of: BlockID.journalPage(day)))
        return out
    }

    /// Whether a block with this id was ever created (deleted ones included).
    /// The greatest top-level position on a page, as the model holds it (for tests).
    func maxTopPos(ofPage id: BlockID) -> String? { core.model.pages[id]?.maxTopPos }

    public func containsBlock(_ id: String) -> Bool {
        guard let b = BlockID(id) else { return false }
        return core.model.blocks[b] != nil
    }

    /// Every op file read so far (the boot's and the merges'), in name order, this device's own included.
    public var opLogSummaries: [OpLogSummary] { core.follower.summaries() }

    /// The same summaries read straight from the files, without the write lock or a model (for
    /// `outl status` beside a running outld). Nothing is cut or written.
    /// Each file's ops stamped beyond `HLClock.maxAhead` of this machine's clock are in `aheadOfClock`.
    public static func opLogSummaries(root: String) throws -> [OpLogSummary] {
        let follower = OpLogFollower(dir: Path.join(root, ".outl/ops"), ownName: "", log: .silent)
        let now = wallClockMilliseconds()
        var file = ""
        var ahead: [String: StampsAhead] = [:]
        _ = try follower.boot(progress: nil, starting: { file = $0 }) { op, _ in
            guard op.hlc.wall > now &+ HLClock.maxAhead else { return }
            if ahead[file] == nil { ahead[file] = StampsAhead(op.hlc, kind: op.kind, id: op.id, now: now) }
            else { ahead[file]!.add(op.hlc, kind: op.kind, id: op.id, now: now) }
        }
        return follower.summaries().map { var s = $0; s.aheadOfClock = ahead[s.file]; return s }
    }

    /// Op files that lost ops this device had seen (deleted, cut or rewritten by a sync tool or a
    /// peer): their ops are still merged, from this device's archive, until the file holds them again.
    public var opLogFaults: [OpLogFault] { core.seen.faults }

    /// Ops applied so far that still wait for their block's create (another device's file not here yet).
    public var waitingOps: Int { core.model.waitingOps }

    /// Disagreements between the op log's projection and the files on disk.
    public func check() -> [String] { core.check() }
}
