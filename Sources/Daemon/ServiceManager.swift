// ServiceNotifier: outld's side of the systemd notify protocol (READY, STATUS, WATCHDOG, STOPPING,
// EXTEND_TIMEOUT_USEC). Every call is a no-op outside systemd ($NOTIFY_SOCKET unset). The watchdog
// ping must come from the loop that drains, so a stuck drain stops pinging and systemd restarts it.
#if canImport(Glibc)
import Glibc
#endif
import CLibsystemd

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
        sd_notify(0, state) > 0
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
        return sd_watchdog_enabled(0, &usec) > 0 && usec > 0 ? usec : nil
    }

    /// The protocol is line-based: a newline inside STATUS= would start a new assignment.
    private static func oneLine(_ s: String) -> String {
        String(s.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
