// PageFileName: a page name <-> a file name that is safe on Linux, Windows, macOS and Android sync
// targets. Percent-encodes '/', '%', control characters, the Windows-reserved <>:"\|?* and a
// leading '.', so the mapping is reversible and never escapes pages/.
public enum PageFileName {
    public static func encode(_ name: String) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (i, c) in name.utf8.enumerated() {
            let reserved = c < 32 || c == 127 || c == UInt8(ascii: "/") || c == UInt8(ascii: "%")
                || c == UInt8(ascii: "<") || c == UInt8(ascii: ">") || c == UInt8(ascii: ":")
                || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c == UInt8(ascii: "|")
                || c == UInt8(ascii: "?") || c == UInt8(ascii: "*") || (i == 0 && c == UInt8(ascii: "."))
            if reserved {
                out.append(UInt8(ascii: "%")); out.append(hex[Int(c >> 4)]); out.append(hex[Int(c & 0xF)])
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

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
