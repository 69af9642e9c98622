// CrashPoint: named places where the drain can be made to die with SIGKILL, for the crash torture
// test (`OUTL_CRASH_POINT=after-append` etc.). Off unless that variable is set; a real SIGKILL,
// not an exception, so the test sees exactly what a power-on process death leaves behind.
#if canImport(Glibc)
import Glibc
#endif

enum CrashPoint: String {
    case beforeAppend = "before-append"   // files read and parsed, nothing appended
    case afterAppend = "after-append"     // ops durable, files not yet deleted
    case afterUnlink = "after-unlink"     // files deleted, Markdown not yet projected

    static let armed: CrashPoint? = {
        guard let v = getenv("OUTL_CRASH_POINT") else { return nil }
        return CrashPoint(rawValue: String(cString: v))
    }()

    @inline(__always)
    static func hit(_ p: CrashPoint) {
        if armed == p { kill(getpid(), SIGKILL) }
    }
}
