// OpLog: the append-only op files under .outl/ops/. The writer appends a batch with one appendDurably
// (group commit) and fsyncs the directory when it created the file; the reader streams every
// ops-*.jsonl (Syncthing/Dropbox conflict copies included) in chunks, keeps the valid lines, and cuts
// this device's own torn, garbage or zero-filled tail at the last valid record instead of refusing.
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
        self.path = Path.join(dir, "ops-\(actor).jsonl")
        self.appender = appender
    }

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

    /// Reads every op file; `ownName` is this device's file, whose torn tail is cut on disk.
    /// With `streaming`, ops go straight to `stream` (no op array held; several files are merged by
    /// HLC as they are read, exact duplicates dropped) and the result's lists are empty; the caller
    /// must check the stream was in HLC order (it is whenever each file is). `next` is the id of
    /// the op that follows (already parsed), so the caller can prefetch what it will look up next. (A non-escaping
    /// closure: the caller's model is captured by address, with no dynamic exclusivity checks.)
    static func readAll(dir: String, ownName: String, log: (String) -> Void,
                        progress: ((Int, Int) -> Void)?,
                        streaming: Bool = false,
                        stream: (RawOpView, _ next: BlockID?) -> Void = { _, _ in }) throws -> ([[Op]], OpLogReadStats) {
        var stats = OpLogReadStats()
        let names: [String]
        do { names = try Sys.readDirectory(dir).filter(isOpLogName).sorted() } catch let e as Errno where e == .ENOENT {
            return ([], stats)
        } catch let e as Errno { throw WorkspaceError.io(e, path: dir) }
        var sizes: [Int] = []
        for n in names { sizes.append((try? Sys.lstat(Path.join(dir, n))).map { Int($0.st_size) } ?? 0) }
        let total = sizes.reduce(0, +)
        var done = 0
        var all: [[Op]] = []
        func report(_ path: String, own: Bool, _ r: FileResult, ops: Int) {
            stats.files += 1
            stats.bytes += r.size
            stats.ops += ops
            stats.badLines += r.bad
            if r.validEnd < r.size {
                if own {
                    log("\(path): cut a torn or invalid tail of \(r.size - r.validEnd) bytes at offset \(r.validEnd)")
                    stats.cutBytes += r.size - r.validEnd
                } else {
                    log("\(path): ignored an invalid tail of \(r.size - r.validEnd) bytes (another device's file)")
                }
            }
            if r.bad > 0 { log("\(path): skipped \(r.bad) invalid line(s)") }
        }
        if streaming, names.count > 1 {
            var cursors: [OpFileCursor] = []
            for name in names {
                let path = Path.join(dir, name)
                guard let st = try? Sys.lstat(path), (st.st_mode & S_IFMT) == S_IFREG else { continue }
                cursors.append(try OpFileCursor(path: path, writable: name == ownName))
            }
            try merge(cursors, total: total, progress: progress, stream)
            for c in cursors { report(c.path, own: c.writable, try c.finish(), ops: c.count) }
            return ([], stats)
        }
        for (i, name) in names.enumerated() {
            let path = Path.join(dir, name)
            let own = name == ownName
            let st = try? Sys.lstat(path)
            guard let st, (st.st_mode & S_IFMT) == S_IFREG else { continue }  // never follow a symlink
            var ops: [Op] = []
            var count = 0
            let r: FileResult
            if streaming, names.count == 1 {
                r = try readFile(path, writable: own, sink: { count += 1; stream($0, $1) }) { n in progress?(done + n, total) }
            } else {
                ops.reserveCapacity(sizes[i] / 200 + 16)
                r = try readFile(path, writable: own, sink: { op, _ in ops.append(op.op()) }) { n in progress?(done + n, total) }
                count = ops.count
            }
            done += sizes[i]
            report(path, own: own, r, ops: count)
            if !ops.isEmpty { all.append(ops) }
        }
        return (all, stats)
    }

    struct FileResult { var size: Int; var validEnd: Int; var bad: Int }

    /// Lines are parsed one ahead of the sink (two scratches take turns), so the sink learns the next
    /// op's id while it handles the current one; the one pending op is handed over before the buffer moves.
    static func readFile(_ path: String, writable: Bool, sink: (RawOpView, _ next: BlockID?) -> Void,
                         progress: (Int) -> Void) throws -> FileResult {
        let fd = try io(path) { try Sys.open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW) }
        defer { Sys.close(fd) }
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        var have = 0
        var bufOffset = 0   // file offset of buf[0]
        var validEnd = 0
        var bad = 0            // invalid lines followed by valid ones: skipped, kept on disk
        var badSinceValid = 0  // invalid lines after the last valid one: the tail
        var scratchA = ParseScratch(), scratchB = ParseScratch()
        var useB = false
        var pending: (raw: RawOp, json: UnsafeBufferPointer<UInt8>, inB: Bool)? = nil
        func flush(next: BlockID?) {
            guard let p = pending else { return }
            pending = nil
            func hand(_ sc: inout ParseScratch) {
                sc.bytes.withUnsafeBufferPointer { sb in
                    sc.props.withUnsafeBufferPointer { pp in
                        sink(RawOpView(raw: p.raw, json: p.json, scratch: sb, props: pp), next)
                    }
                }
            }
            if p.inB { hand(&scratchB) } else { hand(&scratchA) }
        }
        while true {
            if have == buf.count { buf.append(contentsOf: repeatElement(0, count: buf.count)) }
            let n = try io(path) {
                try buf.withUnsafeMutableBytes { b in
                    try Sys.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[have...]))
                }
            }
            if n == 0 { break }
            have += n
            var start = 0
            buf.withUnsafeBufferPointer { p in
                let base = p.baseAddress!
                while start < have {
                    guard let nlRaw = memchr(base + start, 10, have - start) else { break }
                    let nl = UnsafeRawPointer(nlRaw).assumingMemoryBound(to: UInt8.self) - base
                    if nl > start {
                        let line = UnsafeBufferPointer(start: base + start, count: nl - start)
                        let parsed = useB ? OpParser.parseRaw(line, &scratchB) : OpParser.parseRaw(line, &scratchA)
                        if let raw = parsed {
                            flush(next: raw.id)
                            pending = (raw, UnsafeBufferPointer(rebasing: line[9...]), useB)
                            useB.toggle()
                            validEnd = bufOffset + nl + 1
                            bad += badSinceValid
                            badSinceValid = 0
                        } else {
                            badSinceValid += 1
                        }
                    } else if validEnd == bufOffset + start {
                        validEnd = bufOffset + nl + 1  // a blank line right after a valid one is harmless
                    }
                    start = nl + 1
                }
                flush(next: nil)
            }
            if start > 0 {
                buf.withUnsafeMutableBytes { b in
                    if have > start { memmove(b.baseAddress!, b.baseAddress! + start, have - start) }
                }
                have -= start
                bufOffset += start
            }
            progress(bufOffset)
        }
        let size = bufOffset + have
        if validEnd < size {
            if writable {
                try io(path) {
                    try Sys.ftruncate(fd, Int64(validEnd))
                    try Sys.fdatasync(fd)
                }
            }
        }
        return FileResult(size: size, validEnd: validEnd, bad: bad)
    }

    /// The k-way merge of the files' op streams by HLC (files are few: a linear pick of the least head),
    /// dropping exact duplicates (the same op in a file and its conflict copy). A file out of HLC order
    /// makes the merged stream out of order too, which the caller sees.
    static func merge(_ cursors: [OpFileCursor], total: Int, progress: ((Int, Int) -> Void)?,
                      _ body: (RawOpView, _ next: BlockID?) -> Void) throws {
        var live: [OpFileCursor] = []
        for c in cursors where try c.advance() { live.append(c) }
        var last: HLC? = nil
        var emitted = 0
        while !live.isEmpty {
            // The least head goes now; the second least is most likely next, so its id is the hint.
            var best = 0, second = -1
            for k in 1..<live.count {
                if live[k].head.hlc < live[best].head.hlc {
                    second = best; best = k
                } else if second < 0 || live[k].head.hlc < live[second].head.hlc {
                    second = k
                }
            }
            let c = live[best]
            let next = second >= 0 ? live[second].head.id : nil
            if c.head.hlc != last { c.withHead { body($0, next) }; last = c.head.hlc }
            if !(try c.advance()) { live.remove(at: best) }
            emitted += 1
            if emitted & 0xFFFF == 0, let progress { progress(cursors.reduce(0) { $0 + $1.consumed }, total) }
        }
        progress?(total, total)
    }

    /// Merges per-file op lists (each sorted by HLC once sorted here) into one HLC-ordered stream,
    /// dropping exact duplicates (the same op in a file and its conflict copy).
    static func merge(_ files: [[Op]], _ body: (Op) -> Void) {
        var files = files
        for i in files.indices {
            var sorted = true
            files[i].withUnsafeBufferPointer { p in
                var k = 1
                while k < p.count { if p[k].hlc < p[k - 1].hlc { sorted = false; break }; k += 1 }
            }
            if !sorted { files[i].sort { $0.hlc < $1.hlc } }
        }
        var last: HLC? = nil
        if files.count == 1 {
            files[0].withUnsafeBufferPointer { p in
                for k in 0..<p.count where p[k].hlc != last { body(p[k]); last = p[k].hlc }
            }
            return
        }
        var heads = [Int](repeating: 0, count: files.count)
        while true {
            var best = -1
            for f in files.indices where heads[f] < files[f].count {
                if best < 0 || files[f][heads[f]].hlc < files[best][heads[best]].hlc { best = f }
            }
            if best < 0 { break }
            let op = files[best][heads[best]]
            heads[best] += 1
            if op.hlc != last { body(op); last = op.hlc }
        }
    }
}
