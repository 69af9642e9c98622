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

@Test func attachment_limit_is_a_size_and_anything_else_is_refused_with_its_line() throws {
    #expect(try resolve("workspace = /w\n").attachmentLimit == nil)
    for (value, bytes) in [("256M", 256 << 20), ("1K", 1024), ("512KiB", 512 << 10), ("16G", 16 << 30), ("4096", 4096), ("1", 1)] {
        #expect(try resolve("attachment-limit = \(value)\n").attachmentLimit == bytes, "\(value)")
    }
    // Out of range, not a size, or so large it would overflow: refused, never a trap.
    for value in ["0", "17G", "lots", "-1", "1.5M", "256 M", "999999999999G", "M"] {
        do {
            _ = try resolve("attachment-limit = \(value)\n")
            Issue.record("accepted attachment-limit = \(value)")
        } catch let e as ConfigError {
            #expect(e.description.hasSuffix("outld.conf:1: attachment-limit is a size from 1 to 16G: bytes, or a number followed by K, M or G (1024-based), not \"\(value)\""),
                    "\(e.description)")
        }
    }
}

@Test func page_properties_names_what_a_page_shows_of_a_captures_record_and_nothing_else() throws {
    #expect(try resolve("workspace = /w\n").pageProperties == nil)
    for (value, read) in [("captured-at source", "captured-at source"), ("source", "source"), ("none", "none"),
                          ("source, captured-at", "source captured-at")] {
        #expect(try resolve("page-properties = \(value)\n").pageProperties == read, "\(value)")
    }
    for value in ["sometimes", "captured_at", "none source", "id"] {
        do {
            _ = try resolve("page-properties = \(value)\n")
            Issue.record("accepted page-properties = \(value)")
        } catch let e as ConfigError {
            #expect(e.exitStatus == 78)
            #expect(e.description.hasSuffix("outld.conf:1: page-properties is captured-at, source, both (captured-at source) or none, not \"\(value)\""),
                    "\(e.description)")
        }
    }
}
