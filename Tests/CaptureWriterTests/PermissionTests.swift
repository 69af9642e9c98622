// A permission problem is 77 (EX_NOPERM), not 73 or 74: the writer run as a user who may not
// write the inbox. As root the test drops to nobody with setpriv; any other user already is one.
import Foundation
import Testing
import CaptureFormat
import TestSupport

/// Runs `exe` as an unprivileged user (root drops to nobody; anyone else runs as themselves).
func runUnprivileged(_ exe: String, _ args: [String], env: [String: String]) throws -> ProcessResult {
    if geteuid() == 0 {
        return try run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", exe] + args, env: env)
    }
    return try run(exe, args, env: env)
}

@Test(.enabled(if: geteuid() != 0 || access("/usr/bin/setpriv", X_OK) == 0, "as root, needs setpriv to drop privileges"))
func permission_denied_is_77_and_saves_nothing() throws {
    let s = Sandbox()
    let locked = s.dir.sub("locked")
    try FileManager.default.createDirectory(atPath: locked + "/inbox/tmp", withIntermediateDirectories: true)
    chmod(locked + "/inbox", 0o500)  // exists, but this user may not add to it
    chmod(locked, 0o755)
    chmod(s.dir.path, 0o755)
    defer { chmod(locked + "/inbox", 0o700) }
    // Into an inbox that exists but may not be written to, and into one that may not be created.
    for inbox in [locked + "/inbox", locked + "/inbox/new"] {
        let r = try runUnprivileged(writer, ["--inbox", inbox, "x"], env: s.baseEnv)
        #expect(r.status == 77, "\(inbox): \(r.stderr)")
        #expect(r.stderr.hasPrefix("outl-capture: ") && r.stderr.contains("Permission denied"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }
    #expect(listDir(locked + "/inbox").filter(CaptureName.isFinal).isEmpty)
    #expect(listDir(locked + "/inbox/tmp").isEmpty)
}
