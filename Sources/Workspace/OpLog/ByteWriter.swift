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

    /// Base-10 spelling, as `String(v)` gives it (at most 20 bytes).
    public mutating func decimal(_ v: Int64) {
        if v < 0 { byte(45) }
        var m = v.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // scratch for up to 20 digits, written backwards
        withUnsafeMutableBytes(of: &digits) { d in
            var n = 24
            repeat { n -= 1; d[n] = UInt8(48 + m % 10); m /= 10 } while m > 0
            bytes(UnsafeBufferPointer(rebasing: d.bindMemory(to: UInt8.self)[n...]))
        }
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
