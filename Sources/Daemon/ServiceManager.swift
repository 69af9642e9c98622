// ServiceNotifier: outld's side of the systemd notify protocol (READY, STATUS, WATCHDOG, STOPPING,
// EXTEND_TIMEOUT_USEC). Every call is a no-op outside systemd ($NOTIFY_SOCKET unset), and loads no
// libsystemd. The watchdog ping must come from the loop that drains, so a stuck drain stops pinging
// and systemd restarts it.
#if canImport(Glibc)
import Glibc
#endif
import CSystemdShim

public enum ServiceNotifier {
    /// True when systemd (or anything speaking its protocol) is listening on $NOTIFY_SOCKET.
    public static var isUnderSystemd: Bool {
        guard let s = getenv("NOTIFY_SOCKET") else { return false }
        return s.pointee != 0
    }

    /// Sends one notify message (newline-separated assignments). True if it was delivered.
    /// Plain sd_notify: the variadic sd_notifyf cannot be called from Swift.
    @discardableResult
    public static func notify(_ state: String) -> Bool {
        CSystemdShim_notify(state) > 0
    }

    /// Why systemd cannot be told anything although it listens ($NOTIFY_SOCKET set and libsystemd
    /// not loadable), or nil: said once at start, since READY=1 would then never arrive.
    public static func unavailableReason() -> String? {
        guard isUnderSystemd, CSystemdShim_load() == 0 else { return nil }
        return "cannot load libsystemd (\(String(cString: CSystemdShim_loadError()))), so systemd ($NOTIFY_SOCKET) cannot be told that outld is ready"
    }

    /// After boot and the first drain.
    @discardableResult public static func ready(status: String? = nil) -> Bool {
        notify(status.map { "READY=1\nSTATUS=\(oneLine($0))" } ?? "READY=1")
    }

    /// e.g. "idle; 42 drained, 1 rejected, inbox empty" (shown by systemctl status).
    @discardableResult public static func status(_ s: String) -> Bool { notify("STATUS=\(oneLine(s))") }

    @discardableResult public static func watchdog() -> Bool { notify("WATCHDOG=1") }

    /// When a graceful stop begins.
    @discardableResult public static func stopping() -> Bool { notify("STOPPING=1") }

    /// Asks for `usec` more before the start (or stop) times out, while a large workspace boots.
    @discardableResult public static func extendTimeout(usec: UInt64) -> Bool {
        notify("EXTEND_TIMEOUT_USEC=\(usec)")
    }

    /// The watchdog interval systemd expects (WatchdogSec=), in µs, or nil when no watchdog is
    /// set for this process. Ping at half of it.
    public static func watchdogInterval() -> UInt64? {
        var usec: UInt64 = 0
        return CSystemdShim_watchdogEnabled(&usec) > 0 && usec > 0 ? usec : nil
    }

    /// The protocol is line-based: a newline inside STATUS= would start a new assignment.
    private static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
