// ChildProcess: running the helpers the writer may use (a prompt dialog, a clipboard reader,
// notify-send) with posix_spawn. Stdin is /dev/null unless given, so a dmenu-style picker offers no
// choices, only a text field. A helper's stderr is collected, never passed through: our stderr
// carries only lines of ours, and a helper's complaint is quoted in the one error line we print.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

struct ChildResult {
    /// The exit status, or 128 + the signal that ended it.
    var status: Int32
    var output: [UInt8]
    var errors: [UInt8]

    /// The helper's last non-empty stderr line, for an error message.
    var complaint: String? {
        let lines = String(decoding: errors, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\r" })
        return lines.last.map { String($0.prefix(200)) }
    }
}

enum ChildProcess {
    /// The first executable `name` on `$PATH` (or `name` itself when it contains a slash).
    static func find(_ name: String, path: String?) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for dir in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = Path.join(String(dir), name)
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `argv` (argv[0] an absolute path) to its end with `input` on its stdin (else
    /// /dev/null) and `environment` added to ours. Stdout is collected up to `limit` bytes (else
    /// discarded: the receipt helper must not write into our stdout, which carries only the id).
    /// Returns nil when it could not be started.
    static func run(_ argv: [String], input: [UInt8]? = nil, captureOutput: Bool, limit: Int = 1 << 20,
                    environment: [String] = []) -> ChildResult? {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1], inPipe: [Int32] = [-1, -1]
        defer { for fd in outPipe + errPipe + inPipe where fd >= 0 { close(fd) } }
        guard makePipe(&errPipe) else { return nil }
        if captureOutput && !makePipe(&outPipe) { return nil }
        if input != nil && !makePipe(&inPipe) { return nil }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var env: [String] = []
        var e = environ
        while let p = e.pointee { env.append(String(cString: p)); e += 1 }
        for extra in environment {
            let key = extra.prefix { $0 != "=" } + "="
            env.removeAll { $0.hasPrefix(key) }
            env.append(extra)
        }
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv) == 0 else { return nil }
        // Our copies of the child's ends go now, so its exit is seen as end of file.
        for fd in [inPipe[0], outPipe[1], errPipe[1]] where fd >= 0 { close(fd) }
        inPipe[0] = -1; outPipe[1] = -1; errPipe[1] = -1

        if let input {
            input.withUnsafeBytes { b in
                var done = 0
                while done < b.count {
                    let n = write(inPipe[1], b.baseAddress! + done, b.count - done)
                    if n <= 0 { break }  // the helper does not read its stdin: fine
                    done += n
                }
            }
            close(inPipe[1]); inPipe[1] = -1
        }
        var result = ChildResult(status: -1, output: [], errors: [])
        collect(out: outPipe[0], err: errPipe[0], limit: limit, into: &result)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS are macros; their Linux encoding is spelled out here.
        result.status = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return result
    }

    /// A pipe whose ends close on exec: the child gets only the ends dup'd onto 0, 1 and 2.
    static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Reads stdout (when `out` >= 0) and stderr together until both end, so a helper that fills
    /// one pipe cannot block while we wait on the other.
    static func collect(out: Int32, err: Int32, limit: Int, into r: inout ChildResult) {
        var fds = [pollfd(fd: err, events: Int16(POLLIN), revents: 0)]
        if out >= 0 { fds.append(pollfd(fd: out, events: Int16(POLLIN), revents: 0)) }
        var buf = [UInt8](repeating: 0, count: 4096)
        while fds.contains(where: { $0.fd >= 0 }) {
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            for k in fds.indices where fds[k].fd >= 0 && fds[k].revents != 0 {
                let n = buf.withUnsafeMutableBytes { read(fds[k].fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { fds[k].fd = -1; continue }
                if fds[k].fd == out {
                    if r.output.count < limit { r.output.append(contentsOf: buf[0..<min(n, limit - r.output.count)]) }
                } else if r.errors.count < 4096 {
                    r.errors.append(contentsOf: buf[0..<min(n, 4096 - r.errors.count)])
                }
            }
        }
    }
}
