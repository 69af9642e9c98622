// SignalSource and TimerSource: real signals through a real signalfd, a real timerfd.
import Foundation
import Testing
import CInotifyShim
import Daemon
import SystemCalls

@Suite(.serialized) struct SignalTimerTests {
    @Test func signalfd_delivers_sigusr1_with_the_senders_pid() throws {
        let s = try SignalSource([SIGUSR1])
        defer { s.unblockInThisThread() }
        #expect(s.read().isEmpty)
        // The test runner has many threads that do not block SIGUSR1, so a process-wide kill()
        // could be taken by one of them (and kill the runner). tgkill aims it at this thread,
        // which blocked it; the sender pid is still ours. outld blocks the signals before it
        // starts any thread, so there kill() always reaches the signalfd.
        #expect(CInotifyShim_raiseInThread(SIGUSR1) == 0)
        let got = s.read()
        #expect(got.count == 1)
        #expect(got.first?.signo == SIGUSR1)
        #expect(got.first?.pid == getpid())
        #expect(s.read().isEmpty)
    }

    @Test func signalfd_reports_signals_in_arrival_order() throws {
        let s = try SignalSource([SIGHUP, SIGUSR1])
        defer { s.unblockInThisThread() }
        #expect(CInotifyShim_raiseInThread(SIGHUP) == 0)
        #expect(CInotifyShim_raiseInThread(SIGUSR1) == 0)
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
