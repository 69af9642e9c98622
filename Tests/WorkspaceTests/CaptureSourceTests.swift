// A capture's backslashes are shown by both readers (CaptureSource), and only a capture's: a block a
// person typed in Logseq keeps its own escapes, entities and math through every later projection.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct CaptureSourceTests {
    @Test func a_captured_path_lands_as_source_both_readers_show_as_typed() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture(#"copy C:\Users\bob\x.txt to \\server\share"#)])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        let page = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let text = String(decoding: page, as: UTF8.self)
        #expect(text.hasPrefix(#"- copy C:\\Users\\bob\\x.txt to \\\\server\\share"# + "\n"), "\(text)")
        #expect(LogseqRules.read(page).blocks.first?.lines.first == #"copy C:\Users\bob\x.txt to \\server\share"#)
    }

    @Test func a_block_typed_in_logseq_keeps_its_escapes_entities_and_math() async throws {
        let t = TestWorkspace()
        var ws = try t.open()
        _ = try await ws.appendCaptures([capture("first")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        let typed = #"- math $\frac{a}{b}$, \pi, \* not bold \*, C:\Users"# + "\n"
        let before = String(decoding: try Durable.readRegularFile(t.journal(day1), limit: 1 << 20), as: UTF8.self)
        try writeText(t.journal(day1), before + typed)
        ws = try t.open()
        _ = try await ws.projectDirtyPages()
        _ = try await ws.appendCaptures([capture("second")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        let after = String(decoding: try Durable.readRegularFile(t.journal(day1), limit: 1 << 20), as: UTF8.self)
        // Taken into the model (it has an id now), its line byte for byte as the person wrote it.
        #expect(after.contains(String(typed.dropLast()) + "\n  id:: "), "\(after)")
        #expect(after.contains("- second\n"))
    }
}

/// The spans where backslashes are code to both readers are the overlaps of CommonMark's and
/// mldoc's spans, found by one merge: the same as every pair compared, on random lines of backticks.
@Test func code_to_both_readers_is_every_overlap_of_their_spans() {
    var r = Rng(s: 16)
    for _ in 0..<2000 {
        let line = Array((0..<(1 + r.below(24))).map { _ in ["`", "`", "a", "\\", " "][r.below(5)] }.joined().utf8)[...]
        let cm = CaptureSource.cmCodeSpans(line), ml = CaptureSource.mldocCodeSpans(line)
        var pairwise: [Range<Int>] = []
        for a in cm { for b in ml where a.overlaps(b) { pairwise.append(max(a.lowerBound, b.lowerBound)..<min(a.upperBound, b.upperBound)) } }
        #expect(CaptureSource.codeSpans(line) == pairwise, "\(String(decoding: line, as: UTF8.self))")
        var cursor = CaptureSource.SpanCursor(pairwise)
        for i in line.indices { #expect(cursor.contains(i) == pairwise.contains { $0.contains(i) }) }
    }
}
