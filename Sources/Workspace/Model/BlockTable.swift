// BlockTable: every block of the model in compact form: 32-byte rows (pages by number), an
// open-addressing id index, one byte arena for parent and pos, text and properties (keys interned,
// capture times packed), decoded to `Block` only when read, and the write stamps of the few blocks
// edited after their create. Invariants: `self[id]` returns exactly
// what the old [BlockID: Block] held; value semantics (CoW arrays); a row without `edits` has its
// create's stamp in the arena right after its content.

#if canImport(Glibc)
import Glibc
#endif
import CCRC32C

/// A block's stored text, props and position as offsets into the arena, and its page by number.
/// 32 bytes (two rows per cache line): offsets take 40 bits (an arena of 1 TiB), the page number
/// 46 bits split over the words' top bits, the two flags the top bits of `posBits`. The parent lives
/// in the arena, right before the position it came with: most blocks (captures) have none.
struct BlockRow {
    var id: BlockID
    /// Bits 0..<40: offset of varint(text length) text, then its properties (`appendProperty`),
    /// then 0. Bits 40..<64: the page number's low 24 bits.
    var contentBits: UInt64
    /// Bits 0..<40: offset of varint(length) pos, the parent's 16 bytes right before it when the row
    /// has one. Bit 63: deleted. Bit 62: has a parent. Bits 40..<62: the page number's high 22 bits.
    var posBits: UInt64

    static let offsetBits: UInt64 = 40
    static let offsetMask: UInt64 = (1 << offsetBits) - 1
    static let deletedFlag: UInt64 = 1 << 63
    static let parentFlag: UInt64 = 1 << 62
    /// Page numbers below this fit (24 + 22 bits).
    static let pageLimit = 1 << 46

    init(id: BlockID, pageNumber: Int, content: UInt64, pos: UInt64, hasParent: Bool, deleted: Bool) {
        self.id = id
        contentBits = 0
        posBits = 0
        self.content = content
        self.pos = pos
        self.pageNumber = pageNumber
        self.hasParent = hasParent
        self.deleted = deleted
    }

    var content: UInt64 {
        @inline(__always) get { contentBits & BlockRow.offsetMask }
        @inline(__always) set {
            precondition(newValue <= BlockRow.offsetMask, "the arena outgrew 1 TiB")
            contentBits = newValue | (contentBits & ~BlockRow.offsetMask)
        }
    }
    var pos: UInt64 {
        @inline(__always) get { posBits & BlockRow.offsetMask }
        @inline(__always) set {
            precondition(newValue <= BlockRow.offsetMask, "the arena outgrew 1 TiB")
            posBits = newValue | (posBits & ~BlockRow.offsetMask)
        }
    }
    var pageNumber: Int {
        @inline(__always) get {
            Int(contentBits >> BlockRow.offsetBits) | Int((posBits >> BlockRow.offsetBits) & ((1 << 22) - 1)) << 24
        }
        @inline(__always) set {
            let n = UInt64(newValue)
            contentBits = (contentBits & BlockRow.offsetMask) | (n & ((1 << 24) - 1)) << BlockRow.offsetBits
            posBits = (posBits & ~(((1 << 22) - 1) << BlockRow.offsetBits)) | ((n >> 24) & ((1 << 22) - 1)) << BlockRow.offsetBits
        }
    }
    var deleted: Bool {
        @inline(__always) get { posBits & BlockRow.deletedFlag != 0 }
        @inline(__always) set { posBits = newValue ? posBits | BlockRow.deletedFlag : posBits & ~BlockRow.deletedFlag }
    }
    var hasParent: Bool {
        @inline(__always) get { posBits & BlockRow.parentFlag != 0 }
        @inline(__always) set { posBits = newValue ? posBits | BlockRow.parentFlag : posBits & ~BlockRow.parentFlag }
    }
}

public struct BlockTable: Sendable {
    var rows: [BlockRow] = []
    /// Per slot: row index + 1 in the low `rowBits` bits (0 = empty), and in the bits above them a
    /// fingerprint of the id's hash, so a probe that meets another id rarely has to read its row.
    /// A power of two, at most three quarters full, so row index + 1 < count always fits in `rowBits`
    /// (the fingerprints keep the longer probes of a fuller table in the slots, not the rows).
    var slots: [UInt32] = [UInt32](repeating: 0, count: 16)
    var rowBits = 4
    var arena: [UInt8] = []
    var keys = KeyTable()
    /// Stamps of the blocks that saw more than their creates, by row: most blocks never do.
    var edits: [Int: BlockEdits] = [:]
    /// Actor ids, numbered in order of appearance (a create's stamp names its actor by number).
    var actors: [BlockID] = []
    var actorNumbers: [BlockID: Int] = [:]
    var lastActor = -1
    /// Page ids, numbered in order of appearance (a row names its page by number).
    var pageIDs: [BlockID] = []
    var pageNumbers: [BlockID: Int] = [:]
    var lastPage = -1

    public var count: Int { rows.count }

    /// The largest log the boot reserves room for up front (about 3 million capture ops): its index
    /// is written whole (32 MB), the rest is address space.
    static let reservationCeiling = 1 << 30

    /// Makes room for `n` blocks without rehashing or moving rows.
    public mutating func reserveCapacity(_ n: Int) {
        rows.reserveCapacity(n)
        if BlockTable.tooFull(n, slots.count) { rehash(minimumSlots: n + n / 3 + 1) }
    }

    /// Room for `k` more blocks (a batch about to be applied): the index grown once for them, not
    /// again and again while they go in; rows and index still grow geometrically, so calls for a
    /// block at a time cost no more than inserting it.
    mutating func reserve(more k: Int) {
        let n = rows.count + k
        if rows.capacity < n { rows.reserveCapacity(max(n, 2 * rows.capacity)) }
        if BlockTable.tooFull(n, slots.count) { rehash(minimumSlots: max(n + n / 3 + 1, 2 * slots.count)) }
    }

    /// Reserves rows, index and arena for a log of `bytes` bytes (~330 bytes per capture op, ~90 of
    /// them in the arena with the create's stamp and the time packed). Untouched reserved pages cost
    /// address space, not memory.
    /// At most `reservationCeiling` is reserved: file sizes are the synced folder's claim (a sparse
    /// file of 200 GB costs no disk), and a bigger log simply grows the tables as it is read.
    mutating func reserve(logBytes claimed: Int) {
        let bytes = min(max(0, claimed), BlockTable.reservationCeiling)
        reserveCapacity(bytes / 256)
        arena.reserveCapacity(bytes / 3 + bytes / 32)
    }

    public subscript(id: BlockID) -> Block? {
        guard let r = find(id) else { return nil }
        return block(at: r)
    }

    @inline(__always) static func tooFull(_ rows: Int, _ slots: Int) -> Bool { rows * 4 > slots * 3 }

    @inline(__always) static func hash(_ id: BlockID) -> UInt64 {
        id.tableHash
    }

    /// Slot bits (29 up) and fingerprint bits (the top ones) of the hash never overlap: the slot
    /// uses bits 29..<29+rowBits and the fingerprint bits 32+rowBits..<64.
    @inline(__always) static func slot(of h: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: h >> 29) & mask
    }

    @inline(__always) static func tag(of h: UInt64, rowBits: Int) -> UInt32 {
        rowBits >= 32 ? 0 : UInt32(truncatingIfNeeded: h >> UInt64(32 + rowBits)) << UInt32(rowBits)
    }

    /// Starts loading the slot `id` hashes to: the boot calls it one op ahead of `find`.
    @inline(__always) func prefetch(_ id: BlockID) {
        slots.withUnsafeBufferPointer { s in
            CCRC32C_prefetch(s.baseAddress! + BlockTable.slot(of: BlockTable.hash(id), mask: s.count - 1))
        }
    }

    /// The row index of `id`, if the block exists.
    @inline(__always) func find(_ id: BlockID) -> Int? {
        slots.withUnsafeBufferPointer { s in
            rows.withUnsafeBufferPointer { r in
                let mask = s.count - 1
                let h = BlockTable.hash(id)
                let bits = UInt32(rowBits)
                let rowMask: UInt32 = bits >= 32 ? ~0 : (1 << bits) - 1
                let tag = BlockTable.tag(of: h, rowBits: rowBits)
                var i = BlockTable.slot(of: h, mask: mask)
                while true {
                    let v = s[i]
                    if v == 0 { return nil }
                    if v & ~rowMask == tag {
                        let k = Int(v & rowMask) - 1
                        if r[k].id == id { return k }
                    }
                    i = (i + 1) & mask
                }
            }
        }
    }

    mutating func rehash(minimumSlots: Int) {
        var n = 16, bits = 4
        while n < minimumSlots { n <<= 1; bits += 1 }
        var s = [UInt32](repeating: 0, count: n)
        let mask = n - 1
        for (k, row) in rows.enumerated() {
            let h = BlockTable.hash(row.id)
            var i = BlockTable.slot(of: h, mask: mask)
            while s[i] != 0 { i = (i + 1) & mask }
            s[i] = UInt32(k + 1) | BlockTable.tag(of: h, rowBits: bits)
        }
        slots = s
        rowBits = bits
    }

    /// Adds a row for a new id (the caller checked `find` is nil); returns its index.
    mutating func insert(_ row: BlockRow) -> Int {
        if BlockTable.tooFull(rows.count + 1, slots.count) { rehash(minimumSlots: slots.count * 2) }
        rows.append(row)
        let k = rows.count
        let mask = slots.count - 1
        let h = BlockTable.hash(row.id)
        let v = UInt32(k) | BlockTable.tag(of: h, rowBits: rowBits)
        var i = BlockTable.slot(of: h, mask: mask)
        slots.withUnsafeMutableBufferPointer { s in
            while s[i] != 0 { i = (i + 1) & mask }
            s[i] = v
        }
        return k - 1
    }

    // MARK: the arena

    @inline(__always) mutating func appendVarint(_ v: Int) {
        var v = UInt64(v)
        while v >= 0x80 { arena.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        arena.append(UInt8(truncatingIfNeeded: v))
    }

    /// Appends three varints with one append (at most 30 bytes, written into a word buffer first):
    /// the boot appends a stamp or a packed property per op.
    @inline(__always) mutating func appendVarints(_ x: UInt64, _ y: UInt64, _ z: UInt64) {
        var buf: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buf) { b in
            var k = 0
            @inline(__always) func put(_ v: UInt64) {
                var v = v
                while v >= 0x80 { b[k] = UInt8(truncatingIfNeeded: v) | 0x80; v >>= 7; k += 1 }
                b[k] = UInt8(truncatingIfNeeded: v); k += 1
            }
            put(x)
            put(y)
            put(z)
            arena.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[..<k]))
        }
    }

    /// Appends varint(length) + bytes; returns the offset.
    @inline(__always) mutating func appendBytes(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let at = UInt64(arena.count)
        appendVarint(b.count)
        if b.count > 0 { arena.append(contentsOf: b) }
        return at
    }

    /// Appends a block's place: its parent's 16 bytes when it has one, then varint(length) pos;
    /// returns the offset of the pos (the row's `pos`; the parent is right before it).
    @inline(__always) mutating func appendPlace(parent: BlockID?, pos: UnsafeBufferPointer<UInt8>) -> UInt64 {
        if let parent {
            withUnsafeBytes(of: (parent.hi.littleEndian, parent.lo.littleEndian)) { arena.append(contentsOf: $0) }
        }
        return appendBytes(pos)
    }

    /// Moves row `r` to `parent` (nil: the top level) at `pos`.
    mutating func setPlace(_ r: Int, parent: BlockID?, pos: UnsafeBufferPointer<UInt8>) {
        let at = appendPlace(parent: parent, pos: pos)
        rows[r].pos = at
        rows[r].hasParent = parent != nil
    }

    /// Row `r`'s parent (nil at the top level).
    @inline(__always) func parent(ofRow r: Int) -> BlockID? {
        let row = rows[r]
        return row.hasParent ? parent(atPos: row.pos) : nil
    }

    /// The parent stored right before the pos at `offset` (see `appendPlace`).
    @inline(__always) func parent(atPos offset: UInt64) -> BlockID {
        arena.withUnsafeBytes { a in
            let at = Int(offset) - 16
            return BlockID(hi: UInt64(littleEndian: a.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                           lo: UInt64(littleEndian: a.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)))
        }
    }

    /// Row `r`'s page.
    @inline(__always) func page(ofRow r: Int) -> BlockID { pageIDs[rows[r].pageNumber] }

    /// The number of a page some row is on, nil if none ever was.
    @inline(__always) func pageNumber(_ id: BlockID) -> Int? {
        if lastPage >= 0, pageIDs[lastPage] == id { return lastPage }
        return pageNumbers[id]
    }

    /// The number of page `id`, given one if it has none (blocks come in runs of one page).
    @inline(__always) mutating func numberPage(_ id: BlockID) -> Int {
        if lastPage >= 0, pageIDs[lastPage] == id { return lastPage }
        if let n = pageNumbers[id] { lastPage = n; return n }
        let n = pageIDs.count
        precondition(n < BlockRow.pageLimit, "more pages than a row can name")
        pageIDs.append(id)
        pageNumbers[id] = n
        lastPage = n
        return n
    }

    /// Puts row `r` on page `id`.
    mutating func setPage(_ r: Int, _ id: BlockID) { rows[r].pageNumber = numberPage(id) }

    /// Appends one property: varint(key id << 1 | packed), then the value as varint(length) bytes,
    /// or, packed, as CompactTimestamp's two varints. Key ids start at 1, so a property never
    /// begins with the 0 that ends a block's properties.
    @inline(__always) mutating func appendProperty(key: Int, value: UnsafeBufferPointer<UInt8>) {
        if let (x, y) = CompactTimestamp.pack(value) {
            appendVarints(UInt64(key << 1 | 1), x, y)
        } else {
            appendVarint(key << 1)
            _ = appendBytes(value)
        }
    }

    /// Reads the property at `i` (see `appendProperty`) and hands `body` its key id and value;
    /// false, with `i` past it, at the 0 that ends the properties.
    @inline(__always) static func readProperty(_ a: UnsafeBufferPointer<UInt8>, _ i: inout Int,
                                               _ body: (_ key: Int, UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        let k = readVarint(a, &i)
        if k == 0 { return false }
        if k & 1 == 0 {
            let n = readVarint(a, &i)
            body(k >> 1, UnsafeBufferPointer(rebasing: a[i..<(i + n)]))
            i += n
        } else {
            let x = UInt64(readVarint(a, &i)), y = UInt64(readVarint(a, &i))
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: CompactTimestamp.maxBytes) { out in
                let n = CompactTimestamp.unpack(x, y, into: out.baseAddress!)
                body(k >> 1, UnsafeBufferPointer(rebasing: out[..<n]))
            }
        }
        return true
    }

    /// Steps `i` over the property there; false, with `i` past it, at the 0 that ends the properties.
    @inline(__always) static func skipProperty(_ a: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        let k = readVarint(a, &i)
        if k == 0 { return false }
        if k & 1 == 0 {
            i += readVarint(a, &i)
        } else {
            _ = readVarint(a, &i)
            _ = readVarint(a, &i)
        }
        return true
    }

    @inline(__always) static func readVarint(_ a: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Int {
        var v: UInt64 = 0, shift: UInt64 = 0
        while true {
            let c = a[i]; i += 1
            v |= UInt64(c & 0x7F) << shift
            if c < 0x80 { return Int(v) }
            shift += 7
        }
    }

    /// The bytes stored at `offset` (valid while the arena is not mutated).
    @inline(__always) func withBytes<R>(at offset: UInt64, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        arena.withUnsafeBufferPointer { a in
            var i = Int(offset)
            let n = BlockTable.readVarint(a, &i)
            return body(UnsafeBufferPointer(rebasing: a[i..<(i + n)]))
        }
    }

    /// Appends a create's stamp after its content: varint(zigzag wall) varint(counter) varint(actor number).
    @inline(__always) mutating func appendStamp(_ h: HLC) {
        var n = lastActor
        if n < 0 || actors[n] != h.actor {  // ops come in runs of one device's file
            if let k = actorNumbers[h.actor] {
                n = k
            } else {
                n = actors.count
                actors.append(h.actor)
                actorNumbers[h.actor] = n
            }
            lastActor = n
        }
        appendVarints(UInt64(bitPattern: (h.wall << 1) ^ (h.wall >> 63)), UInt64(h.counter), UInt64(n))
    }

    /// The stamp of the create whose content starts at `offset` (see `appendStamp`).
    func createStamp(atContent offset: UInt64) -> HLC {
        arena.withUnsafeBufferPointer { a in
            var i = Int(offset)
            i += BlockTable.readVarint(a, &i)  // text
            while BlockTable.skipProperty(a, &i) {}
            var z: UInt64 = 0, shift: UInt64 = 0
            while true {
                let c = a[i]; i += 1
                z |= UInt64(c & 0x7F) << shift
                if c < 0x80 { break }
                shift += 7
            }
            let wall = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
            let counter = UInt32(truncatingIfNeeded: BlockTable.readVarint(a, &i))
            return HLC(wall: wall, counter: counter, actor: actors[BlockTable.readVarint(a, &i)])
        }
    }

    /// The stamp of row `r`'s winning create.
    func createStamp(ofRow r: Int) -> HLC {
        edits[r]?.create ?? createStamp(atContent: rows[r].content)
    }

    /// Row `r`'s stamps, made on its first edit (the create's stamp moves here from the arena, as the
    /// row's content may then point at an update's).
    func editsOf(_ r: Int) -> BlockEdits {
        edits[r] ?? BlockEdits(create: createStamp(atContent: rows[r].content))
    }

    func string(at offset: UInt64) -> String {
        withBytes(at: offset) { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: reading

    func block(at r: Int) -> Block {
        let row = rows[r]
        let (text, props) = content(ofRow: r)
        return Block(page: pageIDs[row.pageNumber], parent: row.hasParent ? parent(atPos: row.pos) : nil, pos: string(at: row.pos), text: text,
                     props: props, deleted: row.deleted)
    }

    /// Row `r`'s text and properties alone (what a render needs), the list made at its size.
    func content(ofRow r: Int) -> (text: String, props: [Property]) { content(at: rows[r].content) }

    /// The text and properties stored at `offset` (a row's content, or its winning create's).
    func content(at offset: UInt64) -> (text: String, props: [Property]) {
        var text = "", props: [Property] = []
        arena.withUnsafeBufferPointer { a in
            var i = Int(offset)
            let n = BlockTable.readVarint(a, &i)
            text = String(decoding: UnsafeBufferPointer(rebasing: a[i..<(i + n)]), as: UTF8.self)
            i += n
            var j = i, count = 0
            while BlockTable.skipProperty(a, &j) { count += 1 }
            guard count > 0 else { return }
            props.reserveCapacity(count)
            while BlockTable.readProperty(a, &i, { k, v in props.append(Property(keys.names[k - 1], String(decoding: v, as: UTF8.self))) }) {}
        }
        return (text, props)
    }

    /// The position key of a row without decoding the rest.
    func pos(ofRow r: Int) -> String { string(at: rows[r].pos) }

    /// -1, 0 or 1 as rows a's and b's position keys compare as Strings do (siblings are sorted by it):
    /// by bytes when both are ASCII, the common case, else as Strings.
    func comparePos(ofRow a: Int, _ b: Int) -> Int {
        let fast: Int? = withBytes(at: rows[a].pos) { pa in
            withBytes(at: rows[b].pos) { pb in
                var high: UInt8 = 0
                for c in pa { high |= c }
                for c in pb { high |= c }
                guard high < 0x80 else { return nil }
                let n = Swift.min(pa.count, pb.count)
                let d = n == 0 ? 0 : memcmp(pa.baseAddress!, pb.baseAddress!, n)
                if d != 0 { return d < 0 ? -1 : 1 }
                return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
            }
        }
        if let fast { return fast }
        let sa = pos(ofRow: a), sb = pos(ofRow: b)
        return sa == sb ? 0 : (sa < sb ? -1 : 1)
    }
}

/// The stamps of one block beyond its create: each field keeps the stamp of its last write, so a write
/// that arrives late with an older stamp loses whatever the arrival order.
struct BlockEdits: Sendable {
    /// The winning create: the least stamp among the block's creates.
    var create: HLC
    /// The newest update (the row's content is its) and the newest move (the row's parent and pos are its).
    var update: HLC? = nil
    var move: HLC? = nil
    var delete: HLC? = nil
    /// The newest update's base (Op.base): the text its editor saw.
    var updateBase: HLC? = nil
    /// Once an update replaced the row's content: where the winning create's is (the arena is
    /// append-only), for its capture record (CaptureRecord).
    var createContent: UInt64? = nil
    /// The greatest pos of a top-level move, raised into the maxTopPos of a page the block is created on later.
    var topMovePos: String? = nil
    /// Pages of the block's other creates (a capture drained on two devices in two time zones): the block is
    /// listed on them too, so a move raises their maxTopPos as well.
    var otherPages: [BlockID] = []

    init(create: HLC) { self.create = create }

    /// Deleted iff the newest of {delete, update} is a delete: an edit after a delete brings the block back.
    var deleted: Bool {
        guard let d = delete else { return false }
        guard let u = update else { return true }
        return u < d
    }
}

/// Property keys, interned: `captured-at` and `source` repeat on every capture.
struct KeyTable: Sendable {
    var names: [String] = []
    /// Every key's bytes back to back; key k (1-based) is flat[starts[k - 1]..<starts[k]] (no array
    /// per key, so a compare retains nothing).
    var flat: [UInt8] = []
    var starts: [Int] = [0]
    /// FNV-1a of the key's bytes (probing on by one on a collision) -> id (1-based).
    var index: [UInt64: Int] = [:]

    /// The last two ids returned: captures repeat the same keys in the same order, so a byte compare
    /// with them usually answers without hashing.
    var recent: (Int, Int) = (0, 0)

    @inline(__always) func matches(_ k: Int, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard k > 0 else { return false }
        return starts.withUnsafeBufferPointer { st in
            let from = st[k - 1], n = st[k] - from
            guard n == b.count else { return false }
            return n == 0 || flat.withUnsafeBufferPointer { memcmp($0.baseAddress! + from, b.baseAddress!, n) == 0 }
        }
    }

    mutating func id(_ b: UnsafeBufferPointer<UInt8>) -> Int {
        if matches(recent.0, b) { return recent.0 }
        if matches(recent.1, b) { let k = recent.1; recent = (k, recent.0); return k }
        let k = lookup(b)
        recent = (k, recent.0)
        return k
    }

    mutating func lookup(_ b: UnsafeBufferPointer<UInt8>) -> Int {
        var h = FNV1a.hash(b)
        while let k = index[h] {
            if matches(k, b) { return k }
            h &+= 1
        }
        names.append(String(decoding: b, as: UTF8.self))
        flat.append(contentsOf: b)
        starts.append(flat.count)
        index[h] = names.count
        return names.count
    }
}
