// OpEncoder: spells an op as one op-log line: 8 hex digits of CRC32C, a space, a JSON object, "\n".
// Invariant: the CRC covers exactly the JSON bytes, so a torn or zero-filled line never validates.
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

    /// Writes `op`'s line after what `w` holds (at most `bound(op)` bytes).
    static func encode(_ op: Op, _ w: inout ByteWriter) {
        let lineStart = w.count
        w.lit("00000000 ")
        let jsonStart = w.count
        w.lit("{\"k\":\""); w.lit(op.kind.code)
        w.lit("\",\"w\":"); w.decimal(op.hlc.wall)
        w.lit(",\"c\":"); w.decimal(Int64(op.hlc.counter))
        idField("a", op.hlc.actor, &w)
        idField("id", op.id, &w)
        switch op.kind {
        case .createPage:
            field("pk", op.pageKind == .journal ? "j" : "p", &w)
            field("t", op.text, &w)
        case .createBlock:
            idField("pg", op.page, &w)
            if let p = op.parent { idField("pa", p, &w) } else { field("pa", "", &w) }
            field("pos", op.pos, &w)
            field("t", op.text, &w)
            props(op.props, &w)
        case .updateBlock:
            field("t", op.text, &w)
            props(op.props, &w)
        case .moveBlock:
            if let p = op.parent { idField("pa", p, &w) } else { field("pa", "", &w) }
            field("pos", op.pos, &w)
        case .setPreamble:
            field("t", op.text, &w)
        case .deleteBlock, .unknown:
            break
        }
        w.byte(UInt8(ascii: "}"))
        let line = w.written
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: line[jsonStart...])))
        hex.withUnsafeBufferPointer { hex in
            for i in 0..<8 { line[lineStart + i] = hex[Int((crc >> UInt32(28 - 4 * i)) & 0xF)] }
        }
        w.byte(10)
    }

    public static func line(_ op: Op) -> [UInt8] {
        var out: [UInt8] = []
        append(op, to: &out)
        return out
    }

    static func field(_ key: StaticString, _ value: String, _ w: inout ByteWriter) {
        w.lit(",\"")
        w.lit(key)
        w.lit("\":")
        string(value, &w)
    }

    /// `,"key":"<uuid>"` without building the id's String (a UUID never needs escaping).
    static func idField(_ key: StaticString, _ id: BlockID, _ w: inout ByteWriter) {
        w.lit(",\"")
        w.lit(key)
        w.lit("\":\"")
        w.id(id)
        w.byte(34)
    }

    static func props(_ props: [Property], _ w: inout ByteWriter) {
        w.lit(",\"pr\":{")
        for (i, p) in props.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            string(p.key, &w)
            w.byte(UInt8(ascii: ":"))
            string(p.value, &w)
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, other UTF-8 as is.
    static func string(_ s: String, _ w: inout ByteWriter) {
        var s = s
        s.withUTF8 { b in
            w.byte(34)
            // Most values need no escape: their bytes go in with one copy.
            guard b.contains(where: { $0 < 32 || $0 == 34 || $0 == 92 }) else {
                w.bytes(b)
                w.byte(34)
                return
            }
            for c in b {
                switch c {
                case 34: w.byte(92); w.byte(34)
                case 92: w.byte(92); w.byte(92)
                case 10: w.byte(92); w.byte(UInt8(ascii: "n"))
                case 13: w.byte(92); w.byte(UInt8(ascii: "r"))
                case 9: w.byte(92); w.byte(UInt8(ascii: "t"))
                case 0..<32:
                    w.lit("\\u00")
                    w.byte(hex[Int(c >> 4)]); w.byte(hex[Int(c & 0xF)])
                default: w.byte(c)
                }
            }
            w.byte(34)
        }
    }
}
