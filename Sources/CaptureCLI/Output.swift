// Output: exit statuses (sysexits) and the writer's two streams. The id goes to stdout, words for
// people go to stderr, and every error is one line prefixed "outl-capture: ", thrown as a Failure
// and printed in one place (captureMain), which also turns it into a notification for a hotkey.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// The writer's names for the shared table (Sysexits), with what each means for it.
public enum ExitStatus {
    public static let ok = Sysexits.ok
    public static let usage = Sysexits.usage               // bad arguments, empty text or selection
    public static let dataError = Sysexits.dataError       // bad --at or --uri; text too long, not UTF-8, control characters; an attachment over the limit
    public static let noInput = Sysexits.noInput           // an --attach file that does not exist or is a directory
    public static let unavailable = Sysexits.unavailable   // no dialog or clipboard program can run
    public static let software = Sysexits.software         // an internal error
    public static let cantCreate = Sysexits.cantCreate     // no workspace, or the inbox cannot be created
    public static let ioError = Sysexits.ioError           // the write, fsync or rename failed
    public static let noPermission = Sysexits.noPermission // permission denied, or a read-only file system
    public static let config = Sysexits.config             // outld.conf or an OUTL_* variable is unusable

    static func of(_ error: Error, otherwise: Int32) -> Int32 { Sysexits.of(error, otherwise: otherwise) }
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
