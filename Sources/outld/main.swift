// outld: entry point. Blocks the handled signals on the main thread before any other thread
// exists (signalfd needs them blocked in every thread, and threads inherit the mask), parses the
// command line, then runs the daemon or --once. This file has no top-level `await` and does not
// call dispatchMain() on purpose: both left the main thread with an empty signal mask (seen in
// /proc/PID/status SigBlk), so SIGTERM killed outld instead of reaching the signalfd. The main
// thread instead runs the async work itself, its mask untouched.
#if canImport(Glibc)
import Glibc
#endif
import Daemon
import OutlConfig
import MainExecutor
import SystemCalls

// glibc gives freed memory at the top of the heap back to the kernel past 128 KiB, so each batch
// of a burst faulted in again the pages the one before had freed (1,050 of 3,470 faults in a burst
// of 10,000, at about 2 us each here). Up to 8 MiB is kept instead; the daemon trims its heap
// whole once booted (OutlDaemon), so what READY=1 finds resident is what the workspace holds.
Heap.keepFreedTop(bytes: 8 << 20)

let signals: SignalSource
do {
    signals = try SignalSource([SIGTERM, SIGINT, SIGHUP, SIGUSR1])
} catch {
    fputs("outld: cannot set up signal handling: \(error)\n", stderr)
    exit(70)
}

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fputs("outld: \(error) (see outld --help)\n", stderr)
    exit(64)
}
if options.showHelp { print(outldUsage); exit(0) }
if options.showVersion { print("outld \(outldVersion)"); exit(0) }

let log = JournalLog(mode: options.log == .journal ? .journal : options.log == .stderr ? .stderr : .auto)
let config: OutlConfig
do {
    config = try options.resolveConfig()
} catch let e as ConfigError {
    log.error(e.description)
    exit(e.exitStatus)
} catch {
    log.error("\(error)")
    exit(78)
}
// A capture without a usable captured_at lands on its day in this zone: an unknown $TZ is UTC.
if let w = TimeZoneCheck.warning() { log.warning(w) }

// All async work runs here, on the main thread (see MainThreadExecutor: no libdispatch pool
// thread, so no 1 Hz workqueue monitor), and the main thread keeps the signal mask set above.
nonisolated(unsafe) var status: Int32 = 70
let executor = MainThreadExecutor()
Task(executorPreference: executor) {
    if options.once {
        status = await OnceMode.run(options: options, config: config, log: log)
    } else {
        status = await OutlDaemon(options: options, config: config, log: log, signals: signals).run()
    }
    executor.finish()
}
executor.run()
exit(status)
