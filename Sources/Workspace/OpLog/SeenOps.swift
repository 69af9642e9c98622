// SeenOps: this device's archive of every op it has read or written, one file per op file under
// <state dir>/seen/, so that an op once seen is never forgotten when a sync tool deletes, cuts or
// rewrites the file it came from: op logs are append-only by contract, so a file that shrinks is a
// fault of the transport, never a statement about blocks. Invariants: an archive never loses an op and
// ends with a whole line; while "in step" it is a byte prefix of its op file and grows by copying what
// the file gained; once "apart" (the file vanished, or changed before the archive's end) it gains only
// the ops it lacks, by stamp, until the file holds every one of them again, when it becomes a copy of
// the file (in step).
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// An op file that lost ops this device had seen: logged, and shown by `outl status` until the
/// file holds them again. Its ops are still merged, from the archive.
public struct OpLogFault: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The file is not in `.outl/ops` (deleted by a sync tool or a person).
        case missing
        /// The file no longer holds what it held: cut, or rewritten before what was read.
        case cut
    }
    /// The file's name under .outl/ops.
    public var file: String
    public var kind: Kind
    /// Ops of the file's device that this device holds and the file does not (all, when missing).
    public var opsKept: Int

    public var description: String {
        let what = kind == .missing ? "is missing" : "was cut or rewritten"
        return "\(file) \(what): its \(opsKept) op\(opsKept == 1 ? "" : "s") not in the file are kept from this device's archive"
    }
}

final class SeenOps {
    /// <state dir>/seen
    let dir: String
    let writable: Bool
    let log: WorkspaceLog
    private var archives: [String: Archive] = [:]

    /// The archive of one op file.
    final class Archive {
        let path: String
        var fd: Int32 = -1
        /// Bytes of whole lines held (a line torn by a crash while it was written is cut at open).
        var size = 0
        /// nil while in step; once apart, the stamps of the file's device's ops the archive holds.
        var stamps: Set<HLC>? = nil
        /// Once apart: which of `stamps` the op file holds now (whole again when all).
        var inFile = Set<HLC>()
        /// Written since the last `sync`.
        var unsynced = false
        var fault: OpLogFault.Kind? = nil
        init(path: String) { self.path = path }
    }

    /// Sets right `.outl/ops` and `.outl/tmp` when a peer replaced them, and keeps what others put
    /// in this device's own file (WorkspaceCore's, which records each repair; nil: one made here).
    var repair: FolderRepair?

    init(stateDir: String, writable: Bool, log: WorkspaceLog) {
        dir = Path.join(stateDir, "seen")
        self.writable = writable
        self.log = log
    }

    /// The op files that have an archive.
    func names() -> [String] {
        ((try? Sys.readDirectory(dir)) ?? []).filter(OpLogReader.isOpLogName)
    }

    /// The ops a line of `name` may carry: its device's (any, for a name that names none).
    static func owner(of name: String) -> BlockID? { OpLogFollower.actor(ofFile: name) }

    // MARK: in step or apart

    /// Opens the archive of `name` and judges it against the op file at `opFile`: true when the
    /// archive is a byte prefix of the file (the file only grew), false when the file lost some of it.
    func prepare(_ name: String, opFile: String, in opsDir: FileDescriptor?) throws -> Bool {
        if let old = archives[name], old.fd >= 0 { Sys.close(old.fd) }  // judged again: one descriptor
        let a = Archive(path: Path.join(dir, name))
        archives[name] = a
        do {
            a.fd = try Sys.open(a.path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        } catch let e as Errno where e == .ENOENT {
            return true
        } catch let e as Errno {
            throw WorkspaceError.io(e, path: a.path)
        }
        let st = try io(a.path) { try Sys.fstat(a.fd) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            Sys.close(a.fd); a.fd = -1
            throw WorkspaceError.io(Errno(EINVAL), path: a.path)
        }
        let (lastStart, end) = try lastLine(a.fd, size: Int(st.st_size), path: a.path)
        a.size = end
        if end < Int(st.st_size), writable {
            // A line torn by a crash while it was appended: the op file (or this device's memory)
            // still has it, and it is appended again whole.
            try io(a.path) { try Sys.ftruncate(a.fd, Int64(end)) }
        }
        if end == 0 { return true }
        if let opsDir, let f = try? opsDir.openat(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, fullPath: opFile),
           try f.closeAfter({ try matches(f.rawValue, range: lastStart..<end, of: a) }) {
            return true
        }
        let there = opsDir.flatMap { try? $0.stat(name, fullPath: opFile) } != nil
        try goApart(name, a, kind: there ? .cut : .missing)
        return false
    }

    private func matches(_ fd: Int32, range: Range<Int>, of a: Archive) throws -> Bool {
        guard let st = try? Sys.fstat(fd), (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) >= range.upperBound else { return false }
        let mine = try readRange(a.fd, range, path: a.path)
        let theirs = try readRange(fd, range, path: a.path)
        return mine == theirs
    }

    /// Where the last whole line of an archive starts and ends (0, 0 when it has none). What is
    /// compared of it is at most one line of the op log's bound, and memory stays within a chunk.
    private func lastLine(_ fd: Int32, size: Int, path: String) throws -> (Int, Int) {
        guard let nl = try lastNewline(fd, before: size, path: path) else { return (0, 0) }
        let start = try lastNewline(fd, before: nl, path: path).map { $0 + 1 } ?? 0
        return (max(start, nl - OpLines.maxLine), nl + 1)
    }

    /// The offset of the last newline in [0, end) of `fd`, read backwards 64 KiB at a time.
    private func lastNewline(_ fd: Int32, before end: Int, path: String) throws -> Int? {
        var hi = end
        while hi > 0 {
            let lo = max(0, hi - (64 << 10))
            let bytes = try readRange(fd, lo..<hi, path: path)
            if let i = bytes.lastIndex(of: 10) { return lo + i }
            hi = lo
        }
        return nil
    }

    /// From now on the archive gains only the ops it lacks: loads the stamps it holds.
    private func goApart(_ name: String, _ a: Archive, kind: OpLogFault.Kind) throws {
        a.fault = kind
        guard a.stamps == nil else { return }
        let owner = SeenOps.owner(of: name)
        var stamps = Set<HLC>()
        try forEachLine(a.fd, 0..<a.size, path: a.path) { hlc, _ in
            if owner == nil || hlc.actor == owner { stamps.insert(hlc) }
        }
        a.stamps = stamps
        a.inFile.removeAll()
    }

    // MARK: reading an archive

    /// Hands every op of the archive of `name` to `sink` (for the boot, when its op file lost some).
    /// Returns how many ops it held.
    func read(_ name: String, sink: (RawOpView, _ next: BlockID?) -> Void) throws -> Int {
        guard let a = archives[name], a.size > 0 else { return 0 }
        var c = OpFileCursor()
        _ = try c.read(a.path, writable: false, sink: sink)
        return c.ops
    }

    /// Ops held of `name`'s device that its file does not hold now.
    func opsKept(_ name: String) -> Int {
        guard let a = archives[name], let s = a.stamps else { return 0 }
        return s.count - a.inFile.count
    }

    /// The archives whose op file lost ops this device holds.
    var faults: [OpLogFault] {
        archives.keys.sorted().compactMap { name in
            guard let a = archives[name], let kind = a.fault else { return nil }
            return OpLogFault(file: name, kind: kind, opsKept: opsKept(name))
        }
    }

    // MARK: growing an archive

    /// What an op file's cursor read, with the file still open as `fd`: the archive keeps it.
    /// `from..<end` are the bytes read (whole lines), `again` when the cursor read from the start
    /// because the file changed before where it had stopped. A slice of a read in slices is kept at
    /// once, but the file is judged (does it still hold what was seen?) only once its span is complete.
    func absorb(_ name: String, file fd: Int32, _ span: KeptSpan) throws {
        let (from, end, again) = (span.from, span.end, span.again)
        let a = try archive(name)
        if a.stamps == nil {
            guard writable else { return }
            if again || (span.complete && end < a.size), a.size > 0 {
                let (lastStart, last) = try lastLine(a.fd, size: a.size, path: a.path)
                let holds = try last <= end && matches(fd, range: lastStart..<last, of: a)
                if !holds {
                    try goApart(name, a, kind: .cut)
                    log.warning("\(name): the file no longer holds all that this device read from it; the ops it lost are kept from this device's archive",
                                ["OUTL_OPS_FILE": name])
                }
            }
            if a.stamps == nil {
                if end > a.size { try copy(fd, a.size..<end, to: a, needsSync: false) }
                return
            }
        }
        // Apart: only the ops the archive lacks, and note which of its ops the file holds again.
        let owner = SeenOps.owner(of: name)
        if from == 0 { a.inFile.removeAll() }
        var lines: [UInt8] = []
        var stamps = a.stamps ?? []
        try forEachLine(fd, from..<end, path: name) { hlc, line in
            guard owner == nil || hlc.actor == owner else { return }
            if stamps.insert(hlc).inserted, writable { lines.append(contentsOf: line) }
            a.inFile.insert(hlc)
            if lines.count >= 1 << 20 { try append(lines, to: a); lines.removeAll(keepingCapacity: true) }
        }
        a.stamps = stamps
        try append(lines, to: a)
        if a.inFile.count == stamps.count, span.spanStart == 0, span.complete, writable {
            try becomeCopy(of: fd, end: end, a)
            log("\(name) holds every op this device had seen from it again", ["OUTL_OPS_FILE": name])
        }
    }

    /// Appends whole lines that this device wrote itself to the archive of its own op file.
    func appendOwn(_ name: String, _ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard writable, !bytes.isEmpty else { return }
        let a = try archive(name)
        try append(UnsafeRawBufferPointer(bytes), to: a)
        if a.stamps != nil {
            OpLines.each(bytes) { hlc, _ in a.stamps?.insert(hlc) }
        }
    }

    /// Copies `range` of this device's own file at `path`, whose lines are all this device's, to
    /// the end of its archive (which is `range.lowerBound`).
    func appendOwn(_ name: String, from path: String, _ range: Range<Int>) throws {
        guard writable else { return }
        let a = try archive(name)
        guard a.size == range.lowerBound else { throw WorkspaceError.io(Errno(EINVAL), path: a.path) }
        behindOwn[name] = range.upperBound
        let f = try io(path) { try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) }
        try f.closeAfter { try copy(f.rawValue, range, to: a) }
        behindOwn[name] = nil
    }

    /// This device's own files whose every line is its own and which hold more than their archive
    /// could take (its disk full): the size each file was read to. The file is right, the archive
    /// behind: the writer appends to it, and the archive catches up when it can.
    private(set) var behindOwn: [String: Int] = [:]

    /// How another device's file that changed before what this device had read of it compares with
    /// what this device holds of it: ops it still holds (`kept`, of `had`), ops never seen (`new`).
    /// A log rewritten to new content keeps few and brings many (RewrittenLog).
    func judgeRewrite(_ name: String, file fd: Int32, size: Int, path: String) throws -> (kept: Int, new: Int, had: Int) {
        let a = try archive(name)
        var had = a.stamps ?? []
        if a.stamps == nil { try forEachLine(a.fd, 0..<a.size, path: a.path) { hlc, _ in had.insert(hlc) } }
        var kept = 0, new = 0
        try forEachLine(fd, 0..<size, path: path) { hlc, _ in if had.contains(hlc) { kept += 1 } else { new += 1 } }
        return (kept, new, had.count)
    }

    /// The size of the archive of `name` (for this device's own file: the size that file must have).
    func size(_ name: String) -> Int { archives[name]?.size ?? 0 }

    /// fdatasync of every archive given bytes that need it since the last call (`append`): an
    /// archive is the second copy of what it holds, so it is synced after the op files, not before
    /// each acknowledgement.
    func sync() throws {
        for a in archives.values where a.unsynced && a.fd >= 0 {
            try io(a.path) { try Sys.fdatasync(a.fd) }
            a.unsynced = false
        }
    }

    func close() {
        for a in archives.values where a.fd >= 0 { Sys.close(a.fd); a.fd = -1 }
    }

    // MARK: this device's own file

    /// Makes `path`, this device's own op file, hold exactly what its archive holds: the lines the
    /// version there has and the archive lacks (ops of another device, garbage, forged stamps) are
    /// set aside (SetAside, in the state directory) first, then the archive is published at the name
    /// (via `.outl/tmp`, fsync'd, renamed, directory fsync'd). Own ops found only in that version (an
    /// archive that lost its unsynced tail to a power cut) join the archive first.
    func republishOwn(_ name: String, root: String, alsoFrom written: Int32? = nil) throws -> (setAside: Int, recovered: Int) {
        let repair = self.repair ?? FolderRepair(root: root, setAside: SetAside(stateDir: Path.parent(of: dir), log: log), log: log)
        // Every directory is reached from the workspace one component at a time, never through a
        // link, and set right when a peer replaced it.
        func walk(_ rel: String, _ mode: mode_t) throws -> FileDescriptor { try repair.open(rel, mode: mode) }
        let opsPath = Path.join(root, ".outl/ops"), path = Path.join(opsPath, name)
        let ops = try walk(".outl/ops", 0o755)
        defer { ops.close() }
        let a = try archive(name)
        let owner = SeenOps.owner(of: name)
        var stamps = a.stamps ?? []
        if a.stamps == nil {
            try forEachLine(a.fd, 0..<a.size, path: a.path) { hlc, _ in stamps.insert(hlc) }
        }
        var foreign: [UInt8] = [], recovered: [UInt8] = []
        var foreignLines = 0, recoveredOps = 0
        // The version at the name (what others put there is set aside) and the file this writer
        // had open (all its lines are this device's, but it may have lost its name).
        func take(_ fd: Int32, setAside: Bool) throws {
            guard let st = try? Sys.fstat(fd), (st.st_mode & S_IFMT) == S_IFREG else { return }
            try forEachLine(fd, 0..<Int(st.st_size), path: path, invalid: { line in
                guard setAside else { return }
                if foreign.count < SetAside.maxFileBytes { foreign.append(contentsOf: line) }
                foreignLines += 1
            }) { hlc, line in
                if owner != nil && hlc.actor != owner {
                    guard setAside else { return }
                    if foreign.count < SetAside.maxFileBytes { foreign.append(contentsOf: line) }
                    foreignLines += 1
                } else if stamps.insert(hlc).inserted {
                    recovered.append(contentsOf: line)
                    recoveredOps += 1
                }
            }
        }
        if let there = try? ops.openat(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, fullPath: path) {
            try there.closeAfter { try take(there.rawValue, setAside: true) }
        }
        if let written, let again = try? FileDescriptor.open("/proc/self/fd/\(written)", O_RDONLY) {
            try again.closeAfter { try take(again.rawValue, setAside: false) }
        }
        if !foreign.isEmpty {
            let kept = try repair.setAside.keep(foreign, what: name)
            log.warning("\(path): \(foreignLines) line(s) this device did not write were set aside in \(kept), never applied",
                        ["OUTL_OPS_FILE": path])
        }
        try append(recovered, to: a)
        a.stamps = nil
        a.fault = nil
        a.inFile.removeAll()
        // The archive's bytes, published whole at the name: copied a chunk at a time (an op log may
        // be hundreds of MB) to a temporary in .outl/tmp, fsync'd, renamed over the name, and the op
        // directory fsync'd, so the name holds all of it or what it held before.
        let tmpPath = Path.join(root, ".outl/tmp")
        let tmp = try walk(".outl/tmp", 0o700)
        defer { tmp.close() }
        let tempName = name + ".tmp", temp = Path.join(tmpPath, tempName)
        try? tmp.unlink(tempName, fullPath: temp)
        let t = try io(temp) { try tmp.openat(tempName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644, fullPath: temp) }
        do {
            try t.closeAfter {
                var at = 0
                while at < a.size {
                    let chunk = try readRange(a.fd, at..<min(a.size, at + (1 << 20)), path: a.path)
                    if chunk.isEmpty { throw WorkspaceError.io(.EIO, path: a.path) }
                    try io(temp) { try Sys.writeAll(t.rawValue, chunk) }
                    at += chunk.count
                }
                try io(temp) { try Sys.fsync(t.rawValue) }
            }
            try io(path) { try tmp.rename(tempName, to: name, in: ops, fullPaths: (temp, path)) }
        } catch {
            try? tmp.unlink(tempName, fullPath: temp)
            throw error
        }
        try io(opsPath) { try ops.sync() }
        try sync()
        return (foreignLines, recoveredOps)
    }

    // MARK: bytes

    private func archive(_ name: String) throws -> Archive {
        let a: Archive
        if let known = archives[name] { a = known } else { a = Archive(path: Path.join(dir, name)); archives[name] = a }
        if a.fd < 0 && writable {
            try io(dir) { try Durable.makeDirectory(dir, mode: 0o700) }
            do {
                a.fd = try Sys.open(a.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                try io(dir) { try Durable.syncDirectory(dir) }
            } catch let e as Errno where e == .EEXIST {
                a.fd = try io(a.path) { try Sys.open(a.path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
                a.size = Int(try io(a.path) { try Sys.fstat(a.fd) }.st_size)
            } catch let e as Errno {
                throw WorkspaceError.io(e, path: a.path)
            }
        }
        return a
    }

    /// `needsSync`: the bytes are this device's own ops or ops their file no longer holds, so the
    /// next `sync` makes them durable; a copy of what a file still holds is not synced, since a
    /// copy cut by a power loss is a shorter prefix that the next boot completes from the file.
    private func append(_ bytes: [UInt8], to a: Archive, needsSync: Bool = true) throws {
        try bytes.withUnsafeBytes { try append($0, to: a, needsSync: needsSync) }
    }

    private func append(_ b: UnsafeRawBufferPointer, to a: Archive, needsSync: Bool = true) throws {
        guard !b.isEmpty else { return }
        var done = 0
        while done < b.count {
            let n: Int
            do { n = try Sys.pwrite(a.fd, UnsafeRawBufferPointer(rebasing: b[done...]), at: Int64(a.size + done)) }
            catch let e as Errno { throw WorkspaceError.archive(e, path: a.path) }
            if n <= 0 { throw WorkspaceError.archive(.EIO, path: a.path) }
            done += n
        }
        a.size += b.count
        if needsSync { a.unsynced = true }
    }

    /// Copies `range` of the op file `fd` to the end of the archive (which is `range.lowerBound`).
    private func copy(_ fd: Int32, _ range: Range<Int>, to a: Archive, needsSync: Bool = true) throws {
        var at = range.lowerBound
        while at < range.upperBound {
            let chunk = try readRange(fd, at..<min(range.upperBound, at + (1 << 20)), path: a.path)
            if chunk.isEmpty { break }
            try append(chunk, to: a, needsSync: needsSync)
            at += chunk.count
        }
    }

    /// The archive becomes a byte copy of the op file's first `end` bytes, in step again.
    private func becomeCopy(of fd: Int32, end: Int, _ a: Archive) throws {
        let temp = a.path + ".tmp"
        try? Sys.unlink(temp)
        let t = try io(temp) { try FileDescriptor.open(temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600) }
        let copy = Archive(path: temp)
        copy.fd = t.rawValue
        do {
            try self.copy(fd, 0..<end, to: copy)
            try io(temp) { try Sys.fsync(t.rawValue) }
            try io(a.path) { try Sys.rename(temp, a.path) }
            try io(dir) { try Durable.syncDirectory(dir) }
        } catch {
            t.close(); try? Sys.unlink(temp)
            throw error
        }
        Sys.close(a.fd)
        a.fd = t.rawValue
        a.size = copy.size
        a.stamps = nil
        a.inFile.removeAll()
        a.fault = nil
        a.unsynced = false
    }

    private func readRange(_ fd: Int32, _ range: Range<Int>, path: String) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: range.count)
        var got = 0
        while got < range.count {
            let n = try io(path) {
                try out.withUnsafeMutableBytes { b in
                    try Sys.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[got...]), at: Int64(range.lowerBound + got))
                }
            }
            if n == 0 { break }
            got += n
        }
        out.removeSubrange(got...)
        return out
    }

    /// Every whole line of `range` in `fd`: valid op lines to `body` with their stamp, the others
    /// to `invalid`; both get the line with its newline. Memory stays within one chunk and the
    /// longest line allowed (`OpLines.maxLine`); a longer line is invalid.
    private func forEachLine(_ fd: Int32, _ range: Range<Int>, path: String,
                             invalid: ([UInt8]) -> Void = { _ in },
                             _ body: (HLC, UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        var at = range.lowerBound
        var carry: [UInt8] = []
        var skipping = false
        while at < range.upperBound {
            let chunk = try readRange(fd, at..<min(range.upperBound, at + (1 << 20)), path: path)
            if chunk.isEmpty { break }
            at += chunk.count
            var start = 0
            while start < chunk.count {
                guard let nl = chunk[start...].firstIndex(of: 10) else {
                    if skipping || carry.count + chunk.count - start > OpLines.maxLine {
                        skipping = true; carry.removeAll()
                    } else {
                        carry.append(contentsOf: chunk[start...])
                    }
                    break
                }
                if skipping {
                    skipping = false
                    invalid(Array("\n".utf8))
                } else if carry.isEmpty {
                    try chunk.withUnsafeBufferPointer { b in
                        try OpLines.one(UnsafeBufferPointer(rebasing: b[start...nl]), invalid: invalid, body)
                    }
                } else {
                    carry.append(contentsOf: chunk[start...nl])
                    if carry.count <= OpLines.maxLine + 1 {
                        try carry.withUnsafeBufferPointer { try OpLines.one($0, invalid: invalid, body) }
                    } else {
                        invalid(Array("\n".utf8))
                    }
                    carry.removeAll(keepingCapacity: true)
                }
                start = nl + 1
            }
        }
    }
}

/// Whole op-log lines in memory, parsed one by one.
enum OpLines {
    /// The longest line read line by line: the op log's own bound.
    static let maxLine = OpFileCursor.maxLineBytes

    /// Each line of `bytes` that parses: its stamp and its bytes, newline included.
    static func each(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (HLC, UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        while start < bytes.count {
            guard let nl = bytes[start...].firstIndex(of: 10) else { return }
            one(UnsafeBufferPointer(rebasing: bytes[start...nl]), invalid: { _ in }, body)
            start = nl + 1
        }
    }

    /// One line with its newline.
    static func one(_ line: UnsafeBufferPointer<UInt8>, invalid: ([UInt8]) -> Void,
                    _ body: (HLC, UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        guard line.count > 1 else { return }  // a blank line is nobody's op
        var scratch = ParseScratch()
        if let raw = OpParser.parseRaw(UnsafeBufferPointer(rebasing: line[..<(line.count - 1)]), &scratch) {
            try body(raw.hlc, line)
        } else {
            invalid(Array(line))
        }
    }
}
