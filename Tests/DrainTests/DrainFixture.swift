// DrainFixture: a real workspace and a real inbox in a temp directory, plus helpers to drop
// capture files the way outl-capture does and to read back what landed.
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import TestSupport
import Workspace

extension ULID {
    /// The block id the SPEC gives this capture, spelled as the op log and the pages spell it.
    var uuidString: String { BlockID(capture: self).description }
}

/// An observer that forgets everything, for tests that only want the report.
final class SilentDrainObserver: DrainObserver {
    func drained(_ capture: DrainedCapture) {}
    func rejected(inbox: String, name: String, reason: String) {}
    func warning(inbox: String, name: String, message: String) {}
}

final class RecordingObserver: DrainObserver {
    var drainedCaptures: [DrainedCapture] = []
    var rejections: [(name: String, reason: String)] = []
    var warnings: [String] = []
    func drained(_ capture: DrainedCapture) { drainedCaptures.append(capture) }
    func rejected(inbox: String, name: String, reason: String) { rejections.append((name, reason)) }
    func warning(inbox: String, name: String, message: String) { warnings.append("\(name): \(message)") }
}

final class DrainFixture {
    let tmp: TempDir
    let root: String
    let state: String
    let inbox: String
    var generator = ULIDGenerator()
    let io: BatchIO

    init(plainIO: Bool = false, under base: String? = nil) throws {
        tmp = TempDir("drain", under: base)
        root = tmp.sub("ws")
        state = tmp.sub("state")
        inbox = Path.join(root, ".outl/captures")
        try Inbox.ensure(inbox)
        io = BatchIO.make(forcePlain: plainIO)
    }

    func open(root: String? = nil, state: String? = nil) throws -> Workspace {
        var o = WorkspaceOptions(root: root ?? self.root)
        o.stateDirectory = state ?? self.state
        return try Workspace(options: o)
    }

    /// Drops a capture exactly as the writer does; returns its id.
    @discardableResult
    func drop(_ text: String, at: String? = nil, source: String? = "test", into dir: String? = nil,
              id: ULID? = nil) throws -> ULID {
        let id = id ?? generator.next()
        let bytes = CaptureFile.encode(Capture(text: text, capturedAt: at, source: source))
        _ = try Inbox.deliver(bytes, id: id, to: dir ?? inbox)
        return id
    }

    /// Delivers a capture with attachments exactly as outl-capture does (each staged from a file,
    /// published, then the capture file); returns its id.
    @discardableResult
    func dropWithAttachments(_ text: String, _ files: [(name: String, bytes: [UInt8])], at: String? = "2026-12-02T09:00:00Z",
                             id: ULID? = nil, into dir: String? = nil) throws -> ULID {
        let id = id ?? generator.next()
        let target = dir ?? inbox
        let open = try Inbox.openForDelivery(target, workspace: nil)
        defer { open.close() }
        var staged: [StagedAttachment] = []
        for (k, f) in files.enumerated() {
            let src = tmp.sub("src-\(id.string)-\(k)")
            try Data(f.bytes).write(to: URL(fileURLWithPath: src))
            let fd = try FileDescriptor.open(src, O_RDONLY)
            defer { fd.close() }
            staged.append(try AttachmentDelivery.stage(from: fd.rawValue, name: f.name, limit: 1 << 30, inbox: open, at: target, index: k + 1))
        }
        let attachments = try AttachmentDelivery.publish(staged, id: id, inbox: open, at: target)
        _ = try Inbox.deliver(CaptureFile.encode(Capture(text: text, capturedAt: at, source: "test", attachments: attachments)),
                              id: id, to: open, at: target)
        return id
    }

    /// The files of assets/, temps and all.
    func assets() -> [String] { listDir(Path.join(root, "assets")).sorted() }

    func assetBytes(_ name: String) -> [UInt8] {
        (try? Durable.readRegularFile(Path.join(root, "assets/\(name)"), limit: 1 << 30)) ?? []
    }

    /// Writes raw bytes under a final-form name, bypassing the writer (hostile or odd input).
    @discardableResult
    func dropRaw(_ bytes: [UInt8], id: ULID? = nil) throws -> String {
        let name = CaptureName.fileName(for: id ?? generator.next())
        try Data(bytes).write(to: URL(fileURLWithPath: Path.join(inbox, name)))
        return name
    }

    func drain(_ ws: Workspace, inboxes: [String]? = nil, observer: DrainObserver = SilentDrainObserver()) async -> DrainReport {
        await drain_capture_inbox(inboxes ?? [inbox], into: ws, io: io, observer: observer)
    }

    func journal(_ day: String, root: String? = nil) -> String {
        readText(Path.join(root ?? self.root, "journals/\(day.replacingOccurrences(of: "-", with: "_")).md")) ?? ""
    }

    func pending() -> [String] { listDir(inbox).filter { CaptureName.isFinal($0) } }

    /// Every op-log line that mentions `blockID`, across all actors' files.
    func opLines(mentioning blockID: String, root: String? = nil) -> [String] {
        let dir = Path.join(root ?? self.root, ".outl/ops")
        return listDir(dir).flatMap { f in
            (readText(Path.join(dir, f)) ?? "").split(separator: "\n").map(String.init).filter { $0.contains(blockID) }
        }
    }
}

func occurrences(of needle: String, in haystack: String) -> Int {
    haystack.components(separatedBy: needle).count - 1
}

/// Today in this machine's zone, as YYYY-MM-DD.
func localToday() -> String {
    let f = DateFormatter()
    f.dateFormat = "yyyy-MM-dd"
    return f.string(from: Date())
}
