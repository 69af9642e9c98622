// PageFileName: a named page's file name under pages/, safe on Linux, Windows, macOS and Android sync
// targets, and what a file name under pages/ says about its page. Invariants: two different pages
// never get one stem; a stem `encode` makes decodes back to its name; a stem that fits keeps the name
// it always had (only names that did not fit, or that sync tools take for a conflict copy, are new).
//
// The rule:
// * The stem is the page's name in NFC, percent-encoded (`encode`): '/', '%', control characters, the
//   Windows-reserved <>:"\|?*, a leading '.', and the '.' of a ".sync-conflict-" (Syncthing takes any
//   name holding that for a conflict copy: it never makes a conflict copy of one, it deletes it) become
//   %XX. So every '%' `encode` writes starts a %XX escape.
// * It is used when `stem.md` fits: the stem is at most `maxStemBytes` (210) bytes, so the page file,
//   our temporary `stem.md.tmp` and Syncthing's conflict copy
//   `stem.sync-conflict-YYYYMMDD-HHMMSS-XXXXXXX.md` (lib/model/folder_sendrecv.go `conflictName`: a
//   seven-character short device id), even with a ".tmp" after it, stay within Linux's NAME_MAX of
//   255 bytes. Syncthing's own temporary `.syncthing.NAME.tmp` needs no room: it hashes names above
//   145 bytes (lib/fs/tempname.go).
// * Otherwise the stem is shortened: the encoded name cut after a whole character (never inside a
//   UTF-8 sequence, a grapheme or a %XX escape), then the marker "%~", then the page's id in 32 hex
//   digits (`BlockID.namedPage`, the hash of the canonical name every device derives). "%~" is no
//   escape, so no name's full stem has it, and the id makes two shortened stems of different pages
//   differ however alike their names' first 176 bytes are. A shortened stem is not a name: `parse`
//   says `.shortened(id)` and the page is looked up by that id, never created from the stem.
// Logseq does not shorten (a long title fails with ENAMETOOLONG, logseq/logseq#3327); what names a
// page whose file name cannot is its `title::` property, which a shortened page's file should carry.
public enum PageFileName {
    /// The longest stem used whole: 255 - ".sync-conflict-YYYYMMDD-HHMMSS-XXXXXXX" - ".md" - ".tmp".
    public static let maxStemBytes = 255 - 38 - 3 - 4
    /// Ends a shortened stem, before the page id's 32 hex digits.
    static let marker: [UInt8] = [UInt8(ascii: "%"), UInt8(ascii: "~")]

    /// What a stem under pages/ stands for.
    public enum Parsed: Equatable, Sendable {
        /// The page with this name (the stem decoded).
        case name(String)
        /// A shortened stem: the page with this id, to be looked up (its name is not in the stem).
        case shortened(BlockID)
    }

    /// The stem of a named page's file (`pages/STEM.md`): its NFC name encoded, shortened when that
    /// does not fit.
    public static func fileStem(for name: String) -> String {
        let nfc = PageNames.nfc(name)
        let (full, cuts) = encodeCuttable(nfc)
        if full.count <= maxStemBytes { return String(decoding: full, as: UTF8.self) }
        let room = maxStemBytes - marker.count - 32
        let cut = cuts.last { $0 <= room } ?? 0
        var out = Array(full[..<cut])
        out += marker
        let id = BlockID.namedPage(nfc)
        for word in [id.hi, id.lo] {
            for k in stride(from: 60, through: 0, by: -4) { out.append(BlockID.lowerHex[Int((word >> UInt64(k)) & 0xF)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What the file `pages/STEM.md` stands for. A stem ending in the marker and 32 lower-case hex
    /// digits is shortened; any other is decoded as a name (leniently: a '%' that starts no escape, as
    /// in a file a person or Logseq named "100% done.md", stays a '%').
    public static func parse(_ stem: String) -> Parsed {
        let b = Array(stem.utf8)
        if b.count >= 34, b[b.count - 34] == marker[0], b[b.count - 33] == marker[1] {
            var words: [UInt64] = [0, 0]
            var ok = true
            for (k, c) in b[(b.count - 32)...].enumerated() {
                guard (48...57).contains(c) || (97...102).contains(c), let v = BlockID.hexValue(c) else { ok = false; break }
                words[k / 16] = words[k / 16] << 4 | v
            }
            if ok { return .shortened(BlockID(hi: words[0], lo: words[1])) }
        }
        return .name(decode(stem))
    }

    /// The name percent-encoded, whole (never shortened): `fileStem` is what names a file.
    public static func encode(_ name: String) -> String {
        String(decoding: encodeCuttable(name).0, as: UTF8.self)
    }

    /// The encoded bytes, and the offsets in them after each whole character of the name: the only
    /// places a stem may be cut.
    static func encodeCuttable(_ name: String) -> ([UInt8], [Int]) {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        let b = Array(name.utf8)
        let conflict = Array("sync-conflict-".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var cuts: [Int] = []
        var i = 0
        for ch in name {
            for _ in 0..<ch.utf8.count {
                let c = b[i]
                let dot = c == UInt8(ascii: ".")
                let reserved = c < 32 || c == 127 || c == UInt8(ascii: "/") || c == UInt8(ascii: "%")
                    || c == UInt8(ascii: "<") || c == UInt8(ascii: ">") || c == UInt8(ascii: ":")
                    || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c == UInt8(ascii: "|")
                    || c == UInt8(ascii: "?") || c == UInt8(ascii: "*") || (i == 0 && dot)
                    || (dot && b[(i + 1)...].starts(with: conflict))
                if reserved {
                    out.append(UInt8(ascii: "%")); out.append(hex[Int(c >> 4)]); out.append(hex[Int(c & 0xF)])
                } else {
                    out.append(c)
                }
                i += 1
            }
            cuts.append(out.count)
        }
        return (out, cuts)
    }

    /// A stem's %XX escapes decoded: the name of a stem that is not shortened (`parse` tells).
    public static func decode(_ stem: String) -> String {
        let b = Array(stem.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count,
               let h = BlockID.hexValue(b[i + 1]), let l = BlockID.hexValue(b[i + 2]) {
                out.append(UInt8(h << 4 | l)); i += 3
            } else {
                out.append(b[i]); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
