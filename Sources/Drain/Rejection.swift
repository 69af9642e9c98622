// Rejection: sets a bad inbox entry aside in <inbox>/rejected/ with a sibling <name>.reason file.
// Invariant: a bad file is never deleted and never read again by the drain; the reason file is
// made durable before the entry moves, so rejected/ never holds an entry without its reason.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

enum Rejection {
    static let directoryName = "rejected"

    /// Moves `<inbox>/<name>` to `<inbox>/rejected/<name>` (rename(2) moves a symlink, FIFO or
    /// directory itself, never what it points at) after writing the reason beside it.
    static func setAside(inbox: String, name: String, reason: String) throws {
        let dir = Path.join(inbox, directoryName)
        try Durable.makeDirectory(dir, mode: 0o700)
        // An earlier rejection of the same name (a re-created file, a synced copy) is kept: the
        // new one gets a numbered name, and its reason file follows that name.
        let target = Path.join(dir, name)
        var destination = target
        var n = 1
        while (try? Sys.lstat(destination)) != nil {
            destination = "\(target).\(n)"
            n += 1
        }
        let temp = Path.join(dir, ".\(name).reason.\(getpid()).tmp")
        try? Sys.unlink(temp)  // left by a crash of an earlier pass; ours alone by pid
        try Durable.publish(Array("\(reason)\n".utf8), to: destination + ".reason", via: temp, mode: 0o600)
        try Sys.rename(Path.join(inbox, name), destination)
        try Durable.syncDirectory(dir)
        try Durable.syncDirectory(inbox)
    }
}
