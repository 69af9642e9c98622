// DaemonOptions: outld's command line, parsed by hand (no outside packages). Usage errors are one
// line and exit 64; `--help` text lives here so it cannot drift from what is parsed. What the
// flags mean together with the environment and outld.conf is OutlConfig's one rule.
import OutlConfig

public struct DaemonOptions: Equatable {
    public enum LogMode: String { case auto, journal, stderr }
    public enum IOMode: String { case auto, uring, plain }
    public var workspace: String?
    public var inboxes: [String] = []
    public var stateDirectory: String?
    public var once = false
    public var timeoutSeconds: Double = 30
    public var timeoutGiven = false
    /// With --once: print the summary even when there was nothing to do.
    public var verbose = false
    public var log: LogMode = .auto
    public var io: IOMode = .auto
    public var showHelp = false
    public var showVersion = false
    public init() {}
}

public struct UsageError: Error, CustomStringConvertible {
    public let description: String
}

public let outldVersion = "0.1.0"

public let outldUsage = """
usage: outld [--workspace DIR] [--inbox DIR]... [--state-dir DIR] [--log auto|journal|stderr] [--io auto|uring|plain]
       outld --once [--workspace DIR] [--inbox DIR]... [--state-dir DIR] [--timeout SECONDS] [--verbose]
       outld --version | --help

Keeps the outl workspace booted and drains captures from its inboxes into the journal of the day
each was made. Runs in the foreground until SIGTERM; `--once` drains what is waiting now (asking a
running outld to do it if one owns the workspace) and exits.

  --workspace DIR   the workspace (default: $OUTL_WORKSPACE, else `workspace =` in
                    ~/.config/outl/outld.conf, else ~/outl), created on first start; with
                    --once, a DIR given here must exist
  --inbox DIR       drain this inbox too (repeatable); <workspace>/.outl/captures is always
                    drained, and so are outld.conf's `inbox =` lines (unless --workspace is given)
                    and $OUTL_CAPTURE_INBOX (unless --workspace or --inbox is given)
  --state-dir DIR   device-local state: write lock, actor id (default: $OUTL_STATE_DIR, else
                    $XDG_STATE_HOME/outl, else ~/.local/state/outl)
  --once            drain once and exit
  --timeout S       with --once: how long to wait for a running outld (default 30)
  --verbose, -v     with --once: print the summary line even when nothing was waiting (without
                    it, nothing to do prints nothing, so cron mails only when something happened)
  --log MODE        auto (journal under systemd, else stderr), journal, or stderr
  --io MODE         auto (io_uring when the kernel allows, else plain syscalls), uring, plain
  --version, --help

Signals: SIGTERM/SIGINT finish the batch and exit 0; SIGHUP re-reads outld.conf and rescans;
SIGUSR1 drains now.
Exit status: 0 ok (with --once: nothing left waiting), 64 usage, 69 workspace unusable,
73 no workspace at --once --workspace DIR, or an inbox inside the workspace (or .outl, journals/,
pages/) is a symbolic link (never followed), or --once kept a bad capture because its rejected/ is
not a directory, 74 --once drained but a page file could not be read or written (outl status),
75 workspace locked, or --once timed out or met an error a retry can fix, 77 permission denied or a
read-only file system,
78 bad outld.conf or OUTL_* variable.
See outld(1), outl-inbox(5).
"""

extension DaemonOptions {
    public static func parse(_ args: [String]) throws -> DaemonOptions {
        var o = DaemonOptions()
        var i = 0
        func value(_ flag: String) throws -> String {
            i += 1
            guard i < args.count, !args[i].isEmpty else { throw UsageError(description: "\(flag) needs a value") }
            return args[i]
        }
        while i < args.count {
            var arg = args[i]
            var inline: String? = nil
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                inline = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            func v(_ flag: String) throws -> String {
                if let inline { guard !inline.isEmpty else { throw UsageError(description: "\(flag) needs a value") }; return inline }
                return try value(flag)
            }
            switch arg {
            case "--workspace": o.workspace = try v(arg)
            case "--inbox": o.inboxes.append(try v(arg))
            case "--state-dir": o.stateDirectory = try v(arg)
            case "--once": o.once = true
            case "--timeout":
                let s = try v(arg)
                guard let t = Double(s), t >= 0, t.isFinite else {
                    throw UsageError(description: "--timeout takes a number of seconds, not '\(s)'")
                }
                o.timeoutSeconds = t
                o.timeoutGiven = true
            case "--log":
                let s = try v(arg)
                guard let m = LogMode(rawValue: s) else { throw UsageError(description: "--log takes auto, journal or stderr, not '\(s)'") }
                o.log = m
            case "--io":
                let s = try v(arg)
                guard let m = IOMode(rawValue: s) else { throw UsageError(description: "--io takes auto, uring or plain, not '\(s)'") }
                o.io = m
            case "-v", "--verbose": o.verbose = true
            case "-h", "--help": o.showHelp = true
            case "-V", "--version": o.showVersion = true
            default:
                throw UsageError(description: arg.hasPrefix("-") ? "unknown option \(arg)" : "unexpected argument '\(arg)'")
            }
            i += 1
        }
        if o.timeoutGiven && !o.once && !o.showHelp && !o.showVersion {
            throw UsageError(description: "--timeout is for --once only (a running outld waits for nothing)")
        }
        if o.verbose && !o.once && !o.showHelp && !o.showVersion {
            throw UsageError(description: "--verbose is for --once only (a running outld logs every drain)")
        }
        return o
    }

    /// Workspace, inboxes and state directory by the one rule every outl program follows.
    public func resolveConfig() throws -> OutlConfig {
        try OutlConfig.resolve(workspace: workspace, inboxes: inboxes, stateDirectory: stateDirectory)
    }
}
