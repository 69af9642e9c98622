// PagePass: the pass over stale pages, and the one function per page that makes its file show the
// model: resolve its file once, read it once, turn its changes into ops, render, publish, record.
// Invariants: a page file is written only after its changes became ops; a file fewer blocks than the
// page deletes nothing unless it is this device's projection, edited in place, three-way against the
// projection it came from; a stray (second spelling, conflict copy) only adds; one page's failure is
// recorded as its state and the pass goes on; nothing under journals/ or pages/ is reached by a link.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// journals/, pages/ and .outl/tmp for one pass: the workspace's held directories (HeldDirectories,
/// opened one component at a time without following a link), checked again once at the start of
/// the pass, so what a peer did to them since the last pass is seen before any file in them is used.
struct PageDirectories {
    let held: HeldDirectories
    var root: String { held.root }

    init(_ held: HeldDirectories) {
        self.held = held
        held.expire()
    }

    /// The directory (`journals`, `pages`, `.outl/tmp`), nil when it does not exist.
    func existing(_ rel: String) throws -> FileDescriptor? {
        do { return try held.directory(rel) }
        catch let e as Errno where e == .ENOENT { return nil }
        catch { throw PageFileError(rel, error) }
    }

    /// The directory, made (and its parent fsync'd) if it does not exist.
    func created(_ rel: String) throws -> FileDescriptor {
        do { return try held.directory(rel, create: rel.hasPrefix(".outl") ? 0o700 : 0o755) }
        catch { throw PageFileError(rel, error) }
    }
}

/// Where a page's file is: its directory and name, and the other spellings of it that exist there.
struct PageLocation {
    var dir: String
    var name: String
    var otherSpellings: [String] = []
    var rel: String { "\(dir)/\(name)" }
}

/// A page file as read: its bytes, and its identity, stamp and ctime from the same descriptor.
struct PageFileRead {
    var bytes: [UInt8]
    var identity: FileIdentity
    var stamp: FileStamp
    var ctimeMs: Int64
}

extension WorkspaceCore {
    // MARK: the pass

    /// Projects every stale page (and failing pages whose retry is due), the most recently marked
    /// first, or, with a `slice`, as many as fit in it and in what the turn has left
    /// (`pages.staleCount` says what is left);
    /// returns the paths written. A page whose file cannot be read or written becomes failing
    /// (logged once, retried with backoff) and the others go on; only an op-log failure (a commit of
    /// hand edits) is thrown.
    func projectStalePages() throws -> [String] {
        let now = wallClockMilliseconds()
        let started = monotonicNanoseconds()
        let budget = min(slice?.nanoseconds ?? .max, turnLeft?.nanoseconds ?? .max)
        let pageBudget = min(slice?.pages ?? .max, turnLeft?.pages ?? .max)
        var done = 0
        _ = pages.retryDue(now: now)
        pages.passBegins()
        let dirs = PageDirectories(directories)
        defer {
            if let left = turnLeft {
                turnLeft = (left.nanoseconds - min(left.nanoseconds, monotonicNanoseconds() - started), left.pages - min(left.pages, done))
            }
            pages.recordFailures(log: log)
            pages.index.flush()
            // The archive's copy of what was just acknowledged, synced once the pass's work is done.
            do { try seen.sync() } catch { log.warning("syncing this device's archive of ops: \(error)") }
        }
        var written: [String] = []
        var batch = pages.staleBatch()
        while !batch.isEmpty {
            for id in batch {
                // At least one page per pass, so a slice always makes progress: the most recently
                // marked, the page of the capture or of the edit that called the pass.
                if slice != nil, done > 0, done >= pageBudget || monotonicNanoseconds() - started >= budget {
                    return written
                }
                guard let origin = pages.staleOrigin(id) else { continue }
                done += 1
                do {
                    if let p = try projectPage(id, origin: origin, dirs: dirs) { written.append(p) }
                    if let f = pages.succeeded(id) { pageFailure(f, recovered: true) }
                } catch let e as PageFileError {
                    if let f = pages.fail(id, e, now: now) { pageFailure(f, recovered: false) }
                } catch {
                    pages.markStale([id])  // still stale: the next pass tries it again
                    throw error
                }
            }
            batch = pages.staleBatch()
        }
        return written
    }

    /// Where the page's file is; nil for a page without one (blocks whose page op has not arrived,
    /// a page refused for its id). A journal's file is the spelling that exists (Logseq's when both
    /// do; the other is a second spelling), else the one the setting names.
    func location(of id: BlockID, dirs: PageDirectories) throws -> PageLocation? {
        guard let page = model.pages[id], page.known, let rel = page.relativePath(journalFormat: journalFormat) else { return nil }
        guard page.kind == .journal, let day = page.journalDay else {
            return PageLocation(dir: Path.parent(of: rel), name: Path.lastComponent(rel))
        }
        let logseq = day.fileStem + ".md", iso = day.iso + ".md"
        guard let d = try dirs.existing("journals") else { return PageLocation(dir: "journals", name: Path.lastComponent(rel)) }
        func exists(_ name: String) throws -> Bool {
            do { _ = try d.stat(name, fullPath: Path.join(root, "journals/\(name)")); return true }
            catch let e as Errno where e == .ENOENT { return false }
            catch { throw PageFileError("journals/\(name)", error) }
        }
        // The spelling the setting names is the file whenever the other one is absent (the usual
        // case: one lookup); when the other exists, whether this one does too decides.
        let named = Path.lastComponent(rel), other = named == logseq ? iso : logseq
        guard try exists(other) else { return PageLocation(dir: "journals", name: named) }
        if try exists(named) { return PageLocation(dir: "journals", name: logseq, otherSpellings: [iso]) }
        return PageLocation(dir: "journals", name: other)
    }

    /// Reads `name` in `dir` (nil when absent); anything but a regular file within the limit is a
    /// PageFileError, so such a page fails and is left as it is.
    func readPage(_ rel: String, name: String, in dir: FileDescriptor?) throws -> PageFileRead? {
        guard let dir else { return nil }
        do {
            let (bytes, st) = try Durable.readRegularFileAndStat(name, in: dir, fullPath: Path.join(root, rel), limit: maxPageBytes)
            return PageFileRead(bytes: bytes, identity: FileIdentity(st), stamp: FileStamp(st), ctimeMs: WorkInTransit.ctimeMs(st))
        } catch let e as Errno where e == .ENOENT {
            return nil
        } catch {
            throw PageFileError(rel, error)
        }
    }

    /// One page: resolve, read, take its changes, render, publish, record. Returns the path if the
    /// file was written; nil when it already showed the model, or waits.
    func projectPage(_ id: BlockID, origin: PageFileOrigin, dirs: PageDirectories) throws -> String? {
        guard let loc = try location(of: id, dirs: dirs) else { pages.clean(id); return nil }
        for other in loc.otherSpellings {
            // Another spelling that cannot be read (a FIFO, a huge file) is left, said once, and
            // holds back neither this page nor any other.
            let rel = "\(loc.dir)/\(other)"
            do { try takeStray(rel, .secondSpelling, page: id, origin: .unknown, dirs: dirs) }
            catch let e as PageFileError { strayUnreadable(rel, e) }
        }
        let file = try readPage(loc.rel, name: loc.name, in: try dirs.existing(loc.dir))
        if file != nil { pages.fileRead(id) }
        if file == nil, origin == .removed, let why = vanishedWait(id, rel: loc.rel) {
            if pages.wait(id, origin: origin, ctimeMs: pages.vanishedSince(id) ?? 0) {
                log("\(Path.join(root, loc.rel)): \(why)", ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, loc.rel)])
            }
            return nil
        }
        if let why = try takeChanges(of: id, from: file, rel: loc.rel, origin: origin, stray: nil) {
            if pages.wait(id, origin: origin, ctimeMs: file?.ctimeMs ?? 0) {
                log("\(Path.join(root, loc.rel)): \(why)", ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, loc.rel)])
            }
            return nil
        }
        let rendered = renderPage(id)
        let bytes = rendered.bytes, shown = rendered.ids
        noteHeldBack(rendered.heldBack, of: id, rel: loc.rel)
        guard bytes.count <= maxPageBytes else {
            // Only a preamble can do this: every block can be held back.
            throw PageFileError(path: loc.rel, reason: "would be larger than the \(pageLimitText) a page file may hold; its blocks stay in the op log")
        }
        var identity = file?.identity
        var stamp = file?.stamp
        var wrote = false
        let unchanged = sameBytes(file?.bytes, bytes)
        if !unchanged, let file, isInOtherForm(file, of: id, rendered: bytes) {
            // Not recorded as a projection nor in the page index: the file is not this device's bytes.
            leftInOtherForm(loc.rel, page: id)
            pages.clean(id)
            return nil
        }
        if !unchanged, !(file == nil && bytes.isEmpty) {
            // Over the file read, still as read, or where there was none: never over a file nobody
            // read (a sync tool's delivery in the gap between this read and the rename).
            let replacing: Durable.Replacing = file.map { .only($0.stamp) } ?? .nothing
            do {
                (identity, stamp) = try publish(bytes, rel: loc.rel, dir: loc.dir, name: loc.name, page: id,
                                                replacing: replacing, dirs: dirs)
            } catch let s as Durable.Superseded {
                superseded(id, s, rel: loc.rel)
                return nil
            }
            lastPublishedUsec = wallClockMicroseconds()
            wrote = true
        }
        // What the file held just before: all of it when it was left as it was, else what its last
        // reading (or this device's last projection) showed.
        pages.records.remember(bytes, ids: shown, fileHeld: unchanged ? { _ in true } : nil,
                               identity: identity, of: id)
        // The file (or its absence) now holds exactly what this model renders to.
        if stamp != nil || file == nil { pages.index.record(id, stamp: stamp, digest: startDigest(id), rel: loc.rel) }
        pages.clean(id)
        return wrote ? Path.join(root, loc.rel) : nil
    }

    /// Writes a page file durably through a temporary in .outl/tmp named for the page id (within
    /// NAME_MAX whatever the page's name); returns the identity of the file published, and its stamp
    /// as its own descriptor gave it (nil when that could not be read: the page is then read at start).
    func publish(_ bytes: [UInt8], rel: String, dir: String, name: String, page id: BlockID,
                 replacing: Durable.Replacing, dirs: PageDirectories) throws -> (FileIdentity, FileStamp?) {
        let pageDir = try dirs.created(dir)
        let tmp = try dirs.created(".outl/tmp")
        let tempName = "\(id).md.tmp"
        let tmpPath = Path.join(root, ".outl/tmp")
        func once() throws -> stat? {
            // The temp is in .outl/tmp, so its departure need not be durable: one fsync of the file
            // and one of its directory make the page durable.
            try Durable.publish(bytes, name: name, in: pageDir, dirPath: Path.join(root, dir),
                                via: tempName, in: tmp, tempDirPath: tmpPath, mode: 0o644, syncTempDirectory: false,
                                statAfterRename: true, replacing: replacing)
        }
        do {
            var published: stat?
            do { published = try once() } catch let e as Errno where e == .EEXIST {
                // The temp is opened O_EXCL: one a crash left behind (a page name taken since the
                // read is Durable.Superseded, never EEXIST).
                try? tmp.unlink(tempName, fullPath: Path.join(tmpPath, tempName))
                published = try once()
            }
            if let published { return (FileIdentity(published), FileStamp(published)) }
            return (FileIdentity(try pageDir.stat(name, fullPath: Path.join(root, rel))), nil)
        } catch let s as Durable.Superseded {
            throw s
        } catch {
            throw PageFileError(rel, error)
        }
    }

    /// A page file that went away on a `.removed` event is written again only once it is known to
    /// be gone: nothing came to its name for the settle time since its absence was first seen.
    /// Sync tools replace a file by unlinking it and then renaming their temporary in (Syncthing
    /// 1.19), editors by renaming it away and then writing anew; a file written in that gap would
    /// be written over a person's edit. Returns why the page waits, nil once it may be written.
    func vanishedWait(_ id: BlockID, rel: String) -> String? {
        let since = pages.noteVanished(id, now: wallClockMilliseconds())
        if transit.quietMs(fileCtimeMs: since) >= transit.settleMs { return nil }
        return "went away; written again from the op log in \((transit.settleMs + 999) / 1000) s unless a file comes to its name (a sync tool's or an editor's replace)"
    }

    /// The file changed under this pass's write (Durable.Superseded): nothing was written, and the
    /// page is judged again from what its name holds now; once in a pass, then by the next event
    /// or judgement, so a file replaced without end holds back no other page.
    func superseded(_ id: BlockID, _ s: Durable.Superseded, rel: String) {
        let origin: PageFileOrigin = s.present ? .unknown : .removed
        if pages.supersededOnce(id) {
            pages.fileChanged(id, origin: origin)
        } else {
            _ = pages.wait(id, origin: origin, ctimeMs: wallClockMilliseconds())
        }
        log("\(Path.join(root, rel)): \(s.description)", ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, rel)])
    }

    // MARK: taking a file's changes

    /// Turns what a file shows that the model does not into ops, as far as who wrote it lets it be
    /// believed. Returns why the file must wait (its changes may be another device's work in
    /// transit, or it is empty and may be an editor between truncating and writing), nil when it need not.
    func takeChanges(of id: BlockID, from file: PageFileRead?, rel: String, origin: PageFileOrigin, stray: StrayFile.Kind?) throws -> String? {
        if stray == nil { pages.cutShort.remove(id) }
        guard let file else { return nil }
        let current = file.bytes
        let records = pages.records
        let projections = records.projections(of: id)
        if stray == nil {
            if sameBytes(projections.last, current) { return nil }
            if sameBytes(pages.lastReconciled[id], current) { return nil }
        }
        if sameBytes(current, render(id)) { return nil }
        let parsed = Markdown.parse(current)
        // The page's own file as read now is what a buffer opened now would hold; noted once its
        // changes are judged against what was known before it.
        defer { if stray == nil { records.noteRead(Set(Reconciler.ids(in: parsed.blocks)), of: id) } }
        if parsed.blocks.isEmpty && parsed.preamble.allSatisfy({ $0.isWhitespace }) {
            // An empty file proves nothing was deleted: after a settle it is written again (the
            // page's file) or removed (a stray).
            if wallClockMilliseconds() - file.ctimeMs >= transit.settleMs { return nil }
            return "empty (perhaps half written): nothing in it is taken as deleted; it is written again unless it changes"
        }
        // Made from a projection: it holds one of the page's blocks, or it is still the inode this
        // device published, or its changes were taken here before (an editor's stale buffer of it).
        let known = holdsABlock(of: id, parsed.blocks) || records.publishedIdentity(of: id) == file.identity
            || pages.lastReconciled[id] != nil
        // A person's edit of this device's projection: the editor said so, or nobody saw it happen
        // and the file is still the inode this device published. A file holding none of the page's
        // blocks was not made from a projection (a new file at the name): it only adds.
        let editedHere = stray == nil && known && (origin == .editedHere
            || (origin == .unknown && records.publishedIdentity(of: id) == file.identity))
        // A copy cut short (a buggy peer, a torn transfer) is nobody's edit: nothing in it is taken,
        // and it is not written over (the same bytes may be a person's shortened last line). It
        // waits, with no time limit (no timer: its file's next change), for a whole file or an edit.
        if !editedHere, stray == nil, CutShort.isCutShort(current, of: projections + [render(id)]) {
            pages.cutShort.insert(id)
            return "cut short: it is the beginning of this page as written, ending inside a line; nothing in it is taken, "
                + "and it is written again once a whole file or an edit replaces it"
        }
        // Another producer's file is judged against every op: not while a merge in slices has
        // some left to read (they may explain it). It waits for the merge's end, unread history and all.
        if !editedHere, mergeUnderWay {
            return "changed by another producer while other devices' ops are being merged; judged once the merge is done"
        }
        let provenance: Reconciler.Provenance
        if editedHere {
            provenance = projections.isEmpty ? .nothingKnown
                : .editedHere(bases: projections.map(Markdown.parse), presence: records.presence(of: id))
        } else {
            provenance = opHistory().map { .otherProducer($0, shown: { projections.map(Markdown.parse) }) } ?? .nothingKnown
        }
        var ops = Reconciler.diff(file: parsed, provenance: provenance, model: model, page: id, device: actor,
                                  adopted: { [pages] in pages.adopted.contains($0) },
                                  history: { [self] in opHistory() }, mint: idMinter(for: current, page: id))
        if stray == .secondSpelling { ops.removeAll { $0.kind == .deleteBlock } }
        if !editedHere, !ops.isEmpty, transit.mustWait(fileCtimeMs: file.ctimeMs, origin: origin) {
            return "\(ops.count) change(s) not explained by any op yet; waiting for other devices' ops before taking them"
        }
        try refuseOversizedOps(ops, rel: rel)
        if stray == nil { pages.lastReconciled[id] = current }
        if ops.isEmpty { return nil }
        if editedHere {
            try commit(ops)
        } else {
            // Ops taken from another producer's file are recorded as such first (OpHistory.adopted).
            try commit(ops, namingBases: false) { [self] stamped in
                let stamps = stamped.map(\.hlc)
                try io(Path.join(root, rel)) { try pages.adopt(stamps) }
                history?.adopted.formUnion(stamps)
            }
        }
        log("\(Path.join(root, rel)): \(ops.count) hand edit(s) turned into ops", ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, rel)])
        return nil
    }

    /// A file whose edits would make an op line longer than any op log reader takes (a block of
    /// more than about 4 MiB) is taken not at all: such a line would be skipped at the next start,
    /// and the block lost from the model while the file, rewritten, no longer held it. The page
    /// fails instead, and its file is left as it is until the block is split.
    func refuseOversizedOps(_ ops: [Op], rel: String) throws {
        // The ops are not stamped yet: room for the longest stamp a commit can give them, and for
        // the base (Op.base) it names in an update.
        let room = OpFileCursor.maxLineBytes - 160
        for op in ops where op.kind == .createBlock || op.kind == .updateBlock || op.kind == .setPreamble {
            // A field is spelled in at most six bytes per byte of text (a control character's \u escape).
            if (op.text.utf8.count + op.props.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }) * 6 < room { continue }
            let n = OpEncoder.line(op).count
            if n > room {
                let first = op.text.split(separator: "\n", maxSplits: 1).first.map { String($0.prefix(40)) } ?? ""
                throw PageFileError(path: rel, reason: "holds a block (\"\(first)\") that would be an op of \(n) bytes, over the \(OpFileCursor.maxLineBytes >> 20) MiB an op may be: nothing in the file is taken and it is left as it is until that block is split")
            }
        }
    }

    /// Whether any of `blocks` (at any depth) carries the id of a block of the page.
    func holdsABlock(of id: BlockID, _ blocks: [MDBlock]) -> Bool {
        var todo = blocks[...].reversed().map { $0 }
        while let b = todo.popLast() {
            if let bid = b.id, model.blocks[bid]?.page == id { return true }
            todo.append(contentsOf: b.children.reversed())
        }
        return false
    }

    /// A file that stands for page `id` without being its file: what it adds is taken (a conflict
    /// copy is judged as another producer's file), then it is removed; while it waits, it stays.
    func takeStray(_ rel: String, _ kind: StrayFile.Kind, page id: BlockID, origin: PageFileOrigin, dirs: PageDirectories) throws {
        let dirRel = Path.parent(of: rel), name = Path.lastComponent(rel)
        let dir = try dirs.existing(dirRel)
        guard let file = try readPage(rel, name: name, in: dir) else { pages.releaseStray(rel); return }
        if let why = try takeChanges(of: id, from: file, rel: rel, origin: origin, stray: kind) {
            if pages.holdStray(rel, StrayFile(page: id, kind: kind, origin: origin, ctimeMs: file.ctimeMs)) {
                log("\(Path.join(root, rel)): \(why)", ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, rel)])
            }
            return
        }
        pages.releaseStray(rel)
        do { try dir?.unlink(name, fullPath: Path.join(root, rel)) } catch let e as Errno where e == .ENOENT {} catch {
            throw PageFileError(rel, error)
        }
        let what = kind == .conflictCopy ? "a sync conflict copy" : "another spelling"
        log("\(Path.join(root, rel)): \(what) of \(model.pages[id]?.name ?? id.description); its additions were taken and it was removed",
            ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, rel)])
        pages.markStale([id])
    }

    /// Ids for hand-written blocks derive from the file's bytes: reconciling the same file twice (a
    /// crash before the projection that writes the ids, or an editor saving that buffer again) mints
    /// the same ids, so no duplicates.
    func idMinter(for file: [UInt8], page pageID: BlockID) -> (String) -> BlockID {
        var ordinal: UInt64 = 0
        let hashed = BlockID.DerivedIDs(file, page: pageID)
        return { [self] text in
            ordinal += 1
            let id = BlockID.derived(hashed, ordinal: ordinal)
            // Taken by something else (a block since deleted, or of another page): a fresh id. A
            // live block of this page is the one these bytes made; Reconciler.identify tells an
            // older state of it (an editor's buffer saved again) from the same bytes replayed.
            if let b = model.blocks[id], b.deleted || b.page != pageID { return BlockID.random() }
            return id
        }
    }

    /// The op history, read from the op files the first time a file of unknown producer needs it.
    func opHistory() -> OpHistory? {
        if history == nil {
            // A read-only view of the archive, closed once the history is read.
            let archived = SeenOps(stateDir: Path.parent(of: seen.dir), writable: false, log: .silent)
            defer { archived.close() }
            do {
                history = try OpHistory.load(opsDir: opsDir, seen: archived)
                history?.adopted = pages.adopted
            }
            catch { log.warning("\(opsDir): could not read the op history (\(error)); taking only new blocks from synced files") }
        }
        return history
    }

    // MARK: what changed on disk

    /// Judges again every file whose changes waited; returns ms until the next judgement or retry
    /// of a failing page is due, nil when nothing waits or fails.
    func judgeWaiting() throws -> Int64? {
        pages.markStale(pages.waiting.map(\.0))
        let dirs = PageDirectories(directories)
        for (rel, s) in pages.strays.sorted(by: { $0.key < $1.key }) {
            do { try takeStray(rel, s.kind, page: s.page, origin: s.origin, dirs: dirs) }
            catch let e as PageFileError { strayUnreadable(rel, e) }
        }
        _ = try projectStalePages()
        return nextPageJudgementMs()
    }

    /// Ms until a waiting file or a failing page is due; nil when none waits or fails.
    func nextPageJudgementMs() -> Int64? {
        var next: Int64? = nil
        // While a merge in slices goes on, waiting files are judged at its end, not before.
        if !mergeUnderWay {
            for (id, c) in pages.waiting where !pages.cutShort.contains(id) { next = min(next ?? Int64.max, transit.remainingMs(fileCtimeMs: c)) }
            for s in pages.strays.values { next = min(next ?? Int64.max, transit.remainingMs(fileCtimeMs: s.ctimeMs)) }
        }
        if let r = pages.nextRetryMs(now: wallClockMilliseconds()) { next = min(next ?? Int64.max, r) }
        return next
    }

    /// Paths (absolute) of the page files and strays whose changes wait.
    var waitingPaths: [String] {
        let dirs = PageDirectories(directories)
        var out = pages.strays.keys.map { Path.join(root, $0) }
        for (id, _) in pages.waiting { if let l = try? location(of: id, dirs: dirs) { out.append(Path.join(root, l.rel)) } }
        return out.sorted()
    }

    /// The page a file under journals/ or pages/ stands for (`rel` relative to the root), created
    /// (as an op) if it is new; nil for a name that is no page (an editor's temporary, a dotfile).
    func page(forFile rel: String) throws -> BlockID? {
        let parts = rel.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == "journals" || parts[0] == "pages" else { throw WorkspaceError.badPath(rel) }
        guard parts[1].hasSuffix(".md"), !parts[1].hasPrefix(".") else { return nil }
        let stem = String(parts[1].dropLast(3))
        var op: Op
        if parts[0] == "journals" {
            // Either spelling is the day's page (JournalFiles), never a second one.
            guard let day = JournalDay(parsing: stem) else { return nil }
            op = Op(hlc: clock.last, kind: .createPage, id: BlockID.journalPage(day))
            op.pageKind = .journal; op.text = day.iso
        } else {
            switch PageFileName.parse(stem) {
            case .shortened(let id):
                // A shortened name does not spell its page: the page is found by its id, never
                // made from the stem; until its ops arrive the file is left alone.
                return model.pages[id]?.known == true ? id : nil
            case .name(let name):
                op = Op(hlc: clock.last, kind: .createPage, id: BlockID.namedPage(name))
                op.pageKind = .named; op.text = name
            }
        }
        if model.pages[op.id]?.known != true { try commit([op]) }
        return op.id
    }

    /// `path` (absolute, or relative to the root) as a page file's path relative to the root.
    func relativeToRoot(_ path: String) throws -> String {
        guard path.hasPrefix("/") else { return path }
        let r = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(r) else { throw WorkspaceError.badPath(path) }
        return String(path.dropFirst(r.count))
    }

    /// Sorts one file under journals/ or pages/: its page's own file is marked stale (with who
    /// changed it), unless `asLeft` and it is as last projected (StartCheck) while its page is clean;
    /// another spelling or a conflict copy of a page is taken as a stray.
    func noteFile(_ rel: String, origin: PageFileOrigin, dirs: PageDirectories, asLeft: Bool = false) throws {
        let name = Path.lastComponent(rel), dir = Path.parent(of: rel)
        if let original = SyncToolNames.conflictOriginal(name) {
            guard let id = try page(forFile: "\(dir)/\(original)") else { return }
            let o: PageFileOrigin = origin == .unknown ? .delivered(by: "syncthing") : origin
            do { try takeStray(rel, .conflictCopy, page: id, origin: o, dirs: dirs) }
            catch let e as PageFileError { strayUnreadable(rel, e) }
            return
        }
        guard let id = try page(forFile: rel) else { return }
        let own = try? location(of: id, dirs: dirs)
        if own == nil || own?.rel == rel {
            // A clean page's model is the one its entry's digest names (every change marks it stale).
            if asLeft, pages.isClean(id), let e = pages.index.entries[id], fileAsLeft(id, e, dirs: dirs) { return }
            pages.fileChanged(id, origin: origin)
        } else {
            do { try takeStray(rel, .secondSpelling, page: id, origin: origin, dirs: dirs) }
            catch let e as PageFileError { strayUnreadable(rel, e) }
        }
    }

    /// A file under journals/ or pages/ changed (inotify), or a conflict copy of one appeared: its
    /// changes become ops, and the stale pages are written (with `project`; else by the caller's
    /// next pass, so a batch of events costs one pass, not one each). An event nobody can name
    /// (`unknown`: this device's own renames from .outl/tmp among them) about a file still as this
    /// device left it (StartCheck's stamp) changes nothing and is not read.
    func reconcile(path: String, origin: PageFileOrigin = .unknown, project: Bool = true) throws {
        let rel = try relativeToRoot(path)
        let parts = rel.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == "journals" || parts[0] == "pages" else { throw WorkspaceError.badPath(path) }
        guard parts[1].hasSuffix(".md"), !parts[1].hasPrefix(".") else { return }
        let dirs = PageDirectories(directories)
        try noteFile(rel, origin: origin, dirs: dirs, asLeft: origin == .unknown)
        if project { _ = try projectStalePages() }
    }

    /// Every file under journals/ and pages/, as if each had changed while nobody watched (but those
    /// found as last projected), then a pass.
    func reconcileAll() throws {
        let dirs = PageDirectories(directories)
        for dir in ["journals", "pages"] {
            let names: [String]
            do {
                names = try dirs.held.directory(dir).readDirectory(path: Path.join(root, dir))
            } catch let e as Errno where e == .ENOENT {
                continue
            } catch is UnsafeComponent {
                continue  // a link or a file: the pages there fail, and the pass says so once
            } catch {
                log.warning("\(PageFileError(dir, error))")
                continue
            }
            for n in names.sorted() where n.hasSuffix(".md") && !n.hasPrefix(".") {
                try noteFile("\(dir)/\(n)", origin: .unknown, dirs: dirs, asLeft: true)
            }
        }
        _ = try projectStalePages()
    }

    /// A stray (another spelling, a conflict copy) that cannot be read or removed: said once, left
    /// as it is, and its page is written all the same.
    func strayUnreadable(_ rel: String, _ e: PageFileError) {
        guard pages.strayFailed(rel, reason: e.reason) else { return }
        log.warning("\(Path.join(root, rel)): \(e.reason); not taken, and its page is written all the same", ["OUTL_PAGE_FILE": Path.join(root, rel)])
    }

    /// Says once which blocks a page's file leaves out to stay within the limit, naming the device
    /// whose write made each one that large, and when the page shows all its blocks again.
    func noteHeldBack(_ blocks: [HeldBackBlock], of page: BlockID, rel: String) {
        let (new, allShown) = pages.noteHeldBack(blocks, of: page)
        let path = Path.join(root, rel)
        for b in new {
            let device = heldBackDevice(b.id)
            let with = b.descendants == 0 ? "" : " with its \(b.descendants) nested block(s)"
            log.warning("device \(device): block \(b.id) (\(b.bytes) bytes)\(with) is not shown in \(path): the page would be larger than the \(pageLimitText) a page file may hold; it stays in the op log",
                        ["OUTL_PAGE": page.description, "OUTL_PAGE_FILE": path, "OUTL_BLOCK": b.id.description, "OUTL_DEVICE": device.description])
        }
        if allShown { log("\(path): every block is shown again", ["OUTL_PAGE": page.description, "OUTL_PAGE_FILE": path]) }
    }

    /// The page-file limit as a person reads it.
    var pageLimitText: String { maxPageBytes % (1 << 20) == 0 ? "\(maxPageBytes >> 20) MiB" : "\(maxPageBytes) bytes" }

    /// The device whose write gave the block its content: its newest update's, else its create's.
    func heldBackDevice(_ id: BlockID) -> BlockID {
        guard let r = model.blocks.find(id) else { return actor }
        let e = model.blocks.editsOf(r)
        return (e.update ?? e.create).actor
    }

    /// Says that a page became failing, or was written again after failing.
    func pageFailure(_ f: PageFailure, recovered: Bool) {
        if let onPageFailure { onPageFailure(f, recovered) }
        else if recovered { log("\(f.path): written again", ["OUTL_PAGE_FILE": f.path]) }
        else { log.warning("\(f.path) \(f.reason); this page is not written until that changes (the others are)", ["OUTL_PAGE_FILE": f.path]) }
    }
}
