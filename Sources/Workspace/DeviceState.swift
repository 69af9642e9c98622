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
    case badPath(String)
    case badID(String)
    case readOnly                        // a write asked of a workspace opened read-only

    public var description: String {
        switch self {
        case .locked(let pid):
            return "the workspace is in use by another process" + (pid.map { " (pid \($0))" } ?? "")
        case .io(let e, let path): return "\(path): \(e)"
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
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for c in real.utf8 { h = (h ^ UInt64(c)) &* 0x0000_0100_0000_01B3 }
        let hex = String(h, radix: 16)
        let name = Path.lastComponent(real).filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        return Path.join(base, "ws-\(name.prefix(32))-\(String(repeating: "0", count: 16 - hex.count))\(hex)")
    }

    static func realPath(_ p: String) -> String {
        guard let r = realpath(p, nil) else { return p }
        defer { free(r) }
        return String(cString: r)
    }

    /// Takes the device write lock; the file holds the owner's pid as text. Returns the open fd.
    static func lock(_ dir: String) throws -> Int32 {
        try io(dir) { try Durable.makeDirectory(dir, mode: 0o700) }
        let path = Path.join(dir, "lock")
        let fd = try io(path) { try Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600) }
        var waitedForOurOwnLock = 0
        while true {
            do {
                try Sys.flock(fd, LOCK_EX | LOCK_NB)
                break
            } catch let e as Errno where e == .EWOULDBLOCK || e == .EAGAIN {
                let pid = readPID(fd)
                // The lock names this very process: a workspace we closed a moment ago whose lock
                // fd a just-forked child still shares until its exec closes it (O_CLOEXEC). That
                // clears within milliseconds; anything else is a real owner and fails at once.
                if pid == getpid() && waitedForOurOwnLock < 200 {
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
    /// The pid holding the device write lock of `root`, or nil when it is free.
    /// A holder whose pid cannot be read is reported as 0.
    public static func owner(root: String, stateDirectory: String?) -> Int32? {
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
