// Time: the kernel's clocks in the units this project counts in, and the Gregorian calendar's month
// lengths, each in one place. Not routed through the interposer: reading a clock is no file operation.
// Wall-clock readings may step backwards (NTP, a user); only the monotonic one orders deadlines.
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds: for deadlines and durations, never for dates.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// CLOCK_REALTIME in milliseconds since the Unix epoch (ULID and HLC time).
public func wallClockMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// CLOCK_REALTIME in microseconds since the Unix epoch (capture latency, the bench trace).
public func wallClockMicroseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
}

/// The proleptic Gregorian calendar, as far as date checks need it.
public enum Gregorian {
    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// How many days `month` (1...12) of `year` has.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
