// SeveralDevicesTests: outld as one device among several sharing a folder, and as the one write actor
// of a workspace on this machine whatever the environment. Real binaries, private HOMEs.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct SeveralDevicesTests {
    @Test func second_outld_with_another_state_directory_exits_75_naming_the_first() throws {
        let h = try OutlHome()
        let d = try h.start()
        #expect(eventually { d.log.contains("ready") })
        // Another state directory and another spelling of the same workspace (a symlink): the
        // device-local lock differs, the workspace's does not.
        let alias = h.tmp.sub("alias")
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: h.workspace)
        let second = try h.outld(["--workspace", alias],
                                 extraEnv: ["XDG_STATE_HOME": h.tmp.sub("other-state")])
        #expect(second.status == 75, "\(second.stderr)")
        #expect(second.stderr.contains("pid \(d.pid)"), "stderr: \(second.stderr)")
        #expect(h.opsFiles().count <= 1, "a second actor left an ops file: \(h.opsFiles())")
        #expect(!FileManager.default.fileExists(atPath: h.tmp.sub("other-state/outl")),
                "the refused outld minted device state")
        #expect(d.stop() == 0)
    }
}
