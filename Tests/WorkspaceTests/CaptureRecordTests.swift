// A capture's record (captured-at, source) stays in the op log and the model and is left off its page
// (CaptureRecord): a day's page holds what the person typed and the id:: Logseq hides; a page that
// leaves the record out is no edit, an old page that shows it moves over without an op, a value a
// person changes is theirs, and two devices whose page-properties differ never write a page back and
// forth. All through the real Workspace on real files.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

@Suite struct CaptureRecordTests {
    static let texts = [
        "buy oat milk", "call mum\nabout the trip", "TODO renew passport", "meeting with [[Bob]] #work",
        "https://example.org/a?b=c", "a line with a colon: here", "```sh\nls -la\n```", "# Inbox",
        "quote: > not a quote", "two\nlines\nand a third", "emoji 🧪 ok", "DONE taxes", "[[Reading list]]",
        "tags:: not a property", "C:\\Users\\me", "- not a bullet", "plain", "50% done", "x = 1", "last one",
    ]

    /// The measure: visible characters per block the person did not type, in Logseq (mldoc's rules,
    /// with id:: hidden as Logseq hides it): 0 on a 20-capture day. No block has a property.
    @Test func a_twenty_capture_day_shows_nothing_the_person_did_not_type() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures(Self.texts.map { capture($0) })
        _ = try await ws.projectDirtyPages()
        let page = try Durable.readRegularFile(t.journal(day1), limit: 1 << 20)
        let read = LogseqRules.read(page)
        #expect(read.blocks.count == 20 && read.directives.isEmpty)
        for (b, typed) in zip(read.blocks, Self.texts) {
            #expect(b.properties.map(\.0) == ["id"], "\(typed): \(b.properties)")
        }
        // Every line of the file is a line of a typed text (escaped as the rules say) or an id:: line.
        let lines = String(decoding: page, as: UTF8.self).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("  id:: ") }.count == 20)
        #expect(!lines.contains { $0.contains("captured-at") || $0.contains("source::") })
        #expect(Markdown.parse(page).blocks.allSatisfy { $0.props.isEmpty })
        // The model keeps every record: outl show --details and --json show it.
        let details = await ws.journalMarkdown(day1, details: true) ?? ""
        #expect(details.components(separatedBy: "  captured-at:: 2026-12-02T09:00:00.000+01:00\n").count == 21)
        #expect(details.components(separatedBy: "  source:: cli\n").count == 21)
        #expect(await ws.journalOutline(day1)?.allSatisfy { $0.properties.map(\.key) == ["captured-at", "source"] } == true)
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    /// `page-properties = captured-at source`: the record is written as before, and a page without
    /// it (another device's) is still no edit.
    @Test func page_properties_writes_the_record_on_the_page() async throws {
        let t = TestWorkspace()
        t.pageProperties = .all
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("buy oat milk")])
        _ = try await ws.projectDirtyPages()
        let page = fileText(t.journal(day1))
        #expect(page.hasPrefix("- buy oat milk\n  captured-at:: 2026-12-02T09:00:00.000+01:00\n  source:: cli\n  id:: "), "\(page)")
        #expect(await ws.check().isEmpty)
        await ws.close()
        t.pageProperties = PageProperties(setting: "source")!
        let again = try t.open()
        _ = try await again.projectDirtyPages()
        let now = fileText(t.journal(day1))
        #expect(now.contains("  source:: cli\n") && !now.contains("captured-at"), "a changed setting writes each page once anew:\n\(now)")
        await again.close()
    }

    /// A page written with the record's lines (by an older outl, or with page-properties on) is read
    /// as before; its next projection drops them, and nothing of it is an edit.
    @Test(arguments: ["in place", "by rename"])
    func an_old_page_with_the_record_moves_over_without_an_op(_ how: String) async throws {
        let t = TestWorkspace()
        t.syncSettleMs = 0
        var ws = try t.open()
        _ = try await ws.appendCaptures([capture("first"), capture("second\nline two")])
        _ = try await ws.projectDirtyPages()
        let old = await ws.journalMarkdown(day1, details: true)!  // the page as an older outl wrote it
        await ws.close()
        #expect(old.contains("  captured-at:: ") && old.contains("  source:: cli"))
        if how == "in place" {
            let fd = try Sys.open(t.journal(day1), O_WRONLY | O_TRUNC, 0)
            try Sys.writeAll(fd, Array(old.utf8))
            Sys.close(fd)
        } else {
            try Durable.publish(Array(old.utf8), to: t.journal(day1), via: t.journal(day1) + ".tmp")
        }
        ws = try t.open()
        let ops = await ws.bootSummary.ops
        try await ws.reconcileAll()
        _ = try await ws.projectDirtyPages()
        #expect(await ws.bootSummary.ops == ops)
        #expect(await ws.journalBlocks(day1).map(\.text) == ["first", "second\nline two"])
        if how == "in place" {
            // This device's own file: written in the new form at once.
            #expect(!fileText(t.journal(day1)).contains("captured-at"), "\(fileText(t.journal(day1)))")
        } else {
            // Another producer's: the same content in another form, left until the page changes.
            #expect(fileText(t.journal(day1)) == old)
            _ = try await ws.appendCaptures([capture("third")])
            _ = try await ws.projectDirtyPages()
            let now = fileText(t.journal(day1))
            #expect(!now.contains("captured-at") && now.contains("- first\n") && now.contains("- third\n"), "\(now)")
        }
        #expect(await ws.check().isEmpty)
        await ws.close()
        ws = try t.open()
        #expect(await ws.bootSummary.ops == ops + (how == "in place" ? 0 : 1), "no edit was invented")
        await ws.close()
    }

    /// A capture edited by hand keeps its record: the update carries it, `--details` shows it.
    @Test func a_capture_edited_by_hand_keeps_its_record() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("buy oat milk")])
        _ = try await ws.projectDirtyPages()
        try writeText(t.journal(day1), fileText(t.journal(day1)).replacingOccurrences(of: "- buy oat milk\n", with: "- buy oat milk and eggs\n"))
        try await ws.reconcile(path: t.journal(day1))
        _ = try await ws.projectDirtyPages()
        #expect(await ws.journalBlocks(day1).map(\.text) == ["buy oat milk and eggs"])
        let details = await ws.journalMarkdown(day1, details: true) ?? ""
        #expect(details.contains("- buy oat milk and eggs\n  captured-at:: 2026-12-02T09:00:00.000+01:00\n  source:: cli\n"), "\(details)")
        #expect(!fileText(t.journal(day1)).contains("captured-at"))
        await ws.close()
    }

    /// A value a person sets shows, whatever the setting; a page that leaves its line out removes
    /// nothing (it reads as a buffer older than the edit); a `source::` on a block a person typed is
    /// theirs and always shows.
    @Test func a_record_value_a_person_changes_shows_and_their_own_source_is_theirs() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("a quote")])
        _ = try await ws.projectDirtyPages()
        let page = t.journal(day1)
        try writeText(page, fileText(page).replacingOccurrences(of: "- a quote\n", with: "- a quote\n  source:: [[A book]]\n")
                      + "- my own note\n  source:: [[Another book]]\n")
        try await ws.reconcile(path: page)
        _ = try await ws.projectDirtyPages()
        var now = fileText(page)
        #expect(now.contains("- a quote\n  source:: [[A book]]\n  id:: ") && now.contains("- my own note\n  source:: [[Another book]]\n"), "\(now)")
        #expect(!now.contains("captured-at"))
        try writeText(page, now.replacingOccurrences(of: "  source:: [[A book]]\n", with: ""))
        try await ws.reconcile(path: page)
        _ = try await ws.projectDirtyPages()
        now = fileText(page)
        #expect(now.contains("- a quote\n  source:: [[A book]]\n") && now.contains("source:: [[Another book]]"), "\(now)")
        #expect((await ws.journalMarkdown(day1, details: true) ?? "").contains("- a quote\n  captured-at:: 2026-12-02T09:00:00.000+01:00\n  source:: [[A book]]\n"))
        #expect(await ws.check().isEmpty)
        await ws.close()
    }

    /// An older outl (or any peer) whose update leaves the record out removes nothing: the record
    /// is the least create's, whatever order the creates and the update arrive in, on every device.
    @Test func the_record_is_the_least_creates_in_every_order() throws {
        let page = BlockID.journalPage(day1), id = BlockID(hi: 1, lo: 1)
        let actor = BlockID(hi: 7, lo: 7)
        func stamp(_ w: Int64) -> HLC { HLC(wall: 1_796_000_000_000 + w, counter: 0, actor: actor) }
        var p = Op(hlc: stamp(0), kind: .createPage, id: page); p.pageKind = .journal; p.text = day1.iso
        func create(_ w: Int64, _ at: String) -> Op {
            var o = Op(hlc: stamp(w), kind: .createBlock, id: id)
            o.page = page; o.pos = "a0"; o.text = "captured"
            o.props = [Property("captured-at", at), Property("source", "cli")]
            return o
        }
        var u = Op(hlc: stamp(5), kind: .updateBlock, id: id); u.text = "edited by an older outl"
        let ops = [create(1, "2026-12-02T09:00:00.000+01:00"), create(2, "2026-12-02T10:00:00.000+01:00"), u]
        var seen: Set<[UInt8]> = []
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let t = TestWorkspace()
            let core = try openCore(t.root, state: t.state())
            defer { core.close() }
            _ = core.model.apply(p)
            for k in order { _ = core.model.apply(ops[k]) }
            let plain = core.render(page), whole = core.renderWhole(page)
            #expect(plain == whole)
            let details = String(decoding: core.renderWhole(page, showing: .all), as: UTF8.self)
            #expect(details.contains("- edited by an older outl\n  captured-at:: 2026-12-02T09:00:00.000+01:00\n  source:: cli\n"), "\(order): \(details)")
            seen.insert(plain + Array(details.utf8))
        }
        #expect(seen.count == 1)
    }

    /// Two devices whose page-properties differ: each leaves the other's page as it is (said once)
    /// and writes its own form only when the page changes; no op is made from the difference.
    @Test func devices_whose_page_properties_differ_never_write_a_page_back_and_forth() async throws {
        let t = TwoDevices()
        t.pageProperties["b"] = .all
        try await t.session("a") { ws in _ = try await ws.appendCaptures([capture("from a")]) }
        try t.syncOps(from: "a", to: "b")
        try t.syncJournal(from: "a", to: "b")
        try await t.session("b")
        #expect(!fileText(t.journal("b")).contains("captured-at"), "b wrote a's page again:\n\(fileText(t.journal("b")))")
        #expect(t.said.lines.contains { $0.hasPrefix("b: ") && $0.contains("in another form") }, "\(t.said.lines)")
        // b captures: its form; a takes it as is, and says so.
        try await t.session("b") { ws in _ = try await ws.appendCaptures([capture("from b")]) }
        let fromB = fileText(t.journal("b"))
        #expect(fromB.components(separatedBy: "captured-at::").count == 3, "\(fromB)")
        try t.syncOps(from: "b", to: "a")
        try t.syncJournal(from: "b", to: "a")
        try await t.session("a")
        try await t.session("a")
        #expect(fileText(t.journal("a")) == fromB, "a wrote b's page again")
        for d in ["a", "b"] {
            #expect(try await t.texts(d) == ["from a", "from b"])
            let ops = try Sys.readDirectory(Path.join(t.root(d), ".outl/ops")).map { fileText(Path.join(t.root(d), ".outl/ops/\($0)")) }.joined()
            #expect(!ops.contains("\"k\":\"ub\""), "\(d) made an edit of the difference:\n\(ops)")
        }
    }
}
