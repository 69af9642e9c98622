// OpEncoder: spells an op as one op-log line: 8 hex digits of CRC32C, a space, a JSON object, "\n".
// Invariant: the CRC covers exactly the JSON bytes, so a torn or zero-filled line never validates.
public enum OpEncoder {
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends the line for `op` to `out`.
    public static func append(_ op: Op, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: "00000000 ".utf8)
        let jsonStart = out.count
        out.append(contentsOf: "{\"k\":\"".utf8); out.append(contentsOf: op.kind.code.utf8)
        out.append(contentsOf: "\",\"w\":".utf8); decimal(op.hlc.wall, &out)
        out.append(contentsOf: ",\"c\":".utf8); decimal(Int64(op.hlc.counter), &out)
        idField("a", op.hlc.actor, &out)
        idField("id", op.id, &out)
        switch op.kind {
        case .createPage:
            field("pk", op.pageKind == .journal ? "j" : "p", &out)
            field("t", op.text, &out)
        case .createBlock:
            idField("pg", op.page, &out)
            if let p = op.parent { idField("pa", p, &out) } else { field("pa", "", &out) }
            field("pos", op.pos, &out)
            field("t", op.text, &out)
            props(op.props, &out)
        case .updateBlock:
            field("t", op.text, &out)
            props(op.props, &out)
        case .moveBlock:
            if let p = op.parent { idField("pa", p, &out) } else { field("pa", "", &out) }
            field("pos", op.pos, &out)
        case .setPreamble:
            field("t", op.text, &out)
        case .deleteBlock, .unknown:
            break
        }
        out.append(UInt8(ascii: "}"))
        let crc = out.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[jsonStart...])) }
        for i in 0..<8 { out[start + i] = hex[Int((crc >> UInt32(28 - 4 * i)) & 0xF)] }
        out.append(10)
    }

    public static func line(_ op: Op) -> [UInt8] {
        var out: [UInt8] = []
        append(op, to: &out)
        return out
    }

    static func field(_ key: String, _ value: String, _ out: inout [UInt8]) {
        out.append(contentsOf: ",\"".utf8)
        out.append(contentsOf: key.utf8)
        out.append(contentsOf: "\":".utf8)
        string(value, &out)
    }

    /// `,"key":"<uuid>"` without building the id's String (a UUID never needs escaping).
    static func idField(_ key: StaticString, _ id: BlockID, _ out: inout [UInt8]) {
        out.append(contentsOf: ",\"".utf8)
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: "\":\"".utf8)
        id.spell(into: &out)
        out.append(34)
    }

    /// Base-10 spelling, as `String(v)` gives it, without the String.
    static func decimal(_ v: Int64, _ out: inout [UInt8]) {
        if v < 0 { out.append(45) }
        var m = v.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // scratch for up to 20 digits, written backwards
        withUnsafeMutableBytes(of: &digits) { d in
            var n = 0
            repeat { d[n] = UInt8(48 + m % 10); m /= 10; n += 1 } while m > 0
            while n > 0 { n -= 1; out.append(d[n]) }
        }
    }

    static func props(_ props: [Property], _ out: inout [UInt8]) {
        out.append(contentsOf: ",\"pr\":{".utf8)
        for (i, p) in props.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            string(p.key, &out)
            out.append(UInt8(ascii: ":"))
            string(p.value, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, other UTF-8 as is.
    static func string(_ s: String, _ out: inout [UInt8]) {
        out.append(34)
        for c in s.utf8 {
            switch c {
            case 34: out.append(92); out.append(34)
            case 92: out.append(92); out.append(92)
            case 10: out.append(92); out.append(UInt8(ascii: "n"))
            case 13: out.append(92); out.append(UInt8(ascii: "r"))
            case 9: out.append(92); out.append(UInt8(ascii: "t"))
            case 0..<32:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(c >> 4)]); out.append(hex[Int(c & 0xF)])
            default: out.append(c)
            }
        }
        out.append(34)
    }
}
