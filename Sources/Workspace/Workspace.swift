// Workspace: the one writer of a workspace, as a Swift actor. The drain and the daemon call it; reads
// come from its state. Invariant: one instance per device and workspace (the device write lock).
import SystemCalls

public struct WorkspaceOptions {
    public var root: String
    public var stateDirectory: String?   // device-local dir for actor id + lock; default
                                         // $XDG_STATE_HOME/outl (~/.local/state/outl), keyed by
                                         // the workspace's real path. Tests pass a temp dir.
    public var appender: DurableAppender // default PlainAppender()
    public var bootProgress: ((_ bytesRead: Int, _ totalBytes: Int) -> Void)?  // for EXTEND_TIMEOUT_USEC
    /// Where warnings go (a torn tail cut, hand edits reconciled); default: stderr.
    public var log: ((String) -> Void)?
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

public struct BootSummary: Sendable {
    public var files: Int
    public var bytes: Int
    public var ops: Int
    public var invalidLines: Int
    public var cutBytes: Int
    public var pages: Int
    public var blocks: Int
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

    /// Writes the Markdown of every page changed since the last call (reconciling each file's
    /// hand edits first). Returns the paths written.
    public func projectDirtyPages() throws -> [String] { try writable(); return try core.projectDirtyPages() }

    /// A file under journals/ or pages/ changed on disk (inotify): reconcile it now.
    public func reconcile(path: String) throws { try writable(); try core.reconcile(path: path) }

    public func reconcileAll() throws { try writable(); try core.reconcileAll() }

    private func writable() throws { if readOnly { throw WorkspaceError.readOnly } }

    /// Releases the lock; the instance must not be used afterwards.
    public func close() { core.close() }

    // MARK: reads

    public var bootSummary: BootSummary {
        let s = core.bootStats
        return BootSummary(files: s.files, bytes: s.bytes, ops: s.ops, invalidLines: s.badLines,
                           cutBytes: s.cutBytes, pages: core.model.pages.count, blocks: core.model.blocks.count)
    }

    /// The Markdown the op log says `day`'s journal should hold (nil if the day has no page).
    public func journalMarkdown(_ day: JournalDay) -> String? {
        let id = BlockID.journalPage(day)
        guard core.model.pages[id]?.known == true else { return nil }
        return String(decoding: core.render(id), as: UTF8.self)
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
    public func containsBlock(_ id: String) -> Bool {
        guard let b = BlockID(id) else { return false }
        return core.model.blocks[b] != nil
    }

    /// Disagreements between the op log's projection and the files on disk.
    public func check() -> [String] { core.check() }
}
