// OutldProcess: runs the real outld and outl-capture binaries in a private HOME, with helpers to
// wait (bounded) for what a user would see: the inbox emptying, a line in a journal page.
import CaptureFormat
import Foundation
import SystemCalls
import TestSupport

final class OutlHome {
    let tmp = TempDir("outld")
    var home: String { tmp.sub("home") }
    var workspace: String { Path.join(home, "outl") }
    var inbox: String { Path.join(workspace, ".outl/captures") }

    /// `workspace`: the default workspace exists, as outld's first start leaves it (nothing but the
    /// daemon creates one, so a writer or `outld --once` needs it there).
    init(workspace: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        if workspace { try FileManager.default.createDirectory(atPath: self.workspace, withIntermediateDirectories: true) }
    }

    var env: [String: String] {
        ["HOME": home, "XDG_CONFIG_HOME": Path.join(home, ".config"), "XDG_STATE_HOME": Path.join(home, ".local/state"),
         "NOTIFY_SOCKET": "", "JOURNAL_STREAM": "", "WATCHDOG_USEC": ""]
    }

    @discardableResult
    func capture(_ words: [String], extra: [String] = []) throws -> ProcessResult {
        try run(binPath("outl-capture"), extra + words, env: env)
    }

    func captureID(_ text: String, at: String = "2026-12-02T10:00:00Z") throws -> String {
        let r = try capture([text], extra: ["--quiet", "--at", at])
        precondition(r.status == 0, "outl-capture failed: \(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func outld(_ args: [String], extraEnv: [String: String] = [:]) throws -> ProcessResult {
        try run(binPath("outld"), args + ["--log", "stderr"], env: env.merging(extraEnv) { $1 })
    }

    func start(_ args: [String] = [], extraEnv: [String: String] = [:]) throws -> RunningOutld {
        try RunningOutld(args: args, env: env.merging(extraEnv) { $1 }, logPath: tmp.sub("outld-\(UUID().uuidString).log"))
    }

    func journal(_ day: String = "2026_12_02") -> String {
        readText(Path.join(workspace, "journals/\(day).md")) ?? ""
    }

    func pending() -> [String] { listDir(inbox).filter { CaptureName.isFinal($0) } }

    func opsFiles() -> [String] { listDir(Path.join(workspace, ".outl/ops")).filter { $0.hasPrefix("ops-") } }
}

final class RunningOutld {
    let process = Process()
    let logPath: String

    init(args: [String], env: [String: String], logPath: String) throws {
        self.logPath = logPath
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: binPath("outld"))
        process.arguments = args + ["--log", "stderr"]
        var e = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OUTL_") }
        for (k, v) in env { if v.isEmpty { e.removeValue(forKey: k) } else { e[k] = v } }
        process.environment = e
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var log: String { readText(logPath) ?? "" }

    func signal(_ s: Int32) { kill(pid, s) }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { kill(pid, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL); process.waitUntilExit() }
    }
}

/// Waits up to `seconds` for `condition` (a test may poll; outld never does).
@discardableResult
func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
