// CaptureName: which names in an inbox are captures, and which are their attachments. Only the exact
// final form `<ULID>.json` is a capture; `<ULID>.<k>.att` (k from 1, no leading zero) is the k-th
// attachment of that capture; everything else (temps, backups, a sync tool's files, lower case,
// `.json.bak`) is left alone.

public enum CaptureName {
    public static let suffix = ".json"

    public static func isFinal(_ name: String) -> Bool { ulid(of: name) != nil }

    /// The id of a final-form name, nil for anything else.
    public static func ulid(of name: String) -> ULID? {
        // On the name's bytes: every entry of every listing comes through here.
        var name = name
        return name.withUTF8 { ulid(ofBytes: $0) }
    }

    /// The capture id a final-form name spells (for logs and listings), nil for any other name.
    public static func captureID(of name: String) -> String? { ulid(of: name)?.string }

    public static func fileName(for id: ULID) -> String { id.string + suffix }

    /// The writer's temporary name in `tmp/`: `<ULID>.<pid>.tmp`, unique to its process. Spelled
    /// in bytes: an interpolated Int32 brought the integer-description code into every capture.
    public static func tempFileName(for id: ULID, pid: Int32) -> String {
        var b = [UInt8](unsafeUninitializedCapacity: 26 + 1 + 11 + 4) { room, n in n = id.spell(into: room) }
        b.append(UInt8(ascii: "."))
        if pid < 0 { b.append(UInt8(ascii: "-")) }
        let start = b.count
        var m = pid.magnitude
        repeat { b.append(UInt8(ascii: "0") &+ UInt8(m % 10)); m /= 10 } while m > 0
        b[start...].reverse()
        b.append(contentsOf: ".tmp".utf8)
        return String(decoding: b, as: UTF8.self)
    }

    /// The bytes of a final-form name: 26 of the id, ".json".
    public static var fileNameBytes: Int { 26 + 5 }

    /// Writes `id`'s final-form name and a NUL at the start of `out` (at least 32 bytes).
    public static func spellFileName(_ id: ULID, into out: UnsafeMutableBufferPointer<UInt8>) {
        precondition(out.count > fileNameBytes, "CaptureName.spellFileName: room for 32 bytes")
        id.spell(into: out)
        let o = out.baseAddress! + 26
        o[0] = UInt8(ascii: "."); o[1] = UInt8(ascii: "j"); o[2] = UInt8(ascii: "s"); o[3] = UInt8(ascii: "o"); o[4] = UInt8(ascii: "n")
        o[5] = 0
    }

    /// `id`'s final-form name as a C string on the stack, for the call only (the drain opens each
    /// capture file by it: no String is made per file). Inlinable, so it is made for its caller's
    /// result type, not run generically.
    @inlinable
    public static func withFileName<R>(_ id: ULID, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: fileNameBytes + 1) { b in
            spellFileName(id, into: b)
            return try b.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// The id of a final-form name given as its bytes (a directory listing's), nil for any other.
    public static func ulid(ofBytes u: UnsafeBufferPointer<UInt8>) -> ULID? {
        guard u.count == 26 + 5, u[26] == UInt8(ascii: "."), u[27] == UInt8(ascii: "j"), u[28] == UInt8(ascii: "s"),
              u[29] == UInt8(ascii: "o"), u[30] == UInt8(ascii: "n") else { return nil }
        return ULID(ascii: UnsafeBufferPointer(rebasing: u[..<26]))
    }

    public static let attachmentSuffix = ".att"

    /// The inbox name of a capture's `index`-th attachment (from 1): the only name its capture file
    /// may list there, so a capture can never name another capture's file, or one outside the inbox.
    public static func attachmentFileName(for id: ULID, index: Int) -> String {
        "\(id.string).\(index)\(attachmentSuffix)"
    }

    /// The capture id and index an attachment name spells, nil for any other name.
    public static func attachment(of name: String) -> (id: ULID, index: Int)? {
        let u = Array(name.utf8)
        guard u.count > 26 + 1 + 4, u.count <= 26 + 1 + 4 + 4, name.hasSuffix(attachmentSuffix), u[26] == UInt8(ascii: ".") else { return nil }
        let digits = u[27..<(u.count - 4)]
        guard let first = digits.first, first != UInt8(ascii: "0"), digits.allSatisfy({ (0x30...0x39).contains($0) }),
              let id = ULID(string: String(name.prefix(26))) else { return nil }
        let index = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard attachmentFileName(for: id, index: index) == name else { return nil }  // the ULID's own spelling
        return (id, index)
    }
}
