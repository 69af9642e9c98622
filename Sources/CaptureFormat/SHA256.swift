// SHA256: the digest an attachment is named and checked by (the format's `sha256` field), over the
// C implementation; the writer and the drain both hash through this, so they cannot disagree.
import CSHA256

public struct SHA256 {
    private var state = CSHA256_state()

    public init() { CSHA256_init(&state) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        CSHA256_update(&state, base, bytes.count)
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lower-case hex digits, the format's spelling; the state is spent.
    public mutating func hexDigest() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        CSHA256_final(&state, &digest)
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for b in digest { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        var h = SHA256()
        h.update(bytes)
        return h.hexDigest()
    }
}
