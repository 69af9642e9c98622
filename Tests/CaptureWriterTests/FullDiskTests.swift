// A full file system: the writer exits 74, leaves no final file and no temp. Needs to mount a
// 64 KiB tmpfs; where mounting is not permitted the test is skipped, and shows as skipped.
import Foundation
import Testing
import CaptureFormat
import TestSupport

@Test(.enabled(if: canMountTmpfs, "needs to mount a tmpfs (root or CAP_SYS_ADMIN)"))
func a_full_file_system_gives_74_and_leaves_nothing() throws {
    let s = Sandbox()
    let mnt = s.dir.sub("mnt")
    let refused = mountTmpfs(at: mnt, size: "64k")
    try #require(refused == nil, "cannot mount a tmpfs: \(refused ?? "")")
    defer { unmountTmpfs(mnt) }
    let inbox = mnt + "/inbox"
    #expect(try s.capture(["--quiet", "--inbox", inbox, "fits"]).status == 0)
    // Fill every remaining block.
    let fd = open(mnt + "/filler", O_WRONLY | O_CREAT, 0o600)
    var chunk = [UInt8](repeating: 0x41, count: 4096)
    while write(fd, &chunk, chunk.count) > 0 {}
    while write(fd, &chunk, 1) > 0 {}
    close(fd)
    let r = try s.capture(["--inbox", inbox, String(repeating: "x", count: 8000)])
    #expect(r.status == 74, "\(r.stderr)")
    #expect(r.stderr.hasPrefix("outl-capture: cannot save to ") && r.stderr.contains("No space left on device"))
    #expect(r.stdout.isEmpty)
    #expect(try captures(in: inbox).map(\.capture.text) == ["fits"])
    #expect(listDir(inbox + "/tmp").isEmpty)
}
