// Inbox: the Maildir discipline on one inbox directory. A capture is in the inbox only after
// temp write, fsync, rename and the directory fsync have all returned; on any failure nothing of
// this delivery is left behind (no temp, no unconfirmed final file).
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import SystemCalls

public enum Inbox {
    public static let tempDirName = "tmp"
    public static let rejectedDirName = "rejected"

    /// Makes `dir` and `dir/tmp` exist (0700, parents created and fsync'd). Existing
    /// directories keep their mode; a non-directory in the way is ENOTDIR.
    public static func ensure(_ dir: String) throws {
        try Durable.makeDirectory(Path.join(dir, tempDirName), mode: 0o700)
    }

    /// Delivers one capture file: O_EXCL temp `<dir>/tmp/<ULID>.<pid>.tmp` (0600), write, fsync,
    /// rename to `<dir>/<ULID>.json`, fsync `dir`. Returns the final path once all of it is durable.
    /// If the directory fsync fails, the final name is taken back: an error means "not saved".
    public static func deliver(_ bytes: [UInt8], id: ULID, to dir: String) throws -> String {
        let temp = Path.join(Path.join(dir, tempDirName), "\(id.string).\(getpid()).tmp")
        let final = Path.join(dir, CaptureName.fileName(for: id))
        try Durable.publish(bytes, to: final, via: temp, mode: 0o600,
                            syncTempDirectory: false, retractIfUnsynced: true)
        return final
    }

    /// The final-form names in `dir`, sorted (= capture order). A missing inbox is empty.
    public static func pending(_ dir: String) throws -> [String] {
        let names: [String]
        do {
            names = try Sys.readDirectory(dir)
        } catch let e as Errno where e == .ENOENT {
            return []
        }
        return names.filter(CaptureName.isFinal).sorted()
    }

    /// Removes regular files in `dir/tmp` whose mtime is older than the cutoff (Maildir's 36 hours):
    /// a writer that died mid-delivery leaves one behind. Errors are ignored; it is housekeeping.
    public static func removeStaleTemps(_ dir: String, olderThanSeconds: Int = 36 * 3600) {
        let tmp = Path.join(dir, tempDirName)
        guard let names = try? Sys.readDirectory(tmp) else { return }
        let cutoff = time(nil) - olderThanSeconds
        for n in names {
            let p = Path.join(tmp, n)
            guard let st = try? Sys.lstat(p), (st.st_mode & S_IFMT) == S_IFREG else { continue }
            if st.st_mtim.tv_sec < cutoff { try? Sys.unlink(p) }
        }
    }
}
