// NoticeRecord: what outld told this device's person about their edits (two edits made at once, a
// block deleted here brought back), kept in the state directory so `outl status` can say it beside
// the journal. Invariant: at most `kept` notices, the newest; written by rename, never fsync'd (the
// journal holds each durably, and a record lost in a crash loses only what status repeats).
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// One notice as `outl status` shows it.
public struct Notice: Sendable, Equatable {
    /// WorkspaceLog's event name (`concurrent-edit`, `brought-back`).
    public var kind: String
    public var atMs: Int64
    public var block: String
    /// The device whose edit the notice is about.
    public var device: String
    /// The sentence the journal got, on one line.
    public var message: String
}

final class NoticeRecord {
    static let kept = 100
    static let fileName = "notices"
    let path: String
    let writable: Bool

    init(stateDir: String, writable: Bool) {
        path = Path.join(stateDir, NoticeRecord.fileName)
        self.writable = writable
    }

    /// Adds a notice, dropping the oldest past `kept`. A record that cannot be written is said
    /// once in `log`'s words; the notice itself was said already.
    func add(_ n: Notice, log: WorkspaceLog) {
        guard writable else { return }
        var all = NoticeRecord.read(path)
        all.append(n)
        var out: [UInt8] = []
        for x in all.suffix(NoticeRecord.kept) {
            let fields = ["\(x.atMs)", x.kind, x.block, x.device, x.message].map(NoticeRecord.oneLine)
            out.append(contentsOf: (fields.joined(separator: "\t") + "\n").utf8)
        }
        do {
            let tmp = path + ".tmp"
            let fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
            defer { Sys.close(fd) }
            try Sys.writeAll(fd, out)
            try Sys.rename(tmp, path)
        } catch {
            log.warning("\(path): could not record a notice for `outl status` (\(error))")
        }
    }

    /// The notices recorded at `path`, oldest first; a line that is not one is skipped.
    static func read(_ path: String) -> [Notice] {
        guard let bytes = try? Durable.readRegularFile(path, limit: 1 << 20) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard f.count == 5, let at = Int64(f[0]) else { return nil }
            return Notice(kind: String(f[1]), atMs: at, block: String(f[2]), device: String(f[3]), message: String(f[4]))
        }
    }

    /// A field on one line of the record: a message quotes a block's words.
    static func oneLine(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for u in s.unicodeScalars { out.append(u == "\t" || u == "\n" || u == "\r" ? " " : u) }
        return String(out)
    }
}

extension FolderRepair {
    /// Each repair's sentence becomes a notice for `outl status` too.
    func record(in notices: NoticeRecord) {
        let log = self.log
        onRepair = { message in
            notices.add(Notice(kind: WorkspaceLog.folderRepaired, atMs: wallClockMilliseconds(), block: "", device: "", message: message), log: log)
        }
    }
}
