// outld honours outld.conf's journal-file-format (SPEC 2.2): the real binaries in a private HOME.
import Foundation
import SystemCalls
import Testing
import TestSupport

@Suite struct JournalFileFormatOutldTests {
    func configure(_ h: OutlHome, _ line: String) throws {
        try FileManager.default.createDirectory(atPath: Path.join(h.home, ".config/outl"), withIntermediateDirectories: true)
        try writeText(Path.join(h.home, ".config/outl/outld.conf"), line + "\n")
    }

    @Test func outld_names_a_new_day_as_outld_conf_says() throws {
        let h = try OutlHome()
        try configure(h, "journal-file-format = yyyy-MM-dd")
        _ = try h.captureID("in an Obsidian-named daily note")
        let r = try h.outld(["--once"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(h.journal("2026-12-02").contains("- in an Obsidian-named daily note\n"))
        #expect(h.journal("2026_12_02").isEmpty)
        // `outl`, which reads no outld.conf, follows the workspace: the same day, the same file.
        let show = try run(binPath("outl"), ["show", "2026-12-02"], env: h.env)
        #expect(show.status == 0 && show.stdout.contains("in an Obsidian-named daily note"))
        let check = try run(binPath("outl"), ["check"], env: h.env)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func a_journal_file_format_outld_cannot_read_is_refused_with_its_line() throws {
        let h = try OutlHome()
        try configure(h, "journal-file-format = dd.MM.yyyy")
        let r = try h.outld(["--once"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("outld.conf:1: journal-file-format is yyyy_MM_dd or yyyy-MM-dd"), "\(r.stderr)")
    }
}
