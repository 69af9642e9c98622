// The op log on disk: recovery, forward compatibility, convergence, group commit and the device lock.
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

func opsFiles(_ t: TestWorkspace) -> [String] {
    listDir(Path.join(t.root, ".outl/ops")).map { Path.join(t.root, ".outl/ops/\($0)") }
}

func appendRaw(_ path: String, _ bytes: [UInt8]) throws {
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try h.seekToEnd()
    try h.write(contentsOf: Data(bytes))
    try h.close()
}

@Test func torn_tail_is_cut_and_boot_goes_on() async throws {
    for tail: [UInt8] in [Array("1234abcd {\"k\":\"cb\",\"w\":17".utf8), [UInt8](repeating: 0, count: 4096),
                          Array("garbage\nmore garbage".utf8)] {
        let t = TestWorkspace()
        do {
            let ws = try t.open()
            _ = try await ws.appendCaptures([capture("safe one"), capture("safe two")])
            await ws.close()
        }
        let file = opsFiles(t)[0]
        let goodSize = try Sys.lstat(file).st_size
        try appendRaw(file, tail)
        let ws = try t.open()
        #expect(await texts(ws) == ["safe one", "safe two"])
        #expect(await ws.bootSummary.cutBytes == tail.count)
        #expect(try Sys.lstat(file).st_size == goodSize, "the tail was cut on disk")
        _ = try await ws.appendCaptures([capture("after the cut")])
        await ws.close()
        let again = try t.open()
        #expect(await texts(again) == ["safe one", "safe two", "after the cut"])
    }
}

@Test func unknown_op_kind_is_kept_and_skipped() async throws {
    let t = TestWorkspace()
    let me: String
    do {
        let ws = try t.open()
        me = ws.actorID
        _ = try await ws.appendCaptures([capture("known")])
        await ws.close()
    }
    let file = opsFiles(t)[0]
    // A newer build's op, written by this device: valid line, unknown kind, unknown fields.
    let json = "{\"k\":\"zz\",\"w\":1796000000000,\"c\":0,\"a\":\"\(me)\",\"id\":\"\(BlockID.random())\",\"new\":{\"x\":[1,2]}}"
    let crc = String(CRC32C.checksum(Array(json.utf8)), radix: 16)
    let line = String(repeating: "0", count: 8 - crc.count) + crc + " " + json + "\n"
    try appendRaw(file, Array(line.utf8))
    let ws = try t.open()
    #expect(await texts(ws) == ["known"])
    #expect(await ws.bootSummary.ops == 3)
    _ = try await ws.appendCaptures([capture("later")])
    await ws.close()
    #expect(fileText(file).contains(json), "the unknown op is kept in the log")
    let again = try t.open()
    #expect(await texts(again) == ["known", "later"])
}

@Test func two_actors_creating_the_same_block_converge() async throws {
    let t = TestWorkspace()
    let shared = capture("drained on both devices")
    // Device a and device b (separate state dirs: separate actors) each drain a synced copy.
    let a = try t.open(device: "a")
    #expect(try await a.appendCaptures([shared, capture("only on a")]) == [.created, .created])
    await a.close()
    // b boots without a's ops (not synced yet): move them aside, then back.
    let aFile = opsFiles(t)[0]
    try Sys.rename(aFile, aFile + ".away")
    let b = try t.open(device: "b")
    #expect(try await b.appendCaptures([shared]) == [.created])
    await b.close()
    try Sys.rename(aFile + ".away", aFile)
    // And a Syncthing conflict copy of a's file: ops are idempotent, the union is safe.
    try FileManager.default.copyItem(atPath: aFile, toPath: aFile.replacingOccurrences(
        of: ".jsonl", with: ".sync-conflict-20261202-101010-ABCDEFG.jsonl"))
    #expect(opsFiles(t).count == 3)
    for device in ["a", "b", "c"] {
        let ws = try t.open(device: device)
        let blocks = await ws.journalBlocks(day1)
        #expect(blocks.filter { $0.id == shared.id }.count == 1)
        #expect(blocks.count == 2)
        #expect(await ws.journalMarkdown(day1) != nil)
        await ws.close()
    }
    // Every device projects the same page.
    let pa = try t.open(device: "a"); let ma = await pa.journalMarkdown(day1); await pa.close()
    let pb = try t.open(device: "b"); let mb = await pb.journalMarkdown(day1); await pb.close()
    #expect(ma == mb)
}

@Test func duplicate_capture_in_one_batch_is_one_block() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let c = capture("twice")
    #expect(try await ws.appendCaptures([c, c]) == [.created, .alreadyPresent])
    #expect(try await ws.appendCaptures([c]) == [.alreadyPresent])
    #expect(await texts(ws) == ["twice"])
}

@Test func an_id_repeated_out_of_order_in_one_batch_is_one_block() async throws {
    // Ids that only rise are told apart without a set; any other order still finds the repeat.
    let t = TestWorkspace()
    let ws = try t.open()
    let a = capture("a"), b = capture("b"), c = capture("c")
    let (first, second) = a.id < b.id ? (a, b) : (b, a)
    #expect(try await ws.appendCaptures([second, first, second, c]) == [.created, .created, .alreadyPresent, .created])
    #expect(Set(await texts(ws)) == ["a", "b", "c"])
    #expect(await texts(ws).count == 3)
}

/// Counts the op log's fdatasyncs and directory fsyncs under one directory.
final class SyncCounter: SysInterposer, @unchecked Sendable {
    let prefix: String
    let lock = NSLock()
    var fds = Set<Int32>()
    var dirFDs = Set<Int32>()
    var fdatasyncs = 0
    var dirFsyncs = 0
    init(_ prefix: String) { self.prefix = prefix }
    func isOpsDirectory(_ fd: Int32) -> Bool {
        var a = stat(), b = stat()
        return fstat(fd, &a) == 0 && stat(prefix + "/ops", &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev
    }
    func before(_ call: SysCall) -> SysFault? { nil }
    func after(_ call: SysCall, result: Int) {
        lock.lock(); defer { lock.unlock() }
        switch call.op {
        case .open where call.path?.hasPrefix(prefix) == true && result >= 0:
            if call.path!.hasSuffix("/ops") { dirFDs.insert(Int32(result)) } else { fds.insert(Int32(result)) }
        case .close: fds.remove(call.fd); dirFDs.remove(call.fd)
        case .fdatasync where fds.contains(call.fd): fdatasyncs += 1
        // The directory may be opened before the counter is installed, or again relative to the
        // workspace (HeldDirectories re-checks it under load): it is known by its inode as well.
        case .fsync where dirFDs.contains(call.fd) || isOpsDirectory(call.fd): dirFsyncs += 1
        default: break
        }
    }
}

@Suite(.serialized) struct GroupCommit {
    @Test func a_batch_is_one_fdatasync_and_a_new_file_syncs_its_directory() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        let counter = SyncCounter(Path.join(t.root, ".outl"))
        try await withInterposer(counter) {
            _ = try await ws.appendCaptures((0..<50).map { capture("batch \($0)") })
            #expect(counter.fdatasyncs == 1)
            #expect(counter.dirFsyncs == 1, "the first append to a new log file fsyncs .outl/ops")
            _ = try await ws.appendCaptures((0..<50).map { capture("batch two \($0)") })
            #expect(counter.fdatasyncs == 2)
            #expect(counter.dirFsyncs == 1)
        }
    }

    @Test func a_failed_append_applies_nothing_and_leaves_no_torn_line() async throws {
        /// Fails the first fdatasync of a file under `root` only: the interposer is one for the
        /// process, and a test running beside this one must neither take the fault nor get it.
        final class FailFdatasync: SysInterposer, @unchecked Sendable {
            let root: String
            let lock = NSLock()
            var armed = true
            init(_ root: String) { self.root = root }
            func before(_ call: SysCall) -> SysFault? {
                guard call.op == .fdatasync else { return nil }
                var buf = [CChar](repeating: 0, count: 4096)
                let n = readlink("/proc/self/fd/\(call.fd)", &buf, buf.count - 1)
                guard n > 0, String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix(root) else { return nil }
                return lock.withLock { () -> SysFault? in
                    if armed { armed = false; return .fail(.EIO) }
                    return nil
                }
            }
            func after(_ call: SysCall, result: Int) {}
        }
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("before")])
        let lost = capture("fails")
        _ = await withInterposer(FailFdatasync(t.root)) {
            await #expect(throws: WorkspaceError.self) { try await ws.appendCaptures([lost]) }
        }
        #expect(await texts(ws) == ["before"])
        #expect(!(await ws.containsBlock(lost.id)))
        #expect(try await ws.appendCaptures([lost]) == [.created])
        await ws.close()
        let again = try t.open()
        #expect(await texts(again) == ["before", "fails"])
        #expect(await again.bootSummary.invalidLines == 0)
    }
}

@Test func second_process_gets_locked_error() async throws {
    let t = TestWorkspace()
    try Durable.makeDirectory(t.root, mode: 0o755)  // outl never creates a workspace
    let ws = try t.open()
    #expect(WorkspaceLock.owner(root: t.root, stateDirectory: t.state()) == getpid())
    let r = try run(binPath("outl"), ["--workspace", t.root, "--state-dir", t.state(), "daily", "append", "hi"])
    #expect(r.status == 75)
    #expect(r.stderr.contains("pid \(getpid())"))
    #expect(opsFiles(t).count <= 1, "the second process left no ops file of its own behind")
    await #expect(throws: WorkspaceError.self) { _ = try t.open() }
    await ws.close()
    // A child another test is spawning right now may hold a copy of the lock's open file until its
    // exec closes it (O_CLOEXEC): wait for that, it is not ours to time.
    var owner = WorkspaceLock.owner(root: t.root, stateDirectory: t.state())
    for _ in 0..<200 where owner != nil {
        usleep(10_000)
        owner = WorkspaceLock.owner(root: t.root, stateDirectory: t.state())
    }
    #expect(owner == nil)
    let ok = try run(binPath("outl"), ["--workspace", t.root, "--state-dir", t.state(), "daily", "append", "hi"])
    #expect(ok.status == 0)
    #expect(opsFiles(t).count == 1, "one device, one actor, one ops file")
}

@Test func outl_cli_shows_checks_and_reports_usage() throws {
    let t = TestWorkspace()
    try Durable.makeDirectory(t.root, mode: 0o755)  // outl never creates a workspace
    let base = ["--workspace", t.root, "--state-dir", t.state()]
    #expect(try run(binPath("outl"), base + ["daily", "append", "from", "the", "cli"]).status == 0)
    let show = try run(binPath("outl"), base + ["show"])
    #expect(show.status == 0 && show.stdout.contains("- from the cli"))
    #expect(try run(binPath("outl"), base + ["check"]).status == 0)
    let day = listDir(Path.join(t.root, "journals"))[0]
    try writeText(Path.join(t.root, "journals/\(day)"), "- changed\n")
    #expect(try run(binPath("outl"), base + ["check"]).status == 1)
    #expect(try run(binPath("outl"), base + ["frobnicate"]).status == 64)
    #expect(try run(binPath("outl"), base + ["show", "2026-02-30"]).status == 64)
    #expect(try run(binPath("outl"), ["--version"]).stdout.hasPrefix("outl "))
}

/// One way to say what happened: a torn tail cut is a warning naming its op file in OUTL_OPS_FILE,
/// through the sink the daemon turns into journal entries (not an info line without fields).
@Test func a_torn_tail_is_a_warning_with_its_op_file_as_a_field() async throws {
    let t = TestWorkspace()
    do {
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("safe")])
        await ws.close()
    }
    let file = opsFiles(t)[0]
    try appendRaw(file, Array("1234abcd {\"k\":\"cb\"".utf8))
    final class Said: @unchecked Sendable { var entries: [(WorkspaceLog.Level, String, [String: String])] = [] }
    let said = Said()
    var o = WorkspaceOptions(root: t.root)
    o.stateDirectory = t.state()
    o.log = WorkspaceLog(sink: { said.entries.append(($0, $1, $2)) })
    let ws = try Workspace(options: o)
    await ws.close()
    let torn = said.entries.filter { $0.1.contains("cut a torn or invalid tail") }
    #expect(torn.count == 1, "\(said.entries.map(\.1))")
    #expect(torn.first?.0 == .warning)
    #expect(torn.first?.2["OUTL_OPS_FILE"] == file, "\(torn.first?.2 ?? [:])")
}
