// WorkspaceCore+Reconcile: before a page file is written again, whatever a person or another device
// changed in it becomes ops (Reconciler), judged by who wrote it (Reconciler.Provenance); a sync
// tool's conflict copy gives up its edits, then goes. Invariants: a file's hand edits are taken once;
// changes that may be another device's work in transit wait (WaitingFiles) instead of becoming ours.
import SystemCalls

extension WorkspaceCore {
    /// If the file differs from what was last projected, its differences become ops first.
    /// `origin` says who wrote it (PageFileOrigin); `copy` marks a sync tool's conflict copy of the
    /// page, which is never the page file itself. Returns how many ops it committed.
    @discardableResult
    func reconcileFile(_ pageID: BlockID, path: String, origin: PageFileOrigin = .unknown, copy: Bool = false) throws -> Int {
        guard let current = try readIfExists(path) else { waiting.release(path); return 0 }
        let projections = records.projections(of: pageID)
        if !copy {
            if let latest = projections.last, latest == current { waiting.release(path); return 0 }
            if lastReconciled[pageID] == current { return 0 }
        }
        if current == render(pageID) { waiting.release(path); return 0 }
        let editedHere = isEditedInPlace(path, pageID, origin: origin, copy: copy)
        let provenance: Reconciler.Provenance
        if editedHere {
            // With no projection of this page recorded here (a page the person just created), the
            // three-way has no base: what is new in the file is taken, and nothing else.
            provenance = projections.isEmpty ? .nothingKnown : .editedHere(bases: projections.map(Markdown.parse))
        } else {
            provenance = opHistory().map { .otherProducer($0) } ?? .nothingKnown
        }
        let ops = Reconciler.diff(file: Markdown.parse(current), provenance: provenance, model: model, page: pageID,
                                  mint: idMinter(for: current, page: pageID))
        if !editedHere, !ops.isEmpty, waiting.mustWait(path, origin: origin) {
            if waiting.hold(path, page: pageID, origin: origin) {
                log("\(path): \(ops.count) change(s) not explained by any op yet; waiting for other devices' ops before taking them")
            }
            return 0
        }
        waiting.release(path)
        if !copy { lastReconciled[pageID] = current }
        if ops.isEmpty { return 0 }
        try commit(ops)
        dirty.insert(pageID)
        log("\(path): \(ops.count) hand edit(s) turned into ops")
        return ops.count
    }

    /// Whether a person edited this device's projection of the page: the editor said so, or nobody
    /// saw it happen and the file is still the one this device published (edited in place; a copy
    /// never is). A file a sync tool delivered is never this.
    func isEditedInPlace(_ path: String, _ pageID: BlockID, origin: PageFileOrigin, copy: Bool) -> Bool {
        switch origin {
        case .editedHere: return true
        case .delivered: return false
        case .unknown:
            guard !copy, let now = FileIdentity(of: path),
                  let published = records.publishedIdentity(of: pageID) else { return false }
            return now == published
        }
    }

    /// Ids for hand-written blocks derive from the file's bytes: reconciling the same file twice (a
    /// crash before the projection that writes the ids) mints the same ids, so no duplicates.
    func idMinter(for file: [UInt8], page pageID: BlockID) -> (String) -> BlockID {
        var ordinal: UInt64 = 0
        return { [self] text in
            ordinal += 1
            let id = BlockID.derived(from: file, page: pageID, ordinal: ordinal)
            // Taken by something else (the same bytes long ago): a fresh id.
            if let b = model.blocks[id], b.deleted || b.text != text || b.page != pageID { return BlockID.random() }
            return id
        }
    }

    /// The op history, read from the op files the first time a file of unknown producer needs it.
    func opHistory() -> OpHistory? {
        if history == nil {
            // A read-only view of the archive, closed once the history is read.
            let archived = SeenOps(stateDir: Path.parent(of: seen.dir), writable: false, log: { _ in })
            defer { archived.close() }
            do { history = try OpHistory.load(opsDir: opsDir, seen: archived) }
            catch { log("\(opsDir): could not read the op history (\(error)); taking only new blocks from synced files") }
        }
        return history
    }

    /// Judges again every file whose changes waited for other devices' ops; pages that no longer
    /// wait become dirty. Returns ms until the next judgement is due, nil when nothing waits.
    func judgeWaiting() throws -> Int64? {
        for (path, w) in waiting.entries.sorted(by: { $0.key < $1.key }) {
            if let original = SyncToolNames.conflictOriginal(Path.lastComponent(path)) {
                try reconcileConflictCopy(path, original: Path.join(Path.parent(of: path), original))
            } else {
                try reconcileFile(w.page, path: path, origin: w.origin)
                if !waiting.contains(path) { dirty.insert(w.page) }
            }
        }
        return waiting.nextJudgementMs()
    }

    /// A sync tool's conflict copy of a page file is not a page: whatever genuine edit it holds
    /// becomes ops (judged by content, as any file another device wrote), then the copy goes.
    func reconcileConflictCopy(_ copyPath: String, original: String) throws {
        guard let pageID = try page(forFile: original) else { return }
        let n = try reconcileFile(pageID, path: copyPath, origin: .delivered(by: "syncthing"), copy: true)
        guard !waiting.contains(copyPath) else { return }
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

    /// A file under journals/ or pages/ changed (`path` absolute or relative to the root), or a
    /// conflict copy of one appeared: its changes become ops, and the page is written again if any did.
    func reconcile(path: String, origin: PageFileOrigin = .unknown) throws {
        if let original = SyncToolNames.conflictOriginal(Path.lastComponent(path)) {
            let abs = path.hasPrefix("/") ? path : Path.join(root, path)
            try reconcileConflictCopy(abs, original: Path.join(Path.parent(of: abs), original))
            return
        }
        guard let pageID = try page(forFile: path), let file = filePath(of: pageID) else { return }
        let settled = try settleJournalSpellings(pageID)
        if try reconcileFile(pageID, path: file, origin: origin) > 0 || settled { _ = try project(pageID) }
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
}
