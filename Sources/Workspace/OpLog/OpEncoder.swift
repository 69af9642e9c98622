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
    static func bound(_ op: Op) -> Int {
        var strings = op.text.utf8.count + op.pos.utf8.count
        for p in op.props { strings += p.key.utf8.count + p.value.utf8.count + 6 }
        return 400 + 6 * strings
    }

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
    static func encode(_ op: Op, _ w: inout ByteWriter) {
        var spelled = Spelled()
        encode(op, &w, &spelled)
    }

    /// The same, with what it shares with the batch's other ops spelled once (`spelled`).
    static func encode(_ op: Op, _ w: inout ByteWriter, _ spelled: inout Spelled) {
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
            field(",\"pk\":", op.pageKind == .journal ? "j" : "p", &w)
            field(",\"t\":", op.text, &w)
        case .createBlock:
            w.lit(",\"pg\":\""); Spelled.id(op.page, &spelled.page, &spelled.pageBytes, &w); w.byte(34)
            if let p = op.parent { idField(",\"pa\":\"", p, &w) } else { w.lit(",\"pa\":\"\"") }
            field(",\"pos\":", op.pos, &w)
            field(",\"t\":", op.text, &w)
            props(op.props, &w)
        case .updateBlock:
            field(",\"t\":", op.text, &w)
            props(op.props, &w)
        case .moveBlock:
            if let p = op.parent { idField(",\"pa\":\"", p, &w) } else { w.lit(",\"pa\":\"\"") }
            field(",\"pos\":", op.pos, &w)
        case .setPreamble:
            field(",\"t\":", op.text, &w)
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

    /// `prefix` (`,"key":`) and the value as a JSON string.
    static func field(_ prefix: StaticString, _ value: String, _ w: inout ByteWriter) {
        w.lit(prefix)
        string(value, &w)
    }

    /// `prefix` (`,"key":"`), the id and its closing quote, without building the id's String (a
    /// UUID never needs escaping).
    static func idField(_ prefix: StaticString, _ id: BlockID, _ w: inout ByteWriter) {
        w.lit(prefix)
        w.id(id)
        w.byte(34)
    }

    static func props(_ props: [Property], _ w: inout ByteWriter) {
        w.lit(",\"pr\":{")
        for i in props.indices {  // read in place: a copy of each Property retained its two Strings
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            string(props[i].key, &w)
            w.byte(UInt8(ascii: ":"))
            string(props[i].value, &w)
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, other UTF-8 as is.
    static func string(_ s: String, _ w: inout ByteWriter) {
        // A native String lends its bytes as they are; only another kind is copied first.
        if let done: Void = s.utf8.withContiguousStorageIfAvailable({ escaped($0, &w) }) { return done }
        var s = s
        s.withUTF8 { escaped($0, &w) }
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
