// PowerLossTests: the recording file system's crash states, proved on Durable.publish and on the
// mirror protocols — what a protocol reported as saved survives every state a power cut could
// leave, nothing is doubled, boot succeeds; and the model does catch the classic ALICE bugs.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct PowerLossTests {
    func record(_ root: String, _ body: () throws -> Void) rethrows -> RecordingFS {
        let fs = RecordingFS(root: root)
        try withInterposer(fs, body)
        return fs
    }

    @Test func a_file_published_with_publish_survives_every_crash_state_after_publish_returned() throws {
        let dir = TempDir("pl-publish")
        try writeText(dir.sub("page.md"), "old")
        try FileManager.default.createDirectory(atPath: dir.sub(".tmp"), withIntermediateDirectories: false)
        var returnedAt = -1
        let fs = try record(dir.path) {
            try Durable.publish(Array("new page".utf8), to: dir.sub("page.md"), via: dir.sub(".tmp/page.md"))
        }
        returnedAt = fs.count
        #expect(fs.allCrashStates().count > returnedAt)
        for state in fs.allCrashStates() {
            let text = state.text("page.md")
            #expect(text == "old" || text == "new page", "\(state): \(String(describing: text))\n\(fs.opDescriptions)")
            if state.point >= returnedAt { #expect(text == "new page", "\(state)") }
        }
    }

    @Test func a_rename_without_a_directory_fsync_can_be_lost() throws {
        let dir = TempDir("pl-alice")
        try FileManager.default.createDirectory(atPath: dir.sub("inbox"), withIntermediateDirectories: false)
        let fs = try record(dir.path) {
            try mirrorDeliver(Array("{}".utf8), name: "A.json", inbox: dir.sub("inbox"), syncInbox: false)
        }
        let lost = fs.crashStates(at: fs.count).filter { $0.contents("inbox/A.json") == nil }
        #expect(!lost.isEmpty, "the model must show the capture can vanish without the inbox fsync")
    }

    @Test func a_maildir_delivery_survives_every_crash_state_after_it_returned() throws {
        let dir = TempDir("pl-deliver")
        try FileManager.default.createDirectory(atPath: dir.sub("inbox"), withIntermediateDirectories: false)
        let body = Array(#"{"text":"buy oat milk"}"#.utf8)
        let fs = try record(dir.path) {
            try mirrorDeliver(body, name: "A.json", inbox: dir.sub("inbox"))
        }
        for state in fs.crashStates(at: fs.count) {
            #expect(state.contents("inbox/A.json") == body, "\(state)")
        }
        // Before it returned, the final name holds the whole capture or is absent: never torn.
        for state in fs.allCrashStates() {
            if let got = state.contents("inbox/A.json") { #expect(got == body, "\(state)\n\(fs.opDescriptions)") }
        }
    }

    @Test func an_append_before_fdatasync_may_be_torn_and_boot_cuts_it() throws {
        let dir = TempDir("pl-torn")
        try writeText(dir.sub("ops.jsonl"), "")
        let fs = try record(dir.path) {
            let fd = try Sys.open(dir.sub("ops.jsonl"), O_WRONLY | O_APPEND, 0)
            defer { Sys.close(fd) }
            try Sys.writeAll(fd, Array("A \(String(fnv32(Array("A".utf8)), radix: 16))\n".utf8))
        }
        let states = fs.crashStates(at: fs.count)
        let torn = states.filter { s in
            let b = s.contents("ops.jsonl") ?? []
            return !b.isEmpty && MirrorOpLog.validLength(b) < b.count
        }
        #expect(!torn.isEmpty, "an un-synced append must have torn crash states")
        #expect(states.contains { $0.contents("ops.jsonl") == [] }, "and a state where it never happened")
        for s in torn { #expect(MirrorOpLog.boot(s.contents("ops.jsonl")!) == [], "\(s)") }
    }

    @Test func an_append_made_durable_by_the_appender_is_never_torn_after_it_returned() throws {
        let dir = TempDir("pl-append")
        try FileManager.default.createDirectory(atPath: dir.sub("ops"), withIntermediateDirectories: false)
        var marks: [Int] = []
        let fs = RecordingFS(root: dir.path)
        try withInterposer(fs) {
            let log = try MirrorOpLog(dir.sub("ops/ops-a.jsonl"))
            for id in ["A", "B", "C"] {
                try log.append(id)
                marks.append(fs.count)
            }
        }
        for state in fs.allCrashStates() {
            let ids = MirrorOpLog.boot(state.contents("ops/ops-a.jsonl") ?? [])
            let saved = ["A", "B", "C"].enumerated().filter { state.point >= marks[$0.offset] }.map(\.element)
            #expect(Array(ids.prefix(saved.count)) == saved, "\(state): \(ids)\n\(fs.opDescriptions)")
        }
    }

    @Test func a_new_log_file_without_a_directory_fsync_can_vanish() throws {
        let dir = TempDir("pl-newlog")
        let fs = try record(dir.path) {
            let fd = try Sys.open(dir.sub("ops.jsonl"), O_WRONLY | O_CREAT | O_APPEND, 0o600)
            defer { Sys.close(fd) }
            try Array("A\n".utf8).withUnsafeBytes { try PlainAppender().appendDurably(fd, $0) }
        }
        #expect(fs.crashStates(at: fs.count).contains { $0.contents("ops.jsonl") == nil })
    }

    /// A drain whose log does not cut a torn tail before appending hides the new record behind
    /// the garbage, and the capture, already unlinked, is lost: the model must find that state.
    @Test func a_log_that_appends_after_a_torn_tail_loses_the_capture() throws {
        let dir = TempDir("pl-tail")
        try FileManager.default.createDirectory(atPath: dir.sub("inbox"), withIntermediateDirectories: false)
        try writeText(dir.sub("inbox/01A.json"), "{}")
        try writeText(dir.sub("ops.jsonl"), "")
        let fs = try record(dir.path) {
            _ = try mirrorDrain(inbox: dir.sub("inbox"), log: try MirrorOpLog(dir.sub("ops.jsonl")))
        }
        func loses(cutTornTail: Bool) throws -> Bool {
            for state in fs.allCrashStates() {
                let after = TempDir("pl-tail-boot")
                try state.write(to: after.path)
                let log = try MirrorOpLog(Path.join(after.path, "ops.jsonl"), cutTornTail: cutTornTail)
                _ = try mirrorDrain(inbox: Path.join(after.path, "inbox"), log: log)
                if try MirrorOpLog.boot(path: Path.join(after.path, "ops.jsonl")) != ["01A"] { return true }
            }
            return false
        }
        #expect(try loses(cutTornTail: false))
        #expect(try !loses(cutTornTail: true))
    }

    /// The whole path: two deliveries, then a drain into the op log. At every crash point, in
    /// every state: boot succeeds, a re-drain succeeds, every capture whose delivery returned
    /// before the crash is in the log exactly once, and the inbox is empty afterwards.
    @Test func deliver_then_drain_loses_nothing_and_doubles_nothing_at_any_crash() throws {
        let dir = TempDir("pl-drain")
        for d in ["ws/.outl/captures", "ws/.outl/ops"] {
            try FileManager.default.createDirectory(atPath: dir.sub(d), withIntermediateDirectories: true)
        }
        let inbox = ".outl/captures", logPath = ".outl/ops/ops-a.jsonl"
        let ws = dir.sub("ws")
        var savedAt: [String: Int] = [:]
        let fs = RecordingFS(root: ws)
        try withInterposer(fs) {
            for id in ["01A", "01B"] {
                try mirrorDeliver(Array(#"{"text":"\#(id)"}"#.utf8), name: "\(id).json", inbox: Path.join(ws, inbox))
                savedAt[id] = fs.count
            }
            let log = try MirrorOpLog(Path.join(ws, logPath))
            #expect(try mirrorDrain(inbox: Path.join(ws, inbox), log: log) == 2)
        }
        var checked = 0
        for state in fs.allCrashStates() {
            let after = TempDir("pl-boot")
            try state.write(to: after.path)
            let log = try MirrorOpLog(Path.join(after.path, logPath))
            _ = try mirrorDrain(inbox: Path.join(after.path, inbox), log: log)
            let bytes = try Durable.readRegularFile(Path.join(after.path, logPath), limit: 1 << 20)
            let raw = MirrorOpLog.records(bytes).ids
            for (id, at) in savedAt where state.point >= at {
                #expect(raw.filter { $0 == id }.count == 1, "\(state): \(id) in \(raw) files \(state.files.keys.sorted())\n\(fs.opDescriptions)")
            }
            #expect(Set(raw).count == raw.count, "\(state): doubled \(raw)")
            #expect(listDir(Path.join(after.path, inbox)).filter { $0.hasSuffix(".json") }.isEmpty)
            checked += 1
        }
        #expect(checked > 20)
    }
}
