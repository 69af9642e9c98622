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
        out.append(contentsOf: "\",\"w\":".utf8); out.append(contentsOf: String(op.hlc.wall).utf8)
        out.append(contentsOf: ",\"c\":".utf8); out.append(contentsOf: String(op.hlc.counter).utf8)
        field("a", op.hlc.actor.description, &out)
        field("id", op.id.description, &out)
        switch op.kind {
        case .createPage:
            field("pk", op.pageKind == .journal ? "j" : "p", &out)
            field("t", op.text, &out)
        case .createBlock:
            field("pg", op.page.description, &out)
            field("pa", op.parent?.description ?? "", &out)
            field("pos", op.pos, &out)
            field("t", op.text, &out)
            props(op.props, &out)
        case .updateBlock:
            field("t", op.text, &out)
            props(op.props, &out)
        case .moveBlock:
            field("pa", op.parent?.description ?? "", &out)
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
