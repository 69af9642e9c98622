// DeviceState: what belongs to this device and never travels with a synced folder: the actor id, the
// write lock and the projection bases, under $XDG_STATE_HOME/outl/<key of the workspace's real path>.
// Invariant: the lock is taken (flock LOCK_EX|LOCK_NB) before an actor id or an ops file is created.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public enum WorkspaceError: Error, CustomStringConvertible {
    case locked(ownerPID: Int32?)        // another process holds the device write lock
    case io(Errno, path: String)
    /// This device's archive of ops (state directory, `seen/`) could not be written: its disk, not
    /// the op log's; captures still land in the op log.
    case archive(Errno, path: String)
    case badPath(String)
    case badID(String)
    case readOnly                        // a write asked of a workspace opened read-only

    public var description: String {
        switch self {
        case .locked(let pid):
            return "the workspace is in use by another process" + (pid.map { " (pid \($0))" } ?? "")
        case .io(let e, let path): return "\(path): \(e)"
        case .archive(let e, let path): return "this device's archive of ops is behind: \(e) (\(path))"
        case .badPath(let p): return "\(p): not a page file of this workspace"
        case .badID(let s): return "\(s): not a block id (UUID spelling)"
        case .readOnly: return "the workspace was opened read-only"
        }
    }
}

/// Runs `body`, turning an Errno into `.io` with the path it was about.
@inline(__always)
func io<T>(_ path: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as Errno { throw WorkspaceError.io(e, path: path) }
}

enum DeviceState {
    /// The state directory for `root`: `<base>/ws-<hash of the real path>`.
    static func directory(root: String, stateDirectory: String?) -> String {
        let base: String
        if let s = stateDirectory {
            base = s
        } else if let x = Path.environment("XDG_STATE_HOME"), x.hasPrefix("/") {
            base = Path.join(x, "outl")
        } else {
            base = Path.join(Path.home(), ".local/state/outl")
        }
        let real = realPath(root)
        let hex = String(FNV1a.hash(real.utf8), radix: 16)
        let name = Path.lastComponent(real).filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        return Path.join(base, "ws-\(name.prefix(32))-\(String(repeating: "0", count: 16 - hex.count))\(hex)")
    }

    static func realPath(_ p: String) -> String {
        guard let r = realpath(p, nil) else { return p }
        defer { free(r) }
        return String(cString: r)
    }

    /// Takes the machine-wide lock of the workspace: `flock` on the workspace directory itself.
    /// The state directory depends on the environment ($XDG_STATE_HOME), so its lock alone let two
    /// outld with different environments both write one workspace; the directory's inode is the
    /// same whatever its spelling or the environment, and a lock on it never travels with a sync
    /// (no file is created). The owner is named from /proc/locks. Returns the open fd.
    static func lockWorkspace(_ root: String) throws -> Int32 {
        // Callers that must not create a workspace check for it first (outl); a writer makes it.
        // A root spelled through a symlink is fine: only a missing one is made.
        if (try? Sys.open(root, O_RDONLY | O_DIRECTORY)).map({ Sys.close($0) }) == nil {
            try io(root) { try Durable.makeDirectory(root, mode: 0o755) }
        }
        let fd = try io(root) { try Sys.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        try lockExclusively(fd, path: root, holder: flockHolder)
        return fd
    }

    /// flock(LOCK_EX | LOCK_NB) on `fd`, or `.locked` naming the holder (closing `fd` on failure).
    /// A holder that is this very process is a lock we released a moment ago whose fd a just-forked
    /// child still shares until its exec closes it (O_CLOEXEC): that clears within milliseconds and
    /// is waited out, as is a holder that cannot be named; any other holder fails at once.
    static func lockExclusively(_ fd: Int32, path: String, holder: (Int32) -> Int32?) throws {
        var waitedForOurOwnLock = 0
        while true {
            do {
                try Sys.flock(fd, LOCK_EX | LOCK_NB)
                return
            } catch let e as Errno where e == .EWOULDBLOCK || e == .EAGAIN {
                let pid = holder(fd)
                if (pid == nil || pid == getpid()) && waitedForOurOwnLock < 200 {
                    waitedForOurOwnLock += 1
                    usleep(10_000)
                    continue
                }
                Sys.close(fd)
                throw WorkspaceError.locked(ownerPID: pid)
            } catch let e as Errno {
                Sys.close(fd)
                throw WorkspaceError.io(e, path: path)
            }
        }
    }

    /// The pid holding a write flock on the file `fd` is open on, from /proc/locks
    /// ("1: FLOCK  ADVISORY  WRITE 1234 08:02:56789 0 EOF": device as hex major:minor, inode).
    static func flockHolder(_ fd: Int32) -> Int32? {
        guard let st = try? Sys.fstat(fd) else { return nil }
        return LockProbe.flockWriter(st)
    }

    /// Takes the device write lock; the file holds the owner's pid as text. Returns the open fd.
    static func lock(_ dir: String) throws -> Int32 {
        try io(dir) { try Durable.makeDirectory(dir, mode: 0o700) }
        let path = Path.join(dir, "lock")
        let fd = try io(path) { try Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600) }
        try lockExclusively(fd, path: path, holder: readPID)
        do {
            try Sys.ftruncate(fd, 0)
            let text = Array("\(getpid())\n".utf8)
            _ = try text.withUnsafeBytes { try Sys.pwrite(fd, $0, at: 0) }
        } catch let e as Errno {
            Sys.close(fd)
            throw WorkspaceError.io(e, path: path)
        }
        return fd
    }

    static func readPID(_ fd: Int32) -> Int32? {
        var buf = [UInt8](repeating: 0, count: 32)
        let n = (try? buf.withUnsafeMutableBytes { try Sys.pread(fd, into: $0, at: 0) }) ?? 0
        let s = String(decoding: buf[0..<max(0, n)], as: UTF8.self).trimmingSpaces
        return Int32(s.hasSuffix("\n") ? String(s.dropLast()) : s)
    }

    /// The actor id already minted for this workspace, for a read-only open (which mints none).
    static func existingActor(_ dir: String) -> BlockID {
        guard let bytes = try? Durable.readRegularFile(Path.join(dir, "actor"), limit: 256),
              let id = BlockID(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }) else {
            return BlockID(hi: 0, lo: 0)
        }
        return id
    }

    /// The device's actor id for this workspace, minted once (UUIDv7) and kept in the state dir.
    static func actor(_ dir: String) throws -> BlockID {
        let path = Path.join(dir, "actor")
        if let bytes = try? Durable.readRegularFile(path, limit: 256),
           let id = BlockID(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }) {
            return id
        }
        let id = BlockID.random()
        try io(path) {
            try? Sys.unlink(path + ".tmp")
            try Durable.publish(Array("\(id)\n".utf8), to: path, via: path + ".tmp")
        }
        return id
    }
}

public enum WorkspaceLock {
    /// This device's actor id for `root` (UUID spelling), read without the lock and never minted:
    /// nil when this device has not written to the workspace yet.
    public static func deviceActor(root: String, stateDirectory: String?) -> String? {
        let path = Path.join(DeviceState.directory(root: root, stateDirectory: stateDirectory), "actor")
        guard let bytes = try? Durable.readRegularFile(path, limit: 256) else { return nil }
        return BlockID(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace })?.description
    }

    /// The pid holding the device write lock of `root`, or nil when it is free.
    /// A holder whose pid cannot be read is reported as 0.
    public static func owner(root: String, stateDirectory: String?) -> Int32? {
        // The machine-wide lock on the workspace directory first: it names the owner whatever
        // state directory that owner was started with.
        if let fd = try? Sys.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) {
            defer { Sys.close(fd) }
            if (try? Sys.flock(fd, LOCK_SH | LOCK_NB)) != nil {
                try? Sys.flock(fd, LOCK_UN)
            } else {
                return DeviceState.flockHolder(fd) ?? 0
            }
        }
        let path = Path.join(DeviceState.directory(root: root, stateDirectory: stateDirectory), "lock")
        guard let fd = try? Sys.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
        defer { Sys.close(fd) }
        do {
            try Sys.flock(fd, LOCK_SH | LOCK_NB)
            try? Sys.flock(fd, LOCK_UN)
            return nil
        } catch {
            return DeviceState.readPID(fd) ?? 0
        }
    }
}
