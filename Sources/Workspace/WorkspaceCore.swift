// WorkspaceCore: the booted workspace behind the `Workspace` actor: it commits ops (its own, and
// other devices' it merges) and projects pages; WorkspaceBoot builds it, ReconcilerRecords keeps the
// reconciler's device-local records, and WorkspaceCore+Reconcile turns hand edits into ops. Invariant:
// an op is applied to the model only after it is durable in the op log, and a page file is written
// only after its hand edits became ops.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class WorkspaceCore {
    let root: String
    let opsDir: String
    let tmpDir: String
    private var locks: WriteLocks
    let actor: BlockID
    var clock: HLClock
    var model: Model
    let writer: OpLogWriter
    /// Every op file's cursor: where the boot and each live merge stopped reading.
    let follower: OpLogFollower
    /// What this device has seen of every op file and wrote to its own (device-local).
    let seen: SeenOps
    let bootStats: OpLogReadStats
    /// The ops the boot read stamped too far ahead for the clock to adopt, per device.
    let heldBackAtBoot: HeldBackStamps
    /// Pages whose file may not show what the model says: each is reconciled, then written.
    var dirty = Set<BlockID>()
    let records: ReconcilerRecords
    /// The file content each page's hand edits were last taken from, so they are taken once.
    var lastReconciled: [BlockID: [UInt8]] = [:]
    /// Which contents some op produced; loaded the first time a file of unknown producer differs.
    var history: OpHistory?
    /// Files judged by their content whose changes wait for other devices' ops (WaitingFiles); judged
    /// again after each merge, and a waiting page file is not rewritten.
    var waiting: WaitingFiles
    let log: (String) -> Void
    let journalSetting: JournalFileFormat?
    /// The format new days' files get: the setting, else the workspace's own (read once).
    lazy var journalFormat: JournalFileFormat = journalSetting ?? JournalFiles.format(ofWorkspace: root)

    init(options: WorkspaceOptions) throws {
        root = options.root
        opsDir = Path.join(root, ".outl/ops")
        tmpDir = Path.join(root, ".outl/tmp")
        journalSetting = options.journalFileFormat
        let stateDir = DeviceState.directory(root: root, stateDirectory: options.stateDirectory)
        log = options.log ?? WorkspaceCore.logToStandardError
        // The locks first: a second process must never mint an actor or touch an ops file. A
        // read-only open takes no lock, mints nothing and treats every ops file as another's.
        var taken = options.readOnly ? WriteLocks.none : try WriteLocks(root: root, stateDir: stateDir)
        do { try WorkspaceCore.refuseLinks(root) } catch { taken.release(); throw error }
        seen = SeenOps(stateDir: stateDir, writable: !options.readOnly, log: log)
        do {
            actor = options.readOnly ? DeviceState.existingActor(stateDir) : try DeviceState.actor(stateDir)
            follower = OpLogFollower(dir: opsDir, ownName: options.readOnly ? "" : OpLogWriter.fileName(actor), seen: seen, log: log)
            let boot = try WorkspaceBoot(follower: follower, actor: actor, progress: options.bootProgress)
            model = boot.model
            clock = boot.clock
            bootStats = boot.stats
            heldBackAtBoot = boot.heldBack
        } catch {
            seen.close()
            taken.release()
            throw error
        }
        locks = taken
        writer = OpLogWriter(dir: opsDir, actor: actor, appender: options.appender, seen: seen, log: log)
        records = ReconcilerRecords(stateDir: stateDir, log: log)
        waiting = WaitingFiles(root: root, opsDir: opsDir, ownOpFile: OpLogWriter.fileName(actor),
                               settleMs: options.syncSettleMs)
        // After a crash between an op and its projection any page may be stale: check them all once.
        dirty = Set(model.pages.keys)
    }

    /// The directories under .outl that the workspace reads and writes by path: a link (or a file)
    /// at one of them is refused by name (`UnsafeComponent`), never followed, before any file in them
    /// is read or written; a missing one is made when first needed.
    static let ownDirectories = [".outl/ops", ".outl/tmp", ".outl/set-aside"]

    static func refuseLinks(_ root: String) throws {
        for rel in ownDirectories {
            do { try DirectoryWalk.open(Path.join(root, rel), beneath: root).close() }
            catch let e as Errno where e == .ENOENT {}
            catch let e as Errno { throw WorkspaceError.io(e, path: Path.join(root, rel)) }
        }
    }

    static func logToStandardError(_ message: String) {
        var line = Array("outl: \(message)\n".utf8)
        _ = line.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    func close() {
        writer.close()
        do { try seen.sync() } catch { log("\(error)") }
        seen.close()
        locks.release()
    }

    // MARK: writing ops

    /// Stamps, appends durably (one batch), then applies. Each op is stamped after the field it
    /// overwrites: these are a person's edits of what they saw, which must win even over a version
    /// stamped far ahead (held back from the clock), or the edit would be silently reverted.
    func commit(_ ops: [Op]) throws {
        if ops.isEmpty { return }
        var stamped = ops
        for i in stamped.indices { stamped[i].hlc = clock.stamp(after: fieldStamp(overwrittenBy: stamped[i])) }
        try appendThenApply(stamped)
    }

    /// The stamp an op must beat to take effect (Model's last-writer-wins per field), nil when none:
    /// an update or delete beats the newest update and delete whatever the create, a move the newest
    /// move, a preamble the newest preamble. Creates have none (the least stamp wins among creates).
    func fieldStamp(overwrittenBy op: Op) -> HLC? {
        switch op.kind {
        case .updateBlock, .deleteBlock:
            guard let r = model.blocks.find(op.id), let e = model.blocks.edits[r] else { return nil }
            return [e.update, e.delete].compactMap { $0 }.max()
        case .moveBlock:
            return model.blocks.find(op.id).flatMap { model.blocks.edits[$0]?.move }
        case .setPreamble:
            return model.pages[op.id]?.preambleStamp
        case .createPage, .createBlock, .unknown:
            return nil
        }
    }

    /// Appends stamped ops durably (one batch), then applies them: never the other way round.
    private func appendThenApply(_ stamped: [Op]) throws {
        var notAtItsName: Error? = nil
        do { try writer.append(stamped) } catch let e as OpLogWriter.DurableButNotAtItsName {
            // Durable, so applied (a retry must not write it twice), but not acknowledged: the
            // retry's append gives the name back all this device wrote before it returns.
            notAtItsName = e.underlying
        }
        for op in stamped {
            if let p = model.apply(op) { dirty.insert(p) }
            history?.note(op)
        }
        if let notAtItsName { throw notAtItsName }
    }

    func appendCaptures(_ captures: [CaptureBlock]) throws -> [AppendOutcome] {
        var ops: [Op] = []
        var outcomes: [AppendOutcome] = []
        var pending = Set<BlockID>()
        var newPages = Set<BlockID>()
        var maxPos: [BlockID: String] = [:]
        for c in captures {
            guard let id = c.blockID ?? BlockID(c.id) else { throw WorkspaceError.badID(c.id) }
            if model.blocks[id] != nil || pending.contains(id) { outcomes.append(.alreadyPresent); continue }
            pending.insert(id)
            let pageID = BlockID.journalPage(c.day)
            if model.pages[pageID]?.known != true, !newPages.contains(pageID) {
                newPages.insert(pageID)
                var op = Op(hlc: clock.tick(), kind: .createPage, id: pageID)
                op.pageKind = .journal; op.text = c.day.iso
                ops.append(op)
            }
            let hlc = clock.tick()
            let last = maxPos[pageID] ?? model.pages[pageID]?.maxTopPos ?? ""
            let pos = hlc.positionKey > last ? hlc.positionKey : PositionKey.between(last, nil)
            maxPos[pageID] = pos
            var op = Op(hlc: hlc, kind: .createBlock, id: id)
            op.page = pageID; op.pos = pos; op.text = Markdown.normalizedText(c.text)
            op.props = [Property("captured-at", c.capturedAt), Property("source", c.source)]
            ops.append(op)
            outcomes.append(.created)
        }
        try appendThenApply(ops)
        return outcomes
    }

    // MARK: merging other devices' ops

    /// Reads what other devices' op files gained since the boot or the last merge (new files, files
    /// grown or replaced by a sync tool, conflict copies), applies it, lets the clock observe every op
    /// read (holding back, and reporting, stamps too far ahead), says what each device's ops did
    /// (MergeReport.byDevice), and marks the pages it touched dirty for `projectDirtyPages`.
    func mergeForeignOps() throws -> MergeReport {
        var report = MergeReport()
        var byActor: [BlockID: Int] = [:]
        var touched = Set<BlockID>()
        model.alsoTouched.removeAll()
        // A change in .outl/ops may have been a sync tool's version of this device's own file.
        do { try writer.checkOwnFile() } catch { log("checking this device's own op log: \(error)") }
        let now = wallClockMilliseconds()
        let deliveries = try follower.follow { op, _ in
            if !clock.observe(op.hlc, now: now) { report.heldBack.note(op.hlc, kind: op.kind, id: op.id, now: now) }
            report.read += 1
            // Who did what, for "who deleted my line?": a create is new only if no create of the id came
            // before, a delete deletes only a block that was live.
            let row = op.kind == .createBlock || op.kind == .deleteBlock ? model.blocks.find(op.id) : nil
            let wasLive = row.map { !model.blocks.rows[$0].deleted } ?? false
            let change = model.change(op)
            history?.note(op.op())  // the op's Strings are made only once a history exists
            switch change {
            case .none: return
            case .hidden: break
            case .page(let p): touched.insert(p)
            }
            byActor[op.hlc.actor, default: 0] += 1
            noteMerged(op, change: change, existed: row != nil, wasLive: wasLive, in: &report)
            if !model.alsoTouched.isEmpty {
                touched.formUnion(model.alsoTouched)
                model.alsoTouched.removeAll()
            }
        }
        for d in deliveries {
            if case .read(_, true, _, _, _) = d.outcome { report.reread.append(d.name) }
        }
        for (a, n) in byActor { report.appliedByActor[a.description] = n }
        report.applied = byActor.values.reduce(0, +)
        dirty.formUnion(touched)
        let prefix = root.hasSuffix("/") ? root : root + "/"
        report.dirtyPages = touched.compactMap { filePath(of: $0).map { String($0.dropFirst(prefix.count)) } }.sorted()
        return report
    }

    /// Counts one applied op of another device in `report.byDevice` (DeviceMerge).
    private func noteMerged(_ op: RawOpView, change: Model.Change, existed: Bool, wasLive: Bool, in report: inout MergeReport) {
        let device = op.hlc.actor.description
        var d = report.byDevice[device] ?? DeviceMerge()
        switch op.kind {
        case .createBlock where !existed: d.created += 1
        case .createBlock, .updateBlock: if change == .hidden && op.kind == .updateBlock { d.waiting += 1 } else { d.edited += 1 }
        case .moveBlock: if change == .hidden { d.waiting += 1 } else { d.moved += 1 }
        case .deleteBlock:
            if change == .hidden { d.waiting += 1 }
            else if wasLive, let b = model.blocks[op.id], b.deleted {
                d.deleted += 1
                if d.deletedBlocks.count < DeviceMerge.deletedShown {
                    d.deletedBlocks.append(DeletedBlock(id: op.id.description, firstWords: DeletedBlock.firstWords(b.text)))
                }
            }
        case .createPage, .setPreamble, .unknown: d.pages += 1
        }
        report.byDevice[device] = d
    }

    // MARK: projection

    func render(_ pageID: BlockID) -> [UInt8] {
        func md(_ n: TreeNode) -> MDBlock {
            let b = model.blocks[n.id]!
            return MDBlock(id: n.id, text: b.text, props: b.props, children: n.children.map(md))
        }
        let page = model.pages[pageID]
        return Markdown.render(MDPage(preamble: page?.preamble ?? "", blocks: model.tree(of: pageID).map(md)))
    }

    /// The file a page is projected to; nil for a page without one (blocks whose page op has not arrived).
    func filePath(of pageID: BlockID) -> String? {
        guard let page = model.pages[pageID] else { return nil }
        if page.known, let day = page.journalDay {
            return Path.join(root, JournalFiles.resolve(day, root: root, setting: journalFormat).0)
        }
        return page.relativePath(journalFormat: journalFormat).map { Path.join(root, $0) }
    }

    /// One day, one file: when a day's journal exists in both spellings (two devices with different
    /// `journal-file-format` created it at once), the duplicate's edits become ops like any file's,
    /// then it is removed and every device writes Logseq's spelling. Returns whether it removed one.
    func settleJournalSpellings(_ pageID: BlockID) throws -> Bool {
        guard let day = model.pages[pageID]?.journalDay,
              case (let kept, let duplicate?) = JournalFiles.resolve(day, root: root, setting: journalFormat) else { return false }
        let dup = Path.join(root, duplicate)
        // Judged like a conflict copy (it is never this page's file); while what it shows may be
        // another device's work in transit, it stays, and goes once its changes are taken.
        try reconcileFile(pageID, path: dup, copy: true)
        if waiting.contains(dup) { return false }
        lastReconciled[pageID] = nil
        do { try Sys.unlink(dup) } catch let e as Errno where e == .ENOENT {} catch let e as Errno {
            throw WorkspaceError.io(e, path: dup)
        }
        log("\(dup): the same day as \(kept); its edits were taken and it was removed")
        dirty.insert(pageID)
        return true
    }

    func projectDirtyPages() throws -> [String] {
        var written: [String] = []
        var held = Set<BlockID>()
        defer {
            dirty.formUnion(held)
            // The archive's copy of what was just acknowledged, synced once the pass's work is done.
            do { try seen.sync() } catch { log("syncing this device's archive of ops: \(error)") }
        }
        while let pageID = dirty.min() {
            dirty.remove(pageID)
            do {
                if let p = try project(pageID) { written.append(p) }
                if let p = filePath(of: pageID), waiting.contains(p) { held.insert(pageID) }
            } catch {
                dirty.insert(pageID)  // still stale: the next pass must try it again
                throw error
            }
        }
        return written
    }

    /// Reconciles then writes one page; returns the path if the file changed. A page file whose
    /// changes wait for other devices' ops is left as it is (the caller keeps the page dirty).
    func project(_ pageID: BlockID) throws -> String? {
        guard let path = filePath(of: pageID) else { return nil }
        _ = try settleJournalSpellings(pageID)
        try reconcileFile(pageID, path: path, origin: waiting.origin(of: path) ?? .unknown)
        if waiting.contains(path) { return nil }
        dirty.remove(pageID)
        let bytes = render(pageID)
        let current = try readIfExists(path)
        var wrote = false
        if current != bytes, !(current == nil && model.tree(of: pageID).isEmpty && bytes.isEmpty) {
            let dir = Path.parent(of: path)
            try io(dir) { try Durable.makeDirectory(dir, mode: 0o755) }
            // .outl/tmp is reached from the workspace without following a link (a link there is
            // refused); the page's own directory is opened as it is spelled.
            let tmp: FileDescriptor
            do { tmp = try DirectoryWalk.open(tmpDir, beneath: root, create: 0o700) }
            catch let e as Errno { throw WorkspaceError.io(e, path: tmpDir) }
            let pageDir = try io(dir) { try FileDescriptor.open(dir, O_RDONLY | O_DIRECTORY) }
            try [tmp, pageDir].closeAfter {
                let tempName = Path.lastComponent(path) + ".tmp"
                try? tmp.unlink(tempName, fullPath: Path.join(tmpDir, tempName))
                // The temp lives in .outl/tmp and is removed before each use, so its departure need not be
                // durable: one fsync of the file and one of its directory make the page durable.
                try io(path) {
                    try Durable.publish(bytes, name: Path.lastComponent(path), in: pageDir, dirPath: dir,
                                        via: tempName, in: tmp, tempDirPath: tmpDir, mode: 0o644, syncTempDirectory: false)
                }
            }
            wrote = true
        }
        records.rememberProjection(bytes, of: pageID)
        records.rememberIdentity(of: pageID, at: path)
        return wrote ? path : nil
    }

    func readIfExists(_ path: String) throws -> [UInt8]? {
        do { return try Durable.readRegularFile(path, limit: 64 << 20) }
        catch let e as Errno where e == .ENOENT { return nil }
        catch let e as Errno { throw WorkspaceError.io(e, path: path) }
    }

    // MARK: inspection

    /// Disagreements between the op log's projection and the files on disk, one line each.
    func check() -> [String] {
        var problems: [String] = []
        for (id, page) in model.pages.sorted(by: { $0.key < $1.key }) {
            guard let p = filePath(of: id) else {
                if !page.known { problems.append("page \(id): blocks without a page op") }
                continue
            }
            let rel = String(p.dropFirst(root.count)).drop { $0 == "/" }
            let want = render(id)
            if let have = (try? readIfExists(p)) ?? nil {
                if have != want { problems.append("\(rel): differs from the op log (hand edit or stale projection)") }
            } else if !want.isEmpty {
                problems.append("\(rel): missing (not projected yet)")
            }
        }
        return problems
    }
}
