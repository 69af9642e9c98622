// SignalSource: signals as readable events (signalfd), so the loop handles SIGTERM, SIGHUP and
// SIGUSR1 in order with everything else and no handler ever runs. Create it on the main thread
// before any other thread starts: the signals are blocked in the creating thread's mask, which
// threads created later inherit; a thread that does not block them could take a process signal.
#if canImport(Glibc)
import Glibc
#endif
import CInotifyShim
import SystemCalls

public final class SignalSource {
    public let fd: Int32
    public let signals: [Int32]

    /// Blocks `signals` in this thread and opens a non-blocking, close-on-exec signalfd for them.
    public init(_ signals: [Int32]) throws {
        self.signals = signals
        let r = signals.withUnsafeBufferPointer { CInotifyShim_signalfdOpen($0.baseAddress, Int32($0.count)) }
        if r < 0 { throw Errno(-r) }
        fd = r
    }

    deinit { Sys.close(fd) }

    /// The signals pending now, in arrival order, each with the sender's pid (0 from the kernel).
    /// Empty when none; never blocks.
    public func read() -> [(signo: Int32, pid: Int32)] {
        var out: [(signo: Int32, pid: Int32)] = []
        var signo: Int32 = 0, pid: Int32 = 0
        while CInotifyShim_signalfdRead(fd, &signo, &pid) == 1 { out.append((signo, pid)) }
        return out
    }

    /// Unblocks the signals in the calling thread: for tests, which share their threads.
    public func unblockInThisThread() {
        _ = signals.withUnsafeBufferPointer { CInotifyShim_unblockSignals($0.baseAddress, Int32($0.count)) }
    }

    /// The signals outld handles: SIGTERM/SIGINT stop gracefully, SIGHUP rescans, SIGUSR1 drains now.
    public static let daemonSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]
}
