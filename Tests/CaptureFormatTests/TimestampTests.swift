// RFC 3339 timestamps: parsing, refusing what has no offset or an impossible date, epoch
// conversion, and the journal day taken in the timestamp's own offset.
import Testing
@testable import CaptureFormat
#if canImport(Glibc)
import Glibc
#endif

@Test func parses_offsets_fractions_and_z() throws {
    let t = try #require(Timestamp(rfc3339: "2026-12-01T23:58:07.120-05:00"))
    #expect(t.offsetSeconds == -18000 && t.nanosecond == 120_000_000)
    #expect(t.epochMilliseconds == 1_796_187_487_120)
    #expect(t.calendarDay == (2026, 12, 1))
    #expect(t.rfc3339 == "2026-12-01T23:58:07.120-05:00")
    let z = try #require(Timestamp(rfc3339: "2026-12-02t04:58:07z"))
    #expect(z.epochMilliseconds == 1_796_187_487_000)
    #expect(z.rfc3339 == "2026-12-02T04:58:07.000Z")
    #expect(Timestamp(rfc3339: "2026-12-02 04:58:07.123456789+05:30")?.rfc3339 == "2026-12-02T04:58:07.123+05:30")
}

@Test func refuses_missing_offsets_and_impossible_fields() {
    for bad in ["2026-12-01T23:58:07", "2026-12-01", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                "2026-12-01T24:00:00Z", "2026-12-01T23:60:00Z", "2026-12-01T23:00:00+24:00",
                "2026-12-01T23:00:00.Z", "26-12-01T23:00:00Z", "2026-12-01T23:00:00Z ", "", "x"] {
        #expect(Timestamp(rfc3339: bad) == nil, "\(bad)")
    }
    #expect(Timestamp(rfc3339: "2024-02-29T00:00:00Z") != nil)
}

@Test func the_day_is_the_date_in_the_captures_own_offset() throws {
    // Same instant, two offsets, two journal days.
    let ny = try #require(Timestamp(rfc3339: "2026-12-01T23:58:07-05:00"))
    let utc = Timestamp.from(epochMs: ny.epochMilliseconds, offsetSeconds: 0)
    #expect(ny.calendarDay == (2026, 12, 1))
    #expect(utc.calendarDay == (2026, 12, 2))
    #expect(utc.dayString == "2026-12-02")
}

@Test func from_epoch_round_trips_through_the_canonical_spelling() {
    var rng = SeededRandom(state: 99)
    for _ in 0..<5000 {
        let ms = Int64.random(in: -2_000_000_000_000...253_402_300_799_000, using: &rng)
        let off = Int.random(in: -14 * 60...14 * 60, using: &rng) * 60
        let t = Timestamp.from(epochMs: ms, offsetSeconds: off)
        #expect(t.epochMilliseconds == ms)
        #expect(Timestamp(rfc3339: t.rfc3339) == t)
    }
}

@Test func local_uses_the_zone_offset_of_the_machine() {
    setenv("TZ", "America/New_York", 1)
    tzset()
    defer { unsetenv("TZ"); tzset() }
    let t = Timestamp.local(epochMs: 1_796_187_487_120)
    #expect(t.offsetSeconds == -18000)
    #expect(t.rfc3339 == "2026-12-01T23:58:07.120-05:00")
}

@Test func rfc3339_pads_every_field_and_spells_the_offset() {
    func t(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int, _ ns: Int, _ off: Int) -> String {
        Timestamp(year: y, month: mo, day: d, hour: h, minute: mi, second: s, nanosecond: ns, offsetSeconds: off).rfc3339
    }
    #expect(t(2026, 1, 2, 3, 4, 5, 6_000_000, 0) == "2026-01-02T03:04:05.006Z")
    #expect(t(7, 12, 31, 23, 59, 59, 999_999_999, 0) == "0007-12-31T23:59:59.999Z")
    #expect(t(12345, 10, 10, 10, 10, 10, 0, 0) == "12345-10-10T10:10:10.000Z")
    #expect(t(2026, 6, 1, 0, 0, 0, 120_000_000, 19800) == "2026-06-01T00:00:00.120+05:30")
    #expect(t(2026, 6, 1, 0, 0, 0, 0, -(9 * 3600 + 30 * 60)) == "2026-06-01T00:00:00.000-09:30")
    #expect(t(2026, 6, 1, 0, 0, 0, 0, 14 * 3600) == "2026-06-01T00:00:00.000+14:00")
    // Every spelling reads back as the same instant and offset.
    for off in stride(from: -12 * 3600, through: 14 * 3600, by: 900) {
        let s = t(2026, 3, 4, 5, 6, 7, 89_000_000, off)
        let back = Timestamp(rfc3339: s)
        #expect(back?.offsetSeconds == off && back?.rfc3339 == s, "\(s)")
    }
}
