// LockProbe: who holds a file's exclusive flock, read from /proc/locks without touching the lock
// (a probe that took even a shared lock could make a starting outld's non-blocking exclusive lock
// fail), and whether a process is stopped. Linux only, like the rest of the seam.
#if canImport(Glibc)
import Glibc
#endif

public enum LockProbe {
    /// Who holds an exclusive (WRITE) flock on a file: nobody, a pid, or unknown (/proc/locks could
    /// not be read: no /proc in this namespace, or over its size bound).
    public enum Holder: Equatable { case none, pid(Int32), unknown }

    /// The pid holding an exclusive (WRITE) flock on the file `st` describes, or nil (nobody, or
    /// unknown).
    public static func flockWriter(_ st: stat) -> Int32? {
        if case .pid(let p) = holder(st) { return p }
        return nil
    }

    public static func holder(_ st: stat) -> Holder {
        // /proc/locks is generated a piece per read(2): a lock released elsewhere between two
        // pieces shifts the rest, and a line can be missed (seen with parallel tests holding many
        // locks). A holder shows in a read that is not disturbed, so "nobody" is said after three.
        var last = Holder.unknown
        for _ in 0..<3 {
            last = holderOnce(st)
            if last != .none { return last }
        }
        return last
    }

    static func holderOnce(_ st: stat) -> Holder {
        guard let bytes = try? Durable.readRegularFile("/proc/locks", limit: 4 << 20) else { return .unknown }
        let dev = UInt64(st.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let inode = UInt64(st.st_ino)
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            // Lines of blocked waiters carry "->" after the number; only the holder's line is used.
            guard f.count >= 6, f[1] == "FLOCK", f[3] == "WRITE" else { continue }
            let d = f[5].split(separator: ":")
            guard d.count == 3, UInt64(d[0], radix: 16) == major, UInt64(d[1], radix: 16) == minor,
                  UInt64(d[2]) == inode, let pid = Int32(f[4]), pid > 0 else { continue }
            return .pid(pid)
        }
        return .none
    }

    /// Whether `pid` is stopped (SIGSTOP, a debugger): state T or t in /proc/PID/stat.
    public static func isStopped(_ pid: Int32) -> Bool {
        guard let bytes = try? Durable.readRegularFile("/proc/\(pid)/stat", limit: 4096),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")), close + 2 < bytes.count else { return false }
        let state = bytes[close + 2]  // after "pid (comm) "; comm may hold spaces and parentheses
        return state == UInt8(ascii: "T") || state == UInt8(ascii: "t")
    }
}
