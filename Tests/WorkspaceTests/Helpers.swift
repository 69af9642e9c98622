// Helpers for the workspace tests: a workspace in a TempDir with its own device state dir, and
// captures with fresh ids. Everything runs on real files.
import SystemCalls
import TestSupport
import Workspace

final class TestWorkspace {
    let dir = TempDir("outl-ws")
    var root: String { dir.sub("root") }
    /// A device-local state dir; a second one stands for a second device syncing the same folder.
    func state(_ device: String = "a") -> String { dir.sub("state-\(device)") }

    /// Overrides how long unexplained page content waits for other devices' ops.
    var syncSettleMs: Int64? = nil
    /// outld.conf's page-properties.
    var pageProperties = PageProperties.none

    func open(device: String = "a") throws -> Workspace {
        var o = WorkspaceOptions(root: root)
        o.stateDirectory = state(device)
        o.log = .silent
        o.pageProperties = pageProperties
        if let s = syncSettleMs { o.syncSettleMs = s }
        return try Workspace(options: o)
    }

    func journal(_ day: JournalDay) -> String { Path.join(root, "journals/\(day.fileStem).md") }
}

let day1 = JournalDay(year: 2026, month: 12, day: 2)!

func capture(_ text: String, id: String = BlockIDs.fresh(), day: JournalDay = day1) -> CaptureBlock {
    CaptureBlock(id: id, day: day, text: text, capturedAt: "2026-12-02T09:00:00.000+01:00", source: "cli")
}
