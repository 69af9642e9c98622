// OpFileCursor: the one reader of an op file, for the boot and the live merge alike, and where it
// stopped. Invariants: `offset` is the end of the file's last valid line (and of blank lines right after
// it), so an incomplete or torn last line is never consumed and is read again once completed; a later
// read continues at `offset` only while the record before it is unchanged (same bytes, whatever the
// inode: a sync tool delivers a grown file by rename), else it reads the whole file again, which is
// safe because applying an op twice changes nothing. Only a writable (this device's own) file is cut.
// Limit: a rewrite that leaves the record before the offset byte for byte where it was is taken for
// an unchanged prefix; op files are append-only by one writer, so only a deliberate rewrite does that.
// Bound: a line is at most `maxLineBytes`; a longer one is skipped unread past that bound (an invalid
// line like any other, reported with its offset), so memory is bounded by it whatever the file holds.
// A live merge may read in slices (ReadBudget): a read stops at a line boundary once the budget is
// spent and the cursor stays `behind`, so the next read goes on from `offset` whatever the file's stat.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

struct OpFileCursor {
    /// The longest op-log line read (without its newline): 4 MiB. The largest op this writer makes is
    /// a capture's, at most its file's 1 MiB plus under 1 KiB of fixed fields (no field is spelled
    /// longer in the op than in the capture file: the drain refuses control characters but tab and
    /// newline, the only bytes JSON escapes grow); the rest is room for a newer build's fields and
    /// a long hand-edited block. man/outld.1 (FILES) documents it.
    static let maxLineBytes = 4 << 20

    /// This cursor's bound (tests and the fuzzer make it small to reach its edges cheaply).
    var maxLine = OpFileCursor.maxLineBytes
    /// The file as last read: an unchanged identity, size and mtime means nothing new to read.
    var dev: UInt64 = 0
    var ino: UInt64 = 0
    var size = -1
    var mtime = timespec()
    /// End of the last valid line; the next read starts here.
    var offset = 0
    /// The check of the record before `offset`: CRC32C of the bytes [checkStart, offset).
    var checkStart = 0
    var checkCRC: UInt32 = 0
    /// Valid ops in the file before `offset`, invalid lines skipped among them, and the newest stamp.
    var ops = 0
    var bad = 0
    var newest: HLC? = nil
    /// The last read stopped for its budget before the end of the file: read again even if unchanged.
    private(set) var behind = false
    /// The file's size at the last read (for how much a merge in slices has left).
    private(set) var sizeSeen = 0
    /// Where the span a read in slices is catching up began, and whether it began again from the
    /// start (the file was rewritten). Each slice is handed to `keep` at once (the archive holds
    /// what the model holds), with the span's start and whether it is complete, so the archive
    /// judges the file only by a whole span; a rewritten file's span is handed over once, whole.
    private var keepFrom: Int? = nil
    private var keepAgain = false

    /// What one `read` did.
    enum Outcome: Equatable {
        /// The file is not there (a sync tool's window between unlink and rename): nothing read now.
        case missing
        /// Not a regular file (a symlink is never followed): never read.
        case notRegular
        /// Same file, same size and mtime: nothing read.
        case unchanged
        /// Read from `from` (0 and `again` when the prefix changed): `ops` valid ops handed over,
        /// `tail` bytes after the last valid line left (or cut, if writable).
        case read(from: Int, again: Bool, ops: Int, size: Int, tail: Int)
    }

    /// Reads what the file gained since the last call and hands every valid op to `sink` (with the id of
    /// the op after it when already parsed, for prefetching). `progress` gets the file offset reached;
    /// `log` hears of each line skipped for its length, with its offset; `keep` gets the file while
    /// still open, with the whole lines read (from, end) and whether they were read again from the
    /// start (the archive of what was seen, SeenOps).
    mutating func read(_ path: String, in directory: FileDescriptor? = nil, writable: Bool, log: WorkspaceLog = .silent,
                       budget: ReadBudget? = nil,
                       sink: (RawOpView, _ next: BlockID?) -> Void,
                       progress: (Int) -> Void = { _ in },
                       keep: ((_ fd: Int32, _ read: KeptSpan) throws -> Void)? = nil) throws -> Outcome {
        let fd: Int32
        do {
            // O_NONBLOCK: a FIFO with an op file's name must not hang the reader (it is then refused).
            // From the op directory's descriptor when the caller walked to it (no link followed).
            let flags = (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
            fd = try directory.map { try Sys.openat($0.rawValue, Path.lastComponent(path), flags, fullPath: path) }
                ?? Sys.open(path, flags)
        } catch let e as Errno where e == .ENOENT {
            return .missing
        } catch let e as Errno where e == .ELOOP {
            return .notRegular
        } catch let e as Errno {
            throw WorkspaceError.io(e, path: path)
        }
        defer { Sys.close(fd) }
        let st = try io(path) { try Sys.fstat(fd) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .notRegular }
        if !writable, !behind, isUnchanged(st) { return .unchanged }
        let sizeNow = Int(st.st_size)
        var from = 0
        var again = false
        if offset > 0 {
            if try prefixUnchanged(fd, path: path, size: sizeNow) {
                from = offset
            } else {
                again = true
                offset = 0; checkStart = 0; checkCRC = 0; ops = 0; bad = 0; newest = nil
            }
        }
        let before = ops
        // Only another device's file is read in slices: this device's own is read whole and cut.
        let sliced = writable ? nil : budget
        let end = try scan(fd, path: path, from: from, sizeHint: sizeNow, log: log, budget: sliced, sink: sink, progress: progress)
        let tail = behind ? 0 : end - offset
        if tail > 0, writable {
            try io(path) {
                try Sys.ftruncate(fd, Int64(offset))
                try Sys.fdatasync(fd)
            }
        }
        if again { keepFrom = 0; keepAgain = true } else if keepFrom == nil { keepFrom = from }
        let spanStart = keepFrom ?? from
        if !behind { keepFrom = nil }
        if keepAgain {
            if !behind {
                keepAgain = false
                if let keep { try keep(fd, KeptSpan(from: 0, end: offset, again: true, spanStart: 0, complete: true)) }
            }
        } else if let keep, offset > from {
            try keep(fd, KeptSpan(from: from, end: offset, again: false, spanStart: spanStart, complete: !behind))
        }
        try check(fd, path: path)
        // Remember the file as it was before the scan (as it is now, once cut): an append that landed
        // since makes size or mtime differ from these, so it is read next time.
        let now = writable && tail > 0 ? try io(path) { try Sys.fstat(fd) } : st
        dev = UInt64(now.st_dev)
        ino = UInt64(now.st_ino)
        size = Int(now.st_size)
        mtime = now.st_mtim
        sizeSeen = size
        return .read(from: from, again: again, ops: ops - before, size: end, tail: tail)
    }

    /// The same file (identity), size and mtime as when last read.
    func isUnchanged(_ st: stat) -> Bool {
        UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino && Int(st.st_size) == size
            && st.st_mtim.tv_sec == mtime.tv_sec && st.st_mtim.tv_nsec == mtime.tv_nsec
    }

    /// Whether the record before `offset` still holds the bytes it held when read.
    func prefixUnchanged(_ fd: Int32, path: String, size: Int) throws -> Bool {
        guard size >= offset else { return false }
        let (bytes, whole) = try checkedRecord(fd, path: path)
        return whole && CRC32C.checksum(bytes) == checkCRC
    }

    /// Records the check of the record before `offset`: from what the scan just read when it saw
    /// that record whole in one chunk (`scanned`), else read again.
    mutating func check(_ fd: Int32, path: String) throws {
        guard offset > checkStart else { checkCRC = 0; return }
        if let s = scanned, s.range == checkStart..<offset { checkCRC = s.crc; return }
        checkCRC = CRC32C.checksum(try checkedRecord(fd, path: path).bytes)
    }

    /// The last record the scan saw whole within one chunk, with its CRC32C (for `check`).
    private var scanned: (range: Range<Int>, crc: UInt32)? = nil

    /// The bytes [checkStart, offset) as the file holds them now, zero-filled past its end (`whole`
    /// is false then: the file was cut under the check).
    func checkedRecord(_ fd: Int32, path: String) throws -> (bytes: [UInt8], whole: Bool) {
        let n = offset - checkStart
        var bytes = [UInt8](repeating: 0, count: n)
        var got = 0
        while got < n {
            let k = try io(path) {
                try bytes.withUnsafeMutableBytes { b in
                    try Sys.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[got...]), at: Int64(checkStart + got))
                }
            }
            if k == 0 { return (bytes, false) }
            got += k
        }
        return (bytes, true)
    }

    /// Reads from `from` to the end, in chunks of up to 1 MB, and hands each valid line's op to `sink`
    /// (LineScan). Returns the file size seen. The buffer holds at most one line of `maxLine` bytes and
    /// its newline: a line that fills it is skipped to its newline by reads into the same buffer.
    /// With a `budget`, stops after the chunk that spends it, once a valid line was read (so a slice
    /// always makes progress, and a run of invalid lines is read through, not re-read each slice).
    mutating func scan(_ fd: Int32, path: String, from: Int, sizeHint: Int, log: WorkspaceLog = .silent,
                       budget: ReadBudget? = nil,
                       sink: (RawOpView, _ next: BlockID?) -> Void, progress: (Int) -> Void) throws -> Int {
        let cap = max(1, maxLine) + 1
        // A live merge reads a few new lines: a buffer of their size, not 1 MB (it grows for a longer
        // line); a slice, a buffer no larger than its budget.
        let wanted = min(1 << 20, sizeHint - from + 1, budget.map { max(1, $0.bytes) } ?? Int.max)
        var buf = [UInt8](repeating: 0, count: min(cap, max(min(4096, budget.map { max(1, $0.bytes) } ?? 4096), wanted)))
        behind = false
        var have = 0
        var bufOffset = from  // file offset of buf[0]
        var lines = LineScan(from: from, lastStart: from == 0 ? 0 : checkStart, newest: newest)
        scanned = nil
        /// Where the line being skipped for its length starts (nil: not skipping).
        var overlongAt: Int? = nil
        while true {
            if have == buf.count {
                if buf.count < cap {
                    let grown = min(2 * buf.count, cap)
                    buf.reserveCapacity(grown)  // exactly: the bound is on memory, not only on the count
                    buf.append(contentsOf: repeatElement(0, count: grown - buf.count))
                } else {
                    // One incomplete line fills the buffer: longer than any op. Drop what is read of it.
                    overlongAt = bufOffset
                    bufOffset += have
                    have = 0
                }
            }
            let asked = buf.count - have
            let n = try io(path) {
                try buf.withUnsafeMutableBytes { b in
                    try Sys.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[have...]), at: Int64(bufOffset + have))
                }
            }
            if n == 0 { break }
            if let start = overlongAt {
                // Still inside the long line: only its end matters, and what follows it is kept.
                let found = buf.withUnsafeBytes { b in memchr(b.baseAddress!, 10, n).map { UnsafeRawPointer($0) - b.baseAddress! } }
                guard let nl = found else {
                    bufOffset += n
                    progress(bufOffset)
                    continue
                }
                lines.skipOverlong()
                log.warning("\(path): skipped a line of \(bufOffset + nl - start) bytes at offset \(start), over the \(maxLine)-byte limit of an op line")
                overlongAt = nil
                let rest = n - (nl + 1)
                buf.withUnsafeMutableBytes { b in
                    if rest > 0 { memmove(b.baseAddress!, b.baseAddress! + nl + 1, rest) }
                }
                bufOffset += nl + 1
                have = rest
            } else {
                have += n
            }
            let used = buf.withUnsafeBufferPointer { lines.take($0, count: have, at: bufOffset, sink: sink) }
            if lines.lastStart >= bufOffset, lines.validEnd > lines.lastStart, lines.validEnd <= bufOffset + used {
                let r = (lines.lastStart - bufOffset)..<(lines.validEnd - bufOffset)
                scanned = (lines.lastStart..<lines.validEnd, buf.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[r])) })
            }
            if used > 0 {
                buf.withUnsafeMutableBytes { b in
                    if have > used { memmove(b.baseAddress!, b.baseAddress! + used, have - used) }
                }
                have -= used
                bufOffset += used
            }
            progress(bufOffset)
            // A short read that reaches the size fstat gave is the end: no read that returns 0
            // (short before it, a file system reading in pieces, the loop goes on).
            if n < asked, bufOffset + have >= sizeHint { break }
            if let budget {
                budget.bytes -= n
                if budget.spent, overlongAt == nil, lines.validEnd > from, bufOffset + have < sizeHint {
                    behind = true
                    break
                }
            }
        }
        if let start = overlongAt {
            log.warning("\(path): a last line of more than \(maxLine) bytes at offset \(start), over the limit of an op line, is not read")
        }
        offset = lines.validEnd
        checkStart = lines.lastStart
        ops += lines.valid
        bad += lines.skipped
        newest = lines.newest
        return bufOffset + have
    }
}

/// Whole lines one read handed to the archive (SeenOps.absorb): [from, end), read again from the
/// start (`again`), within a span a read in slices began at `spanStart`, `complete` once it
/// reached the end of the file.
struct KeptSpan {
    var from: Int
    var end: Int
    var again: Bool
    var spanStart: Int
    var complete: Bool
}

/// What one slice of a live merge may still read: bytes, and a monotonic deadline. Shared by the
/// files one merge reads (a class, so each read spends from the same budget).
final class ReadBudget {
    var bytes: Int
    let deadlineNs: UInt64

    init(bytes: Int, deadlineNs: UInt64) {
        self.bytes = bytes
        self.deadlineNs = deadlineNs
    }

    var spent: Bool { bytes <= 0 || monotonicNanoseconds() >= deadlineNs }
}

/// One scan's walk over complete lines. Lines are parsed one ahead of the sink (two scratches take
/// turns), so the sink learns the next op's id while it handles the current one; the one pending op
/// is handed over before `take` returns, so the buffer may then move. Invalid lines count as skipped
/// only once a valid line follows them: until then they are the tail.
struct LineScan {
    /// End of the last valid line (or of a blank line right after it), and where that line starts.
    var validEnd: Int
    var lastStart: Int
    var valid = 0
    var skipped = 0
    var invalidSinceValid = 0
    var newest: HLC?
    var scratchA = ParseScratch(), scratchB = ParseScratch()
    var useB = false
    var pending: (raw: RawOp, json: UnsafeBufferPointer<UInt8>, inB: Bool)? = nil

    init(from: Int, lastStart: Int, newest: HLC?) {
        validEnd = from
        self.lastStart = lastStart
        self.newest = newest
    }

    /// Takes the complete lines of `chunk[0..<count]`, whose first byte is at file offset `at`;
    /// returns how many bytes they span (what follows is an incomplete line).
    mutating func take(_ chunk: UnsafeBufferPointer<UInt8>, count: Int, at: Int,
                       sink: (RawOpView, _ next: BlockID?) -> Void) -> Int {
        let base = chunk.baseAddress!
        var start = 0
        while start < count {
            guard let nlRaw = memchr(base + start, 10, count - start) else { break }
            let nl = UnsafeRawPointer(nlRaw).assumingMemoryBound(to: UInt8.self) - base
            if nl > start {
                line(UnsafeBufferPointer(start: base + start, count: nl - start), at: at + start, sink: sink)
            } else if validEnd == at + start {
                validEnd = at + nl + 1  // a blank line right after a valid one is harmless
            }
            start = nl + 1
        }
        flush(next: nil, sink: sink)
        return start
    }

    /// A line too long to be an op, skipped unread: invalid, like a line that fails its CRC.
    mutating func skipOverlong() { invalidSinceValid += 1 }

    @inline(__always)
    mutating func line(_ bytes: UnsafeBufferPointer<UInt8>, at: Int, sink: (RawOpView, _ next: BlockID?) -> Void) {
        let parsed = useB ? OpParser.parseRaw(bytes, &scratchB) : OpParser.parseRaw(bytes, &scratchA)
        guard let raw = parsed else { invalidSinceValid += 1; return }
        flush(next: raw.id, sink: sink)
        pending = (raw, UnsafeBufferPointer(rebasing: bytes[9...]), useB)
        useB.toggle()
        lastStart = at
        validEnd = at + bytes.count + 1
        valid += 1
        if newest.map({ $0 < raw.hlc }) ?? true { newest = raw.hlc }
        skipped += invalidSinceValid
        invalidSinceValid = 0
    }

    /// Hands the pending op to `sink`, with the id of the op parsed after it.
    @inline(__always)
    mutating func flush(next: BlockID?, sink: (RawOpView, _ next: BlockID?) -> Void) {
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
}
