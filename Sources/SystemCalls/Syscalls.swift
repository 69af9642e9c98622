// SystemCalls: the one place where the writer, the inbox, the op log and the drain meet the kernel.
// Invariants: every file operation passes through `Sys.interposer` (fault injection, recording for
// the power-loss model), and an interrupted system call (EINTR, real or injected) is retried in one
// place, `retryingInterrupts`, which every wrapper goes through. (An io_uring op that completes with
// -EINTR is no system call of ours: BatchIO submits it again with the rest of its batch.)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `flock` names both a function and a struct in Glibc and Swift only sees the struct;
/// bind the function by its C symbol (int flock(int, int)).
@_silgen_name("flock") private func c_flock(_ fd: Int32, _ operation: Int32) -> Int32
/// fstatfs(2): Glibc's module map leaves out <sys/vfs.h>. `struct statfs` starts with the
/// word-sized f_type on every Linux ABI and is 120 bytes on 64-bit ones; the buffer is larger.
@_silgen_name("fstatfs") private func c_fstatfs(_ fd: Int32, _ buf: UnsafeMutableRawPointer) -> Int32
/// renameat2(2) (glibc 2.28): declared only under _GNU_SOURCE, which Glibc's module map leaves out.
@_silgen_name("renameat2") private func c_renameat2(_ fromDir: Int32, _ from: UnsafePointer<CChar>, _ toDir: Int32,
                                                     _ to: UnsafePointer<CChar>, _ flags: UInt32) -> Int32

/// A failed system call: the errno value, printable as strerror(3) text.
public struct Errno: Error, Equatable, Hashable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    public var description: String { String(cString: strerror(code)) }

    public static var current: Errno { Errno(errno) }
    public static let EIO = Errno(Glibc.EIO)
    public static let ENOSPC = Errno(Glibc.ENOSPC)
    public static let EINTR = Errno(Glibc.EINTR)
    public static let ENOENT = Errno(Glibc.ENOENT)
    public static let EEXIST = Errno(Glibc.EEXIST)
    public static let EMFILE = Errno(Glibc.EMFILE)
    public static let ELOOP = Errno(Glibc.ELOOP)
    public static let EAGAIN = Errno(Glibc.EAGAIN)
    public static let EWOULDBLOCK = Errno(Glibc.EWOULDBLOCK)
    public static let ENOTDIR = Errno(Glibc.ENOTDIR)

    /// Errors that say "the machine is unwell right now", not "this file is bad": callers keep
    /// the data and retry later instead of setting anything aside.
    public var isTransient: Bool {
        switch code {
        case Glibc.EIO, Glibc.ENOSPC, Glibc.EMFILE, Glibc.ENFILE, Glibc.ENOMEM, Glibc.EDQUOT,
             Glibc.EAGAIN, Glibc.EBUSY, Glibc.EROFS:
            return true
        default:
            return false
        }
    }
}

/// The operations the seam knows by name, so a test can say "fail the 3rd fsync".
public enum SysOp: String, CaseIterable, Sendable {
    case open, close, read, pread, write, pwrite, fsync, fdatasync, rename, link, unlink, mkdir
    case fstat, lstat, readdir, flock, ftruncate, chmod, stat, access
    /// Operations that the io_uring path submits in a batch; reported one by one.
    case uringRead, uringUnlink
}

/// What a call is about, for the interposer: enough to fail it by kind or replay it in a model.
public struct SysCall {
    public var op: SysOp
    public var path: String?
    public var path2: String?
    public var fd: Int32
    public var flags: Int32
    public var offset: Int64
    /// The bytes of a write, valid only during the callback.
    public var data: UnsafeRawBufferPointer?

    public init(_ op: SysOp, path: String? = nil, path2: String? = nil, fd: Int32 = -1,
                flags: Int32 = 0, offset: Int64 = -1, data: UnsafeRawBufferPointer? = nil) {
        self.op = op; self.path = path; self.path2 = path2; self.fd = fd
        self.flags = flags; self.offset = offset; self.data = data
    }
}

/// What an interposer may do instead of letting a call through.
public enum SysFault: Equatable, Sendable {
    /// The call fails with this errno without reaching the kernel.
    case fail(Errno)
    /// A write reaches the kernel with only this many bytes (a short write).
    case shortWrite(Int)
    /// A read asks the kernel for at most this many bytes (at least one): a file system that
    /// reads in pieces, as FUSE or a network mount may.
    case shortRead(Int)
}

/// Tests install one of these to inject faults (`before`) or record what reached the kernel (`after`).
public protocol SysInterposer: AnyObject {
    func before(_ call: SysCall) -> SysFault?
    /// `result` is the call's return value (an fd, a byte count, 0) or -errno.
    func after(_ call: SysCall, result: Int)
}

/// One installed interposer, kept alive for the life of the process (see `Sys.interposer`).
private final class InterposerSlot {
    let interposer: SysInterposer
    init(_ i: SysInterposer) { interposer = i }
}

public enum Sys {
    /// The installed interposer; nil in production. Set it before the code under test runs.
    ///
    /// Every syscall of every thread reads this, while a test may swap it from another thread. A
    /// plain class reference would make that a use-after-free (a reader retains what the writer
    /// just released), so an installed interposer is never freed: it sits in `keptAlive`, and the
    /// current one is published as a raw pointer, read and written whole. Production never sets it.
    public static var interposer: SysInterposer? {
        get {
            guard let p = slot else { return nil }
            return Unmanaged<InterposerSlot>.fromOpaque(p).takeUnretainedValue().interposer
        }
        set {
            guard let i = newValue else { slot = nil; return }
            let s = InterposerSlot(i)
            pthread_mutex_lock(&keptAliveLock)
            keptAlive.append(s)
            pthread_mutex_unlock(&keptAliveLock)
            slot = Unmanaged.passUnretained(s).toOpaque()
        }
    }
    nonisolated(unsafe) private static var slot: UnsafeMutableRawPointer? = nil
    nonisolated(unsafe) private static var keptAlive: [InterposerSlot] = []
    nonisolated(unsafe) private static var keptAliveLock = pthread_mutex_t()

    // MARK: the hook, shared by every wrapper below and by the io_uring path

    /// Asks the interposer about `call`; the io_uring path calls this for each op it submits.
    @inline(__always)
    public static func intercept(_ call: SysCall) -> SysFault? {
        guard let i = interposer else { return nil }
        return i.before(call)
    }

    @inline(__always)
    public static func record(_ call: SysCall, _ result: Int) {
        interposer?.after(call, result: result)
    }

    /// Runs `attempt` again for as long as it fails with EINTR. This is the project's one EINTR
    /// loop: every wrapper of the seam, the interposer's answers and getrandom(2) go through it.
    @inline(__always)
    public static func retryingInterrupts<T>(_ attempt: () -> Result<T, Errno>) -> Result<T, Errno> {
        while true {
            let r = attempt()
            if case .failure(let e) = r, e == .EINTR { continue }
            return r
        }
    }

    /// The interposer's answer about `call`: nil to let it through, a short write, or a failure.
    /// An injected EINTR is asked again, as a real one is retried, so a fault aimed at the Nth
    /// call lands on it. A failure is recorded at once unless `record` is false (the io_uring path
    /// records it where the op would have completed, to keep the order).
    public static func fault(for call: SysCall, record: Bool = true) -> SysFault? {
        let answer = retryingInterrupts { () -> Result<SysFault?, Errno> in
            let f = intercept(call)
            if case .fail(let e)? = f { return .failure(e) }
            return .success(f)
        }
        switch answer {
        case .success(let f): return f
        case .failure(let e):
            if record { self.record(call, -Int(e.code)) }
            return .fail(e)
        }
    }

    /// The failure the interposer injects into `call`, if any (see `fault(for:record:)`).
    public static func injectedFailure(_ call: SysCall, record: Bool = true) -> Errno? {
        if case .fail(let e)? = fault(for: call, record: record) { return e }
        return nil
    }

    /// Runs `body` (a raw syscall returning -1 and setting errno on failure), with EINTR retried.
    /// `intercepting: false` is for the write wrappers, which asked the interposer once already
    /// (so a test counting calls sees each write once, and a fault aimed at a write lands on it).
    @inline(__always)
    static func retrying(_ call: SysCall, intercepting: Bool = true, _ body: () -> Int) -> Result<Int, Errno> {
        retryingInterrupts {
            if intercepting, let e = injectedFailure(call) { return .failure(e) }
            let r = body()
            if r == -1 {
                let e = Errno.current
                if e != .EINTR { record(call, -Int(e.code)) }
                return .failure(e)
            }
            record(call, r)
            return .success(r)
        }
    }

    /// `body` (a raw syscall returning -1 and setting errno on failure) with EINTR retried, for
    /// the fast paths that run only when no interposer listens.
    @inline(__always)
    static func unobserved(_ body: () -> Int) -> Result<Int, Errno> {
        retryingInterrupts {
            let r = body()
            return r == -1 ? .failure(Errno.current) : .success(r)
        }
    }

    // MARK: files

    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws -> Int32 {
        let call = SysCall(.open, path: path, flags: flags | O_CLOEXEC)
        return Int32(try retrying(call) { Int(Glibc.open(path, flags | O_CLOEXEC, mode)) }.get())
    }

    /// openat(2) of `name` relative to the directory `dirfd` (O_CLOEXEC added, like `open`); the
    /// seam sees `fullPath`, built only when an interposer listens, so it reads as `open(fullPath)`.
    public static func openat(_ dirfd: Int32, _ name: String, _ flags: Int32, _ mode: mode_t = 0,
                              fullPath: @autoclosure () -> String) throws -> Int32 {
        if interposer == nil {
            // Through withCString, which lends a native String's own bytes: passed as an argument,
            // the String was copied into a new array per call (the drain opens one per capture).
            return Int32(try name.withCString { n in unobserved { Int(Glibc.openat(dirfd, n, flags | O_CLOEXEC, mode)) } }.get())
        }
        let call = SysCall(.open, path: fullPath(), flags: flags | O_CLOEXEC)
        return Int32(try retrying(call) { Int(Glibc.openat(dirfd, name, flags | O_CLOEXEC, mode)) }.get())
    }

    /// The same with the name as a C string (one spelled on the stack: the drain opens a capture
    /// file by its id's spelling, with no String made).
    public static func openat(_ dirfd: Int32, cName: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t = 0,
                              fullPath: @autoclosure () -> String) throws -> Int32 {
        if interposer == nil { return Int32(try unobserved { Int(Glibc.openat(dirfd, cName, flags | O_CLOEXEC, mode)) }.get()) }
        return try openat(dirfd, String(cString: cName), flags, mode, fullPath: fullPath())
    }

    public static func close(_ fd: Int32) {
        // close(2) must not be retried on EINTR (the fd is gone either way on Linux).
        // With no interposer no SysCall is made: the drain closes one per capture.
        if interposer == nil { _ = Glibc.close(fd); return }
        // An injected failure still closes the fd, as Linux does for a real EIO from close.
        let call = SysCall(.close, fd: fd)
        if case .fail(let e)? = intercept(call) { _ = Glibc.close(fd); record(call, -Int(e.code)); return }
        record(call, Int(Glibc.close(fd)))
    }

    /// One read(2); returns 0 at end of file.
    public static func read(_ fd: Int32, into buf: UnsafeMutableRawBufferPointer) throws -> Int {
        let call = SysCall(.read, fd: fd)
        let count = try readLength(call, buf.count)
        return try retrying(call, intercepting: false) { Glibc.read(fd, buf.baseAddress, count) }.get()
    }

    public static func pread(_ fd: Int32, into buf: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        if interposer == nil {  // as close's
            return try unobserved { Glibc.pread(fd, buf.baseAddress, buf.count, off_t(offset)) }.get()
        }
        let call = SysCall(.pread, fd: fd, offset: offset)
        let count = try readLength(call, buf.count)
        return try retrying(call, intercepting: false) { Glibc.pread(fd, buf.baseAddress, count, off_t(offset)) }.get()
    }

    /// Asks the interposer once about a read: a failure is thrown, a short read asks for less.
    private static func readLength(_ call: SysCall, _ count: Int) throws -> Int {
        switch fault(for: call) {
        case .fail(let e)?: throw e
        case .shortRead(let n)?: return count == 0 ? 0 : max(1, min(n, count))
        case .shortWrite?, nil: return count
        }
    }

    /// One write(2); may be short. Most callers want `writeAll`.
    public static func write(_ fd: Int32, _ buf: UnsafeRawBufferPointer) throws -> Int {
        var call = SysCall(.write, fd: fd, data: buf)
        let c = try writeLength(&call, buf)
        return try retrying(call, intercepting: false) { Glibc.write(fd, buf.baseAddress, c) }.get()
    }

    /// Asks the interposer once about a write: a failure is thrown (an injected EINTR is asked
    /// again, like a retried call), a short write shrinks the length that reaches the kernel.
    private static func writeLength(_ call: inout SysCall, _ buf: UnsafeRawBufferPointer) throws -> Int {
        var count = buf.count
        switch fault(for: call) {
        case .fail(let e)?: throw e
        case .shortWrite(let n)?: count = max(0, min(n, buf.count))
        case .shortRead?, nil: break
        }
        call.data = UnsafeRawBufferPointer(rebasing: buf[0..<count])
        return count
    }

    /// Writes every byte, continuing after short writes.
    public static func writeAll(_ fd: Int32, _ buf: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < buf.count {
            let n = try write(fd, UnsafeRawBufferPointer(rebasing: buf[done...]))
            if n == 0 { throw Errno.EIO }  // a zero-length write for a non-empty buffer is a dead end
            done += n
        }
    }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { (b) in try writeAll(fd, b) }
    }

    public static func pwrite(_ fd: Int32, _ buf: UnsafeRawBufferPointer, at offset: Int64) throws -> Int {
        var call = SysCall(.pwrite, fd: fd, offset: offset, data: buf)
        let c = try writeLength(&call, buf)
        return try retrying(call, intercepting: false) { Glibc.pwrite(fd, buf.baseAddress, c, off_t(offset)) }.get()
    }

    public static func fsync(_ fd: Int32) throws {
        _ = try retrying(SysCall(.fsync, fd: fd)) { Int(Glibc.fsync(fd)) }.get()
    }

    public static func fdatasync(_ fd: Int32) throws {
        _ = try retrying(SysCall(.fdatasync, fd: fd)) { Int(Glibc.fdatasync(fd)) }.get()
    }

    public static func ftruncate(_ fd: Int32, _ length: Int64) throws {
        _ = try retrying(SysCall(.ftruncate, fd: fd, offset: length)) { Int(Glibc.ftruncate(fd, off_t(length))) }.get()
    }

    public static func fstat(_ fd: Int32) throws -> stat {
        var st = stat()
        try fstat(fd, into: &st)
        return st
    }

    /// The same into `st`: the drain's check of each capture file reads a few fields of it, where a
    /// stat returned was copied out (144 bytes, twice).
    public static func fstat(_ fd: Int32, into st: inout stat) throws {
        if interposer == nil {  // as close's
            _ = try unobserved { Int(Glibc.fstat(fd, &st)) }.get()
            return
        }
        _ = try retrying(SysCall(.fstat, fd: fd)) { Int(Glibc.fstat(fd, &st)) }.get()
    }

    /// fstatat(2) of `name` in the directory `dirfd`, never following a final symlink; the seam
    /// sees it as `lstat(fullPath)`.
    public static func fstatat(_ dirfd: Int32, _ name: String, fullPath: @autoclosure () -> String) throws -> stat {
        var st = stat()
        let call = interposer == nil ? SysCall(.lstat) : SysCall(.lstat, path: fullPath())
        _ = try retrying(call) { Int(Glibc.fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) }.get()
        return st
    }

    /// stat(2), following links: only for a path the user chose (the workspace root, a configured
    /// inbox), never for a name inside the workspace.
    public static func statFollowingLinks(_ path: String) throws -> Glibc.stat {
        var st = Glibc.stat()
        _ = try retrying(SysCall(.stat, path: path)) { Int(Glibc.fstatat(AT_FDCWD, path, &st, 0)) }.get()
        return st
    }

    /// access(2) with the real ids: may this process `mode` (R_OK, W_OK, X_OK, F_OK) `path`?
    public static func access(_ path: String, _ mode: Int32) throws {
        _ = try retrying(SysCall(.access, path: path, flags: mode)) { Int(Glibc.access(path, mode)) }.get()
    }

    /// lstat(2): never follows a final symlink.
    public static func lstat(_ path: String) throws -> stat {
        var st = stat()
        _ = try retrying(SysCall(.lstat, path: path)) { Int(Glibc.lstat(path, &st)) }.get()
        return st
    }

    public static func flock(_ fd: Int32, _ operation: Int32) throws {
        _ = try retrying(SysCall(.flock, fd: fd, flags: operation)) { Int(c_flock(fd, operation)) }.get()
    }

    public static func chmod(_ path: String, _ mode: mode_t) throws {
        _ = try retrying(SysCall(.chmod, path: path, flags: Int32(mode))) { Int(Glibc.chmod(path, mode)) }.get()
    }

    /// fchmod(2): the mode of a directory this process just created, whatever the umask made it.
    public static func fchmod(_ fd: Int32, _ mode: mode_t) throws {
        _ = try retrying(SysCall(.chmod, fd: fd, flags: Int32(mode))) { Int(Glibc.fchmod(fd, mode)) }.get()
    }

    /// The file system's magic number (statfs f_type, e.g. 0x01021994 for tmpfs) of `fd`.
    /// Informational (a choice of strategy, not a file operation), so it does not go through the seam.
    public static func fileSystemType(_ fd: Int32) -> Int? {
        var buf = [UInt64](repeating: 0, count: 32)
        let r = buf.withUnsafeMutableBytes { c_fstatfs(fd, $0.baseAddress!) }
        return r == 0 ? Int(truncatingIfNeeded: Int64(bitPattern: buf[0])) : nil
    }

    // MARK: names

    public static func rename(_ from: String, _ to: String) throws {
        _ = try retrying(SysCall(.rename, path: from, path2: to)) { Int(Glibc.rename(from, to)) }.get()
    }

    /// renameat(2) between two open directories: no walk of either path, so a link swapped in
    /// above them cannot redirect it. The seam sees the full paths, as for `rename`.
    public static func renameat(_ fromDir: Int32, _ from: String, _ toDir: Int32, _ to: String,
                                fullPaths: @autoclosure () -> (String, String)) throws {
        let call: SysCall
        if interposer == nil { call = SysCall(.rename) } else {
            let (a, b) = fullPaths()
            call = SysCall(.rename, path: a, path2: b)
        }
        _ = try retrying(call) { Int(Glibc.renameat(fromDir, from, toDir, to)) }.get()
    }

    /// renameat2(2) with RENAME_NOREPLACE: EEXIST, and nothing moved, when `to` exists. A file
    /// system that has no such rename (some FUSE and network ones) answers EINVAL; the caller
    /// decides what to do then. The seam sees it as a rename with `flags` 1.
    public static func renameatNoReplace(_ fromDir: Int32, _ from: String, _ toDir: Int32, _ to: String,
                                         fullPaths: @autoclosure () -> (String, String)) throws {
        let call: SysCall
        if interposer == nil { call = SysCall(.rename, flags: 1) } else {
            let (a, b) = fullPaths()
            call = SysCall(.rename, path: a, path2: b, flags: 1)
        }
        _ = try retrying(call) { Int(c_renameat2(fromDir, from, toDir, to, 1)) }.get()
    }

    /// link(2): fails with EEXIST rather than replace `to` (publishing without clobbering).
    public static func link(_ from: String, _ to: String) throws {
        _ = try retrying(SysCall(.link, path: from, path2: to)) { Int(Glibc.link(from, to)) }.get()
    }

    public static func unlink(_ path: String) throws {
        _ = try retrying(SysCall(.unlink, path: path)) { Int(Glibc.unlink(path)) }.get()
    }

    /// unlinkat(2) of `name` inside the directory `dirfd`: no walk of the full path. The seam
    /// still sees the full path (`fullPath`, built only when an interposer listens), so fault
    /// injection and the power-loss model match and replay it exactly like `unlink`.
    public static func unlinkat(_ dirfd: Int32, _ name: String, fullPath: @autoclosure () -> String) throws {
        if interposer == nil {
            _ = try name.withCString { n in unobserved { Int(Glibc.unlinkat(dirfd, n, 0)) } }.get()  // as openat's
            return
        }
        _ = try retrying(SysCall(.unlink, path: fullPath())) { Int(Glibc.unlinkat(dirfd, name, 0)) }.get()
    }

    /// The same with the name as a C string (see `openat(_:cName:_:_:fullPath:)`).
    public static func unlinkat(_ dirfd: Int32, cName: UnsafePointer<CChar>, fullPath: @autoclosure () -> String) throws {
        if interposer == nil { _ = try unobserved { Int(Glibc.unlinkat(dirfd, cName, 0)) }.get(); return }
        try unlinkat(dirfd, String(cString: cName), fullPath: fullPath())
    }

    public static func mkdir(_ path: String, _ mode: mode_t) throws {
        _ = try retrying(SysCall(.mkdir, path: path, flags: Int32(mode))) { Int(Glibc.mkdir(path, mode)) }.get()
    }

    /// mkdirat(2) of `name` in the directory `dirfd`; the seam sees `mkdir(fullPath)`.
    public static func mkdirat(_ dirfd: Int32, _ name: String, _ mode: mode_t, fullPath: @autoclosure () -> String) throws {
        let call = interposer == nil ? SysCall(.mkdir, flags: Int32(mode)) : SysCall(.mkdir, path: fullPath(), flags: Int32(mode))
        _ = try retrying(call) { Int(Glibc.mkdirat(dirfd, name, mode)) }.get()
    }

    /// The names in a directory, without "." and "..", in no particular order.
    public static func readDirectory(_ path: String) throws -> [String] {
        let call = SysCall(.readdir, path: path)
        if let e = injectedFailure(call) { throw e }
        guard let dir = opendir(path) else {
            let e = Errno.current
            record(call, -Int(e.code))
            throw e
        }
        return try names(in: dir, call)
    }

    /// The names in the open directory `dirfd` (read through a descriptor of its own, so `dirfd`'s
    /// position is untouched and it stays open); the seam sees `path`.
    public static func readDirectory(_ dirfd: Int32, path: @autoclosure () -> String) throws -> [String] {
        let dir = try openDirectoryStream(dirfd, path: path())
        return try names(in: dir, interposer == nil ? SysCall(.readdir, fd: dirfd) : SysCall(.readdir, path: path(), fd: dirfd))
    }

    /// Each name in the open directory `dirfd`, as its bytes (valid only during the call), so a
    /// caller makes a String only of the names it keeps; the seam sees `path`.
    public static func readDirectory(_ dirfd: Int32, path: @autoclosure () -> String,
                                     each body: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        let dir = try openDirectoryStream(dirfd, path: path())
        try eachName(in: dir, interposer == nil ? SysCall(.readdir, fd: dirfd) : SysCall(.readdir, path: path(), fd: dirfd), body)
    }

    /// A directory stream on the directory `dirfd` (through a descriptor of its own, so `dirfd`'s
    /// position is untouched): `readDirectory` reads one and closes it; a caller that lists the same
    /// directory again and again (a live merge) keeps one and rewinds it (`readDirectory(stream:)`)
    /// instead of opening it anew each time. Closed by `closeDirectoryStream`.
    public static func openDirectoryStream(_ dirfd: Int32, path: @autoclosure () -> String) throws -> OpaquePointer {
        let call = interposer == nil ? SysCall(.readdir, fd: dirfd) : SysCall(.readdir, path: path(), fd: dirfd)
        if let e = injectedFailure(call) { throw e }
        let own = Glibc.openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard own >= 0, let dir = fdopendir(own) else {
            let e = Errno.current
            if own >= 0 { _ = Glibc.close(own) }
            record(call, -Int(e.code))
            throw e
        }
        return dir
    }

    /// The names in a directory stream, read from its start again: rewinddir(3) makes the stream
    /// see the directory as it is now, as a new opendir would.
    public static func readDirectory(stream dir: OpaquePointer, path: @autoclosure () -> String) throws -> [String] {
        let call = interposer == nil ? SysCall(.readdir) : SysCall(.readdir, path: path())
        if let e = injectedFailure(call) { throw e }
        rewinddir(dir)
        return try names(in: dir, call, closing: false)
    }

    public static func closeDirectoryStream(_ dir: OpaquePointer) { closedir(dir) }

    private static func names(in dir: OpaquePointer, _ call: SysCall, closing: Bool = true) throws -> [String] {
        var names: [String] = []
        try eachName(in: dir, call, closing: closing) { names.append(String(decoding: $0, as: UTF8.self)) }
        return names
    }

    private static func eachName(in dir: OpaquePointer, _ call: SysCall, closing: Bool = true,
                                 _ body: (UnsafeBufferPointer<UInt8>) -> Void) throws {
        defer { if closing { closedir(dir) } }
        var count = 0
        while true {
            errno = 0
            guard let ent = readdir(dir) else {
                if errno != 0 { let e = Errno.current; record(call, -Int(e.code)); throw e }
                break
            }
            // "." and ".." are told by their bytes (every name of a listing of 10,000 came
            // through two String comparisons).
            withUnsafePointer(to: ent.pointee.d_name) {
                $0.withMemoryRebound(to: UInt8.self, capacity: Int(NAME_MAX) + 1) { p in
                    guard !(p[0] == 0x2E && (p[1] == 0 || (p[1] == 0x2E && p[2] == 0))) else { return }
                    count += 1
                    body(UnsafeBufferPointer(start: p, count: strlen(UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self))))
                }
            }
        }
        record(call, count)
    }
}
