// Inbox: the Maildir discipline on one inbox directory. A capture is in the inbox only after
// temp write, fsync, rename and the directory fsync have all returned; on any failure nothing of
// this delivery is left behind (no temp, no unconfirmed final file).
// Threat: the workspace is a synced folder, so `.outl` or `.outl/captures` may have been replaced by
// a link to some other directory. An inbox inside the workspace is opened component by component
// from the workspace's descriptor without following links (DirectoryWalk); its `tmp/` is ours in any
// inbox and is never followed either. Everything after the open is relative to the descriptor.
#if canImport(Glibc)
import Glibc
#endif
import CaptureFormat
import SystemCalls

public enum Inbox {
    public static let tempDirName = "tmp"
    public static let rejectedDirName = "rejected"

    /// Opens the inbox `dir`. Inside `workspace` (its root) no component below the root is followed
    /// (`UnsafeComponent` says which one was a link); elsewhere it is a device-local inbox the user
    /// named, reached as they spelled it. With `create`, missing directories are made 0700.
    public static func open(_ dir: String, workspace: String?, create: Bool = false) throws -> FileDescriptor {
        if let root = workspace, DirectoryWalk.components(of: dir, below: root) != nil {
            return try DirectoryWalk.open(dir, beneath: root, create: create ? 0o700 : nil)
        }
        if create { try Durable.makeDirectory(dir, mode: 0o700) }
        return try FileDescriptor.open(dir, O_RDONLY | O_DIRECTORY)
    }

    /// Makes `dir` and `dir/tmp` exist (0700, parents created and fsync'd) and returns `dir` open,
    /// ready for `deliver`. Existing directories keep their mode; a non-directory in the way is
    /// ENOTDIR, a link inside the workspace (or a `tmp` that is a link) `UnsafeComponent`.
    public static func openForDelivery(_ dir: String, workspace: String?) throws -> FileDescriptor {
        let inbox = try open(dir, workspace: workspace, create: true)
        do {
            try DirectoryWalk.open(Path.join(dir, tempDirName), beneath: dir, create: 0o700, from: inbox).close()
        } catch {
            inbox.close()
            throw error
        }
        return inbox
    }

    /// `openForDelivery` for a caller that only wants the directories there (the daemon, tests).
    public static func ensure(_ dir: String, workspace: String? = nil) throws {
        try openForDelivery(dir, workspace: workspace).close()
    }

    /// Delivers one capture file into the open inbox `inbox` (at `dir`): O_EXCL temp
    /// `tmp/<ULID>.<pid>.tmp` (0600), write, fsync, rename to `<ULID>.json`, fsync the inbox.
    /// Returns the final path once all of it is durable. If the directory fsync fails, the final
    /// name is taken back: an error means "not saved".
    public static func deliver(_ bytes: [UInt8], id: ULID, to inbox: FileDescriptor, at dir: String) throws -> String {
        let tmpPath = Path.join(dir, tempDirName)
        let tmp = try DirectoryWalk.open(tmpPath, beneath: dir, from: inbox)
        let name = CaptureName.fileName(for: id)
        try tmp.closeAfter {
            try Durable.publish(bytes, name: name, in: inbox, dirPath: dir, via: CaptureName.tempFileName(for: id, pid: getpid()),
                                in: tmp, tempDirPath: tmpPath, mode: 0o600,
                                syncTempDirectory: false, retractIfUnsynced: true)
        }
        return Path.join(dir, name)
    }

    /// `deliver` into the inbox at `dir`, opened as spelled (a device-local inbox, tests).
    public static func deliver(_ bytes: [UInt8], id: ULID, to dir: String) throws -> String {
        let inbox = try open(dir, workspace: nil)
        return try inbox.closeAfter { try deliver(bytes, id: id, to: inbox, at: dir) }
    }

    /// The final-form names in the open inbox, sorted (= capture order).
    public static func pending(_ inbox: FileDescriptor, at dir: String) throws -> [String] {
        try inbox.readDirectory(path: dir).filter(CaptureName.isFinal).sorted()
    }

    /// The final-form names in `dir`, sorted; a missing inbox is empty. Inside `workspace`, a
    /// link where a directory should be is refused (`UnsafeComponent`).
    public static func pending(_ dir: String, workspace: String? = nil) throws -> [String] {
        let inbox: FileDescriptor
        do {
            inbox = try open(dir, workspace: workspace)
        } catch let e as Errno where e == .ENOENT {
            return []
        }
        return try inbox.closeAfter { try pending(inbox, at: dir) }
    }

    /// How many final-form names `dir` holds, counted from their bytes, none kept: an inbox a peer
    /// filled with millions costs a listing, never memory. A missing inbox holds none.
    public static func pendingCount(_ dir: String, workspace: String? = nil) throws -> Int {
        let inbox: FileDescriptor
        do {
            inbox = try open(dir, workspace: workspace)
        } catch let e as Errno where e == .ENOENT {
            return 0
        }
        var n = 0
        try inbox.closeAfter { try inbox.readDirectory(path: dir) { if CaptureName.ulid(ofBytes: $0) != nil { n += 1 } } }
        return n
    }

    /// What the drain set aside in `<inbox>/rejected/`: how many captures, and the newest reason's
    /// first line (by the reason file's mtime: the newest rejection). Read only, from the open
    /// inbox: a `rejected` that is a link or no directory is reported as such, never followed; a
    /// reason over 4 KiB, a FIFO or a link at a reason's name is skipped.
    public struct SetAside: Equatable, Sendable {
        public var count = 0
        public var newestReason: String?
        /// Why rejected/ could not be read (a link, a file), nil when it could or is missing.
        public var unreadable: String?
    }

    public static func setAside(_ inbox: FileDescriptor, at dir: String) -> SetAside {
        var out = SetAside()
        let path = Path.join(dir, "rejected")
        let rejected: FileDescriptor
        do {
            rejected = try DirectoryWalk.open(path, beneath: dir, from: inbox)
        } catch let e as Errno where e == .ENOENT {
            return out
        } catch {
            out.unreadable = "\(error)"
            return out
        }
        return rejected.closeAfter {
            guard let names = try? rejected.readDirectory(path: path) else {
                out.unreadable = "cannot be read"
                return out
            }
            var newest: (mtime: Int, name: String)? = nil
            for n in names where n.hasSuffix(".reason") && !n.hasPrefix(".") {
                out.count += 1
                guard let st = try? rejected.stat(n, fullPath: Path.join(path, n)), st.st_mode & S_IFMT == S_IFREG else { continue }
                let m = Int(st.st_mtim.tv_sec) * 1_000_000_000 + Int(st.st_mtim.tv_nsec)
                if newest.map({ m > $0.mtime || (m == $0.mtime && n > $0.name) }) ?? true { newest = (m, n) }
            }
            if let n = newest?.name,
               let bytes = try? Durable.readRegularFile(n, in: rejected, fullPath: Path.join(path, n), limit: 4096) {
                let first = bytes.split(separator: 10, omittingEmptySubsequences: true).first ?? []
                out.newestReason = String(decoding: first, as: UTF8.self)
            }
            return out
        }
    }

    /// Removes regular files in `dir/tmp` whose mtime is older than the cutoff (Maildir's 36 hours):
    /// a writer that died mid-delivery leaves one behind. Errors are ignored; it is housekeeping.
    /// A `tmp` that is a link is never listed: its target's files are not ours to remove.
    public static func removeStaleTemps(_ dir: String, workspace: String? = nil, olderThanSeconds: Int = 36 * 3600) {
        guard let inbox = try? open(dir, workspace: workspace) else { return }
        inbox.closeAfter {
            let tmpPath = Path.join(dir, tempDirName)
            guard let tmp = try? DirectoryWalk.open(tmpPath, beneath: dir, from: inbox) else { return }
            tmp.closeAfter {
                guard let names = try? tmp.readDirectory(path: tmpPath) else { return }
                let cutoff = time(nil) - olderThanSeconds
                for n in names {
                    let p = Path.join(tmpPath, n)
                    guard let st = try? tmp.stat(n, fullPath: p), (st.st_mode & S_IFMT) == S_IFREG else { continue }
                    if st.st_mtim.tv_sec < cutoff { try? tmp.unlink(n, fullPath: p) }
                }
            }
        }
    }
}
