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
}

final class OpLogFollower {
    let dir: String
    /// `ops-<actor>.jsonl` of this device: cut at boot, never merged live.
    let ownName: String
    let log: (String) -> Void
    private(set) var cursors: [String: OpFileCursor] = [:]

    init(dir: String, ownName: String, log: @escaping (String) -> Void) {
        self.dir = dir
        self.ownName = ownName
        self.log = log
    }

    /// What one file delivered in one pass.
    struct Delivery {
        var name: String
        var outcome: OpFileCursor.Outcome
    }

    /// The op files there now, in name order; none when the directory does not exist.
    func names() throws -> [String] {
        do { return try Sys.readDirectory(dir).filter(OpLogReader.isOpLogName).sorted() }
        catch let e as Errno where e == .ENOENT { return [] }
        catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
    }

    /// Total size of the op files, for the boot's reservation and progress.
    func totalBytes(_ names: [String]) -> Int {
        names.reduce(0) { $0 + ((try? Sys.lstat(Path.join(dir, $1))).map { Int($0.st_size) } ?? 0) }
    }

    /// The boot: reads every op file from where its cursor stands (the start, the first time), this
    /// device's own one writable so its torn tail is cut on disk. A read error fails the boot.
    /// `sizing` learns the files' total size before any is read (to reserve the model's room).
    func boot(progress: ((Int, Int) -> Void)?, sizing: (Int) -> Void = { _ in }, starting: (String) -> Void = { _ in },
              sink: (RawOpView, _ next: BlockID?) -> Void) throws -> OpLogReadStats {
        let files = try names()
        let total = totalBytes(files)
        sizing(total)
        var done = 0
        var stats = OpLogReadStats()
        for name in files {
            starting(name)
            let path = Path.join(dir, name)
            let own = name == ownName
            var c = cursors[name] ?? OpFileCursor()
            let badBefore = c.bad
            let outcome = try c.read(path, writable: own, log: log, sink: sink) { n in progress?(done + n, total) }
            cursors[name] = c
            guard case .read(_, _, let ops, let size, let tail) = outcome else { continue }
            done += size
            stats.files += 1
            stats.bytes += size
            stats.ops += ops
            stats.badLines += c.bad - badBefore
            if tail > 0 {
                if own {
                    log("\(path): cut a torn or invalid tail of \(tail) bytes at offset \(c.offset)")
                    stats.cutBytes += tail
                } else {
                    log("\(path): left an incomplete or invalid tail of \(tail) bytes (another device's file)")
                }
            }
            if c.bad > badBefore { log("\(path): skipped \(c.bad - badBefore) invalid line(s)") }
        }
        progress?(total, total)
        return stats
    }

    /// A live merge: reads what every other device's op file (conflict copies included) gained since
    /// the last pass. A file that cannot be read now is logged and left for the next pass (its cursor
    /// unchanged or reset, so nothing is skipped).
    func follow(sink: (RawOpView, _ next: BlockID?) -> Void) throws -> [Delivery] {
        var out: [Delivery] = []
        for name in try names() where name != ownName {
            let path = Path.join(dir, name)
            var c = cursors[name] ?? OpFileCursor()
            let badBefore = c.bad
            do {
                let outcome = try c.read(path, writable: false, log: log, sink: sink)
                cursors[name] = c
                if case .read = outcome { out.append(Delivery(name: name, outcome: outcome)) }
            } catch {
                cursors[name] = c
                log("\(path): not read now (\(error)); it is read again on the next merge")
                continue
            }
            if c.bad > badBefore { log("\(path): skipped \(c.bad - badBefore) invalid line(s)") }
        }
        return out
    }

    /// Every op file read so far. This device's own file is brought up to date first (read, not
    /// applied: its ops are in the model since they were written).
    func summaries() -> [OpLogSummary] {
        if !ownName.isEmpty {
            var c = cursors[ownName] ?? OpFileCursor()
            if (try? c.read(Path.join(dir, ownName), writable: false, sink: { _, _ in })) != nil { cursors[ownName] = c }
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
