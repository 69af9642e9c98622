// The op-file cursor, on real files delivered the ways a sync tool delivers them: a grown file renamed
// over the old one (a new inode), a rewritten prefix, a conflict copy, a half-written last line, and
// the window between Syncthing's unlink of the old file and its rename of the new one.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// `n` capture ops of one actor, stamped from `wall` on, as the lines a device appends.
func captureOps(_ actor: BlockID, _ n: Int, wall: Int64 = 1_796_206_489_000, page: BlockID = BlockID.journalPage(day1)) -> [Op] {
    (0..<n).map { k in
        var op = Op(hlc: HLC(wall: wall + Int64(k), counter: 0, actor: actor), kind: .createBlock, id: BlockID.random())
        op.page = page
        op.pos = "p\(wall + Int64(k))"
        op.text = "capture \(k) of \(actor)"
        op.props = [Property("captured-at", "2026-12-02T09:00:00.000+01:00"), Property("source", "cli")]
        return op
    }
}

func encode(_ ops: [Op]) -> [UInt8] {
    var b: [UInt8] = []
    for op in ops { OpEncoder.append(op, to: &b) }
    return b
}

/// Delivers `bytes` as Syncthing does: a temporary file, the old file unlinked, then the rename.
func deliverByRename(_ path: String, _ bytes: [UInt8], between: () throws -> Void = {}) throws {
    let tmp = Path.join(Path.parent(of: path), ".syncthing.\(Path.lastComponent(path)).tmp")
    try putFile(tmp, bytes)
    try? Sys.unlink(path)
    try between()
    try Sys.rename(tmp, path)
}

func inode(_ path: String) throws -> UInt64 { UInt64(try Sys.lstat(path).st_ino) }

/// Reads with the cursor; returns the ids handed over and the outcome.
func readIDs(_ c: inout OpFileCursor, _ path: String) throws -> ([BlockID], OpFileCursor.Outcome) {
    var ids: [BlockID] = []
    let o = try c.read(path, writable: false, sink: { op, _ in ids.append(op.raw.id) })
    return (ids, o)
}

@Test func a_grown_file_delivered_by_rename_reads_only_the_new_ops() throws {
    let dir = TempDir("outl-cursor")
    let path = dir.sub("ops-x.jsonl")
    let ops = captureOps(BlockID.random(), 50)
    try putFile(path, encode(Array(ops[..<40])))
    var c = OpFileCursor()
    let (first, o1) = try readIDs(&c, path)
    #expect(first == ops[..<40].map(\.id))
    #expect(o1 == .read(from: 0, again: false, ops: 40, size: encode(Array(ops[..<40])).count, tail: 0))
    let before = try inode(path)
    try deliverByRename(path, encode(ops))
    #expect(try inode(path) != before, "the grown file is a new inode, as Syncthing delivers it")
    let (second, o2) = try readIDs(&c, path)
    #expect(second == ops[40...].map(\.id), "only the ops the file gained")
    guard case .read(let from, let again, let n, _, _) = o2 else { Issue.record("not read: \(o2)"); return }
    #expect(from == encode(Array(ops[..<40])).count && !again && n == 10)
    #expect(c.ops == 50 && c.newest == ops[49].hlc)
    let (third, o3) = try readIDs(&c, path)
    #expect(third.isEmpty && o3 == .unchanged)
}

@Test func a_rewritten_prefix_is_read_again_and_applying_it_again_doubles_nothing() throws {
    let dir = TempDir("outl-cursor")
    let path = dir.sub("ops-x.jsonl")
    let actor = BlockID.random()
    let ops = captureOps(actor, 30)
    try putFile(path, encode(Array(ops[..<20])))
    var c = OpFileCursor()
    var model = Model()
    var seen = 0
    func read() throws -> OpFileCursor.Outcome {
        try c.read(path, writable: false, sink: { op, _ in seen += 1; model.apply(op) })
    }
    _ = try read()
    // Rewritten: the same actor's ops in another order, longer than before (a restored backup, a
    // tool that rewrote the file): the record before the old offset is not what it was.
    var rewritten = Array(ops[..<25])
    rewritten.swapAt(0, 19)
    rewritten.swapAt(3, 24)
    try deliverByRename(path, encode(rewritten))
    seen = 0
    let o = try read()
    #expect(o == .read(from: 0, again: true, ops: 25, size: encode(rewritten).count, tail: 0))
    #expect(seen == 25, "the whole file again")
    #expect(c.ops == 25, "the count is the file's, not the sum of both reads")
    #expect(model.blocks.count == 25, "nothing doubled")
    #expect(model.blockIDs(createdOn: BlockID.journalPage(day1)).count == 25)
    // A shorter file (the other device cut a torn tail, then the sync tool delivered it) is read again too.
    try deliverByRename(path, encode(Array(ops[..<10])))
    let o2 = try read()
    guard case .read(0, true, 10, _, _) = o2 else { Issue.record("shrunk file: \(o2)"); return }
    #expect(model.blocks.count == 25)
}

@Test func an_incomplete_last_line_is_left_and_read_once_completed() throws {
    let dir = TempDir("outl-cursor")
    let path = dir.sub("ops-x.jsonl")
    let ops = captureOps(BlockID.random(), 6)
    let whole = encode(ops)
    let lastLine = encode([ops[5]])
    let cut = whole.count - lastLine.count / 2
    try putFile(path, Array(whole[..<cut]))
    var c = OpFileCursor()
    let (ids, o) = try readIDs(&c, path)
    #expect(ids == ops[..<5].map(\.id))
    #expect(o == .read(from: 0, again: false, ops: 5, size: cut, tail: cut - (whole.count - lastLine.count)))
    #expect(try Durable.readRegularFile(path, limit: 1 << 20) == Array(whole[..<cut]), "another device's file is never cut")
    // Still incomplete, and grown in place (a share that appends): nothing new.
    try appendRaw(path, Array(whole[cut..<(whole.count - 1)]))
    let (none, _) = try readIDs(&c, path)
    #expect(none.isEmpty)
    // The newline arrives: the line is read, once.
    try appendRaw(path, [10])
    let (last, o2) = try readIDs(&c, path)
    #expect(last == [ops[5].id])
    guard case .read(let from, false, 1, _, 0) = o2 else { Issue.record("completed line: \(o2)"); return }
    #expect(from == whole.count - lastLine.count)
    // A torn line that is never completed, followed by valid lines (the other device cut it and went
    // on): skipped once, counted once.
    let more = captureOps(ops[0].hlc.actor, 2, wall: 1_796_206_499_000)
    try appendRaw(path, Array("1234abcd {\"k\":\"cb\"".utf8) + [10] + encode(more))
    let (after, _) = try readIDs(&c, path)
    #expect(after == more.map(\.id) && c.bad == 1)
}

@Test func a_file_missing_between_unlink_and_rename_is_not_an_error_and_keeps_its_place() throws {
    let dir = TempDir("outl-cursor")
    let path = dir.sub("ops-x.jsonl")
    let ops = captureOps(BlockID.random(), 12)
    try putFile(path, encode(Array(ops[..<8])))
    var c = OpFileCursor()
    _ = try readIDs(&c, path)
    let offset = c.offset
    try deliverByRename(path, encode(ops), between: {
        let (ids, o) = try readIDs(&c, path)
        #expect(ids.isEmpty && o == .missing)
        #expect(c.offset == offset && c.ops == 8)
    })
    let (ids, _) = try readIDs(&c, path)
    #expect(ids == ops[8...].map(\.id))
}

@Test func a_symlink_or_fifo_with_an_op_file_name_is_never_read() throws {
    let dir = TempDir("outl-cursor")
    let target = dir.sub("elsewhere.jsonl")
    try putFile(target, encode(captureOps(BlockID.random(), 3)))
    #expect(symlink(target, dir.sub("ops-link.jsonl")) == 0)
    #expect(mkfifo(dir.sub("ops-fifo.jsonl"), 0o600) == 0)
    var c = OpFileCursor()
    #expect(try readIDs(&c, dir.sub("ops-link.jsonl")).1 == .notRegular)
    #expect(try readIDs(&c, dir.sub("ops-fifo.jsonl")).1 == .notRegular, "and the reader did not hang on the FIFO")
}

/// Counts the bytes read (read and pread) from files whose path has this prefix.
final class ReadCounter: SysInterposer, @unchecked Sendable {
    let prefix: String
    let lock = NSLockLite()
    var fds = Set<Int32>()
    var bytes = 0
    init(_ prefix: String) { self.prefix = prefix }
    func before(_ call: SysCall) -> SysFault? { nil }
    func after(_ call: SysCall, result: Int) {
        lock.locked {
            switch call.op {
            case .open where call.path?.hasPrefix(prefix) == true && result >= 0: fds.insert(Int32(result))
            case .close: fds.remove(call.fd)
            case .read, .pread: if fds.contains(call.fd), result > 0 { bytes += result }
            default: break
            }
        }
    }
}

/// A mutex without Foundation's NSLock (the workspace tests otherwise need no Foundation here).
final class NSLockLite: @unchecked Sendable {
    private var m = pthread_mutex_t()
    init() { pthread_mutex_init(&m, nil) }
    func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(&m); defer { pthread_mutex_unlock(&m) }
        return body()
    }
}

@Test func a_merge_reads_the_bytes_a_file_gained_not_the_whole_file() async throws {
    let t = TestWorkspace()
    let opsDir = Path.join(t.root, ".outl/ops")
    try Durable.makeDirectory(Path.join(t.root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir, mode: 0o755)
    let other = BlockID.random()
    let path = Path.join(opsDir, "ops-\(other).jsonl")
    let ops = captureOps(other, 3001)
    let old = encode(Array(ops[..<3000]))
    try putFile(path, old)
    let ws = try t.open()
    #expect(await ws.bootSummary.ops == 3000)
    try deliverByRename(path, encode(ops))
    let counter = ReadCounter(opsDir)
    let report = try await withInterposer(counter) { try await ws.mergeForeignOps() }
    #expect(report.read == 1 && report.applied == 1)
    let newLine = encode([ops[3000]]).count
    // The new line is read twice: parsed, then copied into this device's archive (SeenOps).
    #expect(counter.bytes < 2 * newLine + 2 * 400, "read \(counter.bytes) bytes of a \(old.count + newLine)-byte file for one new line")
    #expect(await ws.containsBlock(ops[3000].id.description))
    await ws.close()
}

/// Writes a whole file in place (O_TRUNC): a test's stand-in for any writer.
func putFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = try Sys.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    defer { Sys.close(fd) }
    try Sys.writeAll(fd, bytes)
}
