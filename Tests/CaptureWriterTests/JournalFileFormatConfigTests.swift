// outld.conf `journal-file-format` (SPEC 2.2): how a workspace names new days' journal files, read
// with the rest of the one configuration; a value that cannot mean one thing is refused with its line.
import Foundation
import Testing
import OutlConfig
import TestSupport

private func resolve(_ conf: String) throws -> OutlConfig {
    let t = TempDir("outl-conf")
    try FileManager.default.createDirectory(atPath: t.sub(".config/outl"), withIntermediateDirectories: true)
    try writeText(t.sub(".config/outl/outld.conf"), conf)
    return try OutlConfig.resolve(workspace: nil, inboxes: [], environment: { ["HOME": t.path][$0] })
}

@Test func journal_file_format_is_read_from_outld_conf() throws {
    #expect(try resolve("workspace = /w\n").journalFileFormat == nil)
    #expect(try resolve("journal-file-format = yyyy-MM-dd\n").journalFileFormat == "yyyy-MM-dd")
    #expect(try resolve("journal-file-format = yyyy_MM_dd\n").journalFileFormat == "yyyy_MM_dd")
}

@Test func a_journal_file_format_that_is_not_one_of_the_two_is_refused_with_its_line() throws {
    let spelled = "journal-file-format is yyyy_MM_dd or yyyy-MM-dd, spelled so (YYYY and DD mean other things)"
    for (conf, message) in [("workspace = /w\njournal-file-format = dd.MM.yyyy\n", "outld.conf:2: \(spelled), not \"dd.MM.yyyy\""),
                            // In Logseq's date format YYYY is the week year and DD the day of the year.
                            ("journal-file-format = YYYY-MM-DD\n", "outld.conf:1: \(spelled), not \"YYYY-MM-DD\""),
                            ("journal-file-format = yyyy_mm_dd\n", "outld.conf:1: \(spelled), not \"yyyy_mm_dd\""),
                            ("journal-file-format = yyyy-MM-dd\njournal-file-format = yyyy_MM_dd\n", "outld.conf:2: journal-file-format is given twice (first on line 1); keep one")] {
        do {
            _ = try resolve(conf)
            Issue.record("accepted \(conf.debugDescription)")
        } catch {
            #expect("\(error)".hasSuffix(message), "\(error)")
        }
    }
}
