// ByteWriter: writes a line's bytes through a pointer into room made for it beforehand, so the hot
// encoders (an op line per capture) pay no capacity or uniqueness check per byte as Array.append
// does (the daemon's per-capture log line too). Invariant: no write goes past the room's end (each
// write checks, and traps before it would).

// Inlinable: the daemon's log line is written through it from another module, a call per part.
@frozen public struct ByteWriter {
    @usableFromInline let room: UnsafeMutableBufferPointer<UInt8>
    @usableFromInline var _count = 0
    @inlinable public var count: Int { _count }

    @inlinable public init(_ room: UnsafeMutableBufferPointer<UInt8>) { self.room = room }

    /// What has been written so far.
    @inlinable public var written: UnsafeMutableBufferPointer<UInt8> { UnsafeMutableBufferPointer(rebasing: room[..<_count]) }

    @inlinable @inline(__always)
    public mutating func byte(_ c: UInt8) {
        precondition(_count < room.count, "ByteWriter: past the room made for the line")
        room[_count] = c
        _count += 1
    }

    @inlinable @inline(__always)
    public mutating func bytes(_ b: UnsafeBufferPointer<UInt8>) {
        guard let from = b.baseAddress, b.count > 0 else { return }
        precondition(b.count <= room.count - _count, "ByteWriter: past the room made for the line")
        let to = room.baseAddress! + _count
        if b.count <= 16 {
            // Most parts are a few bytes (`,"`, a key, a short value): copied here, not by a call.
            for k in 0..<b.count { to[k] = from[k] }
        } else {
            to.update(from: from, count: b.count)
        }
        _count += b.count
    }

    @inlinable @inline(__always)
    public mutating func lit(_ s: StaticString) { s.withUTF8Buffer { bytes($0) } }

    @inlinable @inline(__always)
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { bytes($0) }
    }

    /// Forgets what was written from `start` on (at most what is written).
    @inlinable @inline(__always)
    public mutating func rewind(to start: Int) {
        precondition(start >= 0 && start <= _count, "ByteWriter: rewound past what is written")
        _count = start
    }

    /// `n` spaces (a Markdown block's indent).
    @inlinable @inline(__always)
    public mutating func spaces(_ n: Int) {
        precondition(n <= room.count - _count, "ByteWriter: past the room made for the line")
        if n > 0 { (room.baseAddress! + _count).initialize(repeating: 32, count: n) }
        _count += n
    }

    /// What `spell` writes into the next `n` bytes of room (it answers how many it wrote).
    @inlinable @inline(__always)
    public mutating func spelled(_ n: Int, _ spell: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        precondition(n <= room.count - _count, "ByteWriter: past the room made for the line")
        _count += spell(UnsafeMutableBufferPointer(rebasing: room[_count..<(_count + n)]))
    }

    /// The id's 36-byte spelling.
    @inline(__always)
    public mutating func id(_ id: BlockID) {
        precondition(36 <= room.count - _count, "ByteWriter: past the room made for the line")
        _count += id.spell(into: UnsafeMutableBufferPointer(rebasing: room[_count...]))
    }

    /// Base-10 spelling, as `String(v)` gives it (at most 20 bytes): two digits at a time from a
    /// table of the hundred pairs, written backwards from the end its digit count puts it at.
    public mutating func decimal(_ v: Int64) {
        if v < 0 { byte(45) }
        var m = v.magnitude
        var n = 1
        var t = m
        while t >= 10 { t /= 10; n += 1 }
        precondition(n <= room.count - _count, "ByteWriter: past the room made for the line")
        var q = room.baseAddress! + _count + n
        let pairs = ByteWriter.digitPairs.utf8Start
        while m >= 100 {
            let r = Int(m % 100)
            m /= 100
            q -= 2
            q[0] = pairs[2 * r]; q[1] = pairs[2 * r + 1]
        }
        if m >= 10 {
            q -= 2
            q[0] = pairs[2 * Int(m)]; q[1] = pairs[2 * Int(m) + 1]
        } else {
            q -= 1
            q[0] = UInt8(48 + m)
        }
        _count += n
    }

    /// The hundred two-digit pairs, "00" to "99" (a literal: nothing made at run time).
    static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }
}

extension Array where Element == UInt8 {
    /// Appends what `body` writes, at most `bound` bytes, with one copy. The room is a temporary
    /// allocation (on the stack when small), never zeroed.
    mutating func appendWritten(atMost bound: Int, _ body: (inout ByteWriter) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { room in
            var w = ByteWriter(room)
            body(&w)
            append(contentsOf: UnsafeBufferPointer(w.written))
        }
    }
}
