// TimeZoneCheck: glibc reads an unknown $TZ as UTC without a word, which files a capture made near
// midnight under the wrong day. Each program says so once, with this sentence.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public enum TimeZoneCheck {
    /// One sentence when $TZ names no zone this machine knows, else nil. Known: a zoneinfo file
    /// (under $TZDIR, else /usr/share/zoneinfo, or an absolute path), UTC/GMT, or a POSIX rule
    /// such as `EST5EDT` or `<+03>-3`.
    public static func warning(environment: (String) -> String? = Path.environment) -> String? {
        guard let raw = environment("TZ"), !raw.isEmpty else { return nil }
        let name = raw.hasPrefix(":") ? String(raw.dropFirst()) : raw
        if name.isEmpty || ["UTC", "GMT", "UTC0", "GMT0"].contains(name) { return nil }
        let dir = environment("TZDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/usr/share/zoneinfo"
        if isRegularFile(name.hasPrefix("/") ? name : Path.join(dir, name)) { return nil }
        if !raw.hasPrefix(":") && isPOSIXRule(name) { return nil }
        return "TZ=\(raw) is not a time zone this system knows; times are taken as UTC"
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// `std offset [dst [offset] [,rule]]`: a name of three or more letters (or `<…>`), then an
    /// hour offset. Only the start is checked: glibc falls back to UTC when that part is wrong.
    static func isPOSIXRule(_ s: String) -> Bool {
        var b = Array(s.utf8)[...]
        if b.first == UInt8(ascii: "<") {
            guard let close = b.firstIndex(of: UInt8(ascii: ">")), close - b.startIndex >= 4 else { return false }
            b = b[(close + 1)...]
        } else {
            let letters = b.prefix { (65...90).contains($0) || (97...122).contains($0) }
            guard letters.count >= 3 else { return false }
            b = b.dropFirst(letters.count)
        }
        if let f = b.first, f == UInt8(ascii: "+") || f == UInt8(ascii: "-") { b = b.dropFirst() }
        guard let d = b.first, (48...57).contains(d) else { return false }
        return true
    }
}
