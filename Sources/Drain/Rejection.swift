// Rejection: sets a bad inbox entry aside in <inbox>/rejected/ with a sibling <name>.reason file.
// Invariants: a bad file is never deleted and never read again by the drain; the reason file is
// made durable before the entry moves, so rejected/ never holds an entry without its reason.
// Threat: rejected/ lives in a synced folder too, so it may be a file, a link to anywhere, or gone.
// Every step is relative to the inbox's open descriptor and to rejected/ opened from it with
// O_NOFOLLOW | O_DIRECTORY: a missing rejected/ is made, anything else but a directory is refused
// (the entry then stays where it is), and no path through a link is ever walked.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

enum Rejection {
    static let directoryName = "rejected"
    /// Earlier rejections of one name that a new one may be numbered past; beyond this the
    /// directory is taken to be full rather than probed name by name without end.
    static let maxCopies = 1000

    /// Moves `<inbox>/<name>` to `<inbox>/rejected/<name>` (rename(2) moves a symlink, FIFO or
    /// directory itself, never what it points at) after writing the reason beside it.
    static func setAside(inbox: String, directory: FileDescriptor, name: String, reason: String) throws {
        let dirPath = Path.join(inbox, directoryName)
        let dir = try DirectoryWalk.open(dirPath, beneath: inbox, create: 0o700, from: directory)
        try dir.closeAfter {
            // An earlier rejection of the same name (a re-created file, a synced copy) is kept: the
            // new one gets a numbered name, and its reason file follows that name.
            let destination = try freeName(name, in: dir, at: dirPath)
            let temp = ".\(name).reason.\(getpid()).tmp"
            try? dir.unlink(temp, fullPath: Path.join(dirPath, temp))  // left by a crash of an earlier pass; ours alone by pid
            try Durable.publish(Array("\(reason)\n".utf8), name: destination + ".reason", in: dir, dirPath: dirPath,
                                via: temp, in: dir, tempDirPath: dirPath, mode: 0o600, syncTempDirectory: false)
            try directory.rename(name, to: destination, in: dir,
                                 fullPaths: (Path.join(inbox, name), Path.join(dirPath, destination)))
            try dir.sync()
            try directory.sync()
        }
    }

    /// Moves an attachment of a capture just set aside into rejected/ beside it, under its own name
    /// (numbered past an earlier one), without a reason file: its capture's reason is the reason.
    static func moveAlong(inbox: String, directory: FileDescriptor, name: String) throws {
        let dirPath = Path.join(inbox, directoryName)
        let dir = try DirectoryWalk.open(dirPath, beneath: inbox, create: 0o700, from: directory)
        try dir.closeAfter {
            let destination = try freeName(name, in: dir, at: dirPath)
            try directory.rename(name, to: destination, in: dir, fullPaths: (Path.join(inbox, name), Path.join(dirPath, destination)))
            try dir.sync()
            try directory.sync()
        }
    }

    /// `name`, or `name.N` past the earlier rejections that hold it; ENOSPC past `maxCopies`.
    private static func freeName(_ name: String, in dir: FileDescriptor, at dirPath: String) throws -> String {
        var destination = name
        var n = 0
        while (try? dir.stat(destination, fullPath: Path.join(dirPath, destination))) != nil {
            n += 1
            if n > maxCopies { throw Errno.ENOSPC }
            destination = "\(name).\(n)"
        }
        return destination
    }
}
