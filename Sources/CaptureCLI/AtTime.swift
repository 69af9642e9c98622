// AtTime: what `--at` accepts, as a person types it: an RFC 3339 time with its offset, a local date
// and time without one (this machine's zone, as the receipt shows), a date alone (that day at the
// current local time of day), `today` or `yesterday`. A time more than a year ahead is refused
// unless `--future` says it is meant: a typo'd year must not file a capture in 9999.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat

enum AtTime {
    static let accepted = "RFC 3339 (2026-12-01T10:00:00+01:00), a local YYYY-MM-DD[ HH:MM[:SS]], today or yesterday"
    /// How far ahead a capture may be made without --future.
    static let aheadLimitMs: Int64 = 366 * 86_400_000

    /// The capture time `raw` names, `nowMs` being now.
    static func parse(_ raw: String, nowMs: Int64, future: Bool) throws -> Timestamp {
        guard let t = resolve(raw, nowMs: nowMs) else {
            throw Failure(ExitStatus.dataError, "--at: not a time: \(raw) (give \(accepted))")
        }
        guard t.epochMilliseconds >= 0, UInt64(t.epochMilliseconds) <= ULID.maxTimestampMs else {
            throw Failure(ExitStatus.dataError, "--at: out of range (1970 to 10889): \(raw)")
        }
        if !future && t.epochMilliseconds - nowMs > aheadLimitMs {
            throw Failure(ExitStatus.dataError, "--at: \(t.rfc3339) is more than a year ahead; add --future if that is meant")
        }
        return t
    }

    static func resolve(_ raw: String, nowMs: Int64) -> Timestamp? {
        if let t = Timestamp(rfc3339: raw) { return t }
        let now = Timestamp.local(epochMs: nowMs)
        switch raw {
        case "today", "now": return now
        case "yesterday": return local(now.year, now.month, now.day - 1, now.hour, now.minute, now.second)
        default: break
        }
        // YYYY-MM-DD, then optionally a space or T and HH:MM[:SS], in the local zone.
        let b = Array(raw.utf8)
        func num(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for c in b[at..<(at + n)] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            return v
        }
        guard b.count >= 10, let y = num(0, 4), b[4] == 0x2D, let mo = num(5, 2), b[7] == 0x2D, let d = num(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        if b.count == 10 { return local(y, mo, d, now.hour, now.minute, now.second, checkDay: true) }
        guard b[10] == 0x20 || b[10] == 0x54, let h = num(11, 2), b.count > 13, b[13] == 0x3A, let mi = num(14, 2),
              h < 24, mi < 60 else { return nil }
        var s = 0
        if b.count == 19, b[16] == 0x3A, let sec = num(17, 2), sec < 60 { s = sec } else if b.count != 16 { return nil }
        return local(y, mo, d, h, mi, s, checkDay: true)
    }

    /// The local civil time, through mktime (the zone's offset and daylight saving as the system
    /// knows them; a time in a spring-forward gap moves forward as mktime moves it). `checkDay`:
    /// a day the month does not have (31 April) is refused, not rolled over; without it the day
    /// may be 0 (yesterday of the 1st) and rolls back into the month before.
    static func local(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int, checkDay: Bool = false) -> Timestamp? {
        if checkDay {
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]
            guard d <= days else { return nil }
        }
        var tm = Glibc.tm()
        tm.tm_year = Int32(y - 1900); tm.tm_mon = Int32(mo - 1); tm.tm_mday = Int32(d)
        tm.tm_hour = Int32(h); tm.tm_min = Int32(mi); tm.tm_sec = Int32(s)
        tm.tm_isdst = -1
        let secs = mktime(&tm)
        guard secs != -1 else { return nil }  // (one second before 1970 is out of range anyway)
        return Timestamp.local(epochMs: Int64(secs) * 1000)
    }
}
