// MirrorProtocols: small stand-ins for the writer's delivery, the op log's append and the drain,
// written step for step like the real ones (SPEC 3 and 4). The real modules are proved by
// WriterFaultTests, RealDrainSweepTests and RealPowerLossTests; these stay because each can be
// switched to a known bug (no inbox fsync, no torn-tail cut) that the power-loss model and the
// fault sweeps must catch, which proves the machinery itself. Every file operation goes through
// Sys/Durable.
import Glibc
import SystemCalls

/// Maildir delivery (SPEC 3): tmp/ O_EXCL write, fsync, rename into the inbox, fsync the inbox.
/// `syncInbox: false` is the ALICE bug, kept so a test can prove the model catches it.
func mirrorDeliver(_ bytes: [UInt8], name: String, inbox: String, syncInbox: Bool = true) throws {
    let tmpDir = Path.join(inbox, "tmp")
    try Durable.makeDirectory(tmpDir, mode: 0o700)
    let tmp = Path.join(tmpDir, name)
    let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    do {
        try Sys.writeAll(fd, bytes)
        try Sys.fsync(fd)
    } catch {
        Sys.close(fd)
        try? Sys.unlink(tmp)
        throw error
    }
    Sys.close(fd)
    do {
        try Sys.rename(tmp, Path.join(inbox, name))
    } catch {
        try? Sys.unlink(tmp)
        throw error
    }
    guard syncInbox else { return }
    do {
        try Durable.syncDirectory(inbox)
    } catch {
        // "Not saved" must mean no final file: else a drain could land it and the user's retry
        // would double it. Take the name back (best effort; a crash here is the same as before).
        try? Sys.unlink(Path.join(inbox, name))
        throw error
    }
}

/// An op log of self-validating lines "<id> <fnv32 hex>\n", appended with O_APPEND + fdatasync;
/// the first append to a new file also fsyncs the directory so the file's name survives.
final class MirrorOpLog {
    let path: String
    private let fd: Int32
    private var needsDirectorySync: Bool
    private let appender: DurableAppender

    /// Opening cuts a torn tail first: an append after garbage would be unreadable at next boot.
    /// `cutTornTail: false` is the bug, kept so a test can show the model catches it.
    init(_ path: String, appender: DurableAppender = PlainAppender(), cutTornTail: Bool = true) throws {
        self.path = path
        let existing = (try? Sys.lstat(path)) != nil
        needsDirectorySync = !existing
        fd = try Sys.open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        self.appender = appender
        if existing && cutTornTail {
            let bytes = try Durable.readRegularFile(path, limit: 1 << 24)
            let valid = MirrorOpLog.validLength(bytes)
            if valid < bytes.count {
                try Sys.ftruncate(fd, Int64(valid))
                try Sys.fdatasync(fd)
            }
        }
    }
    deinit { Sys.close(fd) }

    func append(_ id: String) throws {
        let line = Array("\(id) \(String(fnv32(Array(id.utf8)), radix: 16))\n".utf8)
        try line.withUnsafeBytes { try appender.appendDurably(fd, $0) }
        if needsDirectorySync {
            try Durable.syncDirectory(Path.parent(of: path))
            needsDirectorySync = false
        }
    }

    /// Every valid record's id, in order, duplicates kept; stops at the first bad record (a torn
    /// or zero-filled tail). Also returns how many bytes the valid records span.
    static func records(_ bytes: [UInt8]) -> (ids: [String], length: Int) {
        var ids: [String] = []
        var length = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
            let parts = line.split(separator: UInt8(ascii: " "))
            guard parts.count == 2, let sum = UInt32(String(decoding: parts[1], as: UTF8.self), radix: 16),
                  sum == fnv32(Array(parts[0])) else { break }
            ids.append(String(decoding: parts[0], as: UTF8.self))
            length += line.count + 1
        }
        return (ids, length)
    }

    static func validLength(_ bytes: [UInt8]) -> Int { records(bytes).length }

    /// Boot: the ids of every valid record, duplicates dropped (Create is idempotent).
    static func boot(_ bytes: [UInt8]) -> [String] {
        var seen = Set<String>()
        return records(bytes).ids.filter { seen.insert($0).inserted }
    }

    static func boot(path: String) throws -> [String] {
        guard (try? Sys.lstat(path)) != nil else { return [] }
        return boot(try Durable.readRegularFile(path, limit: 1 << 24))
    }
}

func fnv32(_ bytes: [UInt8]) -> UInt32 {
    var h: UInt32 = 2166136261
    for b in bytes { h = (h ^ UInt32(b)) &* 16777619 }
    return h
}

/// The drain (SPEC 4): each final-form file in name order -> one op, durable, then the unlink.
/// An id already in the log is not appended again, so a replay after a crash yields one block.
func mirrorDrain(inbox: String, log: MirrorOpLog) throws -> Int {
    var known = Set(try MirrorOpLog.boot(path: log.path))
    var drained = 0
    for name in try Sys.readDirectory(inbox).filter({ $0.hasSuffix(".json") }).sorted() {
        let path = Path.join(inbox, name)
        _ = try Durable.readRegularFile(path, limit: 1 << 20)
        let id = String(name.dropLast(5))
        if !known.contains(id) {
            try log.append(id)
            known.insert(id)
        }
        try Sys.unlink(path)
        drained += 1
    }
    return drained
}
