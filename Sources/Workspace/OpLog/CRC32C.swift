// CRC32C (Castagnoli, reflected 0x82F63B78): makes every op-log line self-validating. The SSE4.2
// instruction (CCRC32C) when the CPU has it, else slicing-by-8; both match crc32c("123456789") == 0xE3069283.
import CCRC32C

public enum CRC32C {
    /// Checked once: the boot checksums every line, so the branch must be a load, not a cpuid.
    static let hardware: Bool = CCRC32C_hardware() != 0

    public static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard hardware, let p = bytes.baseAddress else { return software(bytes, seed: seed) }
        return ~CCRC32C_update(~seed, p, bytes.count)
    }

    static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()
    /// One flat table (8 x 256) so the hot loop indexes a single buffer.
    static let flat: [UInt32] = tables.flatMap { $0 }

    /// The portable path (and the reference the hardware path is tested against).
    static func software(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        guard var p = bytes.baseAddress else { return seed }
        var n = bytes.count
        flat.withUnsafeBufferPointer { tb in
            let t = tb.baseAddress!
            while n >= 8 {
                let lo = UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)) ^ crc
                let hi = UInt32(littleEndian: (p + 4).loadUnaligned(as: UInt32.self))
                crc = t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                n -= 1
            }
        }
        return ~crc
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
