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
    let actor: BlockID
    var clock: HLClock
    var model = Model()
    let writer: OpLogWriter
    var dirty = Set<BlockID>()
    var bases: [BlockID: [[UInt8]]] = [:]
    /// The file content each page's hand edits were last taken from, so they are taken once.
    var lastReconciled: [BlockID: [UInt8]] = [:]
    /// (st_dev, st_ino) of each page file as this device last left it: a file still that inode was
    /// edited in place here; another inode came from a sync tool (or an editor saving by rename).
    var projectedInode: [BlockID: (UInt64, UInt64)] = [:]
    /// Which contents some op produced; loaded the first time a file of unknown producer differs.
    var history: OpHistory?
    let log: (String) -> Void
    var bootStats = OpLogReadStats()
    static let keptBases = 3

    init(options: WorkspaceOptions) throws {
        root = options.root
        opsDir = Path.join(root, ".outl/ops")
        tmpDir = Path.join(root, ".outl/tmp")
        stateDir = DeviceState.directory(root: root, stateDirectory: options.stateDirectory)
        log = options.log ?? { msg in
            var line = Array("outl: \(msg)\n".utf8)
            _ = line.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
        // The lock first: a second process must never mint an actor or touch an ops file. A
        // read-only open takes no lock, mints nothing and treats every ops file as another's.
        lockFD = options.readOnly ? -1 : try DeviceState.lock(stateDir)
        do {
            actor = options.readOnly ? DeviceState.existingActor(stateDir) : try DeviceState.actor(stateDir)
            clock = HLClock(actor: actor)
            writer = OpLogWriter(dir: opsDir, actor: actor, appender: options.appender)
            // Fast path: one op file in HLC order (one device) is applied as it is read.
            var streamed = Model()
            let logBytes = (try? Sys.readDirectory(opsDir))?.reduce(0) { sum, n in
                sum + ((try? Sys.lstat(Path.join(opsDir, n))).map { Int($0.st_size) } ?? 0)
            } ?? 0
            streamed.blocks.reserve(logBytes: logBytes)
            var streamClock = clock
            var last: HLC? = nil
            var inOrder = true
            let ownName = options.readOnly ? "" : "ops-\(actor).jsonl"
            var (files, stats) = try OpLogReader.readAll(
                dir: opsDir, ownName: ownName, log: log, progress: options.bootProgress, streaming: true, stream: { op, next in
                    if let next { streamed.blocks.prefetch(next) }
                    guard inOrder else { return }
                    if let l = last, op.hlc < l { inOrder = false; return }
                    if op.hlc != last { streamClock.observe(op.hlc); streamed.apply(op) }
                    last = op.hlc
                })
            if files.isEmpty && inOrder {
                model = streamed
                clock = streamClock
            } else {
                if !inOrder {
                    streamed = Model()
                    (files, stats) = try OpLogReader.readAll(dir: opsDir, ownName: ownName, log: log, progress: nil)
                }
                model.blocks.reserveCapacity(stats.ops)
                OpLogReader.merge(files) { op in
                    clock.observe(op.hlc)
                    model.apply(op)
                }
            }
            bootStats = stats
        } catch {
            if lockFD >= 0 { Sys.close(lockFD) }
            throw error
        }
        // After a crash between an op and its projection any page may be stale: check them all once.
        dirty = Set(model.pages.keys)
    }

    func close() {
        writer.close()
        if lockFD >= 0 { Sys.close(lockFD); lockFD = -1 }
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
            op.page = pageID; op.pos = pos; op.text = c.text
            op.props = [Property("captured-at", c.capturedAt), Property("source", c.source)]
            ops.append(op)
            outcomes.append(.created)
        }
        try writer.append(ops)
        for op in ops { if let p = model.apply(op) { dirty.insert(p) }; history?.note(op) }
        return outcomes
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
        model.pages[pageID]?.relativePath.map { Path.join(root, $0) }
    }

    func projectDirtyPages() throws -> [String] {
        var written: [String] = []
        while let pageID = dirty.min() {
            dirty.remove(pageID)
            do {
                if let p = try project(pageID) { written.append(p) }
            } catch {
                dirty.insert(pageID)  // still stale: the next pass must try it again
                throw error
            }
        }
        return written
    }

    /// Reconciles then writes one page; returns the path if the file changed.
    func project(_ pageID: BlockID) throws -> String? {
        guard let path = path(of: pageID) else { return nil }
        try reconcileFile(pageID, path: path)
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
            try io(path) { try Durable.publish(bytes, to: path, via: temp, mode: 0o644) }
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
    @discardableResult
    func reconcileFile(_ pageID: BlockID, path: String) throws -> Int {
        guard let current = try readIfExists(path) else { return 0 }
        let history = loadBases(pageID, path: path)
        if let latest = history.last, latest == current { return 0 }
        if lastReconciled[pageID] == current { return 0 }
        if current == render(pageID) { return 0 }
        // Still the file this device published, changed in place: a person editing our projection.
        // Anything else may be another device's projection: explain it with the op history instead.
        let inPlace = inode(path).map { i in projectedInode(pageID).map { $0 == i } ?? false } ?? false
        let explainer: OpHistory? = inPlace ? nil : opHistory()
        // Ids for hand-written blocks derive from the file's bytes: reconciling the same file twice
        // (a crash before the projection that writes the ids) mints the same ids, so no duplicates.
        var ordinal: UInt64 = 0
        let ops = Reconciler.diff(file: Markdown.parse(current), bases: inPlace ? history.map(Markdown.parse) : [],
                                  history: explainer, model: model, page: pageID, mint: { text in
                                      ordinal += 1
                                      let id = BlockID.derived(from: current, page: pageID, ordinal: ordinal)
                                      // Taken by something else (the same bytes long ago): a fresh id.
                                      if let b = model.blocks[id], b.deleted || b.text != text || b.page != pageID {
                                          return BlockID.random()
                                      }
                                      return id
                                  })
        lastReconciled[pageID] = current
        if ops.isEmpty { return 0 }
        try commit(ops)
        dirty.insert(pageID)
        log("\(path): \(ops.count) hand edit(s) turned into ops")
        return ops.count
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
            guard let day = JournalDay(parsing: stem), day.fileStem == stem else { return nil }
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

    func reconcile(path: String) throws {
        guard let pageID = try page(forFile: path), let p = self.path(of: pageID) else { return }
        if try reconcileFile(pageID, path: p) > 0 { _ = try project(pageID) }
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
            guard let rel = page.relativePath else {
                if !page.known { problems.append("page \(id): blocks without a page op") }
                continue
            }
            let p = Path.join(root, rel)
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
