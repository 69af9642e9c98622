// Sysexits: the one table of exit statuses every outl program uses (sysexits.h meanings) and the one
// mapping of a failed system call to them, so outl-capture, outld and outl answer the same errno with
// the same status (and outld.service's RestartPreventExitStatus can name the ones no restart fixes).
#if canImport(Glibc)
import Glibc
#endif

public enum Sysexits {
    public static let ok: Int32 = 0
    public static let usage: Int32 = 64        // EX_USAGE
    public static let dataError: Int32 = 65    // EX_DATAERR
    public static let noInput: Int32 = 66      // EX_NOINPUT
    public static let unavailable: Int32 = 69  // EX_UNAVAILABLE
    public static let software: Int32 = 70     // EX_SOFTWARE
    public static let cantCreate: Int32 = 73   // EX_CANTCREAT
    public static let ioError: Int32 = 74      // EX_IOERR
    public static let tempFail: Int32 = 75     // EX_TEMPFAIL
    public static let noPermission: Int32 = 77 // EX_NOPERM
    public static let config: Int32 = 78       // EX_CONFIG

    /// A failed system call's status: no permission, or a read-only file system, is 77 (no retry
    /// fixes it); a full or failing disk 74; anything else `otherwise`, which the caller picks for
    /// what it was doing.
    public static func of(_ error: Error, otherwise: Int32) -> Int32 {
        guard let e = error as? Errno else { return otherwise }
        return of(errno: e.code, otherwise: otherwise)
    }

    public static func of(errno code: Int32, otherwise: Int32) -> Int32 {
        switch code {
        case EACCES, EPERM, EROFS: return noPermission
        case ENOSPC, EDQUOT, EIO: return ioError
        default: return otherwise
        }
    }
}
