// BatchIO: the drain's batched file I/O (read many captures, unlink many) on io_uring when the
// kernel allows it, on plain syscalls otherwise — same results, same Sys seam. The op log's
// append is not here: it is write+fdatasync on the calling thread on either backend (PlainAppender).
// Not thread-safe: one BatchIO belongs to the one write actor.
#if canImport(Glibc)
import Glibc
#endif
import CURingShim
import SystemCalls

public final class BatchIO {
    public enum Backend: String, Sendable { case uring, plain }

    public let backend: Backend
    /// Why io_uring is not in use (nil when it is, or when plain was asked for): for the log.
    public private(set) var uringRefusal: Errno?
    /// The ring, made on first use and dropped by `releaseRing()`: once a ring has run an unlink,
    /// the kernel keeps an io-wq worker thread for it that wakes every few seconds,
    /// so an idle daemon lets go of its ring and its worker with it.
    private var ring: Ring?
    private var uringAllowed: Bool

    private init(ring: Ring?, refusal: Errno?) {
        self.ring = ring
        self.uringAllowed = ring != nil
        self.uringRefusal = refusal
        self.backend = ring == nil ? .plain : .uring
    }

    /// The ring, made again if it was released; nil on the plain path or if the kernel now refuses.
    func liveRing() -> Ring? {
        if let ring { return ring }
        guard uringAllowed else { return nil }
        do {
            ring = try Ring()
        } catch {
            uringAllowed = false
            uringRefusal = (error as? Errno) ?? Errno(EINVAL)
        }
        return ring
    }

    /// Drops the ring (and its kernel worker threads) until the next batch needs one.
    public func releaseRing() { ring = nil }

    /// Whether a ring is held right now (for the daemon's idle bookkeeping and tests).
    public var holdsRing: Bool { ring != nil }

    /// io_uring unless `forcePlain`, `OUTL_IO=plain`, or the kernel refuses it (EPERM, ENOSYS,
    /// kernel.io_uring_disabled, a missing opcode): then plain syscalls, silently, with the reason
    /// kept in `uringRefusal`.
    public static func make(forcePlain: Bool) -> BatchIO {
        if forcePlain || Path.environment("OUTL_IO") == "plain" {
            return BatchIO(ring: nil, refusal: nil)
        }
        do {
            return BatchIO(ring: try Ring(), refusal: nil)
        } catch let e as Errno {
            return BatchIO(ring: nil, refusal: e)
        } catch {
            return BatchIO(ring: nil, refusal: Errno(EINVAL))
        }
    }

    /// Reads each fd (open, already fstat'ed by the caller) from offset 0, all in one batch.
    /// `sizes[i]` is the size fstat reported; up to one byte more is read, so a result longer than
    /// `sizes[i]` tells the caller the file grew after fstat (it must not trust it as complete).
    /// `useRing: false` reads with plain syscalls even when the ring is up (on tmpfs the ring hands
    /// reads to io-wq workers, which costs more CPU than the reads).
    public func readFiles(_ fds: [Int32], sizes: [Int], useRing: Bool = true) -> [Result<[UInt8], Errno>] {
        precondition(fds.count == sizes.count, "one size per fd")
        guard useRing, let ring = liveRing(), ring.broken == nil else {
            return fds.indices.map { readPlain(fds[$0], want: sizes[$0]) }
        }
        let jobs = fds.indices.map { ReadJob(fd: fds[$0], want: sizes[$0]) }
        defer { jobs.forEach { $0.free() } }
        readOnRing(ring, jobs)
        return jobs.map { j in j.error.map { .failure($0) } ?? .success(j.bytes) }
    }

    /// Unlinks each `names[i]` inside the directory `dirfds[i]` (unlinkat, plain or io_uring: no
    /// walk of the full path). `paths(i)` is that entry's full path, asked only for the seam and
    /// for errors, so fault injection and the power-loss model see it as unlink(2) of that path.
    /// `useRing: false` unlinks with plain syscalls even when the ring is up (on tmpfs the io-wq
    /// hand-off costs more CPU than the unlink itself).
    public func unlinkAll(at dirfds: [Int32], names: [String], useRing: Bool = true,
                          paths: (Int) -> String) -> [Result<Void, Errno>] {
        let cNames = names.map { UnsafePointer(strdup($0)!) }
        defer { cNames.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        return unlinkAll(at: dirfds, cNames: cNames, useRing: useRing, paths: paths)
    }

    /// The same with the names as C strings, which stay valid until it returns (the drain spells
    /// its capture files' names in one buffer per batch: no String, no copy per name).
    public func unlinkAll(at dirfds: [Int32], cNames: [UnsafePointer<CChar>], useRing: Bool = true,
                          paths: (Int) -> String) -> [Result<Void, Errno>] {
        precondition(dirfds.count == cNames.count, "one directory fd per name")
        guard useRing, let ring = liveRing(), ring.broken == nil else {
            return cNames.indices.map { i in
                Result { try Sys.unlinkat(dirfds[i], cName: cNames[i], fullPath: paths(i)) }
                    .mapError { ($0 as? Errno) ?? Errno(EIO) }
            }
        }
        var results = [Result<Void, Errno>?](repeating: nil, count: cNames.count)
        var submitted: [Int] = []
        submitted.reserveCapacity(cNames.count)
        let watched = Sys.interposer != nil
        for i in cNames.indices {
            if watched, let e = Sys.injectedFailure(SysCall(.uringUnlink, path: paths(i))) {
                results[i] = .failure(e)
            } else {
                submitted.append(i)
            }
        }
        let res = ring.run(submitted.count) { k, ud in
            CURingShim_queueUnlinkAt(ring.handle, dirfds[submitted[k]], cNames[submitted[k]], ud)
        }
        for (k, i) in submitted.enumerated() {
            if watched { Sys.record(SysCall(.uringUnlink, path: paths(i)), Int(res[k])) }
            results[i] = res[k] < 0 ? .failure(Errno(-res[k])) : .success(())
        }
        return results.map { $0! }
    }

    /// Whether `readFiles(_:sizes:useRing:)` would read on the ring: a caller reading with plain
    /// syscalls anyway reads each file as it opens it (`readFile(_:size:into:)`), as the floor does.
    public func readsOnRing(_ useRing: Bool) -> Bool {
        guard useRing, let ring = liveRing() else { return false }
        return ring.broken == nil
    }

    /// Reads one fd with plain syscalls as `readFiles` would, into `room` (at least `size + 1`
    /// bytes): from offset 0, up to one byte past `size`, so a longer result says the file grew
    /// after fstat. Answers how many bytes were read. The drain reads a batch's files one after
    /// another into one buffer, with no allocation per file.
    public func readFile(_ fd: Int32, size: Int, into room: UnsafeMutableRawBufferPointer) -> Result<Int, Errno> {
        precondition(room.count > size, "BatchIO.readFile: room for one byte past the size")
        var got = 0
        while got < size {
            do {
                let n = try Sys.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: room[got..<(size + 1)]), at: Int64(got))
                if n == 0 { break }
                got += n
            } catch {
                return .failure((error as? Errno) ?? Errno(EIO))
            }
        }
        return .success(got)
    }

    // MARK: reading

    /// `readFile` into an array of its own (the ring's fallback, which answers arrays).
    private func readPlain(_ fd: Int32, want: Int) -> Result<[UInt8], Errno> {
        var read: Result<Int, Errno> = .success(0)
        let bytes = [UInt8](unsafeUninitializedCapacity: want + 1) { room, got in
            read = readFile(fd, size: want, into: UnsafeMutableRawBufferPointer(room))
            got = (try? read.get()) ?? 0
        }
        return read.map { _ in bytes }
    }

    private func readOnRing(_ ring: Ring, _ jobs: [ReadJob]) {
        while true {
            var round: [ReadJob] = []
            for j in jobs where !j.done {
                if let e = Sys.injectedFailure(SysCall(.uringRead, fd: j.fd, offset: Int64(j.got))) {
                    j.error = e
                } else {
                    round.append(j)
                }
            }
            if round.isEmpty { return }
            let res = ring.run(round.count) { k, ud in
                let j = round[k]
                return CURingShim_queueRead(ring.handle, j.fd, j.remaining.baseAddress,
                                            UInt32(j.remaining.count), UInt64(j.got), ud)
            }
            for (k, j) in round.enumerated() {
                let r = res[k]
                Sys.record(SysCall(.uringRead, fd: j.fd, offset: Int64(j.got)), Int(r))
                if r >= 0 {
                    j.advance(Int(r))
                } else if r != -EINTR && r != -EAGAIN {
                    j.error = Errno(-r)
                }  // EINTR/EAGAIN: nothing was read; the job stays pending and is resubmitted next round
            }
        }
    }
}

/// One file being read: a buffer of its fstat size plus one byte, filled from offset 0.
final class ReadJob {
    let fd: Int32
    let want: Int
    let buffer: UnsafeMutableRawBufferPointer
    var got = 0
    var error: Errno?
    private var eof = false

    init(fd: Int32, want: Int) {
        self.fd = fd
        self.want = want
        buffer = .allocate(byteCount: want + 1, alignment: 16)
    }

    var remaining: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: buffer[got...]) }
    /// Done at end of file, at the fstat size (a regular file's read is short only at its end),
    /// when the extra byte shows it grew, or on error.
    var done: Bool { error != nil || eof || got >= want }
    func advance(_ n: Int) { if n == 0 { eof = true } else { got += n } }
    var bytes: [UInt8] { Array(UnsafeRawBufferPointer(rebasing: buffer[0..<got])) }
    func free() { buffer.deallocate() }
}
