// The task-marker rule (outl-inbox(5)): a capture is a task in Logseq only when it starts with TODO or
// LATER; NOW, DONE and the other markers, and a priority without a marker, read as typed. Each page
// line below was read by mldoc itself (logseq/mldoc bedae990, Logseq's file-graph Markdown config):
// the marker and priority named beside it are what mldoc's Heading carried.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct TaskMarkerTests {
    static let wj = "\u{2060}"
    /// (typed, the page's first line, mldoc's marker, mldoc's priority)
    static let cases: [(String, String, String?, String?)] = [
        ("TODO buy milk", "- TODO buy milk", "TODO", nil),
        ("LATER tonight", "- LATER tonight", "LATER", nil),
        ("TODO [#A] call the bank", "- TODO [#A] call the bank", "TODO", "A"),
        ("NOW I get it", "- \(wj)NOW I get it", nil, nil),
        ("DONE with taxes!", "- \(wj)DONE with taxes!", nil, nil),
        ("WAIT for it", "- \(wj)WAIT for it", nil, nil),
        ("WAITING for the bus", "- \(wj)WAITING for the bus", nil, nil),
        ("IN-PROGRESS report", "- \(wj)IN-PROGRESS report", nil, nil),
        ("# DONE with taxes!", "- # \(wj)DONE with taxes!", nil, nil),
        ("[#A] urgent", "- \(wj)[#A] urgent", nil, nil),
        // mldoc wants a space after the marker: these were never tasks and stay as they are.
        ("NOW", "- NOW", nil, nil),
        ("NOW: a colon", "- NOW: a colon", nil, nil),
        ("now I get it", "- now I get it", nil, nil),
    ]

    @Test func a_capture_is_a_task_only_when_it_starts_with_todo_or_later() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        for (k, c) in Self.cases.enumerated() {
            _ = try await ws.appendCaptures([capture(c.0, day: JournalDay(year: 2026, month: 1, day: k + 1)!)])
        }
        _ = try await ws.projectDirtyPages()
        await ws.close()
        for (k, c) in Self.cases.enumerated() {
            let page = try Durable.readRegularFile(t.journal(JournalDay(year: 2026, month: 1, day: k + 1)!), limit: 1 << 20)
            let first = String(decoding: page.split(separator: 10).first ?? [], as: UTF8.self)
            #expect(first == c.1, "\(c.0)")
            let read = LogseqRules.read(page)
            #expect(read.blocks.count == 1 && read.blocks[0].marker == c.2 && read.blocks[0].priority.map { String(UnicodeScalar($0)) } == c.3, "\(c.0)")
            // Parse gives back the block's text, joiner and all: the next projection writes the same.
            #expect(Markdown.parse(page).blocks.first?.text == Markdown.capturedText(c.0))
        }
    }

    @Test func the_rule_is_idempotent_and_leaves_a_block_written_in_logseq_a_task() async throws {
        for c in Self.cases { #expect(TaskMarkers.capturedText(TaskMarkers.capturedText(c.0)) == TaskMarkers.capturedText(c.0)) }
        // A task typed in Logseq reaches the model through the reconciler, not as a capture: it stays.
        let t = TestWorkspace()
        var ws = try t.open()
        _ = try await ws.appendCaptures([capture("first")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        let page = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        try writeText(t.journal(day1), String(decoding: page, as: UTF8.self) + "- NOW call mom\n")
        ws = try t.open()
        _ = try await ws.projectDirtyPages()
        await ws.close()
        let after = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        // Taken into the model (the projection gave it an id) and written back without a joiner.
        #expect(String(decoding: after, as: UTF8.self).contains("- NOW call mom\n  id:: "))
        #expect(LogseqRules.read(after).blocks.last?.marker == "NOW", "\(String(decoding: after, as: UTF8.self))")
    }
}

/// The mask of first bytes says yes for exactly the first byte of each marker and a priority's
/// `[`, of every byte value.
@Test func the_first_byte_mask_holds_exactly_the_markers_first_bytes() {
    let firsts = Set(TaskMarkers.all.map { $0[0] } + [UInt8(ascii: "[")])
    for b in 0...255 { #expect(TaskMarkers.startsMarker(UInt8(b)) == firsts.contains(UInt8(b)), "byte \(b)") }
}
