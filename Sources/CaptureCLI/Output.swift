// Output: exit statuses (sysexits) and the writer's two streams. The id goes to stdout, words for
// people go to stderr, and every error is one line prefixed "outl-capture: ".
#if canImport(Glibc)
import Glibc
#endif

public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let usage: Int32 = 64        // EX_USAGE: bad arguments, empty text
    public static let dataError: Int32 = 65    // EX_DATAERR: bad --at, bad --uri, text too long, not UTF-8
    public static let unavailable: Int32 = 69  // EX_UNAVAILABLE: --prompt found no dialog program
    public static let cantCreate: Int32 = 73   // EX_CANTCREAT: cannot create the inbox
    public static let ioError: Int32 = 74      // EX_IOERR: the write, fsync or rename failed
    public static let config: Int32 = 78       // EX_CONFIG: outld.conf is malformed
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

    /// Prints the one-line error and returns `status`, so callers can `return Out.fail(…)`.
    static func fail(_ status: Int32, _ message: String) -> Int32 {
        stderr("outl-capture: \(message)\n")
        return status
    }
}
