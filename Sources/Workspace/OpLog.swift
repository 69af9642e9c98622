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
    let appender: DurableAppender
    private var fd: Int32 = -1
    /// Set after a failed append whose torn bytes could not be cut: start the next batch on a new line.
    private var needsNewline = false
    /// Where a failed append began, while cutting it back failed: the next append cuts there first,
    /// so a batch retried once the disk is back is in the file once, not twice.
    private var pendingCut: Int64?
    /// We created the file and its directory is not yet fsync'd: the name is not durable until it is.
    private var needsDirectorySync = false

    init(dir: String, actor: BlockID, appender: DurableAppender) {
        self.dir = dir
        self.path = Path.join(dir, OpLogWriter.fileName(actor))
        self.appender = appender
    }

    /// The name of `actor`'s own op file under .outl/ops.
    static func fileName(_ actor: BlockID) -> String { "ops-\(actor).jsonl" }

    /// Appends the ops as one batch and returns once they are on stable storage.
    func append(_ ops: [Op]) throws {
        if ops.isEmpty { return }
        if fd < 0 {
            try io(dir) { try Durable.makeDirectory(dir, mode: 0o755) }
            do {
                fd = try Sys.open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644)
                needsDirectorySync = true
            } catch let e as Errno where e == .EEXIST {
                fd = try io(path) { try Sys.open(path, O_WRONLY | O_APPEND | O_NOFOLLOW) }
            } catch let e as Errno {
                throw WorkspaceError.io(e, path: path)
            }
        }
        if let cut = pendingCut, (try? Sys.ftruncate(fd, cut)) != nil {
            pendingCut = nil
            needsNewline = false
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ops.count * 256)
        if needsNewline { bytes.append(10) }
        for op in ops { OpEncoder.append(op, to: &bytes) }
        let before = (try? Sys.fstat(fd)).map { Int64($0.st_size) }
        do {
            try bytes.withUnsafeBytes { try appender.appendDurably(fd, $0) }
            // A new file's name is durable only once its directory is; until then the batch is
            // not saved, and it is cut like any failed append so its retry is not a second copy.
            if needsDirectorySync {
                try Durable.syncDirectory(dir)
                needsDirectorySync = false
            }
            needsNewline = false
        } catch let e as Errno {
            // Nothing is promised about what reached the file: cut it back, or fence it off.
            if let before, (try? Sys.ftruncate(fd, before)) != nil {
                needsNewline = false
            } else {
                needsNewline = true
                pendingCut = pendingCut ?? before
            }
            throw WorkspaceError.io(e, path: path)
        }
    }

    func close() {
        if fd >= 0 { Sys.close(fd); fd = -1 }
    }
}

struct OpLogReadStats {
    var files = 0
    var bytes = 0
    var ops = 0
    var badLines = 0
    var cutBytes = 0
}

enum OpLogReader {
    /// Names the reader takes: ops-<actor>.jsonl and a sync tool's conflict copies of it.
    static func isOpLogName(_ name: String) -> Bool {
        name.hasPrefix("ops-") && name.hasSuffix(".jsonl")
    }

    /// Every op file's ops as lists (the reconciler's op history), read by the one reader
    /// (OpFileCursor); `ownName` is this device's file, whose torn tail is cut on disk.
    static func readAll(dir: String, ownName: String, log: @escaping (String) -> Void,
                        progress: ((Int, Int) -> Void)?) throws -> ([[Op]], OpLogReadStats) {
        var all: [[Op]] = []
        var current: [Op] = []
        let follower = OpLogFollower(dir: dir, ownName: ownName, log: log)
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
