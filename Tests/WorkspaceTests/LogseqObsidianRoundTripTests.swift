// Pages as Logseq and Obsidian save them, written here by hand from those tools' own rules (not
// from our projection), reconcile through the real Workspace to exactly the person's edit: nothing
// lost, nothing invented, no id changed, properties kept; and the page projected afterwards reads
// back the same, in Logseq too (LogseqRules), and is stable.
// Logseq (file graphs, `frontend/common/file/core.cljs` `transform-content` and `tree->file-content`,
// `graph_parser` property insertion): it rewrites the whole page from its blocks when one is
// edited; children indented with a tab (`:export/bullet-indentation :tab`, the default); continuation
// lines indented with the parent's tabs and two spaces; a block's stored lines (our properties
// included) re-emitted as they were; `collapsed:: true` and a referenced block's `id::` appended to
// the block's property group; a clock in a `:LOGBOOK:` drawer after the properties; an empty block
// written as `-`; the page's first block, when a heading, written without its bullet; blocks joined
// with newlines and no newline at the end of the file.
// Obsidian (its editor, "Indent using tabs" on by default): it saves what the person typed, the rest
// of the file as it was; page properties as YAML front matter; a block id as ` ^id` at a line's end.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

private let stamp = "2026-12-02T09:00:00.000+01:00"
private let ids = [
    "01a2380f-0000-7000-8000-000000000001", "01a2380f-0000-7000-8000-000000000002",
    "01a2380f-0000-7000-8000-000000000003", "01a2380f-0000-7000-8000-000000000004",
    "01a2380f-0000-7000-8000-000000000005",
]
private let captured = ["# Meeting notes", "buy oat milk", "call mum\nabout the trip", "```swift\nlet x = 1\n```",
                        "TODO renew passport"]

/// The day's page after the five captures, projected; returns the open workspace.
private func capturedPage(_ t: TestWorkspace) async throws -> Workspace {
    let ws = try t.open()
    _ = try await ws.appendCaptures(zip(captured, ids).map { capture($0, id: $1) })
    _ = try await ws.projectDirtyPages()
    return ws
}

/// Writes a file in place (same inode, as Logseq's and Obsidian's fs.writeFile do).
private func saveInPlace(_ path: String, _ text: String) throws {
    let fd = try Sys.open(path, O_WRONLY | O_TRUNC, 0)
    defer { Sys.close(fd) }
    try Sys.writeAll(fd, Array(text.utf8))
}

/// Writes a file by rename (another device's copy arriving through a sync tool).
private func saveByRename(_ path: String, _ text: String) throws {
    try Durable.publish(Array(text.utf8), to: path, via: path + ".sync.tmp")
}

private func props(_ id: String) -> String { "captured-at:: \(stamp)\n{i}source:: cli\n{i}id:: \(id)" }

/// The page as Logseq saves it after the person, in Logseq, edited block 2, gave block 3 a child and
/// collapsed it, started the clock on block 5, added a block another one references, and an empty one.
private let logseqSaved: String = {
    func p(_ n: Int, _ indent: String) -> String { props(ids[n]).replacingOccurrences(of: "{i}", with: indent) }
    return """
    # Meeting notes
    \(p(0, ""))
    - buy oat milk and bread
      \(p(1, "  "))
    - call mum
      \(p(2, "  "))
      collapsed:: true
      about the trip
    \t- book flights
    - ```swift
      let x = 1
      ```
      \(p(3, "  "))
    - DOING renew passport
      \(p(4, "  "))
      :LOGBOOK:
      CLOCK: [2026-12-02 Wed 10:00:00]
      :END:
    - follow up on ((\(ids[4])))
      id:: 6574a3b2-0000-4000-8000-00000000abcd
    -
    """
}()

/// The blocks of the day as the model holds them, read from a projected page: (depth, id, text, props).
private func outline(_ page: [UInt8]) -> [(Int, String, String, [Property])] {
    var out: [(Int, String, String, [Property])] = []
    func walk(_ bs: [MDBlock], _ depth: Int) {
        for b in bs { out.append((depth, b.id?.description ?? "-", b.text, b.props)); walk(b.children, depth + 1) }
    }
    walk(Markdown.parse(page).blocks, 0)
    return out
}

/// What a capture's page shows of its record: nothing (CaptureRecord), whatever the saved page held.
private let capturedProps: [Property] = []

/// Whether the model still holds every capture's record, as `outl show --details` shows it.
private func recordsKept(_ ws: Workspace) async -> Bool {
    let details = await ws.journalMarkdown(day1, details: true) ?? ""
    return details.components(separatedBy: "captured-at:: \(stamp)").count - 1 == captured.count
        && details.components(separatedBy: "source:: cli").count - 1 == captured.count
}

@Suite struct LogseqObsidianRoundTripTests {
    static func checkLogseqEdit(saved: (String, String) throws -> Void) async throws {
        let t = TestWorkspace()
        var ws = try await capturedPage(t)
        try saved(t.journal(day1), logseqSaved)
        try await ws.reconcile(path: t.journal(day1))
        _ = try await ws.projectDirtyPages()
        let page = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let got = outline(page)
        // Exactly the edits: the same five ids in their places, one text changed, one property and
        // one drawer added, one child, one referenced block with Logseq's id, one empty block.
        #expect(got.map(\.0) == [0, 0, 0, 1, 0, 0, 0, 0])
        #expect(got.map(\.1).enumerated().filter { [0, 1, 2, 4, 5, 6].contains($0.offset) }.map(\.element)
                == ids + ["6574a3b2-0000-4000-8000-00000000abcd"])
        #expect(got.map(\.2) == ["# Meeting notes", "buy oat milk and bread", "call mum\nabout the trip", "book flights",
                                 "```swift\nlet x = 1\n```", "DOING renew passport", "follow up on ((\(ids[4])))", ""])
        #expect(got.map(\.3) == [capturedProps, capturedProps, capturedProps + [Property("collapsed", "true")], [],
                                 capturedProps, capturedProps + [Property(":LOGBOOK:", "CLOCK: [2026-12-02 Wed 10:00:00]")],
                                 [], []])
        #expect(await ws.journalBlocks(day1).map(\.text) == got.map(\.2))
        #expect(await recordsKept(ws))
        #expect(await ws.check().isEmpty)
        // Logseq reads our projection of it as it wrote it: the drawer a drawer, the properties its own.
        let read = LogseqRules.read(page)
        #expect(read.blocks.count == 8 && read.directives.isEmpty)
        #expect(read.blocks[5].drawers == ["LOGBOOK"] && read.blocks[2].properties.contains { $0 == ("collapsed", "true") })
        // Stable: reconciling the projection again writes and records nothing, and a fresh boot agrees.
        try await ws.reconcileAll()
        #expect(try await ws.projectDirtyPages().isEmpty)
        await ws.close()
        ws = try t.open()
        let ops = await ws.bootSummary.ops
        #expect(await ws.journalBlocks(day1).map(\.text) == got.map(\.2))
        #expect(await ws.check().isEmpty)
        try await ws.reconcileAll()
        #expect(try await ws.projectDirtyPages().isEmpty)
        await ws.close()
        ws = try t.open()
        #expect(await ws.bootSummary.ops == ops, "no edit was invented")
        await ws.close()
    }

    @Test func a_page_logseq_rewrote_in_its_tab_style_is_exactly_the_persons_edit() async throws {
        try await Self.checkLogseqEdit(saved: saveInPlace)
    }

    @Test func the_same_page_arriving_from_another_device_is_the_same_edit() async throws {
        try await Self.checkLogseqEdit(saved: saveByRename)
    }

    @Test func a_page_edited_in_obsidian_is_exactly_the_persons_edit() async throws {
        let t = TestWorkspace()
        let ws = try await capturedPage(t)
        var f = fileText(t.journal(day1))
        // Page properties added in Obsidian's properties view become YAML front matter; a capture
        // edited, given a block id and a child typed with Tab; a task added at the end.
        f = "---\ntags:\n  - daily\n  - outl\n---\n" + f
        f = f.replacingOccurrences(of: "- buy oat milk\n", with: "- buy oat milk and eggs ^groceries\n")
        f = f.replacingOccurrences(of: "  about the trip\n", with: "  about the trip\n\t- check the train times\n")
        f += "- [ ] pack the bags\n"
        try saveInPlace(t.journal(day1), f)
        try await ws.reconcile(path: t.journal(day1))
        _ = try await ws.projectDirtyPages()
        let page = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let got = outline(page)
        #expect(Markdown.parse(page).preamble == "---\ntags:\n  - daily\n  - outl\n---")
        #expect(got.map(\.0) == [0, 0, 0, 1, 0, 0, 0])
        #expect(Array(got.map(\.1).prefix(3)) == Array(ids.prefix(3)) && got[4].1 == ids[3] && got[5].1 == ids[4])
        #expect(got.map(\.2) == ["# Meeting notes", "buy oat milk and eggs ^groceries", "call mum\nabout the trip",
                                 "check the train times", "```swift\nlet x = 1\n```", "TODO renew passport", "[ ] pack the bags"])
        #expect(got.map(\.3) == [capturedProps, capturedProps, capturedProps, [], capturedProps, capturedProps, []])
        #expect(String(decoding: page, as: UTF8.self).hasPrefix("---\ntags:\n  - daily\n  - outl\n---\n- # Meeting notes\n"))
        #expect(await recordsKept(ws))
        #expect(await ws.check().isEmpty)
        try await ws.reconcileAll()
        #expect(try await ws.projectDirtyPages().isEmpty)
        await ws.close()
    }
}
