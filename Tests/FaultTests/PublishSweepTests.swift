// PublishSweepTests: SQLite's loop over Durable.publish and Durable.makeDirectory — fail call N
// for every N with EIO, ENOSPC, EINTR and a short write; the target is always the old file or the
// whole new one, and no temp file is ever left behind.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct PublishSweepTests {
    static let faults: [SysFault] = [.fail(.EIO), .fail(.ENOSPC), .fail(.EINTR), .shortWrite(3)]

    @Test(arguments: faults)
    func publish_is_all_or_nothing_under_a_fault_at_every_call(_ fault: SysFault) throws {
        let base = TempDir("sweep-publish")
        let old = "old contents\n", new = String(repeating: "new contents ", count: 50)
        func runDir(_ n: Int) -> String { Path.join(base.path, "run\(n)") }
        let outcomes = try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n in
            // Set-up through Foundation, so the injector neither counts nor fails it.
            try FileManager.default.createDirectory(atPath: Path.join(runDir(n), "tmp"), withIntermediateDirectories: true)
            try writeText(Path.join(runDir(n), "page.md"), old)
            try Durable.publish(Array(new.utf8), to: Path.join(runDir(n), "page.md"), via: Path.join(runDir(n), "tmp/page.md"))
        } check: { o in
            let dir = runDir(o.n)
            let text = readText(Path.join(dir, "page.md"))
            #expect(text == old || text == new, "run \(o.n): torn target; calls: \(o.log)")
            if o.succeeded { #expect(text == new, "run \(o.n) succeeded but left the old file") }
            #expect(listDir(Path.join(dir, "tmp")).isEmpty, "run \(o.n) left a temp file; calls: \(o.log)")
            _ = try #require(text)
        }
        #expect(outcomes.count > 6)
        if fault == .fail(.EINTR) || fault == .shortWrite(3) {
            #expect(outcomes.allSatisfy { $0.succeeded }, "EINTR and short writes are absorbed by Sys")
        } else {
            #expect(outcomes.contains { !$0.succeeded })
        }
    }

    /// With the stamp wanted after the rename (a page file), the written descriptor is swapped for an
    /// O_PATH one before the rename; a fault there, or in either fstat, keeps the written one open
    /// across the rename instead. Either way: all or nothing, no temp left, and a stamp returned is
    /// the published file's.
    @Test(arguments: faults)
    func publish_with_its_stamp_is_all_or_nothing_under_a_fault_at_every_call(_ fault: SysFault) throws {
        let base = TempDir("sweep-publish-stamp")
        let old = "old contents\n", new = String(repeating: "new contents ", count: 50)
        func runDir(_ n: Int) -> String { Path.join(base.path, "run\(n)") }
        let outcomes = try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n -> stat? in
            try FileManager.default.createDirectory(atPath: Path.join(runDir(n), "tmp"), withIntermediateDirectories: true)
            try writeText(Path.join(runDir(n), "page.md"), old)
            let dir = try FileDescriptor.open(runDir(n), O_RDONLY | O_DIRECTORY)
            defer { dir.close() }
            let tmp = try FileDescriptor.open(Path.join(runDir(n), "tmp"), O_RDONLY | O_DIRECTORY)
            defer { tmp.close() }
            return try Durable.publish(Array(new.utf8), name: "page.md", in: dir, dirPath: runDir(n), via: "page.md.tmp",
                                       in: tmp, tempDirPath: Path.join(runDir(n), "tmp"), statAfterRename: true)
        } check: { o in
            let dir = runDir(o.n)
            let text = readText(Path.join(dir, "page.md"))
            #expect(text == old || text == new, "run \(o.n): torn target; calls: \(o.log)")
            #expect(listDir(Path.join(dir, "tmp")).isEmpty, "run \(o.n) left a temp file; calls: \(o.log)")
            if case .success(let st?) = o.result {
                #expect(text == new)
                let now = try Sys.lstat(Path.join(dir, "page.md"))
                #expect(st.st_ino == now.st_ino && st.st_ctim.tv_nsec == now.st_ctim.tv_nsec && st.st_ctim.tv_sec == now.st_ctim.tv_sec,
                        "run \(o.n): the stamp returned is not the published file's")
            }
        }
        #expect(outcomes.count > 8)
        // The counting run swapped descriptors: the temp opened twice (written, then O_PATH), so the
        // sweep also aimed its faults at the swap.
        #expect(outcomes[0].log.filter { $0.hasPrefix("open") && $0.hasSuffix("page.md.tmp") }.count == 2, "\(outcomes[0].log)")
    }

    /// A page's publish over the file it read (`.only`: the name looked at, then renamed over) or
    /// where there was none (`.nothing`: renameat2's RENAME_NOREPLACE): all or nothing under a fault
    /// at every call, no temp left, and never over a file that was not the one read.
    @Test(arguments: faults, ["only the file read", "nothing"])
    func a_guarded_publish_is_all_or_nothing_under_a_fault_at_every_call(_ fault: SysFault, _ replacing: String) throws {
        let base = TempDir("sweep-publish-guarded")
        let old = "old contents\n", new = String(repeating: "new contents ", count: 50)
        func runDir(_ n: Int) -> String { Path.join(base.path, "run\(n)") }
        let outcomes = try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n in
            try FileManager.default.createDirectory(atPath: Path.join(runDir(n), "tmp"), withIntermediateDirectories: true)
            let guarded: Durable.Replacing
            if replacing == "nothing" {
                guarded = .nothing
            } else {
                try writeText(Path.join(runDir(n), "page.md"), old)
                var st = stat()
                _ = lstat(Path.join(runDir(n), "page.md"), &st)
                guarded = .only(FileStamp(st))
            }
            let dir = try FileDescriptor.open(runDir(n), O_RDONLY | O_DIRECTORY)
            defer { dir.close() }
            let tmp = try FileDescriptor.open(Path.join(runDir(n), "tmp"), O_RDONLY | O_DIRECTORY)
            defer { tmp.close() }
            try Durable.publish(Array(new.utf8), name: "page.md", in: dir, dirPath: runDir(n), via: "page.md.tmp",
                                in: tmp, tempDirPath: Path.join(runDir(n), "tmp"), replacing: guarded)
        } check: { o in
            let dir = runDir(o.n)
            let text = readText(Path.join(dir, "page.md"))
            let before: String? = replacing == "nothing" ? nil : old
            #expect(text == before || text == new, "run \(o.n): torn target; calls: \(o.log)")
            if o.succeeded { #expect(text == new, "run \(o.n) succeeded but left the old file") }
            #expect(listDir(Path.join(dir, "tmp")).isEmpty, "run \(o.n) left a temp file; calls: \(o.log)")
        }
        #expect(outcomes.count > 6)
        // The counting run renamed as the guard says: RENAME_NOREPLACE where there was nothing,
        // a look at the name first where there was a file.
        let renames = outcomes[0].log.filter { $0.hasPrefix("rename") }
        #expect(renames.count == 1, "\(outcomes[0].log)")
        if replacing != "nothing" { #expect(outcomes[0].log.contains { $0.hasPrefix("lstat") && $0.hasSuffix("page.md") }, "\(outcomes[0].log)") }
    }

    /// What another writer put at the name is never replaced: a file where there was none, another
    /// file or a change in place where one was read, or the name emptied: Superseded, nothing moved,
    /// no temp left.
    @Test(arguments: ["a file where there was none", "another file", "a change in place", "the name emptied"])
    func a_guarded_publish_never_replaces_what_it_did_not_read(_ meanwhile: String) throws {
        let dir = TempDir("publish-guarded")
        let page = dir.sub("page.md")
        try FileManager.default.createDirectory(atPath: dir.sub("tmp"), withIntermediateDirectories: true)
        var guarded = Durable.Replacing.nothing
        if meanwhile != "a file where there was none" {
            try writeText(page, "read\n")
            var st = stat()
            _ = lstat(page, &st)
            guarded = .only(FileStamp(st))
        }
        switch meanwhile {
        case "a file where there was none", "another file":
            try writeText(dir.sub("other"), "a phone's save\n")
            #expect(rename(dir.sub("other"), page) == 0)
        case "a change in place":
            // The append changes the size, so the stamp differs even where timestamps are coarse.
            let fd = open(page, O_WRONLY | O_APPEND)
            #expect(write(fd, "typed\n", 6) == 6)
            close(fd)
        default:
            #expect(unlink(page) == 0)
        }
        let before = readText(page)
        #expect(throws: Durable.Superseded(present: meanwhile != "the name emptied")) {
            try Durable.publish(Array("projection\n".utf8), to: page, via: dir.sub("tmp/page.md.tmp"), replacing: guarded)
        }
        #expect(readText(page) == before)
        #expect(listDir(dir.sub("tmp")).isEmpty)
    }

    /// A file system without RENAME_NOREPLACE (some FUSE and network ones answer EINVAL): the name
    /// is looked at, then renamed to plainly where it was empty; a file there is never replaced.
    @Test(arguments: [false, true])
    func a_publish_where_there_was_none_without_renameat2_looks_then_renames(_ fileAppeared: Bool) throws {
        final class NoRenameat2: SysInterposer {
            func before(_ call: SysCall) -> SysFault? { call.op == .rename && call.flags == 1 ? .fail(Errno(EINVAL)) : nil }
            func after(_ call: SysCall, result: Int) {}
        }
        let dir = TempDir("publish-no-renameat2")
        let page = dir.sub("page.md")
        try FileManager.default.createDirectory(atPath: dir.sub("tmp"), withIntermediateDirectories: true)
        if fileAppeared { try writeText(page, "a phone's save\n") }
        let attempt = {
            try Durable.publish(Array("projection\n".utf8), to: page, via: dir.sub("tmp/page.md.tmp"), replacing: .nothing)
        }
        try withInterposer(NoRenameat2()) {
            if fileAppeared {
                #expect(throws: Durable.Superseded(present: true)) { try attempt() }
            } else {
                try attempt()
            }
        }
        #expect(readText(page) == (fileAppeared ? "a phone's save\n" : "projection\n"))
        #expect(listDir(dir.sub("tmp")).isEmpty)
    }

    @Test(arguments: [SysFault.fail(.EIO), .fail(.ENOSPC)])
    func makeDirectory_either_fails_or_leaves_the_whole_tree_and_retries_cleanly(_ fault: SysFault) throws {
        let base = TempDir("sweep-mkdir")
        func target(_ n: Int) -> String { Path.join(base.path, "r\(n)/.outl/captures/tmp") }
        try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n in
            try Durable.makeDirectory(target(n), mode: 0o700)
        } check: { o in
            if o.succeeded {
                let st = try Sys.lstat(target(o.n))
                #expect(st.st_mode & 0o777 == 0o700)
            }
            try Durable.makeDirectory(target(o.n), mode: 0o700)  // once the fault is gone
            #expect((try Sys.lstat(target(o.n))).st_mode & S_IFMT == S_IFDIR)
        }
    }
}
