// WorkspaceCore: the booted workspace behind the `Workspace` actor: it commits ops (its own, and
// other devices' it merges) and marks the pages they touch stale; WorkspaceBoot builds it, PageFiles
// owns what is known of each page's file and PagePass writes them. Invariant: an op is applied to the
// model only after it is durable in the op log, and a page file is written only after its hand edits
// became ops.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class WorkspaceCore {
    let root: String
    /// journals/, pages/ and .outl/'s directories, held open between passes (HeldDirectories).
    let directories: HeldDirectories
    let opsDir: String
    /// Sets right outl's own directories a peer replaced (nil when read-only).
    let repair: FolderRepair?
    let tmpDir: String
    private var locks: WriteLocks
    /// Opened to read only: nothing is written, the page index included.
    let readOnly: Bool
    let actor: BlockID
    var clock: HLClock
    /// Mutated in place only, never replaced: PageRenderer's cache names contents by arena offset.
    /// Unchecked for overlapping access (each op applied to it began and ended one, 67 instructions):
    /// only the Workspace actor uses this core, and no method of the model reaches back into it.
    @exclusivity(unchecked) var model: Model
    /// The last renderings of a few pages (PageRenderer).
    var renderCache = PageRenderCache()
    /// Which of a capture's record its page shows (CaptureRecord).
    let pageProperties: PageProperties
    /// A page file left in another form was said this run (OtherForm).
    var saidOtherForm = false
    /// The largest page file written or read (tests make it small to reach it cheaply).
    var maxPageBytes = PageFiles.maxFileBytes
    /// How much one pass over stale pages may do before it leaves the rest for the next; nil: all.
    var slice: PageSlice?
    /// What the passes of a daemon's turn of its loop may still spend together (`startTurn`), in time
    /// and pages: a turn can hold several passes (an event's, a timer's, a drain's), and each with a
    /// whole slice of its own held a capture three slices long. nil: no turn, each pass has its slice.
    var turnLeft: (nanoseconds: UInt64, pages: Int)?
    /// When a page file was last made durable (wall clock, µs; 0: never): what a capture's latency
    /// to its journal ends at, for make bench, before the pass's bookkeeping after it.
    var lastPublishedUsec: UInt64 = 0
    let writer: OpLogWriter
    /// Every op file's cursor: where the boot and each live merge stopped reading.
    let follower: OpLogFollower
    /// What this device has seen of every op file and wrote to its own (device-local).
    let seen: SeenOps
    let bootStats: OpLogReadStats
    /// The ops the boot read stamped too far ahead for the clock to adopt, per device.
    let heldBackAtBoot: HeldBackStamps
    /// Blocks other devices deleted while no outld ran here, that this device's files still showed,
    /// by device (`deletionsWhileAway`): said at the start as a live merge says them.
    var deletedWhileAway: [String: DeviceMerge] = [:]
    /// Every page's file: its state, what was last taken from it, the strays that stand for it.
    let pages: PageFiles
    /// What this device's person was told about their edits, for `outl status`.
    let notices: NoticeRecord
    /// Which contents some op produced; loaded the first time a file of unknown producer differs.
    var history: OpHistory?
    /// A live merge in slices stopped with more to read: a file's changes that no edit here explains
    /// wait for its end (the ops that explain them may be in what is left), and are judged then.
    var mergeUnderWay = false
    /// Whether a file's unexplained changes may be another device's work still in transit.
    let transit: WorkInTransit
    let onPageFailure: ((PageFailure, _ recovered: Bool) -> Void)?
    let log: WorkspaceLog
    let journalSetting: JournalFileFormat?
    /// The format new days' files get: the setting, else the workspace's own (read once).
    lazy var journalFormat: JournalFileFormat = journalSetting ?? JournalFiles.format(ofWorkspace: root)

    init(options: WorkspaceOptions) throws {
        root = options.root
        readOnly = options.readOnly
        // The root is checked again at most once a second; what is below it, at every pass.
        directories = HeldDirectories(root: root, rootCheckNs: 1_000_000_000)
        opsDir = Path.join(root, ".outl/ops")
        tmpDir = Path.join(root, ".outl/tmp")
        journalSetting = options.journalFileFormat
        pageProperties = options.pageProperties
        let stateDir = DeviceState.directory(root: root, stateDirectory: options.stateDirectory)
        log = options.log ?? WorkspaceLog(sink: WorkspaceCore.logToStandardError)
        // The locks first: a second process must never mint an actor or touch an ops file. A
        // read-only open takes no lock, mints nothing and treats every ops file as another's.
        var taken = options.readOnly ? WriteLocks.none : try WriteLocks(root: root, stateDir: stateDir)
        repair = options.readOnly ? nil : FolderRepair(root: root, setAside: SetAside(stateDir: stateDir, log: log), log: log)
        notices = NoticeRecord(stateDir: stateDir, writable: !options.readOnly)
        repair?.record(in: notices)
        WorkspaceCore.setRightOwnDirectories(root, repair: repair, log: log)
        directories.own = repair?.heldDirectoriesHook
        seen = SeenOps(stateDir: stateDir, writable: !options.readOnly, log: log)
        seen.repair = repair
        do {
            actor = options.readOnly ? DeviceState.existingActor(stateDir) : try DeviceState.actor(stateDir)
            follower = OpLogFollower(dir: opsDir, ownName: options.readOnly ? "" : OpLogWriter.fileName(actor), seen: seen, log: log)
            follower.repair = repair
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
        follower.directories = directories
        writer = OpLogWriter(dir: opsDir, actor: actor, appender: options.appender, seen: seen, repair: repair, log: log)
        pages = PageFiles(stateDir: stateDir, records: ReconcilerRecords(stateDir: stateDir, log: log), pageProperties: pageProperties, log: log)
        transit = WorkInTransit(root: root, opsDir: opsDir, ownOpFile: OpLogWriter.fileName(actor), settleMs: options.syncSettleMs)
        onPageFailure = options.onPageFailure
        slice = options.pageSlice
        // After a crash between an op and its projection, or ops that arrived while nothing ran, any
        // page may be stale: each is checked once, but one whose file and model are as it was last
        // projected is known to show the model without being read (StartCheck).
        let changed = pagesToCheckAtStart()
        pages.markStale(changed)
        deletedWhileAway = deletionsWhileAway(onPages: Set(changed))
        for id in model.refusedPages.keys.sorted() { logRefused(id) }
        // A block brought back is said at boot only when this device's file of its page has not
        // shown it since (the op came while no outld ran): else it was seen, and said, then.
        // Texts made at once are kept either way.
        model.broughtBack = model.broughtBack(overDeletionsBy: actor)
        sayBroughtBack(unlessShown: true)
        do { try keepConcurrentEdits() } catch { log.warning("keeping texts edited at once: \(error)") }
    }

    /// outl's own directories that the boot and the first passes use: one that a peer or a sync
    /// tool made a link, a FIFO or a file is set right before anything is read or written through
    /// it (FolderRepair), so one bad entry never stops a start. `journals/` and `pages/` are the
    /// person's: a link there is never removed, and costs only the pages in it (each pass says so).
    /// A read-only open changes nothing and reads a bad one as missing.
    static let ownDirectories = [".outl/ops", ".outl/tmp", ".outl/captures"]

    static func setRightOwnDirectories(_ root: String, repair: FolderRepair?, log: WorkspaceLog) {
        guard let repair else { return }
        for rel in ownDirectories {
            do { try DirectoryWalk.open(Path.join(root, rel), beneath: root).close(); continue }
            catch let e as Errno where e == .ENOENT { continue }
            catch {}
            do { try repair.open(rel, mode: rel == ".outl/ops" ? 0o755 : 0o700).close() } catch { log.error("\(error); it is tried again when it is next needed") }
        }
    }

    static func logToStandardError(_ level: WorkspaceLog.Level, _ message: String, _ fields: [String: String]) {
        let tag = level == .warning ? "warning: " : level == .error ? "error: " : ""
        var line = Array("outl: \(tag)\(message)\n".utf8)
        _ = line.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    func close() {
        if !readOnly { pages.index.flush() }
        pages.index.close()
        writer.close()
        do { try seen.sync() } catch { log.warning("\(error)") }
        seen.close()
        pages.records.close()
        directories.closeAll()
        locks.release()
    }

    // MARK: writing ops

    /// Stamps, appends durably (one batch), then applies. Each op is stamped after the field it
    /// overwrites: these are a person's edits of what they saw, which must win even over a version
    /// stamped far ahead (held back from the clock), or the edit would be silently reverted.
    /// `beforeAppend` sees the stamped ops before they are appended (a record that must be durable first).
    /// `namingBases`: an update names the text it replaces (Op.base) unless it names one already;
    /// false for ops taken from another producer's page, which only repeat what a file said and
    /// say nothing of what an editor saw.
    func commit(_ ops: [Op], namingBases: Bool = true, beforeAppend: (([Op]) throws -> Void)? = nil) throws {
        if ops.isEmpty { return }
        var stamped: [Op] = []
        stamped.reserveCapacity(ops.count)
        for var op in ops {
            // An update names the text it replaces, unless its editor saw an older one (the reconciler
            // named that): so one made elsewhere meanwhile is known as made at once with it.
            if namingBases, op.kind == .updateBlock, op.base == nil, let r = model.blocks.find(op.id) {
                let e = model.blocks.editsOf(r)
                op.base = e.update ?? e.create
            }
            let field = fieldStamp(overwrittenBy: op)
            if let s = clock.stamp(after: field) {
                op.hlc = s
                stamped.append(op)
            } else if let field {
                stamped += keptBeside(op, field: field)
            }
        }
        if stamped.isEmpty { return }
        try beforeAppend?(stamped)
        try appendThenApply(stamped)
        // A person here brought back a block: nothing to say; a file another producer wrote did.
        if namingBases { model.broughtBack.removeAll() } else { sayBroughtBack() }
        try keepConcurrentEdits()
    }

    /// Keeps each text found made at once with a block's (Model.concurrentEdits) as the block after
    /// it, under an id derived from the block and that text's stamp (every device that finds it makes
    /// the one block), marked `concurrent-edit-of:: ((id))`, and says so once. So two people editing
    /// one line at once both find their words on the page.
    func keepConcurrentEdits() throws {
        guard !readOnly, !model.concurrentEdits.isEmpty else { return }
        let found = model.concurrentEdits
        model.concurrentEdits.removeAll()
        var ops: [Op] = []
        var made = Set<BlockID>()
        for c in found {
            let id = BlockID.concurrentEdit(of: c.block, stamp: c.stamp)
            guard model.blocks.find(id) == nil, made.insert(id).inserted, let b = model.blocks[c.block] else { continue }
            // The same words reached on two devices (one took the other's page before its ops), or
            // words the kept text's editor had seen (an earlier version the block had): no one's
            // words are lost.
            if b.text == c.text && b.props == c.props { continue }
            if c.replaced(among: found) || sawWords(c) { continue }
            var op = Op(hlc: clock.tick(), kind: .createBlock, id: id)
            op.page = b.page
            op.parent = b.parent
            op.pos = PositionKey.between(b.pos, nextSiblingPos(of: c.block, on: b.page))
            op.text = c.text
            op.props = c.props.filter { $0.key != ConcurrentEdit.markKey } + [Property(ConcurrentEdit.markKey, "((\(c.block)))")]
            ops.append(op)
            notice(WorkspaceLog.concurrentEdit, block: c.block, device: c.stamp.actor,
                   "block \(c.block): devices \(c.stamp.actor) and \(c.kept.actor) changed its text at once, neither seeing the other's; the newer stays, the other is kept as the block after it, \(id): \"\(DeletedBlock.firstWords(c.text))\"",
                   ["OUTL_KEPT_AS": id.description])
        }
        if !ops.isEmpty { try appendThenApply(ops) }
    }

    /// Whether the losing text's words were a version of the block no newer than the text the kept
    /// one's editor saw (OpHistory): a device that took another's page before its ops repeated them.
    func sawWords(_ c: ConcurrentEdit) -> Bool {
        guard let seen = c.keptBase, let states = opHistory()?.blocks[c.block] else { return false }
        var op = Op(hlc: c.stamp, kind: .updateBlock, id: c.block)
        op.text = c.text; op.props = c.props
        let h = OpHistory.projectedHash(op)
        return states.texts.contains { $0.1 == h && $0.0.hlc != c.stamp && !(seen < $0.0.hlc) }
    }

    /// Blocks another device deleted that this device's file of their page still showed (FilePresence):
    /// the deletion came while no outld ran, and this device's person has not seen it. Only pages
    /// whose file may not show the model are looked at (StartCheck): a deletion older than the
    /// page's last projection was seen, and said, then. By device, the first few in stamp order.
    func deletionsWhileAway(onPages changed: Set<BlockID>) -> [String: DeviceMerge] {
        guard !readOnly, !changed.isEmpty else { return [:] }
        var found: [(HLC, BlockID, BlockID)] = []
        for (r, e) in model.blocks.edits {
            guard let d = e.delete, e.deleted, d.actor != actor else { continue }
            let page = model.blocks.page(ofRow: r)
            if changed.contains(page) { found.append((d, model.blocks.rows[r].id, page)) }
        }
        var out: [String: DeviceMerge] = [:]
        for (d, id, page) in found.sorted(by: { $0.0 < $1.0 }) where pages.records.presence(of: page).shows(id) {
            var m = out[d.actor.description] ?? DeviceMerge()
            m.deleted += 1
            if m.deletedBlocks.count < DeviceMerge.deletedShown {
                m.deletedBlocks.append(DeletedBlock(id: id.description, firstWords: DeletedBlock.firstWords(model.blocks[id]?.text ?? "")))
            }
            out[d.actor.description] = m
        }
        // Blocks another device's create took off a page whose file here still showed them.
        var taken: [(HLC, BlockID, from: BlockID, to: BlockID)] = []
        for (r, e) in model.blocks.edits where !e.otherPages.isEmpty {
            let c = model.blocks.createStamp(ofRow: r), id = model.blocks.rows[r].id, to = model.blocks.page(ofRow: r)
            guard c.actor != actor, !model.blocks.rows[r].deleted else { continue }
            for from in e.otherPages where changed.contains(from) && pages.records.presence(of: from).shows(id) { taken.append((c, id, from, to)) }
        }
        func name(_ p: BlockID) -> String { model.pages[p]?.relativePath(journalFormat: journalFormat) ?? p.description }
        for (c, id, from, to) in taken.sorted(by: { $0.0 < $1.0 }) {
            var m = out[c.actor.description] ?? DeviceMerge()
            m.takenAwayCount += 1
            if m.takenAway.count < DeviceMerge.deletedShown {
                m.takenAway.append(TakenAway(block: DeletedBlock(id: id.description, firstWords: DeletedBlock.firstWords(model.blocks[id]?.text ?? "")),
                                             from: name(from), to: name(to)))
            }
            out[c.actor.description] = m
        }
        return out
    }


    /// The position of the sibling after block `id` on `page` (nil when it is the last, or not shown).
    func nextSiblingPos(of id: BlockID, on page: BlockID) -> String? {
        var lists: [[TreeNode]] = [model.tree(of: page)]
        while let list = lists.popLast() {
            if let i = list.firstIndex(where: { $0.id == id }) {
                return i + 1 < list.count ? model.blocks[list[i + 1].id]?.pos : nil
            }
            for n in list where !n.children.isEmpty { lists.append(n.children) }
        }
        return nil
    }

    /// Says each block deleted on this device that another device's update brought back (it was made
    /// without seeing the deletion): the person who deleted it is told it is back. `unlessShown`
    /// (at boot, which finds every such block again): not a block this device's file of its page
    /// showed since it last wrote or read it (FilePresence): its return was seen, and said, then.
    func sayBroughtBack(unlessShown: Bool = false) {
        for x in model.broughtBack where x.deletedBy.actor == actor && !readOnly {
            if unlessShown, let page = model.blocks[x.block]?.page, pages.records.presence(of: page).shows(x.block) { continue }
            let words = model.blocks[x.block].map { DeletedBlock.firstWords($0.text) } ?? ""
            let by = x.by.actor == actor ? "in a page file written elsewhere (a phone's save, another app) before the deletion reached it"
                : "on device \(x.by.actor) before that device saw the deletion"
            notice(WorkspaceLog.broughtBack, block: x.block, device: x.by.actor,
                   "block \(x.block) (\"\(words)\"), deleted on this device, was edited \(by): it is back")
        }
        model.broughtBack.removeAll()
    }

    /// Tells this device's person something about their edits: a warning with its event (a journal
    /// catalog entry), recorded for `outl status` too (NoticeRecord).
    func notice(_ event: String, block: BlockID, device: BlockID, _ message: String, _ fields: [String: String] = [:]) {
        var all = fields
        all["OUTL_BLOCK"] = block.description
        all["OUTL_DEVICE"] = device.description
        all[WorkspaceLog.event] = event
        log.warning(message, all)
        notices.add(Notice(kind: event, atMs: wallClockMilliseconds(), block: block.description, device: device.description,
                           message: message), log: log)
    }

    /// An edit of a field a peer stamped at the very top of the range, which no stamp the reader
    /// takes beats: a new text is kept as a new block beside that one (the person's words stay on
    /// the page), a move, a deletion or a preamble is not made; each said once, naming the device.
    func keptBeside(_ op: Op, field: HLC) -> [Op] {
        let device = field.actor.description
        let top = "was stamped by device \(device) at the top of the stamp range (\(StampsAhead.spelled(field))), which no edit can follow"
        guard op.kind == .updateBlock, let b = model.blocks[op.id], !b.deleted else {
            log.warning("\(op.kind) of \(op.id) not made: it \(top)", ["OUTL_BLOCK": op.id.description, "OUTL_DEVICE": device])
            return []
        }
        var create = Op(hlc: clock.tick(), kind: .createBlock, id: BlockID.random())
        create.page = b.page; create.parent = b.parent; create.pos = b.pos
        create.text = op.text; create.props = op.props
        log.warning("block \(op.id) \(top): the edit of it is kept as a new block, \(create.id)",
                    ["OUTL_BLOCK": op.id.description, "OUTL_DEVICE": device])
        return [create]
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
        // A run of ops on one page marks it once, at the run's end: the order pages were marked in
        // is the same as marking per op (a burst's 4,096 ops on one day's page marked it 4,096 times).
        var run: BlockID? = nil
        model.blocks.reserve(more: stamped.count)
        for op in stamped {
            if let p = model.apply(op), p != run {
                if let r = run { pages.markStale(CollectionOfOne(r)) }
                run = p
            }
            history?.note(op)
        }
        if let r = run { pages.markStale(CollectionOfOne(r)) }
        if let notAtItsName { throw notAtItsName }
    }

    /// The same for a call's captures: their creates are applied through their views, with no Op
    /// made unless a history notes them. Each page's maxTopPos is raised once, with the greatest
    /// pos of the batch's captures on it: every capture create is a top-level create, whose apply
    /// would have raised it, so the max is the same.
    private func appendThenApply(_ batch: CaptureBatch) throws {
        var notAtItsName: Error? = nil
        do { try writer.append(batch) } catch let e as OpLogWriter.DurableButNotAtItsName {
            notAtItsName = e.underlying
        }
        var run: BlockID? = nil
        model.blocks.reserve(more: batch.count)
        func applied(_ page: BlockID?) {
            if let p = page, p != run {
                if let r = run { pages.markStale(CollectionOfOne(r)) }
                run = p
            }
        }
        // The capture with the greatest pos in the current run of one page's captures.
        var top: (page: BlockID, k: Int, view: CaptureOpView)? = nil
        batch.inOrder(capture: { k, view in
            var c = view
            c.raisesMaxTopPos = false
            if case .page(let p) = model.change(c) { applied(p) }
            history?.note(c.asOp())
            if let t = top, t.page == c.page {
                if PositionKey.greater(c.pos, than: t.view.pos) { top = (c.page, k, c) }
            } else {
                if let t = top { model.raiseMaxTopPos(ofPageOf: t.view) }
                top = (c.page, k, c)
            }
        }, page: { op in
            applied(model.apply(op))
            history?.note(op)
        })
        if let t = top { batch.view(t.k) { model.raiseMaxTopPos(ofPageOf: $0) } }
        if let r = run { pages.markStale(CollectionOfOne(r)) }
        if let notAtItsName { throw notAtItsName }
    }

    func appendCaptures(_ captures: [CaptureBlock]) throws -> [AppendOutcome] {
        var list = CaptureList(count: captures.count, bytes: 0)
        for c in captures { try list.append(c) }
        return try appendCaptures(list)
    }

    func appendCaptures(_ list: CaptureList) throws -> [AppendOutcome] {
        let captures = list.items
        var batch = CaptureBatch(bytes: list.bytes, captures: captures.count)
        var outcomes: [AppendOutcome] = []
        var pending = Set<BlockID>()
        var newPages = Set<BlockID>()
        var maxPos: [BlockID: String] = [:]
        // Captures come in runs of one page (a burst is one day's): the page is looked up once per
        // run, and its greatest position carried along the run: `runMax` until the run's first
        // create, then the pos of the batch's last create (in its bytes, made into no String).
        var runPage: BlockID? = nil, runMax = "", runMaxPos: Range<Int>? = nil
        func runMaxString() -> String { runMaxPos.map { batch.withBytes($0) { String(decoding: $0, as: UTF8.self) } } ?? runMax }
        // One reading of the clock for the call: its ops are stamped at one moment, in order (the
        // counter tells them apart), not one clock_gettime per capture.
        let now = wallClockMilliseconds()
        // Which ids the model holds, asked through one borrow of its table: asked per capture through
        // `model.blocks`, a class's stored struct, it was copied (every array retained) each time.
        // The borrow ends before the ops are applied, so applying copies no array.
        var ids: [BlockID] = []
        ids.reserveCapacity(captures.count)
        for k in captures.indices { ids.append(captures[k].blockID) }
        let known = model.knownRows(ids)
        // Two captures of one id in one call: the second is already present. The drain hands its
        // captures in id order, with no id twice, and ids that only rise need no set to tell
        // (inserting 10,000 ids cost a burst ~650 instructions each); any other order uses one.
        var rising = true
        for k in ids.indices.dropFirst() where !(ids[k - 1] < ids[k]) { rising = false; break }
        if !rising { pending.reserveCapacity(ids.count) }
        for k in captures.indices {
            let id = ids[k]
            if known[k] { outcomes.append(.alreadyPresent); continue }
            if !rising {
                if pending.contains(id) { outcomes.append(.alreadyPresent); continue }
                pending.insert(id)
            }
            // A named page by the one rule every device derives its id by (PageNames): a name that
            // differs only in case or normalization is the same page.
            let pageID = captures[k].page.map(BlockID.namedPage) ?? BlockID.journalPage(captures[k].day)
            if pageID != runPage {
                if let p = runPage { maxPos[p] = runMaxString() }
                runPage = pageID
                runMaxPos = nil
                let page = model.pages[pageID]
                if page?.known != true, !newPages.contains(pageID) {
                    newPages.insert(pageID)
                    var op = Op(hlc: clock.tick(now: now), kind: .createPage, id: pageID)
                    if let name = captures[k].page { op.pageKind = .named; op.text = PageNames.nfc(name) }
                    else { op.pageKind = .journal; op.text = captures[k].day.iso }
                    batch.pageCreates.append((before: batch.creates.count, op: op))
                }
                runMax = maxPos[pageID] ?? page?.maxTopPos ?? ""
            }
            let hlc = clock.tick(now: now)
            // The text as its block holds it: the caption as it is, nearly always (CaptureSource).
            let text: Range<Int>
            let caption = captures[k].text
            if captures[k].assets.isEmpty, caption.isEmpty || batch.withBytes(caption, CaptureSource.isSourceAsTyped) {
                text = caption
            } else {
                let typed = batch.withBytes(caption) { String(decoding: $0, as: UTF8.self) }
                text = batch.append(Markdown.captureSource(caption: typed, assets: captures[k].assets))
            }
            // The stamp's key when it sorts after the run's greatest position (nearly always: the
            // clock only rises), else a key after that one.
            let pos = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: HLC.positionKeyBytes) { room -> Range<Int> in
                hlc.spellPositionKey(into: room)
                let key = UnsafeBufferPointer(room)
                let greater = runMaxPos.map { batch.withBytes($0) { PositionKey.greater(key, than: $0) } }
                    ?? OpEncoder.bytes(of: runMax) { PositionKey.greater(key, than: $0) }
                return greater ? batch.append(key) : batch.append(PositionKey.between(runMaxString(), nil))
            }
            runMaxPos = pos
            batch.appendCapture(hlc: hlc, id: id, page: pageID, pos: pos, text: text, capturedAt: captures[k].capturedAt,
                                source: captures[k].source)
            outcomes.append(.created)
        }
        try appendThenApply(batch)
        return outcomes
    }

    // MARK: merging other devices' ops

    /// Reads what other devices' op files gained since the boot or the last merge (new files, files
    /// grown or replaced by a sync tool, conflict copies), applies it, lets the clock observe every op
    /// read (holding back, and reporting, stamps too far ahead), says what each device's ops did
    /// (MergeReport.byDevice), and marks the pages it touched dirty for `projectDirtyPages`.
    func mergeForeignOps(slice: MergeSlice? = nil) throws -> MergeReport {
        var report = MergeReport()
        var byActor: [BlockID: Int] = [:]
        var touched = Set<BlockID>()
        model.alsoTouched.removeAll()
        let refusedBefore = model.refusedPages
        // A change in .outl/ops may have been a sync tool's version of this device's own file.
        do { try writer.checkOwnFile() } catch { log.warning("checking this device's own op log: \(error)") }
        let now = wallClockMilliseconds()
        let budget = slice.map { ReadBudget(bytes: $0.bytes, deadlineNs: monotonicNanoseconds() + UInt64(max(0, $0.milliseconds)) * 1_000_000) }
        let followed = try follower.follow(budget: budget) { op, _ in
            if !clock.observe(op.hlc, now: now) { report.heldBack.note(op.hlc, kind: op.kind, id: op.id, now: now) }
            report.read += 1
            // Who did what, for "who deleted my line?": a create is new only if no create of the id came
            // before, a delete deletes only a block that was live.
            let row = op.kind == .createBlock || op.kind == .deleteBlock ? model.blocks.find(op.id) : nil
            let wasLive = row.map { !model.blocks.rows[$0].deleted } ?? false
            // A create of a live block on another page may take it off its own (its stamp is older):
            // what it was, to say so like a deletion.
            var before: (page: BlockID, text: String)? = nil
            if op.kind == .createBlock, wasLive, let r = row, model.blocks.page(ofRow: r) != op.page {
                before = (model.blocks.page(ofRow: r), model.blocks[op.id]?.text ?? "")
            }
            let change = model.change(op)
            history?.note(op.op())  // the op's Strings are made only once a history exists
            switch change {
            case .none: return
            case .hidden: break
            case .page(let p): touched.insert(p)
            }
            byActor[op.hlc.actor, default: 0] += 1
            noteMerged(op, change: change, existed: row != nil, wasLive: wasLive, in: &report)
            if let before, let r = row, model.blocks.page(ofRow: r) != before.page { noteTakenAway(op, from: before, in: &report) }
            if !model.alsoTouched.isEmpty {
                touched.formUnion(model.alsoTouched)
                model.alsoTouched.removeAll()
            }
        }
        for d in followed.deliveries {
            if case .read(_, true, _, _, _) = d.outcome { report.reread.append(d.name) }
        }
        report.more = followed.more
        report.bytesRead = followed.bytesRead
        report.bytesLeft = followed.bytesLeft
        mergeUnderWay = followed.more
        for (id, r) in model.refusedPages where refusedBefore[id] != r { logRefused(id) }
        for (a, n) in byActor { report.appliedByActor[a.description] = n }
        report.applied = byActor.values.reduce(0, +)
        sayBroughtBack()
        do { try keepConcurrentEdits() } catch { log.warning("keeping texts edited at once: \(error)") }
        pages.markStale(touched)
        // Named as the setting names them, without a look at the disk: the pass that follows resolves
        // each file (and its other spelling) once, and this list only says which pages changed.
        report.dirtyPages = touched.compactMap { model.pages[$0]?.relativePath(journalFormat: journalFormat) }.sorted()
        return report
    }

    /// Says that a device's createPage was refused: its id is not the one its day or name derives.
    private func logRefused(_ id: BlockID) {
        guard let r = model.refusedPages[id] else { return }
        log.warning("device \(r.actor): page \(id) (\(r.kind == .journal ? "journal" : "page") \(r.name)) refused: not the canonical id of what it names, so it takes over no file and its blocks are not shown")
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

    /// Counts a block another device's create took off its page here as moved, and keeps it (the
    /// first few) to be said like a deletion: no person moved it.
    private func noteTakenAway(_ op: RawOpView, from before: (page: BlockID, text: String), in report: inout MergeReport) {
        let device = op.hlc.actor.description
        var d = report.byDevice[device] ?? DeviceMerge()
        d.edited -= 1
        d.moved += 1
        d.takenAwayCount += 1
        if d.takenAway.count < DeviceMerge.deletedShown {
            func name(_ p: BlockID) -> String { model.pages[p]?.relativePath(journalFormat: journalFormat) ?? p.description }
            d.takenAway.append(TakenAway(block: DeletedBlock(id: op.id.description, firstWords: DeletedBlock.firstWords(before.text)),
                                         from: name(before.page), to: name(op.page)))
        }
        report.byDevice[device] = d
    }

    // MARK: inspection

    /// Disagreements between the op log's projection and the files on disk, one line each.
    func check() -> [String] {
        var problems: [String] = []
        let dirs = PageDirectories(directories)
        for (id, page) in model.pages.sorted(by: { $0.key < $1.key }) {
            let loc: PageLocation?
            do { loc = try location(of: id, dirs: dirs) } catch { problems.append("\(error)"); continue }
            guard let loc else {
                if !page.known { problems.append("page \(id): blocks without a page op") }
                continue
            }
            let rendered = renderPage(id)
            let want = rendered.bytes
            for b in rendered.heldBack {
                problems.append("\(loc.rel): block \(b.id) from device \(heldBackDevice(b.id)) (\(b.bytes) bytes) is not shown: the page would be larger than the \(maxPageBytes >> 20) MiB a page file may hold")
            }
            do {
                if let have = try readPage(loc.rel, name: loc.name, in: try dirs.existing(loc.dir)) {
                    if have.bytes != want { problems.append("\(loc.rel): differs from the op log (hand edit or stale projection)") }
                } else if !want.isEmpty {
                    problems.append("\(loc.rel): missing (not projected yet)")
                }
            } catch {
                problems.append("\(error)")
            }
            for other in loc.otherSpellings { problems.append("\(loc.dir)/\(other): another spelling of \(loc.rel), not taken yet") }
        }
        for (id, r) in model.refusedPages.sorted(by: { $0.key < $1.key }) {
            problems.append("page \(id) (\(r.kind == .journal ? "journal" : "page") \(r.name)) from device \(r.actor): refused, not the canonical id of what it names; its blocks are not shown")
        }
        return problems
    }
}
