// Timestamp: RFC 3339 date-times with an explicit offset. A capture's day is the calendar date
// in its own offset (SPEC 3.1), so the offset is kept, never normalised away.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public struct Timestamp: Equatable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    public var nanosecond: Int
    /// Seconds east of UTC (`-05:00` is -18000).
    public var offsetSeconds: Int

    /// Accepts `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; `t`, `z` and a space separator too, as
    /// RFC 3339 allows. No offset, an impossible date or an out-of-range field is nil.
    public init?(rfc3339: String) {
        var text = rfc3339
        // Read in place (every capture has one): no copy of its bytes.
        guard let t = text.withUTF8({ Timestamp.parse($0) }) else { return nil }
        self = t
    }

    /// The same from its UTF-8 bytes.
    public init?(rfc3339 bytes: UnsafeBufferPointer<UInt8>) {
        guard let t = Timestamp.parse(bytes) else { return nil }
        self = t
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var i = 0
        // Inlined: called as a closure over `i`, the two helpers were half the parse's cost.
        @inline(__always) func num(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        /// Steps over the byte at i if it is `x`, `y` or `z`.
        @inline(__always) func expect(_ x: UInt8, _ y: UInt8? = nil, _ z: UInt8? = nil) -> Bool {
            guard i < b.count, b[i] == x || b[i] == y || b[i] == z else { return false }
            i += 1
            return true
        }
        let dash = UInt8(ascii: "-"), colon = UInt8(ascii: ":")
        guard let y = num(4), expect(dash), let mo = num(2), expect(dash), let d = num(2),
              expect(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")), let h = num(2), expect(colon),
              let mi = num(2), expect(colon), let s = num(2)
        else { return nil }
        var nanos = 0
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count && b[i] >= 0x30 && b[i] <= 0x39 {
                if digits < 9 { nanos = nanos * 10 + Int(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanos *= 10 }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
            offset = 0
        } else {
            guard i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") else { return nil }
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = num(2), expect(colon), let om = num(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        guard i == b.count else { return nil }
        guard (1...12).contains(mo), d >= 1, d <= Gregorian.daysIn(month: mo, year: y),
              h <= 23, mi <= 59, s <= 60 else { return nil }
        return Timestamp(year: y, month: mo, day: d, hour: h, minute: mi, second: s, nanosecond: nanos,
                         offsetSeconds: offset)
    }

    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int,
                nanosecond: Int, offsetSeconds: Int) {
        self.year = year; self.month = month; self.day = day; self.hour = hour
        self.minute = minute; self.second = second; self.nanosecond = nanosecond
        self.offsetSeconds = offsetSeconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }

    /// The instant, in ms since the Unix epoch. A leap second (:60) counts as :59.999.
    public var epochMilliseconds: Int64 {
        let days = Timestamp.daysFromCivil(year, month, day)
        let secs = Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + min(second, 59))
            - Int64(offsetSeconds)
        let ms = second == 60 ? 999 : nanosecond / 1_000_000
        return secs * 1000 + Int64(ms)
    }

    /// The instant `epochMs` as seen in a zone `offsetSeconds` east of UTC.
    public static func from(epochMs: Int64, offsetSeconds: Int) -> Timestamp {
        let local = epochMs + Int64(offsetSeconds) * 1000
        let msPerDay: Int64 = 86_400_000
        var days = local / msPerDay
        var rem = local % msPerDay
        if rem < 0 { rem += msPerDay; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        let r = Int(rem)
        return Timestamp(year: y, month: m, day: d, hour: r / 3_600_000, minute: r / 60_000 % 60,
                         second: r / 1000 % 60, nanosecond: r % 1000 * 1_000_000,
                         offsetSeconds: offsetSeconds)
    }

    /// The instant in this machine's time zone (localtime_r, so $TZ is honoured).
    public static func local(epochMs: Int64) -> Timestamp {
        var secs = time_t(epochMs >= 0 ? epochMs / 1000 : (epochMs - 999) / 1000)
        var tm = Glibc.tm()
        guard localtime_r(&secs, &tm) != nil else { return from(epochMs: epochMs, offsetSeconds: 0) }
        return from(epochMs: epochMs, offsetSeconds: Int(tm.tm_gmtoff))
    }

    /// Canonical spelling: ms precision, `Z` for a zero offset, else `±HH:MM`.
    public var rfc3339: String {
        // Spelled in bytes: every capture writes one, and String(Int) with padding brought the
        // integer-description and string-append code into the writer's process for a few digits.
        var b: [UInt8] = []
        b.reserveCapacity(32)
        /// `v` in at least `width` digits, zero-padded (a year past 9999 keeps all of its own).
        func put(_ v: Int, _ width: Int) {
            if v < 0 { b.append(UInt8(ascii: "-")) }
            var m = v.magnitude, n = 1
            while m >= 10 { m /= 10; n += 1 }
            var p = 1 as UInt
            for _ in 1..<max(n, width) { p *= 10 }
            m = v.magnitude
            while p > 0 { b.append(UInt8(ascii: "0") &+ UInt8(m / p % 10)); p /= 10 }
        }
        func put(_ c: Unicode.Scalar) { b.append(UInt8(ascii: c)) }
        put(year, 4); put("-"); put(month, 2); put("-"); put(day, 2); put("T")
        put(hour, 2); put(":"); put(minute, 2); put(":"); put(second, 2); put(".")
        put(nanosecond / 1_000_000, 3)
        if offsetSeconds == 0 {
            put("Z")
        } else {
            let a = abs(offsetSeconds)
            put(offsetSeconds < 0 ? "-" : "+"); put(a / 3600, 2); put(":"); put(a / 60 % 60, 2)
        }
        return String(decoding: b, as: UTF8.self)
    }

    public var description: String { rfc3339 }

    /// The date in the timestamp's own offset: the journal day of a capture.
    public var calendarDay: (year: Int, month: Int, day: Int) { (year, month, day) }

    /// The day of the week of `calendarDay`, 0 for Sunday (1970-01-01 was a Thursday).
    public var weekday: Int {
        let d = Timestamp.daysFromCivil(year, month, day)
        return ((d % 7) + 7 + 4) % 7
    }

    /// `YYYY-MM-DD` of `calendarDay`.
    public var dayString: String {
        let t = rfc3339
        return String(t.prefix(10))
    }
}
