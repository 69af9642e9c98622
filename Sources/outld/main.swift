// outld: entry point. Blocks the handled signals before any thread exists (signalfd needs them
// blocked in every thread), parses the command line, then runs the daemon or --once.
#if canImport(Glibc)
import Glibc
#endif
import CaptureInbox
import Daemon

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
    fputs("outld: \(error)\nTry 'outld --help'.\n", stderr)
    exit(64)
}
if options.showHelp { print(outldUsage); exit(0) }
if options.showVersion { print("outld \(outldVersion)"); exit(0) }

let log = JournalLog(mode: options.log == .journal ? .journal : options.log == .stderr ? .stderr : .auto)
let config: InboxConfig
do {
    config = try InboxConfig.resolve(workspace: options.workspace, inboxes: options.inboxes)
} catch {
    log.error("\(error)")
    exit(64)
}

let status: Int32
if options.once {
    status = await OnceMode.run(options: options, config: config, log: log)
} else {
    status = await OutlDaemon(options: options, config: config, log: log, signals: signals).run()
}
exit(status)
