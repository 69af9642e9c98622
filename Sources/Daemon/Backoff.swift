// Backoff: how long to wait before retrying a drain that hit a transient error (EIO, ENOSPC,
// EMFILE). Doubling from 100 ms to 30 s so a full disk is retried, never spun on.

struct Backoff {
    static let first: UInt64 = 100_000_000      // ns
    static let ceiling: UInt64 = 30_000_000_000 // ns
    private(set) var delay: UInt64 = 0

    /// Called after a failed pass; returns the wait before the next attempt, in nanoseconds.
    mutating func failed() -> UInt64 {
        delay = delay == 0 ? Backoff.first : min(delay * 2, Backoff.ceiling)
        return delay
    }

    mutating func succeeded() { delay = 0 }
    var isBackingOff: Bool { delay != 0 }
}
