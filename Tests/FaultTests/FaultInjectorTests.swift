// FaultInjectorTests: the injector itself — it counts only what it should, fails exactly the Nth
// call, keeps failing until healed, and Sys reacts to each fault the way the seam promises.
// Serialized: Sys.interposer is a process global (withInterposer also holds a process-wide gate).
import Glibc
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct FaultInjectorTests {
    func writeFile(_ path: String, _ text: String) throws {
        let fd = try Sys.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { Sys.close(fd) }
        try Sys.writeAll(fd, Array(text.utf8))
        try Sys.fsync(fd)
    }

    @Test func counts_only_calls_under_its_directory_including_fd_calls() throws {
        let mine = TempDir("fi-mine"), other = TempDir("fi-other")
        let inj = FaultInjector(match: SysMatch(ops: [.open, .write, .fsync], under: mine.path))
        try withInterposer(inj) {
            try writeFile(mine.sub("a"), "x")
            try writeFile(other.sub("b"), "y")
        }
        #expect(inj.count == 3)
        #expect(inj.log.allSatisfy { $0.hasSuffix(mine.sub("a")) })
    }

    @Test func fails_exactly_the_nth_matching_call() throws {
        let dir = TempDir("fi-nth")
        let inj = FaultInjector(.fail(.EIO), at: 2, match: SysMatch(ops: [.fsync], under: dir.path))
        var errors: [Errno?] = []
        withInterposer(inj) {
            for i in 0..<3 {
                do { try writeFile(dir.sub("f\(i)"), "x"); errors.append(nil) } catch { errors.append(error as? Errno) }
            }
        }
        #expect(errors == [nil, .EIO, nil])
        #expect(inj.injected == 1)
    }

    @Test func fails_every_call_from_the_nth_until_healed() throws {
        let dir = TempDir("fi-heal")
        let inj = FaultInjector(.fail(.ENOSPC), at: 1, untilHealed: true, match: SysMatch(ops: [.write], under: dir.path))
        try withInterposer(inj) {
            #expect(throws: Errno.ENOSPC) { try writeFile(dir.sub("a"), "x") }
            #expect(throws: Errno.ENOSPC) { try writeFile(dir.sub("a"), "x") }
            inj.heal()
            try writeFile(dir.sub("a"), "healed")
        }
        #expect(readText(dir.sub("a")) == "healed")
        #expect(inj.injected == 2)
    }

    @Test func an_injected_eintr_is_retried_inside_sys() throws {
        let dir = TempDir("fi-eintr")
        let inj = FaultInjector(.fail(.EINTR), at: 1, match: SysMatch(ops: [.fsync, .write, .rename], under: dir.path))
        try withInterposer(inj) {
            try writeFile(dir.sub("a"), "one")
        }
        #expect(inj.injected == 1)
        #expect(readText(dir.sub("a")) == "one")
    }

    @Test func a_short_write_is_finished_by_writeAll() throws {
        let dir = TempDir("fi-short")
        let inj = FaultInjector(.shortWrite(2), at: 1, match: SysMatch(ops: [.write], under: dir.path))
        try withInterposer(inj) { try writeFile(dir.sub("a"), "hello world") }
        #expect(readText(dir.sub("a")) == "hello world")
        #expect(inj.injected == 1)
        #expect(inj.count == 2)  // the short write, then the rest
    }

    @Test func a_failed_close_still_releases_the_descriptor() throws {
        let dir = TempDir("fi-close")
        // A high fd number, so a parallel test cannot be handed the same number in between.
        let low = try Sys.open(dir.sub("a"), O_WRONLY | O_CREAT, 0o600)
        let fd = dup2(low, 900)
        Sys.close(low)
        try #require(fd == 900)
        let inj = FaultInjector(.fail(.EIO), at: 1, match: SysMatch(ops: [.close]))
        withInterposer(inj) { Sys.close(fd) }
        #expect(inj.injected == 1)
        #expect(fcntl(fd, F_GETFD) == -1)
    }

    @Test func sweep_runs_once_to_count_then_once_per_call() throws {
        let base = TempDir("fi-sweep")
        let outcomes = try FaultInjector.sweep(.fail(.EIO), match: SysMatch(under: base.path)) { n in
            try writeFile(Path.join(base.path, "f\(n)"), "x")
        }
        // open, write, fsync, close
        #expect(outcomes.map(\.n) == [0, 1, 2, 3, 4])
        #expect(outcomes[0].succeeded && !outcomes[0].injected)
        #expect(outcomes[1...3].allSatisfy { !$0.succeeded && $0.injected })
        #expect(outcomes[4].succeeded)  // a failed close is not reported by Sys.close
    }
}
