// OpFileCursor: one op file read forward in 1 MB chunks, one valid op at a time, for the boot's k-way
// merge of several devices' files. Invariant: the head op's bytes stay put until the next `advance`.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

final class OpFileCursor {
    let path: String
    let writable: Bool
    private let fd: Int32
    private var buf: [UInt8] = [UInt8](repeating: 0, count: 1 << 20)
    private var have = 0
    private var start = 0      // next unread line in buf
    private var bufOffset = 0  // file offset of buf[0]
    private var eof = false
    private var scratch = ParseScratch()
    private var lineStart = 0  // the head's JSON (after the CRC prefix) in buf
    private var lineCount = 0
    private var validEnd = 0
    private var bad = 0
    private var badSinceValid = 0
    /// The op `advance` last found.
    private(set) var head = RawOp()
    /// Valid ops found so far.
    private(set) var count = 0
    /// File bytes consumed so far (progress).
    var consumed: Int { bufOffset + start }

    init(path: String, writable: Bool) throws {
        self.path = path
        self.writable = writable
        fd = try io(path) { try Sys.open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW) }
    }

    deinit { Sys.close(fd) }

    /// Moves to the next valid op; false at the end of the file. Same line rules as `readFile`.
    func advance() throws -> Bool {
        while true {
            let found: Bool? = buf.withUnsafeBufferPointer { p -> Bool? in
                let base = p.baseAddress!
                while start < have {
                    guard let nlRaw = memchr(base + start, 10, have - start) else { return nil }
                    let nl = UnsafeRawPointer(nlRaw).assumingMemoryBound(to: UInt8.self) - base
                    let s = start
                    start = nl + 1
                    if nl > s {
                        let line = UnsafeBufferPointer(start: base + s, count: nl - s)
                        if let raw = OpParser.parseRaw(line, &scratch) {
                            head = raw
                            lineStart = s + 9
                            lineCount = nl - s - 9
                            validEnd = bufOffset + nl + 1
                            bad += badSinceValid
                            badSinceValid = 0
                            count += 1
                            return true
                        }
                        badSinceValid += 1
                    } else if validEnd == bufOffset + s {
                        validEnd = bufOffset + nl + 1  // a blank line right after a valid one is harmless
                    }
                }
                return nil
            }
            if found == true { return true }
            if eof { return false }
            // No whole line left: keep the partial one, read more.
            if start > 0 {
                buf.withUnsafeMutableBytes { b in
                    if have > start { memmove(b.baseAddress!, b.baseAddress! + start, have - start) }
                }
                have -= start
                bufOffset += start
                start = 0
            }
            if have == buf.count { buf.append(contentsOf: repeatElement(0, count: buf.count)) }
            let n = try io(path) {
                try buf.withUnsafeMutableBytes { b in
                    try Sys.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: b[have...]))
                }
            }
            if n == 0 { eof = true } else { have += n }
        }
    }

    /// The head op with its texts (valid inside `body` only).
    func withHead<R>(_ body: (RawOpView) -> R) -> R {
        buf.withUnsafeBufferPointer { p in
            scratch.bytes.withUnsafeBufferPointer { sb in
                scratch.props.withUnsafeBufferPointer { pp in
                    body(RawOpView(raw: head, json: UnsafeBufferPointer(rebasing: p[lineStart..<(lineStart + lineCount)]),
                                   scratch: sb, props: pp))
                }
            }
        }
    }

    /// After the last `advance`: cuts a writable file's invalid tail (durably) and reports the counts.
    func finish() throws -> OpLogReader.FileResult {
        let size = bufOffset + have
        if validEnd < size, writable {
            try io(path) {
                try Sys.ftruncate(fd, Int64(validEnd))
                try Sys.fdatasync(fd)
            }
        }
        return OpLogReader.FileResult(size: size, validEnd: validEnd, bad: bad)
    }
}
