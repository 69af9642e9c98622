// OpEncoder: spells an op as one op-log line: 8 hex digits of CRC32C, a space, a JSON object, "\n".
// Invariant: the CRC covers exactly the JSON bytes, so a torn or zero-filled line never validates.
import JSONText

public enum OpEncoder {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends the line for `op` to `out`. Written through a ByteWriter into room for the longest
    /// line the op can make (every string byte escaped as \u00XX), then copied once.
    public static func append(_ op: Op, to out: inout [UInt8]) {
        out.appendWritten(atMost: bound(op)) { w in encode(op, &w) }
    }

    /// The most bytes `op`'s line can take.
    static func bound<O: OpLineFields>(_ op: O) -> Int { 400 + 6 * op.stringBytes }

    /// What the ops of one batch share, spelled once: one device's actor id, the page of a run of
    /// captures, and the wall time of one reading of the clock (`appendCaptures` stamps a batch
    /// from one). Each is spelled again whenever it differs from the last.
    struct Spelled {
        var actor: BlockID? = nil, actorBytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var page: BlockID? = nil, pageBytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var wall: Int64? = nil, wallBytes = (UInt64(0), UInt64(0), UInt64(0)), wallCount = 0

        /// `id`'s 36 bytes into `w`, from `bytes` when `id` is `last`, else spelled and kept there.
        @inline(__always)
        static func id(_ id: BlockID, _ last: inout BlockID?, _ bytes: inout (UInt64, UInt64, UInt64, UInt64, UInt64),
                       _ w: inout ByteWriter) {
            withUnsafeMutableBytes(of: &bytes) { b in
                let b = b.bindMemory(to: UInt8.self)
                if last != id {
                    _ = id.spell(into: b)
                    last = id
                }
                w.bytes(UnsafeBufferPointer(rebasing: b[..<36]))
            }
        }

        mutating func wall(_ v: Int64, _ w: inout ByteWriter) {
            withUnsafeMutableBytes(of: &wallBytes) { b in
                let b = b.bindMemory(to: UInt8.self)
                if wall != v {
                    var spelled = ByteWriter(b)
                    spelled.decimal(v)
                    wallCount = spelled.count
                    wall = v
                }
                w.bytes(UnsafeBufferPointer(rebasing: b[..<wallCount]))
            }
        }
    }

    /// Writes `op`'s line after what `w` holds (at most `bound(op)` bytes).
    static func encode<O: OpLineFields>(_ op: O, _ w: inout ByteWriter) {
        var spelled = Spelled()
        encode(op, &w, &spelled)
    }

    /// The same, with what it shares with the batch's other ops spelled once (`spelled`).
    static func encode<O: OpLineFields>(_ op: O, _ w: inout ByteWriter, _ spelled: inout Spelled) {
        let lineStart = w.count
        w.lit("00000000 ")
        let jsonStart = w.count
        w.lit("{\"k\":\""); w.lit(op.kind.code)
        w.lit("\",\"w\":"); spelled.wall(op.hlc.wall, &w)
        w.lit(",\"c\":"); w.decimal(Int64(op.hlc.counter))
        w.lit(",\"a\":\""); Spelled.id(op.hlc.actor, &spelled.actor, &spelled.actorBytes, &w); w.byte(34)
        idField(",\"id\":\"", op.id, &w)
        switch op.kind {
        case .createPage:
            w.lit(",\"pk\":\""); w.byte(op.pageKind == .journal ? UInt8(ascii: "j") : UInt8(ascii: "p")); w.byte(34)
            w.lit(",\"t\":"); op.withText { escaped($0, &w) }
        case .createBlock:
            w.lit(",\"pg\":\""); Spelled.id(op.page, &spelled.page, &spelled.pageBytes, &w); w.byte(34)
            if let p = op.parent { idField(",\"pa\":\"", p, &w) } else { w.lit(",\"pa\":\"\"") }
            w.lit(",\"pos\":"); op.withPos { escaped($0, &w) }
            w.lit(",\"t\":"); op.withText { escaped($0, &w) }
            props(op, &w)
        case .updateBlock:
            w.lit(",\"t\":"); op.withText { escaped($0, &w) }
            props(op, &w)
            if let b = op.base {
                w.lit(",\"bw\":"); w.decimal(b.wall)
                w.lit(",\"bc\":"); w.decimal(Int64(b.counter))
                idField(",\"ba\":\"", b.actor, &w)
            }
        case .moveBlock:
            if let p = op.parent { idField(",\"pa\":\"", p, &w) } else { w.lit(",\"pa\":\"\"") }
            w.lit(",\"pos\":"); op.withPos { escaped($0, &w) }
        case .setPreamble:
            w.lit(",\"t\":"); op.withText { escaped($0, &w) }
        case .deleteBlock, .unknown:
            break
        }
        w.byte(UInt8(ascii: "}"))
        let line = w.written
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: line[jsonStart...])))
        // The eight hex digits, most significant first: BlockID's spreading puts the first in the
        // lowest byte, which a little-endian store writes first.
        let digits = BlockID.hexDigits(crc).littleEndian
        withUnsafeBytes(of: digits) { UnsafeMutableRawPointer(line.baseAddress! + lineStart).copyMemory(from: $0.baseAddress!, byteCount: 8) }
        w.byte(10)
    }

    public static func line(_ op: Op) -> [UInt8] {
        var out: [UInt8] = []
        append(op, to: &out)
        return out
    }

    /// `prefix` (`,"key":"`), the id and its closing quote, without building the id's String (a
    /// UUID never needs escaping).
    static func idField(_ prefix: StaticString, _ id: BlockID, _ w: inout ByteWriter) {
        w.lit(prefix)
        w.id(id)
        w.byte(34)
    }

    @inline(__always)
    static func props<O: OpLineFields>(_ op: O, _ w: inout ByteWriter) {
        w.lit(",\"pr\":{")
        var first = true
        op.forEachProperty { key, value in
            if !first { w.byte(UInt8(ascii: ",")) }
            first = false
            escaped(key, &w)
            w.byte(UInt8(ascii: ":"))
            escaped(value, &w)
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// `b` as a JSON string. Nearly every string needs no escape: it is told so a word at a time
    /// (the last word overlapping the one before; a string shorter than a word is read back from
    /// the room it was copied into, when a word fits there) and copied whole. A string that needs
    /// one, or may, is written a run at a time from its first such byte.
    @inline(__always)
    static func escaped(_ b: UnsafeBufferPointer<UInt8>, _ w: inout ByteWriter) {
        w.byte(34)
        guard let base = b.baseAddress, b.count > 0 else { w.byte(34); return }
        let n = b.count
        var first = n  // the first byte that may need an escape
        if n >= 8 {
            var k = 0
            while k < n {
                let at = min(k, n - 8)
                if JSONWord.anyQuoteBackslashOrControl(UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self)) { first = at; break }
                k += 8
            }
            if first == n { w.bytes(b); w.byte(34); return }
        } else if w.room.count - w.count >= 8 {
            let start = w.count
            w.bytes(b)
            let word = UnsafeRawPointer(w.room.baseAddress! + start).loadUnaligned(as: UInt64.self)
            // Only the string's own bytes count (little-endian: the first in the lowest byte).
            if JSONWord.quoteBackslashOrControl(word) & (UInt64.max >> (64 - 8 * n)) == 0 { w.byte(34); return }
            w.rewind(to: start)
            first = 0
        } else {
            first = 0
        }
        w.bytes(UnsafeBufferPointer(rebasing: b[..<first]))
        var run = first, k = first
        while k < n {
            let c = b[k]
            k += 1
            guard c < 32 || c == 34 || c == 92 else { continue }
            w.bytes(UnsafeBufferPointer(rebasing: b[run..<(k - 1)]))
            run = k
            w.byte(92)
            switch c {
            case 34: w.byte(34)
            case 92: w.byte(92)
            case 10: w.byte(UInt8(ascii: "n"))
            case 13: w.byte(UInt8(ascii: "r"))
            case 9: w.byte(UInt8(ascii: "t"))
            default:
                w.lit("u00")
                w.byte(hex[Int(c >> 4)]); w.byte(hex[Int(c & 0xF)])
            }
        }
        w.bytes(UnsafeBufferPointer(rebasing: b[run...]))
        w.byte(34)
    }
}

/// What an op's line is spelled from, so an `Op` (Strings) and a capture's create (`CaptureOpView`,
/// read from its batch's bytes) share one encoder and spell the same line for the same op.
protocol OpLineFields {
    var kind: OpKind { get }
    var hlc: HLC { get }
    var id: BlockID { get }
    var page: BlockID { get }
    var parent: BlockID? { get }
    var pageKind: PageKind { get }
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    func withPos<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// Each property's key and value, in the op's order.
    func forEachProperty(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void)
    /// The bytes of its text, position and properties, plus 6 per property: what `bound` grows with.
    var stringBytes: Int { get }
    /// updateBlock: the stamp of the text its editor saw (`Op.base`).
    var base: HLC? { get }
}

extension Op: OpLineFields {
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { OpEncoder.bytes(of: text, body) }

    func forEachProperty(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        for i in props.indices {  // read in place: a copy of each Property retained its two Strings
            OpEncoder.bytes(of: props[i].key) { k in OpEncoder.bytes(of: props[i].value) { v in body(k, v) } }
        }
    }

    var stringBytes: Int {
        var n = text.utf8.count + pos.utf8.count
        for p in props { n += p.key.utf8.count + p.value.utf8.count + 6 }
        return n
    }
}

extension OpEncoder {
    /// A String's UTF-8 as it lies: a native String lends its bytes; only another kind is copied first.
    @inline(__always)
    static func bytes<R>(of s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let r = s.utf8.withContiguousStorageIfAvailable(body) { return r }
        var s = s
        return s.withUTF8(body)
    }
}
