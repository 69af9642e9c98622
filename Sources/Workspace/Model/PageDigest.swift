// PageDigest: a 64-bit digest of everything a page's file is rendered from (its name, kind and
// preamble; each of its blocks' id, parent, position, text, properties, deletion and move stamp, and
// an updated capture's record), so a start can tell a page the model still renders as last projected
// without rendering it. Invariants: a function of the model's state alone, never of the order ops
// arrived in (rows are summed, property keys hashed by name, not by their interned number); any
// change a rendering can show changes it (but for a 64-bit collision), and it is recorded only beside
// bytes the renderer of the same `PageRenderer.formatVersion` and `PageProperties` made.

/// A streaming 64-bit hash of words and bytes (a multiply-xorshift per word, murmur3's finalizer at
/// the end): fast over the arena's bytes, and never stored beyond this device's state directory.
struct DigestHasher {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed ^ 0x243F_6A88_85A3_08D3 }

    @inline(__always) mutating func add(_ w: UInt64) {
        state = (state ^ w) &* 0x9E37_79B9_7F4A_7C15
        state ^= state >> 29
    }

    @inline(__always) mutating func add(_ b: UnsafeBufferPointer<UInt8>) {
        add(UInt64(b.count))
        guard let p = b.baseAddress else { return }
        let raw = UnsafeRawPointer(p)
        var i = 0
        while i + 8 <= b.count { add(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)); i += 8 }
        // The last 1-7 bytes as one word, the first in its lowest byte, read four, two and one at
        // a time (a byte at a time, a block's few strings cost a projection a fifth of its digest).
        let t = b.count - i
        guard t > 0 else { return }
        var tail: UInt64 = 0, k = 0
        if t >= 4 { tail = UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt32.self))); k = 4 }
        if t - k >= 2 { tail |= UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: i + k, as: UInt16.self))) << (8 * k); k += 2 }
        if t > k { tail |= UInt64(b[i + k]) << (8 * k) }
        add(tail)
    }

    mutating func add(_ s: String) {
        var s = s
        s.withUTF8 { add($0) }
    }

    @inline(__always) mutating func add(_ id: BlockID) { add(id.hi); add(id.lo) }

    var finished: UInt64 { DigestHasher.mix(state) }

    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        var k = x
        k ^= k >> 33; k = k &* 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33; k = k &* 0xC4CE_B9FE_1A85_EC53
        return k ^ (k >> 33)
    }
}

extension Model {
    /// The digest of what `pageID`'s file is rendered from (see the header); 0 for no such page.
    func renderDigest(of pageID: BlockID) -> UInt64 {
        guard let page = pages[pageID] else { return 0 }
        var head = DigestHasher(seed: 1)
        head.add(page.known ? 1 : 0)
        head.add(page.kind == .journal ? 1 : 2)
        head.add(page.name)
        head.add(page.preamble)
        // Rows are summed, each finished on its own: the sum does not depend on their order.
        var sum = head.finished
        let keyHashes = blocks.keys.nameDigests()
        let number = blocks.pageNumber(pageID) ?? -1
        blocks.rows.withUnsafeBufferPointer { rows in
            blocks.arena.withUnsafeBufferPointer { a in
                for r in page.rows {
                    let row = rows[Int(r)]
                    guard row.pageNumber == number else { continue }  // listed here, shown on another page
                    var h = DigestHasher(seed: 2)
                    h.add(row.id)
                    h.add(row.deleted ? 1 : 0)
                    if row.hasParent { h.add(blocks.parent(atPos: row.pos)) } else { h.add(0) }
                    var i = Int(row.pos)
                    var n = BlockTable.readVarint(a, &i)
                    h.add(UnsafeBufferPointer(rebasing: a[i..<(i + n)]))
                    i = Int(row.content)
                    n = BlockTable.readVarint(a, &i)
                    h.add(UnsafeBufferPointer(rebasing: a[i..<(i + n)]))
                    i += n
                    // A packed time is hashed as packed (packing is one to one): no need to unpack it.
                    while true {
                        let k = BlockTable.readVarint(a, &i)
                        if k == 0 { break }
                        h.add(keyHashes[(k >> 1) - 1])
                        if k & 1 == 0 {
                            n = BlockTable.readVarint(a, &i)
                            h.add(UnsafeBufferPointer(rebasing: a[i..<(i + n)]))
                            i += n
                        } else {
                            h.add(UInt64.max)  // no byte string's length
                            h.add(UInt64(BlockTable.readVarint(a, &i)))
                            h.add(UInt64(BlockTable.readVarint(a, &i)))
                        }
                    }
                    if let e = blocks.edits[Int(r)] {
                        // The newest move breaks a cycle of parents (PageArrangement).
                        if let m = e.move { h.add(UInt64(bitPattern: m.wall)); h.add(UInt64(m.counter)); h.add(m.actor) }
                        // An updated capture's record decides which of its properties show (CaptureRecord).
                        if e.update != nil {
                            for p in blocks.record(ofRow: Int(r)) { h.add(p.key); h.add(p.value) }
                        }
                    }
                    sum &+= h.finished
                }
            }
        }
        return sum
    }
}

extension KeyTable {
    /// Each key's digest by its bytes (not its interned number, which depends on arrival order).
    func nameDigests() -> [UInt64] {
        flat.withUnsafeBufferPointer { f in
            (0..<names.count).map { k in
                var h = DigestHasher(seed: 3)
                h.add(UnsafeBufferPointer(rebasing: f[starts[k]..<starts[k + 1]]))
                return h.finished
            }
        }
    }
}
