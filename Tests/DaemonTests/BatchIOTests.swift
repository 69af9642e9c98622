// BatchIO on both backends, on the same cases: reads, unlinks and faults injected through
// Sys.interposer; and the op log's durable append (PlainAppender, on either backend). Serialized: the interposer is process-wide. It only touches calls on this
// test's own fds and paths, so suites running beside it are not disturbed.
import Foundation
import Testing
import BatchIO
import SystemCalls
import TestSupport

/// Fails or shortens matching calls and records what happened to this test's fds and paths.
final class ScopedInterposer: SysInterposer, @unchecked Sendable {
    let lock = NSLock()
    let fds: Set<Int32>
    let pathPrefix: String
    /// (op, nth matching call of that op counting from 1) -> fault. A `.fail` holds from the nth
    /// call on: Sys.write asks the interposer twice per write (once for a short write, once in its
    /// retry loop), so "exactly the nth" would miss it on the plain path.
    var faults: [SysOp: (nth: Int, fault: SysFault)] = [:]
    var seen: [SysOp: Int] = [:]
    var log: [(op: SysOp, result: Int)] = []

    init(fds: Set<Int32> = [], pathPrefix: String) {
        self.fds = fds
        self.pathPrefix = pathPrefix
    }

    private func mine(_ c: SysCall) -> Bool {
        if let p = c.path { return p.hasPrefix(pathPrefix) }
        return c.fd >= 0 && fds.contains(c.fd)
    }

    func before(_ c: SysCall) -> SysFault? {
        guard mine(c) else { return nil }
        lock.lock(); defer { lock.unlock() }
        seen[c.op, default: 0] += 1
        guard let f = faults[c.op], let n = seen[c.op] else { return nil }
        if case .fail = f.fault { return n >= f.nth ? f.fault : nil }
        return n == f.nth ? f.fault : nil
        return nil
    }

    func after(_ c: SysCall, result: Int) {
        guard mine(c) else { return }
        lock.lock(); defer { lock.unlock() }
        log.append((c.op, result))
    }

    func ops() -> [SysOp] { lock.lock(); defer { lock.unlock() }; return log.map(\.op) }
}

private func makeIO(plain: Bool) -> BatchIO {
    let io = BatchIO.make(forcePlain: plain)
    if plain { #expect(io.backend == .plain) }
    // Where the kernel refuses io_uring the non-plain run still passes on plain syscalls, and says why.
    if !plain && io.backend == .plain { print("io_uring refused here: \(io.uringRefusal.map { "\($0)" } ?? "?")") }
    return io
}

private func bytesOf(_ n: Int, seed: UInt8) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

@Suite(.serialized) struct BatchIOTests {
    static let backends = [false, true]  // forcePlain

    @Test func io_uring_is_used_unless_plain_is_forced() {
        let io = BatchIO.make(forcePlain: false)
        #expect(io.backend == .uring || io.uringRefusal != nil)
        #expect(BatchIO.make(forcePlain: true).backend == .plain)
        setenv("OUTL_IO", "plain", 1)
        defer { unsetenv("OUTL_IO") }
        #expect(BatchIO.make(forcePlain: false).backend == .plain)
    }

    @Test(arguments: backends) func batch_reads_every_file_fully(plain: Bool) throws {
        let t = TempDir("batchio")
        let io = makeIO(plain: plain)
        let sizes = [0, 5, 4096, 70_000, 1_048_576]
        var fds: [Int32] = []
        defer { fds.forEach { Sys.close($0) } }
        for (i, n) in sizes.enumerated() {
            let p = t.sub("f\(i)")
            try Data(bytesOf(n, seed: UInt8(i))).write(to: URL(fileURLWithPath: p))
            fds.append(try Sys.open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK))
        }
        let results = io.readFiles(fds, sizes: sizes)
        for (i, n) in sizes.enumerated() {
            #expect(try results[i].get() == bytesOf(n, seed: UInt8(i)), "file \(i) on \(io.backend)")
        }
    }

    @Test(arguments: backends) func a_file_that_grew_after_fstat_reads_longer_than_its_size(plain: Bool) throws {
        let t = TempDir("batchio")
        let io = makeIO(plain: plain)
        let p = t.sub("grows")
        try writeText(p, "0123456789")
        let fd = try Sys.open(p, O_RDONLY)
        defer { Sys.close(fd) }
        let r = io.readFiles([fd], sizes: [4])  // fstat said 4, the file now has 10
        #expect(try r[0].get().count == 5)  // the extra byte tells the caller
    }

    /// Unlinks `names` inside `dir` through the batch call the drain uses (relative to an open
    /// directory, as unlinkat(2)).
    func unlinkAll(_ io: BatchIO, in dir: String, _ names: [String]) throws -> [Result<Void, Errno>] {
        let d = try FileDescriptor.open(dir, O_RDONLY | O_DIRECTORY)
        return d.closeAfter {
            io.unlinkAll(at: Array(repeating: d.rawValue, count: names.count), names: names) { Path.join(dir, names[$0]) }
        }
    }

    @Test(arguments: backends) func batch_unlinks_and_reports_each_result(plain: Bool) throws {
        let t = TempDir("batchio")
        let io = makeIO(plain: plain)
        let names = (0..<300).map { "u\($0).json" }  // more than one ring's worth
        for n in names { try writeText(t.sub(n), "x") }
        let results = try unlinkAll(io, in: t.path, names + ["missing.json"])
        #expect(results.dropLast().allSatisfy { (try? $0.get()) != nil })
        #expect(throws: Errno.ENOENT) { try results.last!.get() }
        #expect(listDir(t.path) == [])
    }

    @Test func the_appender_writes_every_byte_then_fdatasyncs() throws {
        // Hold the process-wide interposer gate for the whole test: FaultTests run in this
        // process too, and Sys.interposer is one global.
        try withInterposer(PassThrough()) {
            let t = TempDir("batchio")
            let appender = PlainAppender()
            let p = t.sub("ops-test.jsonl")
            let fd = try Sys.open(p, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            defer { Sys.close(fd) }
            let spy = ScopedInterposer(fds: [fd], pathPrefix: t.path)
            Sys.interposer = spy
            defer { Sys.interposer = nil }
            var expected: [UInt8] = []
            for i in 0..<3 {
                let chunk = Array("{\"op\":\(i)}\n".utf8) + bytesOf(100_000 * i, seed: 7)
                try chunk.withUnsafeBytes { try appender.appendDurably(fd, $0) }
                expected += chunk
            }
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: p))) == expected)
            #expect(spy.ops() == [.write, .fdatasync, .write, .fdatasync, .write, .fdatasync])
            #expect(spy.log.allSatisfy { $0.result >= 0 })
        }
    }

    @Test func the_appender_finishes_a_short_write_before_syncing() throws {
        // Hold the process-wide interposer gate for the whole test: FaultTests run in this
        // process too, and Sys.interposer is one global.
        try withInterposer(PassThrough()) {
            let t = TempDir("batchio")
            let p = t.sub("ops-short.jsonl")
            let fd = try Sys.open(p, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            defer { Sys.close(fd) }
            let spy = ScopedInterposer(fds: [fd], pathPrefix: t.path)
            spy.faults[.write] = (1, .shortWrite(3))
            Sys.interposer = spy
            defer { Sys.interposer = nil }
            let line = Array("{\"op\":\"create\",\"id\":\"0190\"}\n".utf8)
            try line.withUnsafeBytes { try PlainAppender().appendDurably(fd, $0) }
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: p))) == line)
            #expect(spy.ops() == [.write, .write, .fdatasync])
            #expect(spy.log.first?.result == 3)
        }
    }

    @Test(arguments: backends) func injected_faults_come_back_as_their_errno(plain: Bool) throws {
        // Hold the process-wide interposer gate for the whole test: FaultTests run in this
        // process too, and Sys.interposer is one global.
        try withInterposer(PassThrough()) {
            let t = TempDir("batchio")
            let io = makeIO(plain: plain)
            let uring = io.backend == .uring
    
            // A failed read: that file only.
            let a = t.sub("a"), b = t.sub("b")
            try writeText(a, "aaa"); try writeText(b, "bbb")
            let fa = try Sys.open(a, O_RDONLY), fb = try Sys.open(b, O_RDONLY)
            defer { Sys.close(fa); Sys.close(fb) }
            let spy = ScopedInterposer(fds: [fb], pathPrefix: t.sub("gone"))
            spy.faults[uring ? .uringRead : .pread] = (1, .fail(.EIO))
            Sys.interposer = spy
            defer { Sys.interposer = nil }
            let r = io.readFiles([fa, fb], sizes: [3, 3])
            #expect(try r[0].get() == Array("aaa".utf8))
            #expect(throws: Errno.EIO) { try r[1].get() }
    
            // A failed unlink: that path only, and the file stays.
            let g1 = t.sub("gone1"), g2 = t.sub("gone2")
            try writeText(g1, "1"); try writeText(g2, "2")
            let u = ScopedInterposer(pathPrefix: g2)
            u.faults[uring ? .uringUnlink : .unlink] = (1, .fail(Errno(EROFS)))
            Sys.interposer = u
            let ur = try unlinkAll(io, in: t.path, ["gone1", "gone2"])
            #expect((try? ur[0].get()) != nil)
            #expect(throws: Errno(EROFS)) { try ur[1].get() }
            #expect(listDir(t.path).contains("gone2") && !listDir(t.path).contains("gone1"))
    
            // A failed write, then a failed fdatasync: the append (the same on both) throws that errno.
            let p = t.sub("ops.jsonl")
            let fd = try Sys.open(p, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            defer { Sys.close(fd) }
            let line = Array("{\"op\":1}\n".utf8)
            let wf = ScopedInterposer(fds: [fd], pathPrefix: p)
            wf.faults[.write] = (1, .fail(.ENOSPC))
            Sys.interposer = wf
            #expect(throws: Errno.ENOSPC) { try line.withUnsafeBytes { try PlainAppender().appendDurably(fd, $0) } }
            #expect(readText(p) == "")
            let sf = ScopedInterposer(fds: [fd], pathPrefix: p)
            sf.faults[.fdatasync] = (1, .fail(.EIO))
            Sys.interposer = sf
            #expect(throws: Errno.EIO) { try line.withUnsafeBytes { try PlainAppender().appendDurably(fd, $0) } }
            #expect(sf.ops().last == .fdatasync)
            #expect(sf.log.last?.result == -Int(EIO))
        }
    }
}

/// Lets every call through; installed only to hold the interposer gate.
final class PassThrough: SysInterposer {
    func before(_ call: SysCall) -> SysFault? { nil }
    func after(_ call: SysCall, result: Int) {}
}
