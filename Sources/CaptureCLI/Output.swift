// Output: exit statuses (sysexits) and the writer's two streams. The id goes to stdout, words for
// people go to stderr, and every error is one line prefixed "outl-capture: ", thrown as a Failure
// and printed in one place (captureMain), which also turns it into a notification for a hotkey.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let usage: Int32 = 64        // EX_USAGE: bad arguments, empty text or selection
    public static let dataError: Int32 = 65    // EX_DATAERR: bad --at or --uri; text too long, not UTF-8, control characters
    public static let unavailable: Int32 = 69  // EX_UNAVAILABLE: no dialog or clipboard program can run
    public static let software: Int32 = 70     // EX_SOFTWARE: an internal error
    public static let cantCreate: Int32 = 73   // EX_CANTCREAT: no workspace at --workspace, or the inbox cannot be created
    public static let ioError: Int32 = 74      // EX_IOERR: the write, fsync or rename failed
    public static let noPermission: Int32 = 77 // EX_NOPERM: permission denied
    public static let config: Int32 = 78       // EX_CONFIG: outld.conf or an OUTL_* variable is unusable

    /// A failed system call's status: permission is 77, a full or failing disk 74, else `otherwise`.
    static func of(_ error: Error, otherwise: Int32) -> Int32 {
        guard let e = error as? Errno else { return otherwise }
        switch e.code {
        case EACCES, EPERM: return noPermission
        case ENOSPC, EDQUOT, EIO: return ioError
        default: return otherwise
        }
    }
}

/// Why nothing was saved: a status and one line for a person.
struct Failure: Error, Equatable {
    let status: Int32
    let message: String
    init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }
}

enum Out {
    static func write(_ fd: Int32, _ s: String) {
        var bytes = Array(s.utf8)
        var done = 0
        bytes.withUnsafeMutableBytes { b in
            while done < b.count {
                let n = Glibc.write(fd, b.baseAddress! + done, b.count - done)
                if n <= 0 { return }  // a closed stdout/stderr must not turn a saved capture into an error
                done += n
            }
        }
    }

    static func stdout(_ s: String) { write(1, s) }
    static func stderr(_ s: String) { write(2, s) }

    /// One line of ours on stderr: "outl-capture: …".
    static func say(_ message: String) { stderr("outl-capture: \(message)\n") }
}
