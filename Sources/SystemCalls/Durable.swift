// Durable: the project's only recipes for making bytes and names survive a power cut.
// A name is durable only after the directory holding it is fsync'd (ALICE, OSDI 2014); every
// creator of a file in this project goes through `publish` or `syncDirectory` for that reason.
#if canImport(Glibc)
import Glibc
#endif

public enum Durable {
    /// fsync(2) on a directory, so the creates, renames and unlinks in it survive a power cut.
    public static func syncDirectory(_ path: String) throws {
        let dir = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY)
        try dir.closeAfter { try Sys.fsync(dir.rawValue) }
    }

    /// Creates `path` as a directory with `mode` if it is missing (and its parents, with the same
    /// mode), fsyncing each parent whose entry list changed. Existing directories are left as they
    /// are; a non-directory in the way is ENOTDIR.
    public static func makeDirectory(_ path: String, mode: mode_t) throws {
        if let st = try? Sys.lstat(path) {
            if (st.st_mode & S_IFMT) == S_IFDIR { return }
            throw Errno.ENOTDIR
        }
        let parent = Path.parent(of: path)
        if parent != path { try makeDirectory(parent, mode: mode) }
        do {
            try Sys.mkdir(path, mode)
        } catch let e as Errno {
            if e != .EEXIST { throw e }
            return
        }
        if isPrivate(mode) { try Sys.chmod(path, mode) }
        try syncDirectory(parent)
    }

    /// Whether a new directory of `mode` is set to exactly that mode after mkdir: a private one (no
    /// group or other bits: an inbox, which promises 0700 whatever the umask is) is; any other keeps
    /// what the umask made of it, as the person asked (a umask of 077 keeps journals/ private too).
    public static func isPrivate(_ mode: mode_t) -> Bool { mode & 0o077 == 0 }

    /// Writes `bytes` to a fresh temporary file `temp`, fsyncs it, renames it over `path` and
    /// fsyncs `path`'s directory. On any failure the temp file is removed and the old `path` (if
    /// any) is untouched. Returns only once the new content and name are durable.
    /// - `syncTempDirectory`: also fsync the temp's directory when it differs, so the temp's
    ///   departure is durable too (the projection wants no stale temp back; a Maildir writer does
    ///   not care: a resurrected temp is swept after 36 hours and loses nothing).
    /// - `retractIfUnsynced`: if the directory fsync fails after the rename, unlink `path` again
    ///   before throwing. A capture writer that reports failure must not also leave a file that a
    ///   drain may pick up (the user's retry would double it); a page projection must not do this.
    public static func publish(_ bytes: [UInt8], to path: String, via temp: String,
                               mode: mode_t = 0o600, syncTempDirectory: Bool = true,
                               retractIfUnsynced: Bool = false, replacing: Replacing = .anything) throws {
        let dirPath = Path.parent(of: path), tempDirPath = Path.parent(of: temp)
        let dir = try FileDescriptor.open(dirPath, O_RDONLY | O_DIRECTORY)
        try dir.closeAfter {
            let sameDir = tempDirPath == dirPath
            let tempDir = sameDir ? dir : try FileDescriptor.open(tempDirPath, O_RDONLY | O_DIRECTORY)
            defer { if !sameDir { tempDir.close() } }
            try publish(bytes, name: Path.lastComponent(path), in: dir, dirPath: dirPath,
                        via: Path.lastComponent(temp), in: tempDir, tempDirPath: tempDirPath, mode: mode,
                        syncTempDirectory: syncTempDirectory && !sameDir, retractIfUnsynced: retractIfUnsynced,
                        replacing: replacing)
        }
    }

    /// What a publish may find at the final name when it renames its temporary there.
    public enum Replacing: Equatable, Sendable {
        /// Whatever is there: a name only this process writes (a capture's, a device-local record).
        case anything
        /// Nothing: the name was empty when the caller last looked (renameat2's RENAME_NOREPLACE).
        case nothing
        /// Only the file the caller read, still as it was read. A name in a folder others write (a
        /// sync tool, an editor) may have been given another file since, or lost it for a moment
        /// (Syncthing 1.19 unlinks the old file, then renames its temporary in): what is there now
        /// must be read before anything is written over it.
        case only(FileStamp)
    }

    /// The final name no longer holds what `Replacing` allowed: nothing was renamed there and the
    /// temporary is gone. `present` says whether a file stands at the name now.
    public struct Superseded: Error, Equatable, CustomStringConvertible {
        public var present: Bool
        public init(present: Bool) { self.present = present }
        public var description: String {
            present ? "was replaced while it was being written: read again before anything is written over it"
                : "went away while it was being written: not written again until it is known to be gone"
        }
    }

    /// Renames `tempName` in `tempDir` to `name` in `dir` as `replacing` allows.
    /// Where the file system has no RENAME_NOREPLACE (EINVAL), and for `.only`, the name is looked
    /// at just before a plain rename: a file a peer puts there between the look and the rename (a
    /// few microseconds) is replaced. Linux has no rename that compares what it replaces.
    static func rename(_ tempName: String, in tempDir: FileDescriptor, to name: String, in dir: FileDescriptor,
                       replacing: Replacing, fullPaths: (String, String)) throws {
        func current() throws -> FileStamp? {
            do { return FileStamp(try dir.stat(name, fullPath: fullPaths.1)) }
            catch let e as Errno where e == .ENOENT { return nil }
        }
        switch replacing {
        case .anything:
            try tempDir.rename(tempName, to: name, in: dir, fullPaths: fullPaths)
        case .nothing:
            do { try tempDir.renameNoReplace(tempName, to: name, in: dir, fullPaths: fullPaths) }
            catch let e as Errno where e == .EEXIST { throw Superseded(present: true) }
            catch let e as Errno where e.code == EINVAL {
                if try current() != nil { throw Superseded(present: true) }
                try tempDir.rename(tempName, to: name, in: dir, fullPaths: fullPaths)
            }
        case .only(let read):
            guard let now = try current() else { throw Superseded(present: false) }
            guard now == read else { throw Superseded(present: true) }
            try tempDir.rename(tempName, to: name, in: dir, fullPaths: fullPaths)
        }
    }

    /// `publish` relative to open directories: the temp `tempName` in `tempDir`, the final `name`
    /// in `dir`. No path is walked, so a link swapped in above either directory cannot redirect
    /// the write; the paths are for the seam only. `replacing` says what the name may hold when
    /// the temporary is renamed there; otherwise `Superseded` is thrown and nothing is published.
    /// With `statAfterRename`, returns the file's stat taken through its own descriptor after the
    /// rename (the inode published and its times then, whatever the name holds by the time the
    /// caller looks); nil otherwise, or when that fstat failed, which fails nothing.
    @discardableResult
    public static func publish(_ bytes: [UInt8], name: String, in dir: FileDescriptor, dirPath: String,
                               via tempName: String, in tempDir: FileDescriptor, tempDirPath: String,
                               mode: mode_t = 0o600, syncTempDirectory: Bool = true,
                               retractIfUnsynced: Bool = false, statAfterRename: Bool = false,
                               replacing: Replacing = .anything) throws -> stat? {
        let path = Path.join(dirPath, name), temp = Path.join(tempDirPath, tempName)
        var file = try tempDir.openat(tempName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode, fullPath: temp)
        var open = true
        defer { if open { file.close() } }
        do {
            try Sys.writeAll(file.rawValue, bytes)
            try Sys.fsync(file.rawValue)
        } catch {
            file.close(); open = false
            try? tempDir.unlink(tempName, fullPath: temp)
            throw error
        }
        // The written descriptor is closed before the rename: closed after it, its IN_CLOSE_WRITE
        // came from the final name, as an edit in place does, and a watcher took this write for a
        // person's (outld read every page it wrote back again). The stamp after the rename (which
        // changes the ctime) is read through an O_PATH descriptor of the same inode, which makes no
        // event; should it not be had, the written one is kept open across the rename, as before.
        if statAfterRename, let held = samePathDescriptor(file, tempName, in: tempDir, fullPath: temp) {
            file.close()
            file = held
        } else if !statAfterRename {
            file.close(); open = false
        }
        do {
            try rename(tempName, in: tempDir, to: name, in: dir, replacing: replacing, fullPaths: (temp, path))
        } catch {
            try? tempDir.unlink(tempName, fullPath: temp)
            throw error
        }
        let published = statAfterRename ? try? Sys.fstat(file.rawValue) : nil
        if open { file.close(); open = false }
        do {
            try dir.sync()
        } catch {
            if retractIfUnsynced { try? dir.unlink(name, fullPath: path) }
            throw error
        }
        if syncTempDirectory { try tempDir.sync() }
        return published
    }

    /// open(2)'s O_PATH (Glibc exports it only under _GNU_SOURCE); the same on every Linux port
    /// Swift runs on.
    static let O_PATH: Int32 = 0o10000000

    /// An O_PATH descriptor of `name` in `dir` when it is the inode `file` is open on (nothing
    /// swapped in under the name meanwhile); nil otherwise, or when it cannot be opened.
    private static func samePathDescriptor(_ file: FileDescriptor, _ name: String, in dir: FileDescriptor,
                                           fullPath: String) -> FileDescriptor? {
        guard let held = try? dir.openat(name, Durable.O_PATH | O_NOFOLLOW, fullPath: fullPath) else { return nil }
        if let a = try? Sys.fstat(file.rawValue), let b = try? Sys.fstat(held.rawValue), a.st_dev == b.st_dev, a.st_ino == b.st_ino {
            return held
        }
        held.close()
        return nil
    }

    /// Reads a whole regular file of at most `limit` bytes without following a final symlink
    /// and without blocking on a FIFO. Throws for anything else: the open's errno (ELOOP for a
    /// symlink), EINVAL for what is not a regular file, EFBIG for more than `limit` bytes.
    public static func readRegularFile(_ path: String, limit: Int) throws -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        return try file.closeAfter { try readRegularFile(file.rawValue, limit: limit) }
    }

    /// `readRegularFile` of `name` in the open directory `dir` (no walk of its path).
    public static func readRegularFile(_ name: String, in dir: FileDescriptor, fullPath: @autoclosure () -> String,
                                       limit: Int) throws -> [UInt8] {
        let file = try dir.openat(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, fullPath: fullPath())
        return try file.closeAfter { try readRegularFile(file.rawValue, limit: limit) }
    }

    /// `readRegularFile` of `name` in `dir`, with the stat of what was read (its identity and
    /// times), from the same descriptor: no second lookup of the name can see another file.
    public static func readRegularFileAndStat(_ name: String, in dir: FileDescriptor, fullPath: @autoclosure () -> String,
                                              limit: Int) throws -> ([UInt8], stat) {
        let file = try dir.openat(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, fullPath: fullPath())
        return try file.closeAfter {
            let st = try Sys.fstat(file.rawValue)
            return (try readRegularFile(file.rawValue, st, limit: limit), st)
        }
    }

    private static func readRegularFile(_ fd: Int32, limit: Int) throws -> [UInt8] {
        try readRegularFile(fd, try Sys.fstat(fd), limit: limit)
    }

    private static func readRegularFile(_ fd: Int32, _ st: stat, limit: Int) throws -> [UInt8] {
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw Errno(EINVAL) }
        let expected = Int(st.st_size)
        if expected > limit { throw Errno(EFBIG) }
        var got = 0
        /// One read into `room` after the `got` bytes read so far; true once the file has ended.
        func readOn(_ room: UnsafeMutableRawBufferPointer) throws -> Bool {
            let asked = room.count - got
            let n = try Sys.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: room[got...]))
            if n == 0 { return true }
            got += n
            if got > limit { throw Errno(EFBIG) }
            // A short read that reaches the size fstat gave is the end (the one more byte asked for
            // was not there): no read that returns 0. Short before it (a file system that reads in
            // pieces), the loop goes on: a page read short must never look like blocks removed.
            return n < asked && got >= expected
        }
        // Into room left uninitialized, as far as the size fstat gave and one byte more (zero-filled
        // first, a page file was written twice: a page of 20,000 blocks is 2.4 MB).
        var ended = false
        var out = try [UInt8](unsafeUninitializedCapacity: expected + 1) { room, count in
            defer { count = got }
            let raw = UnsafeMutableRawBufferPointer(room)
            while got < raw.count, !ended { ended = try readOn(raw) }
        }
        // The room filled without an end: the file grew while it was read, and is read on.
        while !ended {
            if got == out.count {
                if out.count > limit { throw Errno(EFBIG) }
                out.append(contentsOf: repeatElement(0, count: max(4096, out.count)))
            }
            ended = try out.withUnsafeMutableBytes { try readOn($0) }
        }
        out.removeSubrange(got...)
        return out
    }
}

/// Plain string path helpers, so Foundation-free modules need no URL.
public enum Path {
    public static func join(_ a: String, _ b: String) -> String {
        if a.isEmpty { return b }
        return a.utf8.last == slash ? a + b : a + "/" + b
    }

    // Paths are bytes: the helpers split on the "/" byte, never on Characters, because a
    // combining mark after "/" would fuse with it into one Character (found by fuzz-path).
    private static let slash = UInt8(ascii: "/")

    private static func trimmed(_ path: String) -> ArraySlice<UInt8> {
        var p = Array(path.utf8)[...]
        while p.count > 1 && p.last == slash { p = p.dropLast() }
        return p
    }

    public static func parent(of path: String) -> String {
        let p = trimmed(path)
        guard let i = p.lastIndex(of: slash) else { return "." }
        if i == p.startIndex { return "/" }
        return String(decoding: p[..<i], as: UTF8.self)
    }

    public static func lastComponent(_ path: String) -> String {
        let p = trimmed(path)
        guard let i = p.lastIndex(of: slash), p.count > 1 else { return String(decoding: p, as: UTF8.self) }
        return String(decoding: p[(i + 1)...], as: UTF8.self)
    }

    /// $HOME, or the passwd entry's home when $HOME is unset.
    public static func home() -> String {
        if let h = getenv("HOME"), h.pointee != 0 { return String(cString: h) }
        if let pw = getpwuid(getuid()), let d = pw.pointee.pw_dir { return String(cString: d) }
        return "/"
    }

    /// Expands a leading "~" or "~/" the way a shell would, for paths read from flags and config
    /// files; `home` is for a caller that resolved $HOME from an environment of its own.
    public static func expandTilde(_ path: String, home: @autoclosure () -> String = Path.home()) -> String {
        let u = path.utf8
        guard u.first == UInt8(ascii: "~") else { return path }
        if u.count == 1 { return home() }
        let rest = u.dropFirst()
        guard rest.first == slash else { return path }
        return join(home(), String(decoding: rest.dropFirst(), as: UTF8.self))
    }

    public static func environment(_ name: String) -> String? {
        guard let v = getenv(name), v.pointee != 0 else { return nil }
        return String(cString: v)
    }
}
