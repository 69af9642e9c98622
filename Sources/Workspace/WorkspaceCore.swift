// WorkspaceCore: the booted workspace behind the `Workspace` actor: the model, the clock, the op-log
// writer, the dirty pages and the projection bases. Invariant: an op is applied to the model only after
// it is durable in the op log, and a page file is written only after its hand edits became ops.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class WorkspaceCore {
    let root: String
    let opsDir: String
    let stateDir: String
    let tmpDir: String
    private(set) var lockFD: Int32
    /// The machine-wide lock on the workspace directory (see DeviceState.lockWorkspace).
    private(set) var workspaceLockFD: Int32
    let actor: BlockID
    var clock: HLClock
    var model = Model()
    let writer: OpLogWriter
    /// Every op file's cursor: where the boot and each live merge stopped reading.
    let follower: OpLogFollower
    var dirty = Set<BlockID>()
    var bases: [BlockID: [[UInt8]]] = [:]
    /// The file content each page's hand edits were last taken from, so they are taken once.
    var lastReconciled: [BlockID: [UInt8]] = [:]
    /// (st_dev, st_ino) of each page file as this device last left it: a file still that inode was
    /// edited in place here; another inode came from a sync tool (or an editor saving by rename).
    var projectedInode: [BlockID: (UInt64, UInt64)] = [:]
    /// Which contents some op produced; loaded the first time a file of unknown producer differs.
    var history: OpHistory?
    /// Files judged by their content whose changes wait for other devices' ops (path → page, origin):
    /// what they show may be another device's work whose ops are still in transit, which must not be
    /// recorded here as this device's. Judged again after each merge, and taken once the ops
    /// directory has been quiet for `syncSettleMs`; meanwhile a waiting page file is not rewritten.
    var waiting: [String: (page: BlockID, origin: PageFileOrigin)] = [:]
    let syncSettleMs: Int64
    let log: (String) -> Void
    let journalSetting: JournalFileFormat?
    /// The format new days' files get: the setting, else the workspace's own (read once).
    lazy var journalFormat: JournalFileFormat = journalSetting ?? JournalFiles.format(ofWorkspace: root)
    var bootStats = OpLogReadStats()
    static let keptBases = 3

    init(options: WorkspaceOptions) throws {
        root = options.root
        opsDir = Path.join(root, ".outl/ops")
        tmpDir = Path.join(root, ".outl/tmp")
        journalSetting = options.journalFileFormat
        stateDir = DeviceState.directory(root: root, stateDirectory: options.stateDirectory)
        syncSettleMs = options.syncSettleMs
        log = options.log ?? { msg in
            var line = Array("outl: \(msg)\n".utf8)
            _ = line.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
        // The locks first: a second process must never mint an actor or touch an ops file. A
        // read-only open takes no lock, mints nothing and treats every ops file as another's.
        workspaceLockFD = options.readOnly ? -1 : try DeviceState.lockWorkspace(root)
        do { lockFD = options.readOnly ? -1 : try DeviceState.lock(stateDir) } catch { Sys.close(workspaceLockFD); throw error }
        do {
            actor = options.readOnly ? DeviceState.existingActor(stateDir) : try DeviceState.actor(stateDir)
            clock = HLClock(actor: actor)
            writer = OpLogWriter(dir: opsDir, actor: actor, appender: options.appender)
            follower = OpLogFollower(dir: opsDir, ownName: options.readOnly ? "" : "ops-\(actor).jsonl", log: log)
            // One reader and one apply serve the boot and the live merge: the model is a function of the
            // set of ops, so each file is read in one pass and applied as it is read, in any order, and
            // the cursors stay where the boot left them for the first merge.
            var booted = Model()
            booted.blocks.reserve(logBytes: follower.totalBytes(try follower.names()))
            var bootClock = clock
            bootStats = try follower.boot(progress: options.bootProgress) { op, next in
                if let next { booted.blocks.prefetch(next) }
                bootClock.observe(op.hlc)
                booted.apply(op)
            }
            booted.alsoTouched.removeAll()  // every page is dirty after the boot anyway
            model = booted
            clock = bootClock
        } catch {
            if lockFD >= 0 { Sys.close(lockFD) }
            if workspaceLockFD >= 0 { Sys.close(workspaceLockFD) }
            throw error
        }
        // After a crash between an op and its projection any page may be stale: check them all once.
        dirty = Set(model.pages.keys)
    }

    func close() {
        writer.close()
        if lockFD >= 0 { Sys.close(lockFD); lockFD = -1 }
        if workspaceLockFD >= 0 { Sys.close(workspaceLockFD); workspaceLockFD = -1 }
    }

    // MARK: writing ops

    /// Stamps, appends durably (one batch), then applies.
    func commit(_ ops: [Op]) throws {
        if ops.isEmpty { return }
        var stamped = ops
        for i in stamped.indices { stamped[i].hlc = clock.tick() }
        try writer.append(stamped)
        for op in stamped { if let p = model.apply(op) { dirty.insert(p) }; history?.note(op) }
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
        try writer.append(ops)
        for op in ops { if let p = model.apply(op) { dirty.insert(p) }; history?.note(op) }
        return outcomes
    }

    // MARK: merging other devices' ops

    /// Reads what other devices' op files gained since the boot or the last merge (new files, files
    /// grown or replaced by a sync tool, conflict copies), applies it, lets the clock observe every op
    /// read, and marks the pages it touched dirty for `projectDirtyPages`.
    func mergeForeignOps() throws -> MergeReport {
        var report = MergeReport()
        var byActor: [BlockID: Int] = [:]
        var touched = Set<BlockID>()
        model.alsoTouched.removeAll()
        let deliveries = try follower.follow { op, _ in
            clock.observe(op.hlc)
            report.read += 1
            let change = model.change(op)
            if history != nil { history!.note(op.op()) }
            switch change {
            case .none: return
            case .hidden: break
            case .page(let p): touched.insert(p)
            }
            byActor[op.hlc.actor, default: 0] += 1
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
        report.dirtyPages = touched.compactMap { path(of: $0).map { String($0.dropFirst(prefix.count)) } }.sorted()
        return report
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

    func path(of pageID: BlockID) -> String? {
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
        if waiting[dup] != nil { return false }
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
        defer { dirty.formUnion(held) }
        while let pageID = dirty.min() {
            dirty.remove(pageID)
            do {
                if let p = try project(pageID) { written.append(p) }
                if let p = path(of: pageID), waiting[p] != nil { held.insert(pageID) }
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
        guard let path = path(of: pageID) else { return nil }
        _ = try settleJournalSpellings(pageID)
        try reconcileFile(pageID, path: path, origin: waiting[path]?.origin ?? .unknown)
        if waiting[path] != nil { return nil }
        dirty.remove(pageID)
        let bytes = render(pageID)
        let current = try readIfExists(path)
        var wrote = false
        if current != bytes, !(current == nil && model.tree(of: pageID).isEmpty && bytes.isEmpty) {
            let dir = Path.parent(of: path)
            try io(dir) { try Durable.makeDirectory(dir, mode: 0o755) }
            try io(tmpDir) { try Durable.makeDirectory(tmpDir, mode: 0o700) }
            let temp = Path.join(tmpDir, Path.lastComponent(path) + ".tmp")
            try? Sys.unlink(temp)
            // The temp lives in .outl/tmp and is removed before each use, so its departure need not be
            // durable: one fsync of the file and one of its directory make the page durable.
            try io(path) { try Durable.publish(bytes, to: path, via: temp, mode: 0o644, syncTempDirectory: false) }
            wrote = true
        }
        try saveBase(pageID, path: path, bytes)
        saveInode(pageID, path: path)
        return wrote ? path : nil
    }

    func readIfExists(_ path: String) throws -> [UInt8]? {
        do { return try Durable.readRegularFile(path, limit: 64 << 20) }
        catch let e as Errno where e == .ENOENT { return nil }
        catch let e as Errno { throw WorkspaceError.io(e, path: path) }
    }

    // MARK: reconciling

    /// If the file differs from what was last projected, its differences become ops first.
    /// `origin` says who wrote it (PageFileOrigin); `copy` marks a sync tool's conflict copy of the
    /// page, which is never the page file itself.
    @discardableResult
    func reconcileFile(_ pageID: BlockID, path: String, origin: PageFileOrigin = .unknown, copy: Bool = false) throws -> Int {
        guard let current = try readIfExists(path) else { waiting[path] = nil; return 0 }
        let history = loadBases(pageID, path: path)
        if !copy {
            if let latest = history.last, latest == current { waiting[path] = nil; return 0 }
            if lastReconciled[pageID] == current { return 0 }
        }
        if current == render(pageID) { waiting[path] = nil; return 0 }
        // A person's edit of this device's projection is taken three-way against what this device
        // projected (a deletion included). Anything else may be another device's projection: it
        // is explained with the op history, and only what no op produced is an edit.
        let byPerson: Bool
        switch origin {
        // With no projection of this page recorded here (a page the person just created), the
        // three-way has no base and takes what is new in the file, and nothing else.
        case .editedHere: byPerson = true
        case .delivered: byPerson = false
        case .unknown:
            // Nobody saw it happen: still the inode this device published means edited in place.
            byPerson = !copy && (inode(path).map { i in projectedInode(pageID).map { $0 == i } ?? false } ?? false)
        }
        let explainer: OpHistory? = byPerson ? nil : opHistory()
        // Ids for hand-written blocks derive from the file's bytes: reconciling the same file twice
        // (a crash before the projection that writes the ids) mints the same ids, so no duplicates.
        var ordinal: UInt64 = 0
        let ops = Reconciler.diff(file: Markdown.parse(current), bases: byPerson ? history.map(Markdown.parse) : [],
                                  history: explainer, model: model, page: pageID, mint: { text in
                                      ordinal += 1
                                      let id = BlockID.derived(from: current, page: pageID, ordinal: ordinal)
                                      // Taken by something else (the same bytes long ago): a fresh id.
                                      if let b = model.blocks[id], b.deleted || b.text != text || b.page != pageID {
                                          return BlockID.random()
                                      }
                                      return id
                                  })
        if !byPerson, !ops.isEmpty, mayHoldWorkInTransit(origin), quietMs(path) < syncSettleMs {
            if waiting[path] == nil {
                log("\(path): \(ops.count) change(s) not explained by any op yet; waiting for other devices' ops before taking them")
            }
            waiting[path] = (pageID, origin)
            return 0
        }
        waiting[path] = nil
        if !copy { lastReconciled[pageID] = current }
        if ops.isEmpty { return 0 }
        try commit(ops)
        dirty.insert(pageID)
        log("\(path): \(ops.count) hand edit(s) turned into ops")
        return ops.count
    }

    /// Whether a file's unexplained content may be another device's work whose ops are still on
    /// their way: it was delivered by a sync tool, or the workspace is synced (another device's op
    /// file is here, or a sync tool's marker is: Syncthing's `.stfolder`, Dropbox's `.dropbox`,
    /// Nextcloud's and ownCloud's `.sync_*.db`). A workspace nobody syncs never waits.
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
        let own = Path.lastComponent(writer.path)
        return ((try? Sys.readDirectory(opsDir)) ?? []).filter { $0 != own }.map { Path.join(opsDir, $0) }
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

    /// Judges again every file whose changes waited for other devices' ops; pages that no longer
    /// wait become dirty. Returns ms until the next judgement is due, nil when nothing waits.
    func judgeWaiting() throws -> Int64? {
        for (path, w) in waiting.sorted(by: { $0.key < $1.key }) {
            if let original = SyncToolNames.conflictOriginal(Path.lastComponent(path)) {
                try reconcileConflictCopy(path, original: Path.join(Path.parent(of: path), original))
            } else {
                try reconcileFile(w.page, path: path, origin: w.origin)
                if waiting[path] == nil { dirty.insert(w.page) }
            }
        }
        let quiet = waiting.keys.map(quietMs).min()
        return quiet.map { max(0, syncSettleMs - min($0, syncSettleMs)) }
    }

    /// A sync tool's conflict copy of a page file is not a page: whatever genuine edit it holds
    /// becomes ops (judged by content, as any file another device wrote), then the copy goes.
    func reconcileConflictCopy(_ copyPath: String, original: String) throws {
        guard let pageID = try page(forFile: original) else { return }
        let n = try reconcileFile(pageID, path: copyPath, origin: .delivered(by: "syncthing"), copy: true)
        guard waiting[copyPath] == nil else { return }
        do { try Sys.unlink(copyPath) } catch let e as Errno where e == .ENOENT {} catch let e as Errno {
            throw WorkspaceError.io(e, path: copyPath)
        }
        log("\(copyPath): removed a sync conflict copy of \(Path.lastComponent(original)) (\(n) edit(s) taken from it)")
        if n > 0 { _ = try project(pageID) }
    }

    /// The page a file under journals/ or pages/ stands for, created (as an op) if it is new.
    func page(forFile path: String) throws -> BlockID? {
        let rel: String
        if path.hasPrefix("/") {
            let r = root.hasSuffix("/") ? root : root + "/"
            guard path.hasPrefix(r) else { throw WorkspaceError.badPath(path) }
            rel = String(path.dropFirst(r.count))
        } else {
            rel = path
        }
        let parts = rel.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[1].hasSuffix(".md"), !parts[1].hasPrefix(".") else {
            if parts.first == "journals" || parts.first == "pages" { return nil }  // editor temp files etc.
            throw WorkspaceError.badPath(path)
        }
        let stem = String(parts[1].dropLast(3))
        var op: Op
        if parts[0] == "journals" {
            // Either spelling is the day's page (JournalFiles), never a second one.
            guard let day = JournalDay(parsing: stem) else { return nil }
            op = Op(hlc: clock.last, kind: .createPage, id: BlockID.journalPage(day))
            op.pageKind = .journal; op.text = day.iso
        } else if parts[0] == "pages" {
            let name = PageFileName.decode(stem)
            op = Op(hlc: clock.last, kind: .createPage, id: BlockID.namedPage(name))
            op.pageKind = .named; op.text = name
        } else {
            throw WorkspaceError.badPath(path)
        }
        if model.pages[op.id]?.known != true { try commit([op]) }
        return op.id
    }

    func reconcile(path: String, origin: PageFileOrigin = .unknown) throws {
        if let original = SyncToolNames.conflictOriginal(Path.lastComponent(path)) {
            let abs = path.hasPrefix("/") ? path : Path.join(root, path)
            try reconcileConflictCopy(abs, original: Path.join(Path.parent(of: abs), original))
            return
        }
        guard let pageID = try page(forFile: path), let p = self.path(of: pageID) else { return }
        let settled = try settleJournalSpellings(pageID)
        if try reconcileFile(pageID, path: p, origin: origin) > 0 || settled { _ = try project(pageID) }
    }

    func reconcileAll() throws {
        for dir in ["journals", "pages"] {
            let names: [String]
            do { names = try Sys.readDirectory(Path.join(root, dir)) } catch { continue }
            for n in names.sorted() where n.hasSuffix(".md") && !n.hasPrefix(".") {
                try reconcile(path: "\(dir)/\(n)")
            }
        }
    }

    // MARK: projection bases (device-local)

    func baseFile(_ pageID: BlockID) -> String {
        Path.join(Path.join(stateDir, "bases"), pageID.description)
    }

    func loadBases(_ pageID: BlockID, path: String) -> [[UInt8]] {
        if let b = bases[pageID] { return b }
        var out: [[UInt8]] = []
        if let bytes = try? Durable.readRegularFile(baseFile(pageID), limit: 256 << 20) {
            // "<length>\n<bytes>" repeated, oldest first.
            var i = 0
            while i < bytes.count {
                guard let nl = bytes[i...].firstIndex(of: 10), let n = Int(String(decoding: bytes[i..<nl], as: UTF8.self)),
                      nl + 1 + n <= bytes.count else { break }
                out.append(Array(bytes[(nl + 1)..<(nl + 1 + n)]))
                i = nl + 1 + n
            }
        }
        bases[pageID] = out
        return out
    }

    /// Remembers what was projected. Written without fsync: losing a base after a crash only makes
    /// the next reconcile more conservative (it never deletes without a base).
    func saveBase(_ pageID: BlockID, path: String, _ bytes: [UInt8]) throws {
        var list = loadBases(pageID, path: path)
        if list.last == bytes { return }
        list.append(bytes)
        if list.count > WorkspaceCore.keptBases { list.removeFirst(list.count - WorkspaceCore.keptBases) }
        bases[pageID] = list
        var out: [UInt8] = []
        for b in list { out.append(contentsOf: "\(b.count)\n".utf8); out.append(contentsOf: b) }
        writeStateFile(baseFile(pageID), out)
    }

    func opHistory() -> OpHistory? {
        if history == nil {
            do { history = try OpHistory.load(opsDir: opsDir) }
            catch { log("\(opsDir): could not read the op history (\(error)); taking only new blocks from synced files") }
        }
        return history
    }

    func inode(_ path: String) -> (UInt64, UInt64)? {
        guard let st = try? Sys.lstat(path) else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    func inodeFile(_ pageID: BlockID) -> String { baseFile(pageID) + ".inode" }

    func projectedInode(_ pageID: BlockID) -> (UInt64, UInt64)? {
        if let i = projectedInode[pageID] { return i }
        guard let bytes = try? Durable.readRegularFile(inodeFile(pageID), limit: 128) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return nil }
        projectedInode[pageID] = (dev, ino)
        return (dev, ino)
    }

    /// Remembers which inode the page file is now. Without fsync, like the bases: a lost record only
    /// makes the next reconcile of that page treat the file as of unknown producer (conservative).
    func saveInode(_ pageID: BlockID, path: String) {
        guard let i = inode(path) else { return }
        if let old = projectedInode(pageID), old == i { return }
        projectedInode[pageID] = i
        writeStateFile(inodeFile(pageID), Array("\(i.0) \(i.1)\n".utf8))
    }

    /// A device-local record for the reconciler (projection bases, file identities), written by
    /// rename but not fsync'd on purpose: losing one only makes the next reconcile more cautious.
    func writeStateFile(_ file: String, _ bytes: [UInt8]) {
        do {
            try Durable.makeDirectory(Path.join(stateDir, "bases"), mode: 0o700)
            let tmp = file + ".tmp"
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            defer { Sys.close(fd) }
            try Sys.writeAll(fd, bytes)
            try Sys.rename(tmp, file)
        } catch {
            log("\(file): could not keep this reconciler record (\(error)); reconciling stays conservative")
        }
    }

    // MARK: inspection

    /// Disagreements between the op log's projection and the files on disk, one line each.
    func check() -> [String] {
        var problems: [String] = []
        for (id, page) in model.pages.sorted(by: { $0.key < $1.key }) {
            guard let p = path(of: id) else {
                if !page.known { problems.append("page \(id): blocks without a page op") }
                continue
            }
            let rel = String(p.dropFirst(root.count)).drop { $0 == "/" }
            let want = render(id)
            let have = (try? readIfExists(p)) ?? nil
            if have == nil {
                if !want.isEmpty { problems.append("\(rel): missing (not projected yet)") }
            } else if have! != want {
                problems.append("\(rel): differs from the op log (hand edit or stale projection)")
            }
        }
        return problems
    }
}
