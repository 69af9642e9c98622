// ChildProcess: running the helpers the writer may use (a prompt dialog, notify-send) with
// posix_spawn. Stdin is /dev/null so a dmenu-style picker offers no choices, only a text field.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

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

    /// Runs `argv` (argv[0] an absolute path), optionally collecting its stdout (up to `limit`
    /// bytes). Returns nil when it could not be started.
    static func run(_ argv: [String], captureOutput: Bool, limit: Int = 1 << 20)
        -> (status: Int32, output: [UInt8])? {
        var fds: [Int32] = [-1, -1]
        if captureOutput && pipe(&fds) != 0 { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_addclose(&actions, fds[1])
        } else {
            // The receipt helper must not write into our stdout, which carries only the id.
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, environ)
        if captureOutput { close(fds[1]) }
        guard rc == 0 else {
            if captureOutput { close(fds[0]) }
            return nil
        }
        var out: [UInt8] = []
        if captureOutput {
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buf.withUnsafeMutableBytes { b in try? Sys.read(fds[0], into: b) } ?? 0
                if n <= 0 { break }
                if out.count < limit { out.append(contentsOf: buf[0..<min(n, limit - out.count)]) }
            }
            close(fds[0])
        }
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return (-1, out) }
        // WIFEXITED / WEXITSTATUS are macros; their Linux encoding is spelled out here.
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), out)
    }
}
