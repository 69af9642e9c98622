// SignalSource through a real signalfd, and the timerfd a poll loop could wait on (outld waits with
// poll timeouts instead; the timer lives here, with the only code that uses it).
import Foundation
import Testing
import Daemon
import SystemCalls

/// timerfd(2) is not in the Glibc module map (sys/timerfd.h); bind the C symbols directly.
@_silgen_name("timerfd_create") private func c_timerfd_create(_ clock: Int32, _ flags: Int32) -> Int32
@_silgen_name("timerfd_settime") private func c_timerfd_settime(
    _ fd: Int32, _ flags: Int32, _ new: UnsafePointer<itimerspec>, _ old: UnsafeMutablePointer<itimerspec>?) -> Int32

/// A monotonic, non-blocking timerfd (TFD_CLOEXEC and TFD_NONBLOCK are O_CLOEXEC and O_NONBLOCK).
private final class TimerSource {
    let fd: Int32

    init() throws {
        fd = c_timerfd_create(CLOCK_MONOTONIC, O_CLOEXEC | O_NONBLOCK)
        if fd < 0 { throw Errno.current }
    }

    deinit { Sys.close(fd) }

    /// Fires first after `afterUsec` (0 disarms), then every `everyUsec` (0: only once).
    func arm(afterUsec: UInt64, everyUsec: UInt64 = 0) throws {
        func ts(_ us: UInt64) -> timespec { timespec(tv_sec: Int(us / 1_000_000), tv_nsec: Int(us % 1_000_000) * 1000) }
        var spec = itimerspec(it_interval: ts(everyUsec), it_value: ts(afterUsec))
        if c_timerfd_settime(fd, 0, &spec, nil) < 0 { throw Errno.current }
    }

    func disarm() { try? arm(afterUsec: 0) }

    /// How many times it fired since the last read (0 if not yet).
    func read() -> UInt64 {
        var count: UInt64 = 0
        return Glibc.read(fd, &count, 8) == 8 ? count : 0
    }
}

/// Sends `signo` to this thread only: the test runner has many threads that do not block it, so a
/// process-wide kill() could be taken by one of them (and kill the runner).
private func raiseInThisThread(_ signo: Int32) -> Int32 { pthread_kill(pthread_self(), signo) }

@Suite(.serialized) struct SignalTimerTests {
    @Test func signalfd_delivers_sigusr1_with_the_senders_pid() throws {
        let s = try SignalSource([SIGUSR1])
        defer { s.unblockInThisThread() }
        #expect(s.read().isEmpty)
        // tgkill (pthread_kill) aims it at this thread, which blocked it; the sender pid is still
        // ours. outld blocks the signals before it starts any thread, so there kill() always
        // reaches the signalfd.
        #expect(raiseInThisThread(SIGUSR1) == 0)
        let got = s.read()
        #expect(got.count == 1)
        #expect(got.first?.signo == SIGUSR1)
        #expect(got.first?.pid == getpid())
        #expect(s.read().isEmpty)
    }

    @Test func signalfd_reports_signals_in_arrival_order() throws {
        let s = try SignalSource([SIGHUP, SIGUSR1])
        defer { s.unblockInThisThread() }
        #expect(raiseInThisThread(SIGHUP) == 0)
        #expect(raiseInThisThread(SIGUSR1) == 0)
        #expect(s.read().map(\.signo).sorted() == [SIGHUP, SIGUSR1].sorted())
    }

    @Test func timerfd_fires_and_can_be_disarmed() throws {
        let t = try TimerSource()
        #expect(t.read() == 0)
        try t.arm(afterUsec: 1000)
        var p = pollfd(fd: t.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 10_000) == 1)  // a generous deadline, not a timing assertion
        #expect(t.read() == 1)
        try t.arm(afterUsec: 60_000_000)
        t.disarm()
        p.revents = 0
        #expect(poll(&p, 1, 0) == 0)
    }
}
