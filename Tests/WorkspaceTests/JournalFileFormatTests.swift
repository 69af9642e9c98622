// Journal file names (SPEC 2.2): `YYYY_MM_DD.md` (Logseq) by default, `YYYY-MM-DD.md` (Obsidian's daily
// notes) when a workspace chooses it; either spelling reads as the day's one page, and devices whose
// settings differ still write one file per day ("agree on one": the file that exists wins, Logseq's
// when both do). Real Workspace actors on real temp directories.
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

extension TwoDevices {
    func open(_ d: String, format: JournalFileFormat) throws -> Workspace {
        var o = WorkspaceOptions(root: root(d))
        o.stateDirectory = dir.sub("state-\(d)")
        o.journalFileFormat = format
        o.syncSettleMs = syncSettleMs
        o.log = .silent
        return try Workspace(options: o)
    }

    func file(_ d: String, _ day: JournalDay, _ format: JournalFileFormat) -> String {
        Path.join(root(d), "journals/\(day.fileStem(format)).md")
    }

    func exists(_ path: String) -> Bool { (try? Sys.lstat(path)) != nil }
}

@Suite struct JournalFileFormatTests {
    @Test func the_setting_spells_both_ways_and_nothing_else() {
        #expect(JournalFileFormat(setting: "yyyy_MM_dd") == .logseq)
        #expect(JournalFileFormat(setting: "yyyy-MM-dd") == .iso)
        #expect(JournalFileFormat(setting: "YYYY-MM-DD") == nil, "spelled exactly: YYYY and DD mean other things to Logseq")
        #expect(JournalFileFormat(setting: "yyyy/MM/dd") == nil)
        #expect(day1.fileStem(.logseq) == "2026_12_02" && day1.fileStem(.iso) == "2026-12-02")
        #expect(JournalDay(parsing: "2026-12_02") == nil, "one separator throughout")
        #expect(JournalDay(parsing: "2026-12-02") == JournalDay(parsing: "2026_12_02"))
    }

    @Test func a_workspace_may_name_its_journals_as_obsidian_does() async throws {
        let t = TwoDevices()
        let ws = try t.open("a", format: .iso)
        _ = try await ws.appendCaptures([capture("buy oat milk")])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.check().isEmpty)
        await ws.close()
        #expect(fileText(t.file("a", day1, .iso)).hasPrefix("- buy oat milk\n"))
        #expect(!t.exists(t.file("a", day1, .logseq)))
    }

    @Test func without_the_setting_a_new_day_is_named_as_the_workspace_names_its_journals() async throws {
        let t = TwoDevices()
        // outld (configured for Obsidian's names) wrote yesterday; `outl`, reading no outld.conf, follows.
        var ws = try t.open("a", format: .iso)
        _ = try await ws.appendCaptures([capture("yesterday", day: day1)])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        ws = try t.open("a")
        _ = try await ws.appendCaptures([capture("today", day: day1.next)])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        #expect(t.exists(t.file("a", day1.next, .iso)) && !t.exists(t.file("a", day1.next, .logseq)))
        // A workspace with no journal yet uses Logseq's names.
        ws = try t.open("b")
        _ = try await ws.appendCaptures([capture("first ever")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        #expect(t.exists(t.file("b", day1, .logseq)))
    }

    @Test func a_file_in_the_other_spelling_is_that_days_page_not_a_second_one() async throws {
        let t = TwoDevices()
        // Obsidian made today's daily note on a workspace that names journals the Logseq way.
        try Durable.makeDirectory(Path.join(t.root("a"), "journals"), mode: 0o755)
        try writeText(t.file("a", day1, .iso), "- typed in Obsidian\n")
        let ws = try t.open("a", format: .logseq)
        try await ws.reconcileAll()
        _ = try await ws.appendCaptures([capture("captured later")])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.journalBlocks(day1).map(\.text) == ["typed in Obsidian", "captured later"])
        #expect(await ws.check().isEmpty)
        await ws.close()
        // The existing file is the page: no second file for the day.
        let f = fileText(t.file("a", day1, .iso))
        #expect(f.hasPrefix("- typed in Obsidian\n  id:: ") && f.contains("- captured later\n"), "\(f)")
        #expect(!t.exists(t.file("a", day1, .logseq)))
    }

    @Test func two_devices_with_different_settings_write_one_file_for_a_day() async throws {
        let t = TwoDevices()
        // A (Logseq's names) captures first; its page and ops reach B (Obsidian's names).
        var ws = try t.open("a", format: .logseq)
        _ = try await ws.appendCaptures([capture("from A")])
        _ = try await ws.projectDirtyPages()
        await ws.close()
        try t.syncOps(from: "a", to: "b")
        try t.syncFile("journals/\(day1.fileStem(.logseq)).md", from: "a", to: "b")
        ws = try t.open("b", format: .iso)
        try await ws.reconcileAll()
        _ = try await ws.appendCaptures([capture("from B")])
        _ = try await ws.projectDirtyPages()
        #expect(await ws.journalBlocks(day1).map(\.text) == ["from A", "from B"])
        await ws.close()
        // B wrote into the day's existing file, whatever its own setting.
        #expect(fileText(t.file("b", day1, .logseq)).contains("- from B\n"))
        #expect(!t.exists(t.file("b", day1, .iso)))
    }

    @Test func both_spellings_made_at_once_converge_on_one_file_and_lose_no_edit() async throws {
        let t = TwoDevices()
        // Apart, each device starts the same day in its own spelling.
        var a = try t.open("a", format: .logseq)
        _ = try await a.appendCaptures([capture("from A")])
        _ = try await a.projectDirtyPages()
        await a.close()
        var b = try t.open("b", format: .iso)
        _ = try await b.appendCaptures([capture("from B")])
        _ = try await b.projectDirtyPages()
        await b.close()
        // A person edits B's file (in Obsidian) before the sync tool meets A's.
        let bFile = t.file("b", day1, .iso)
        try writeText(bFile, fileText(bFile).replacingOccurrences(of: "- from B\n", with: "- from B, edited\n"))
        // Everything syncs both ways: each device now has both files and both op logs.
        try t.syncOps(from: "a", to: "b"); try t.syncOps(from: "b", to: "a")
        try t.syncFile("journals/\(day1.fileStem(.logseq)).md", from: "a", to: "b")
        try t.syncFile("journals/\(day1.fileStem(.iso)).md", from: "b", to: "a")
        for (d, format) in [("b", JournalFileFormat.iso), ("a", .logseq)] {
            let ws = try t.open(d, format: format)
            try await ws.reconcileAll()
            _ = try await ws.projectDirtyPages()
            #expect(await ws.journalBlocks(day1).map(\.text).sorted() == ["from A", "from B, edited"], "device \(d)")
            #expect(await ws.check().isEmpty, "device \(d)")
            await ws.close()
            // One file for the day, Logseq's spelling, holding both captures and the edit.
            #expect(!t.exists(t.file(d, day1, .iso)), "device \(d)")
            let f = fileText(t.file(d, day1, .logseq))
            #expect(f.contains("- from A\n") && f.contains("- from B, edited\n"), "device \(d):\n\(f)")
        }
        // And a device that reads it again makes no new ops: the pages agree.
        a = try t.open("a", format: .logseq); b = try t.open("b", format: .iso)
        #expect(await a.journalBlocks(day1).map(\.text) == b.journalBlocks(day1).map(\.text))
        await a.close(); await b.close()
    }
}
