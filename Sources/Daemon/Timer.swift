// TimerSource: a monotonic timerfd for the watchdog ping and the settle window, so timers are
// one more readable fd in the loop rather than a sleeping thread. Never blocks.
#if canImport(Glibc)
import Glibc
#endif
import CInotifyShim
import SystemCalls

public final class TimerSource {
    public let fd: Int32

    public init() throws {
        let r = CInotifyShim_timerfdCreate()
        if r < 0 { throw Errno(-r) }
        fd = r
    }

    deinit { Sys.close(fd) }

    /// Fires first after `afterUsec` (must be > 0), then every `everyUsec` (0: only once).
    /// Re-arming replaces the previous setting.
    public func arm(afterUsec: UInt64, everyUsec: UInt64 = 0) throws {
        let r = CInotifyShim_timerfdArm(fd, max(afterUsec, 1), everyUsec)
        if r < 0 { throw Errno(-r) }
    }

    public func disarm() {
        _ = CInotifyShim_timerfdArm(fd, 0, 0)
    }

    /// How many times it fired since the last read (0 if not yet); clears the readable state.
    public func read() -> UInt64 {
        let r = CInotifyShim_timerfdRead(fd)
        return r > 0 ? UInt64(r) : 0
    }
}
