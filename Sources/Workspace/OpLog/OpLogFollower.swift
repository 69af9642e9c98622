// OpLogFollower: every op file under .outl/ops with its cursor: the boot reads them all, and each live
// merge reads only what they gained since. Invariants: this device's own file is read (and its torn
// tail cut) by the boot only; another device's file is only ever read; a file missing for a moment
// (a sync tool's unlink before its rename) keeps its cursor and is simply not read now.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// One op file as read so far: for `outl status` ("has my laptop's line reached this machine?").
public struct OpLogSummary: Sendable, Equatable {
    /// The file's name under .outl/ops.
    public var file: String
    /// The device whose log it is: the actor id its name carries ("" if the name carries none).
    public var actor: String
    /// A sync tool's conflict copy (any name other than `ops-<actor>.jsonl`), merged like the original.
    public var conflictCopy: Bool
    /// Valid ops read from the file.
    public var ops: Int
    /// The wall time (ms since the epoch) of the file's newest op stamp; nil when it has no op.
    public var lastOpWall: Int64?
    /// Bytes read: up to the end of its last valid line.
    public var bytes: Int
    /// Its ops stamped further ahead of this machine's clock than HLClock.maxAhead (nil: none, or not
    /// looked at). Filled by Workspace.opLogSummaries(root:), not by the follower.
    public var aheadOfClock: StampsAhead? = nil
}

final class OpLogFollower {
    let dir: String
    /// `ops-<actor>.jsonl` of this device: cut at boot, never merged live.
    let ownName: String
    let log: WorkspaceLog
    /// What this device has seen of every op file, kept when the file loses it (nil: no archive).
    let seen: SeenOps?
    private(set) var cursors: [String: OpFileCursor] = [:]

    init(dir: String, ownName: String, seen: SeenOps? = nil, log: WorkspaceLog) {
        self.dir = dir
        self.ownName = ownName
        self.seen = seen
        self.log = log
    }

    /// What one file delivered in one pass.
    struct Delivery {
        var name: String
        var outcome: OpFileCursor.Outcome
    }

    /// What a cursor read goes to the file's archive; a failure there is logged, never the read's.
    private func keep(_ name: String, _ fd: Int32, _ span: KeptSpan) {
        do { try seen?.absorb(name, file: fd, span) } catch {
            log.warning("\(error): this device's archive of \(name) is behind; it catches up at the next start", ["OUTL_OPS_FILE": name])
        }
    }

    /// The workspace the op directory belongs to: `.outl/ops` is walked from it.
    var root: String { Path.parent(of: Path.parent(of: dir)) }

    /// Sets right a `.outl/ops` that a peer replaced (nil when read-only).
    var repair: FolderRepair?

    /// `.outl/ops`, opened from the workspace one component at a time without following a link
    /// (DirectoryWalk); nil when it does not exist yet. A link or a file there is set right
    /// (FolderRepair), or read as no directory at all when nothing may be changed.
    func openDirectory() throws -> FileDescriptor? {
        do { return try DirectoryWalk.open(dir, beneath: root) }
        catch let e as Errno where e == .ENOENT { return nil }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
        catch is UnsafeComponent {
            guard let repair else { return nil }
            return try repair.open(".outl/ops")
        }
    }

    /// The workspace's held directories (WorkspaceCore's), so a live merge does not walk from the
    /// root each time; nil: each merge opens `.outl/ops` as `openDirectory` does.
    var directories: HeldDirectories?

    /// `.outl/ops` for one live merge: held open and checked again now (HeldDirectories.expire);
    /// `ours` when it is a fresh descriptor (nothing held) that the caller closes.
    private func heldDirectory() throws -> (FileDescriptor?, ours: Bool) {
        guard let directories else { return (try openDirectory(), true) }
        directories.expire()
        do { return (try directories.directory(".outl/ops"), false) }
        catch let e as Errno where e == .ENOENT { return (nil, false) }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
        catch is UnsafeComponent {
            guard repair != nil else { return (nil, false) }
            do { return (try directories.directory(".outl/ops", create: 0o755), false) }
            catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
        }
    }

    /// The op files in `.outl/ops` as `heldDirectory` gave it: listed through the held stream.
    private func heldNames(_ opsFD: FileDescriptor?) throws -> [String] {
        guard let directories, opsFD != nil else { return try names(in: opsFD) }
        do { return opLogNames(try directories.names(".outl/ops")) }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
    }

    /// The op logs among a listing of `.outl/ops`, in name order; a name of their form that names
    /// no device is said once and left unread.
    private func opLogNames(_ listed: [String]) -> [String] {
        for name in listed where OpLogReader.hasOpLogForm(name) && !OpLogReader.isOpLogName(name) {
            sayUnread(name, "its name names no device (an op log is ops-<device id>.jsonl, and holds that device's ops only)")
        }
        return listed.filter(OpLogReader.isOpLogName).sorted()
    }

    /// Op files left unread and why, each said once while the reason stays (bounded: a flood of
    /// names says its lines again).
    private var saidUnread: [String: String] = [:]

    private func sayUnread(_ name: String, _ why: String) {
        guard saidUnread[name] != why else { return }
        if saidUnread.count >= 1000 { saidUnread.removeAll() }
        saidUnread[name] = why
        let path = Path.join(dir, name)
        log.warning("\(path): not read: \(why)", ["OUTL_OPS_FILE": path])
    }

    /// Versions of other devices' files left unread as logs rewritten to new content (RewrittenLog),
    /// by name: each version is judged, and said, once.
    private var refusedVersions: [String: FileStamp] = [:]

    /// Whether the version of another device's file at `path` is a log rewritten to new content, left
    /// unread. Judged for a file apart from its archive at the boot, and in a live merge for one whose
    /// bytes before what was read changed; a version once refused is skipped without a look.
    private func refusesRewrite(_ name: String, path: String, cursor c: OpFileCursor, in opsFD: FileDescriptor?, atBoot: Bool) -> Bool {
        guard let seen, atBoot || c.offset > 0 || refusedVersions[name] != nil else { return false }
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK
        guard let f = try? (opsFD.map { try $0.openat(name, flags, fullPath: path) } ?? FileDescriptor.open(path, flags)) else { return false }
        defer { f.close() }
        guard let st = try? f.stat(), st.st_mode & S_IFMT == S_IFREG else { return false }
        let version = FileStamp(st)
        if refusedVersions[name] == version { return true }
        refusedVersions[name] = nil
        if !atBoot {
            guard !c.isUnchanged(st), let same = try? c.prefixUnchanged(f.rawValue, path: path, size: Int(st.st_size)), !same else { return false }
        }
        guard let r = try? seen.judgeRewrite(name, file: f.rawValue, size: Int(st.st_size), path: path) else { return false }
        let judged = RewrittenLog(kept: r.kept, new: r.new, had: r.had)
        guard judged.isNewContent else { return false }
        refusedVersions[name] = version
        let device = OpLogFollower.actor(ofFile: name)?.description ?? name
        log.warning(judged.said(file: path, device: device), ["OUTL_OPS_FILE": path, "OUTL_DEVICE": device])
        return true
    }

    /// What a read of an op file that is not one says (a link is never followed).
    static let notRegularWhy = "not a regular file (a symbolic link, a FIFO or a device), which is never read as an op log"

    /// The op files there now, in name order; none when the directory does not exist.
    func names() throws -> [String] {
        guard let d = try openDirectory() else { return [] }
        return try d.closeAfter { try names(in: d) }
    }

    func names(in d: FileDescriptor?) throws -> [String] {
        guard let d else { return [] }
        do { return opLogNames(try d.readDirectory(path: dir)) }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
    }

    /// Total size of the op files, for the boot's reservation and progress.
    func totalBytes(_ names: [String], in d: FileDescriptor?) -> Int {
        guard let d else { return 0 }
        return names.reduce(0) { $0 + ((try? d.stat($1, fullPath: Path.join(dir, $1))).map { Int($0.st_size) } ?? 0) }
    }

    /// The boot: reads every op file from where its cursor stands (the start, the first time), this
    /// device's own one writable so its torn tail is cut on disk, and every archive (SeenOps) whose op
    /// file lost ops this device had seen. A read error fails the boot. `sizing` learns the files'
    /// total size before any is read (to reserve the model's room).
    func boot(progress: ((Int, Int) -> Void)?, sizing: (Int) -> Void = { _ in }, starting: (String) -> Void = { _ in },
              sink: (RawOpView, _ next: BlockID?) -> Void) throws -> OpLogReadStats {
        let opsFD = try openDirectory()
        defer { opsFD?.close() }
        let present = try names(in: opsFD)
        let files = Array(Set(present).union(seen?.names() ?? [])).sorted()
        let total = totalBytes(present, in: opsFD)
        sizing(total)
        var done = 0
        var stats = OpLogReadStats()
        for name in files {
            starting(name)
            let path = Path.join(dir, name)
            let own = name == ownName
            // The archive is a second copy: one that cannot be read or written (a full disk) is
            // logged, and the op file is read as it is.
            var inStep = true
            do { inStep = try seen?.prepare(name, opFile: path, in: opsFD) ?? true } catch { log.warning("\(error): this device's archive of \(name) is not used now", ["OUTL_OPS_FILE": name]) }
            // A file's lines are its device's ops only: a line of another device in this device's own
            // file was put there by someone else, and is set aside, never applied as this device's.
            let owner = OpLogFollower.actor(ofFile: name)
            var strays = 0
            let filtered: (RawOpView, BlockID?) -> Void = { op, next in
                if owner == nil || op.hlc.actor == owner { sink(op, next) } else { strays += 1 }
            }
            if !inStep, let seen {
                do { stats.ops += try seen.read(name, sink: filtered) } catch {
                    log.warning("\(error): this device's archive of \(name) cannot be read now", ["OUTL_OPS_FILE": name])
                }
                stats.faults += 1
            }
            var c = cursors[name] ?? OpFileCursor()
            // A file apart from its archive that holds mostly ops never seen: its archive alone serves.
            if !own, !inStep, refusesRewrite(name, path: path, cursor: c, in: opsFD, atBoot: true) { continue }
            let badBefore = c.bad
            let outcome = try c.read(path, in: opsFD, writable: own, log: log, sink: filtered, progress: { n in progress?(done + n, total) },
                                     keep: own || seen == nil ? nil : { fd, span in self.keep(name, fd, span) })
            cursors[name] = c
            if case .notRegular = outcome, !own { sayUnread(name, OpLogFollower.notRegularWhy) }
            if own, let seen {
                let held = seen.size(name)
                let whole: Bool
                switch outcome {
                case .read: whole = inStep && strays == 0 && held == c.offset
                case .missing, .unchanged: whole = inStep && held == 0  // nothing written here yet
                case .notRegular: whole = false
                }
                if whole {
                } else if inStep, strays == 0, case .read = outcome, held < c.offset {
                    // An archive behind its file (made by an older outld, or its unsynced tail lost
                    // to a power cut): the file, whose lines are all this device's, gives it the rest.
                    do { try seen.appendOwn(name, from: path, held..<c.offset) } catch {
                        log.warning("\(error); the op log holds it all, and the archive catches up later")
                    }
                } else {
                    // Not acknowledged until it holds all: if this fails, the first append tries again.
                    do {
                        let r = try seen.republishOwn(name, root: root)
                        log.warning("\(path): this device's own op log did not hold all it wrote (\(r.setAside) line(s) set aside, \(r.recovered) op(s) recovered); written again from this device's archive (\(seen.size(name)) bytes)")
                        stats.repairedOwn = true
                    } catch {
                        log.error("\(path): this device's own op log does not hold all it wrote and cannot be written again now (\(error))",
                                  ["OUTL_OPS_FILE": path])
                    }
                }
            }
            for f in seen?.faults.filter({ $0.file == name }) ?? [] { log.warning("\(f)", ["OUTL_OPS_FILE": path]) }
            if strays > 0 && !own { log.warning("\(path): skipped \(strays) op(s) of other devices (a file holds its own device's ops only)", ["OUTL_OPS_FILE": path]) }
            guard case .read(_, _, let ops, let size, let tail) = outcome else { continue }
            done += size
            stats.files += 1
            stats.bytes += size
            stats.ops += ops
            stats.badLines += c.bad - badBefore
            if tail > 0 {
                if own {
                    log.warning("\(path): cut a torn or invalid tail of \(tail) bytes at offset \(c.offset)", ["OUTL_OPS_FILE": path])
                    stats.cutBytes += tail
                } else {
                    log.warning("\(path): left an incomplete or invalid tail of \(tail) bytes (another device's file)", ["OUTL_OPS_FILE": path])
                }
            }
            if c.bad > badBefore { log.warning("\(path): skipped \(c.bad - badBefore) invalid line(s)", ["OUTL_OPS_FILE": path]) }
        }
        do { try seen?.sync() } catch { log.warning("syncing this device's archive of ops: \(error)") }
        progress?(total, total)
        return stats
    }

    /// What one live merge read, and whether it stopped for its budget with more to read.
    struct Followed {
        var deliveries: [Delivery] = []
        /// A file was left behind for the budget: the next merge goes on where this one stopped.
        var more = false
        /// Bytes of whole lines read, and (when `more`) about how many are left to read.
        var bytesRead = 0
        var bytesLeft = 0
    }

    /// A live merge: reads what every other device's op file (conflict copies included) gained since
    /// the last pass, and keeps it in its archive. A file that cannot be read now is logged and left
    /// for the next pass (its cursor unchanged or reset, so nothing is skipped); a file that vanished
    /// keeps its ops, in the model and in its archive. With a `budget`, stops once it is spent (at a
    /// line boundary, after at least one line) and says so (`more`); the files are taken in name
    /// order, so one file is read to its end before the next begins.
    func follow(budget: ReadBudget? = nil, sink: (RawOpView, _ next: BlockID?) -> Void) throws -> Followed {
        var out = Followed()
        let (opsFD, ours) = try heldDirectory()
        defer { if ours { opsFD?.close() } }
        let names = try heldNames(opsFD).filter { $0 != ownName }
        for (i, name) in names.enumerated() {
            if let budget, budget.spent {
                out.more = true
                out.bytesLeft += names[i...].reduce(0) { $0 + unread($1, in: opsFD) }
                break
            }
            let path = Path.join(dir, name)
            var c = cursors[name] ?? OpFileCursor()
            if refusesRewrite(name, path: path, cursor: c, in: opsFD, atBoot: false) { continue }
            let badBefore = c.bad
            let offsetBefore = c.offset
            let owner = OpLogFollower.actor(ofFile: name)
            var strays = 0
            do {
                let outcome = try c.read(path, in: opsFD, writable: false, log: log, budget: budget, sink: { op, next in
                    if owner == nil || op.hlc.actor == owner { sink(op, next) } else { strays += 1 }
                }, keep: seen == nil ? nil : { fd, span in self.keep(name, fd, span) })
                cursors[name] = c
                if case .notRegular = outcome { sayUnread(name, OpLogFollower.notRegularWhy) }
                if case .read(let from, _, _, _, _) = outcome {
                    out.deliveries.append(Delivery(name: name, outcome: outcome))
                    out.bytesRead += c.offset - (from == 0 ? 0 : offsetBefore)
                    // Behind only after a read: a file missing for now is read when it is back.
                    if c.behind {
                        out.more = true
                        out.bytesLeft += max(0, c.sizeSeen - c.offset)
                    }
                }
            } catch {
                cursors[name] = c
                log.warning("\(path): not read now (\(error)); it is read again on the next merge", ["OUTL_OPS_FILE": path])
                continue
            }
            if strays > 0 { log.warning("\(path): skipped \(strays) op(s) of other devices (a file holds its own device's ops only)", ["OUTL_OPS_FILE": path]) }
            if c.bad > badBefore { log.warning("\(path): skipped \(c.bad - badBefore) invalid line(s)", ["OUTL_OPS_FILE": path]) }
        }
        do { try seen?.sync() } catch { log.warning("syncing this device's archive of ops: \(error)") }
        return out
    }

    /// How much of a file its cursor has not read yet, by its size now (0 when it cannot be seen).
    private func unread(_ name: String, in d: FileDescriptor?) -> Int {
        guard let d, let st = try? d.stat(name, fullPath: Path.join(dir, name)) else { return 0 }
        return max(0, Int(st.st_size) - (cursors[name]?.offset ?? 0))
    }

    /// Every op file read so far. This device's own file is brought up to date first (read, not
    /// applied: its ops are in the model since they were written).
    func summaries() -> [OpLogSummary] {
        if !ownName.isEmpty, let d = try? openDirectory() {
            var c = cursors[ownName] ?? OpFileCursor()
            d.closeAfter {
                if (try? c.read(Path.join(dir, ownName), in: d, writable: false, sink: { _, _ in })) != nil { cursors[ownName] = c }
            }
        }
        return cursors.keys.sorted().map { name in
            let c = cursors[name]!
            let owner = OpLogFollower.actor(ofFile: name)
            return OpLogSummary(file: name, actor: owner?.description ?? "",
                                conflictCopy: owner.map { name != OpLogWriter.fileName($0) } ?? true,
                                ops: c.ops, lastOpWall: c.newest?.wall, bytes: c.offset)
        }
    }

    /// The actor id an op file's name carries: `ops-<actor>.jsonl` and its conflict copies.
    static func actor(ofFile name: String) -> BlockID? {
        let b = Array(name.utf8)
        guard b.count >= 4 + 36, name.hasPrefix("ops-") else { return nil }
        return b[4..<40].withUnsafeBufferPointer { BlockID.parse($0) }
    }
}
