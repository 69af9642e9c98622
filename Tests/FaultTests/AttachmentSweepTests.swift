// AttachmentSweepTests: the writer's and the drain's attachment paths under a fault at every file
// operation (fail the Nth call, for every N). Invariants: the writer says "saved" only when both
// attachments and the capture file are durable and whole, and a failure leaves nothing of the
// capture (no final file, no attachment, no temp); a drain never appends a block without its assets
// in place, never writes an asset twice or beside a stray temp, and a clean retry lands it once.
import BatchIO
import CaptureFormat
import CaptureInbox
import Drain
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite(.serialized) struct AttachmentSweepTests {
    static let faults: [SysFault] = [.fail(.EIO), .fail(.ENOSPC), .fail(.EINTR), .shortWrite(7)]
    static let files: [(name: String, bytes: [UInt8])] = [
        ("one.png", [0x89, 0x50, 0x4E, 0x47] + (0..<5000).map { UInt8($0 % 251) }),
        ("two.txt", Array("the second attachment".utf8)),
    ]

    /// What outl-capture does for `--attach one.png --attach two.txt caption` (CaptureMain.save).
    static func deliver(_ id: ULID, inbox: String, sources: String) throws {
        try Inbox.ensure(inbox)
        let dir = try Inbox.openForDelivery(inbox, workspace: nil)
        defer { dir.close() }
        var staged: [StagedAttachment] = []
        do {
            for (k, f) in files.enumerated() {
                let src = try FileDescriptor.open(Path.join(sources, f.name), O_RDONLY)
                defer { src.close() }
                staged.append(try AttachmentDelivery.stage(from: src.rawValue, name: f.name, limit: 1 << 20, inbox: dir, at: inbox, index: k + 1))
            }
        } catch {
            AttachmentDelivery.discard(staged, inbox: dir, at: inbox)
            throw error
        }
        let published = try AttachmentDelivery.publish(staged, id: id, inbox: dir, at: inbox)
        let bytes = CaptureFile.encode(Capture(text: "caption zq", capturedAt: "2026-12-02T09:00:00+01:00", source: "fault", attachments: published))
        do { _ = try Inbox.deliver(bytes, id: id, to: dir, at: inbox) } catch {
            AttachmentDelivery.discard([], published: published, inbox: dir, at: inbox)
            throw error
        }
    }

    static func writeSources(_ dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for f in files { try Data(f.bytes).write(to: URL(fileURLWithPath: Path.join(dir, f.name))) }
    }

    @Test(arguments: faults)
    func a_capture_with_attachments_is_saved_whole_or_not_at_all(_ fault: SysFault) throws {
        let base = TempDir("att-writer")
        let sources = base.sub("sources")
        try Self.writeSources(sources)
        func inbox(_ n: Int) -> String { Path.join(base.path, "r\(n)/.outl/captures") }
        var gen = ULIDGenerator()
        let id = gen.next()
        let outcomes = try FaultInjector.sweep(fault, match: SysMatch(under: base.path)) { n in
            try Self.deliver(id, inbox: inbox(n), sources: sources)
        } check: { o in
            let names = listDir(inbox(o.n)).filter { $0 != "tmp" }.sorted()
            if o.succeeded {
                let want = [CaptureName.attachmentFileName(for: id, index: 1), CaptureName.attachmentFileName(for: id, index: 2),
                            CaptureName.fileName(for: id)]
                #expect(names == want, "run \(o.n): \(names)")
                let capture = try CaptureFile.decode(try Durable.readRegularFile(Path.join(inbox(o.n), CaptureName.fileName(for: id)), limit: 1 << 20))
                for (k, f) in Self.files.enumerated() {
                    let got = try Durable.readRegularFile(Path.join(inbox(o.n), capture.attachments[k].file), limit: 1 << 20)
                    #expect(got == f.bytes && capture.attachments[k].sha256 == SHA256.hex(f.bytes) && capture.attachments[k].size == f.bytes.count,
                            "run \(o.n): attachment \(k + 1)")
                }
            } else {
                #expect(names.isEmpty, "run \(o.n) failed (\(o.error!)) but left \(names); calls \(o.log)")
            }
            #expect(listDir(Path.join(inbox(o.n), Inbox.tempDirName)).isEmpty, "run \(o.n) left a temp; calls \(o.log)")
        }
        if fault == .fail(.EINTR) || fault == .shortWrite(7) {
            #expect(outcomes.allSatisfy { $0.succeeded }, "EINTR and short writes are absorbed by Sys")
        } else {
            #expect(outcomes.contains { !$0.succeeded && $0.injected })
            let kinds = Set(outcomes[0].log.map { String($0.split(separator: " ")[0]) })
            for k in ["open", "read", "write", "fsync", "rename"] { #expect(kinds.contains(k), "\(kinds)") }
        }
    }

    @Test(arguments: faults, [true, false])
    func a_drain_of_attachments_faulted_at_any_call_never_links_a_missing_asset_nor_writes_one_twice(
        _ fault: SysFault, plain: Bool
    ) async throws {
        let base = TempDir("att-drain")
        let sources = base.sub("sources")
        try Self.writeSources(sources)
        var total = 0, n = 0
        repeat {
            let run = RealRun(dir: base.sub("r\(n)"))
            var gen = ULIDGenerator()
            let id = gen.next()
            try Self.deliver(id, inbox: run.inbox, sources: sources)
            _ = try run.deliver(1, from: 0)  // a text capture beside it
            let inj = FaultInjector(n == 0 ? nil : fault, at: max(n, 1), match: SysMatch(under: run.dir))
            inj.armed = false
            let io = BatchIO.make(forcePlain: plain)
            let report: DrainReport = try await withInterposer(inj) {
                let ws = try run.open(io)
                inj.armed = true
                let r = await drain_capture_inbox([run.inbox], into: ws, io: io, observer: SilentDrainObserver(), options: RealRun.options)
                inj.armed = false
                await ws.close()
                return r
            }
            if n == 0 {
                total = inj.count
                #expect(report.drained == 2 && report.transientError == nil, "counting run: \(report)")
            }
            let assets = listDir(Path.join(run.root, "assets")).sorted()
            let expected = Self.files.map { AssetLinkName.of($0.name, id: id, bytes: $0.bytes) }.sorted()
            // Whatever the fault did: a block that links them means both assets are there, whole.
            let ops = listDir(Path.join(run.root, ".outl/ops")).compactMap { readText(Path.join(run.root, ".outl/ops/\($0)")) }.joined()
            if ops.contains("caption zq") {
                #expect(Set(expected).isSubset(of: Set(assets)), "run \(n): the block was appended without its assets: \(assets); calls \(inj.log)")
            }
            #expect(report.rejected == 0 && run.rejected().isEmpty, "run \(n): a transient fault rejected a good file: \(report)")
            // A clean retry lands both captures once, both assets once, no temp.
            let (ws, r) = try await run.bootAndDrain(BatchIO.make(forcePlain: plain))
            await ws.close()
            #expect(r.transientError == nil && r.waiting.isEmpty, "run \(n): clean drain after the fault: \(r)")
            #expect(listDir(Path.join(run.root, "assets")).sorted() == expected, "run \(n): \(listDir(Path.join(run.root, "assets"))); calls \(inj.log)")
            for f in Self.files {
                let got = try Durable.readRegularFile(Path.join(run.root, "assets/\(AssetLinkName.of(f.name, id: id, bytes: f.bytes))"), limit: 1 << 20)
                #expect(got == f.bytes, "run \(n): asset of \(f.name)")
            }
            let page = run.journal()
            #expect(run.occurrences("caption zq", in: page) == 1 && run.occurrences(RealRun.text(0), in: page) == 1, "run \(n): \(page)")
            #expect(listDir(run.inbox).sorted() == ["tmp"], "run \(n): \(listDir(run.inbox))")
            n += 1
        } while n <= total
        #expect(total > 20, "the drain of attachments has more calls than that")
    }
}

/// The asset name the drain gives an attachment (the rule of AttachmentStage's AssetNames, spelled
/// out here for these plain names: stem, capture ms, 8 hex of the hash, extension).
enum AssetLinkName {
    static func of(_ name: String, id: ULID, bytes: [UInt8]) -> String {
        let dot = name.lastIndex(of: ".")!
        return "\(name[..<dot])_\(id.timestampMs)_\(SHA256.hex(bytes).prefix(8)).\(name[name.index(after: dot)...])"
    }
}
