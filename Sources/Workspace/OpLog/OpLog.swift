// OpLog: the append-only op files under .outl/ops/. The writer appends a batch with one appendDurably
// (group commit) and fsyncs the directory when it created the file. Reading is OpFileCursor's (one
// reader for the boot, the live merge and the op history): it keeps the valid lines of every
// ops-*.jsonl (Syncthing/Dropbox conflict copies included) and cuts this device's own torn, garbage or
// zero-filled tail at the last valid record instead of refusing.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class OpLogWriter {
    let dir: String
    let path: String
    let name: String
    let appender: DurableAppender
    /// The archive of what this device wrote (SeenOps): the file at `path` must hold exactly it.
    let seen: SeenOps?
    let log: WorkspaceLog
    private var fd: Int32 = -1
    /// Set after a failed append whose torn bytes could not be cut: start the next batch on a new line.
    private var needsNewline = false
    /// Where a failed append began, while cutting it back failed: the next append cuts there first,
    /// so a batch retried once the disk is back is in the file once, not twice.
    private var pendingCut: Int64?
    /// We created the file and its directory is not yet fsync'd: the name is not durable until it is.
    private var needsDirectorySync = false
    /// The size the file has after this writer's last append: anything else is someone else's doing.
    private var expectedEnd = 0
    /// The archive missed a batch (a full disk): it catches up from the file when it is needed.
    private var archiveBehind = false
    /// `.outl/ops` as walked when the file was opened, and its identity: each batch's check is then
    /// two stats of names plus one of the file, not a walk (a swapped `.outl/ops` differs by inode).
    private var opsDir: FileDescriptor? = nil
    private var opsDirIdentity: (dev: UInt64, ino: UInt64) = (0, 0)
    /// A batch is durable but the name does not hold it (giving it back failed): nothing more is
    /// acknowledged until the name holds all this device wrote.
    private var needsRepublish = false

    /// Thrown when the batch is durable in the file this writer had open but could not be given
    /// back to the name: the batch is not acknowledged, yet it must not be written a second time.
    struct DurableButNotAtItsName: Error { let underlying: Error }

    /// Sets right `.outl/ops` when a peer replaced it (nil: refused, as in tests of the writer alone).
    let repair: FolderRepair?

    init(dir: String, actor: BlockID, appender: DurableAppender, seen: SeenOps? = nil, repair: FolderRepair? = nil,
         log: WorkspaceLog = .silent) {
        self.repair = repair
        self.dir = dir
        self.name = OpLogWriter.fileName(actor)
        self.path = Path.join(dir, name)
        self.appender = appender
        self.seen = seen
        self.log = log
    }

    /// The workspace `.outl/ops` belongs to, which it is walked from.
    var root: String { Path.parent(of: Path.parent(of: dir)) }

    /// `.outl/ops` opened from the workspace without following a link (made when `create`, and
    /// then set right if a peer replaced it).
    private func opsDirectory(create: Bool) throws -> FileDescriptor {
        if create, let repair { return try repair.open(".outl/ops") }
        do { return try DirectoryWalk.open(dir, beneath: root, create: create ? 0o755 : nil) }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
    }

    /// The name of `actor`'s own op file under .outl/ops.
    static func fileName(_ actor: BlockID) -> String { "ops-\(actor).jsonl" }

    /// Appends the ops as one batch and returns once they are on stable storage in the file that
    /// has the name: a file a sync tool renamed over this one, deleted, cut or wrote into is noticed
    /// before the batch is acknowledged, and the name is given back all this device wrote.
    func append(_ ops: [Op]) throws {
        var room = 0
        ops.withUnsafeBufferPointer { ops in for k in ops.indices { room += OpEncoder.bound(ops[k]) } }
        try append(count: ops.count, room: room) { w, spelled in
            // Through the buffer: a million fewer instructions per 10,000 ops than `for op in` here
            // (measured; each op is still copied for the call, which no spelling tried avoids).
            ops.withUnsafeBufferPointer { ops in for k in ops.indices { OpEncoder.encode(ops[k], &w, &spelled) } }
        }
    }

    /// The same for a call's captures (CaptureBatch): one batch, its ops in order.
    func append(_ batch: CaptureBatch) throws {
        try append(count: batch.count, room: batch.bound) { w, spelled in
            batch.inOrder(capture: { OpEncoder.encode($1, &w, &spelled) }, page: { OpEncoder.encode($0, &w, &spelled) })
        }
    }

    /// Appends `count` ops that `encode` spells, in at most `room` bytes (OpEncoder.bound of each).
    private func append(count: Int, room: Int, _ encode: (inout ByteWriter, inout OpEncoder.Spelled) -> Void) throws {
        if needsRepublish {
            try republish("did not hold this device's last batch")
            needsRepublish = false
        }
        if count == 0 { return }
        if fd < 0 { try openFile() }
        if let cut = pendingCut, (try? Sys.ftruncate(fd, cut)) != nil {
            pendingCut = nil
            needsNewline = false
        }
        // Every line written in place into room for the longest lines the ops can make: a big batch
        // never grows by copying itself, and what is not written is address space, never touched.
        let opsStart = needsNewline ? 1 : 0
        let bytes = [UInt8](unsafeUninitializedCapacity: opsStart + room) { room, n in
            var w = ByteWriter(room)
            if needsNewline { w.byte(10) }
            var spelled = OpEncoder.Spelled()
            encode(&w, &spelled)
            n = w.count
        }
        let before = (try? Sys.fstat(fd)).map { Int64($0.st_size) }
        do {
            try bytes.withUnsafeBytes { try appender.appendDurably(fd, $0) }
            // A new file's name is durable only once its directory is; until then the batch is
            // not saved, and it is cut like any failed append so its retry is not a second copy.
            if needsDirectorySync {
                try opsDir?.sync()
                needsDirectorySync = false
            }
            needsNewline = false
        } catch {
            // Nothing is promised about what reached the file: cut it back, or fence it off.
            if let before, (try? Sys.ftruncate(fd, before)) != nil {
                needsNewline = false
            } else {
                needsNewline = true
                pendingCut = pendingCut ?? before
            }
            if let e = error as? Errno { throw WorkspaceError.io(e, path: path) }
            throw error
        }
        let intact = holdsAllWritten(expecting: expectedEnd + bytes.count)
        expectedEnd += bytes.count
        guard let seen else { return }
        // The batch is durable in the file: the archive is its second copy, so a failure to write
        // it is not the batch's (it catches up from the file before the archive is next needed).
        if !archiveBehind {
            do { try bytes.withUnsafeBufferPointer { try seen.appendOwn(name, UnsafeBufferPointer(rebasing: $0[opsStart...])) } } catch {
                archiveBehind = true
                log.warning("\(error); the op log holds it all, and the archive catches up later")
            }
        }
        if !intact {
            let there = (try? opsDirectory(create: false)).flatMap { d in d.closeAfter { try? d.stat(name, fullPath: path) } }
                .map { "\($0.st_size) bytes at the name" } ?? "nothing at the name"
            do {
                try republish("was replaced, deleted or written to by someone else while outld appended to it (\(there), \(expectedEnd) expected)")
            } catch {
                needsRepublish = true
                throw DurableButNotAtItsName(underlying: error)
            }
        }
    }

    /// A merge noticed a change in .outl/ops: if it touched this device's own file, the name is given
    /// back all this device wrote now, not at the next append.
    func checkOwnFile() throws {
        guard let seen, seen.size(name) > 0 || fd >= 0 else { return }
        if fd < 0 { try openFile(); return }
        if !holdsAllWritten(expecting: expectedEnd) {
            needsRepublish = true
            try republish("was replaced, deleted or written to by someone else")
            needsRepublish = false
        }
    }

    /// Opens the file (creating it when this device has written nothing yet) and checks that it
    /// holds what the archive says this device wrote; the boot made them one.
    private func openFile() throws {
        let d = try opsDirectory(create: true)
        hold(d)
        do {
            fd = try d.openat(name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644, fullPath: path).rawValue
            needsDirectorySync = true
        } catch let e as Errno where e == .EEXIST {
            do {
                fd = try d.openat(name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK, fullPath: path).rawValue
            } catch let e as Errno where e == .ELOOP || e.code == ENXIO {
                // A symlink or a FIFO at the name: never followed, replaced by the real file.
                try republish("is not a regular file")
                return
            } catch let e as Errno {
                throw WorkspaceError.io(e, path: path)
            }
        } catch let e as Errno {
            throw WorkspaceError.io(e, path: path)
        }
        let st = try io(path) { try Sys.fstat(fd) }
        expectedEnd = Int(st.st_size)
        guard let seen, (st.st_mode & S_IFMT) != S_IFREG || expectedEnd != seen.size(name) else { return }
        if (st.st_mode & S_IFMT) == S_IFREG, seen.behindOwn[name] == expectedEnd {
            // All its lines are this device's (the boot read them): the archive is behind, its disk
            // full; the file is right and takes the next batch.
            archiveBehind = true
            return
        }
        try republish("does not hold what this device's archive says it wrote")
    }

    /// The file at the name is the one this writer appends to, and has the size its appends gave it.
    private func holdsAllWritten(expecting end: Int) -> Bool {
        guard seen != nil else { return true }
        // `.outl/ops` is still the directory walked at open (not swapped, not behind a link now:
        // lstat of a path through a linked `.outl` names another inode), and the name in it is
        // this writer's file, of the size its appends gave it.
        guard let d = opsDir, let dirNow = try? Sys.lstat(dir), UInt64(dirNow.st_dev) == opsDirIdentity.dev,
              UInt64(dirNow.st_ino) == opsDirIdentity.ino,
              let mine = try? Sys.fstat(fd), let there = try? d.stat(name, fullPath: path), there.st_dev == mine.st_dev, there.st_ino == mine.st_ino,
              (mine.st_mode & S_IFMT) == S_IFREG else { return false }
        return Int(mine.st_size) == end
    }

    /// Gives the name back all this device wrote: its archive, with any of its own ops that only
    /// the file at the name or the file this writer had open still hold; what others put there is
    /// set aside. Only then is a batch acknowledged.
    private func republish(_ why: String) throws {
        guard let seen else { return }
        let r = try seen.republishOwn(name, root: root, alsoFrom: fd >= 0 ? fd : nil)
        archiveBehind = false
        log.warning("\(path) \(why): written again from this device's archive (\(seen.size(name)) bytes; \(r.setAside) line(s) set aside, \(r.recovered) op(s) recovered)")
        if fd >= 0 { Sys.close(fd); fd = -1 }
        let d = try opsDirectory(create: false)
        hold(d)
        fd = try io(path) { try d.openat(name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK, fullPath: path).rawValue }
        expectedEnd = seen.size(name)
        needsDirectorySync = false
        needsNewline = false
        pendingCut = nil
    }

    /// Keeps `d` (just walked) as the directory the file is checked in.
    private func hold(_ d: FileDescriptor) {
        opsDir?.close()
        opsDir = d
        if let st = try? d.stat() { opsDirIdentity = (UInt64(st.st_dev), UInt64(st.st_ino)) }
    }

    func close() {
        if fd >= 0 { Sys.close(fd); fd = -1 }
        opsDir?.close()
        opsDir = nil
    }
}

struct OpLogReadStats {
    var files = 0
    var bytes = 0
    var ops = 0
    var badLines = 0
    var cutBytes = 0
    /// Op files that lost ops this device had seen (their ops came from the archive).
    var faults = 0
    /// This device's own file did not hold all it wrote and was written again.
    var repairedOwn = false
}

enum OpLogReader {
    /// Names the reader takes: ops-<actor>.jsonl and a sync tool's conflict copies of it. An op's
    /// device is the device its file names, so a file whose name names none is never read.
    static func isOpLogName(_ name: String) -> Bool {
        hasOpLogForm(name) && OpLogFollower.actor(ofFile: name) != nil
    }

    /// `ops-….jsonl`: an op log's form, whether or not its name names a device.
    static func hasOpLogForm(_ name: String) -> Bool {
        name.hasPrefix("ops-") && name.hasSuffix(".jsonl")
    }

    /// Every op file's ops as lists (the reconciler's op history), read by the one reader
    /// (OpFileCursor); `ownName` is this device's file, whose torn tail is cut on disk.
    static func readAll(dir: String, ownName: String, seen: SeenOps? = nil, log: WorkspaceLog,
                        progress: ((Int, Int) -> Void)?) throws -> ([[Op]], OpLogReadStats) {
        var all: [[Op]] = []
        var current: [Op] = []
        let follower = OpLogFollower(dir: dir, ownName: ownName, seen: seen, log: log)
        let stats = try follower.boot(progress: progress, starting: { _ in
            if !current.isEmpty { all.append(current); current = [] }
        }, sink: { op, _ in current.append(op.op()) })
        if !current.isEmpty { all.append(current) }
        return (all, stats)
    }

    struct FileResult { var size: Int; var validEnd: Int; var bad: Int }

    /// One file read whole by a fresh cursor (tests and tools).
    static func readFile(_ path: String, writable: Bool, sink: (RawOpView, _ next: BlockID?) -> Void,
                         progress: (Int) -> Void) throws -> FileResult {
        var c = OpFileCursor()
        let outcome = try c.read(path, writable: writable, sink: sink, progress: progress)
        guard case .read(_, _, _, let size, _) = outcome else { throw WorkspaceError.io(.ENOENT, path: path) }
        return FileResult(size: size, validEnd: c.offset, bad: c.bad)
    }
}
