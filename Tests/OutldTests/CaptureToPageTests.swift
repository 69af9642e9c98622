// Capture to a named page (issue 20, first part), as a user meets it with the real binaries: --page,
// a link's page=, outld.conf's `page =`; the block lands at the end of that page's file under pages/,
// created if missing, the same page for a name that differs only in case, a shortened file name for a
// name too long for one; today (or nothing) is the journal, as before.
import CaptureFormat
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Testing
import TestSupport

@Suite struct CaptureToPageTests {
    func page(_ h: OutlHome, _ file: String) -> String { readText(Path.join(h.workspace, "pages/\(file)")) ?? "" }

    @Test func a_capture_with_page_lands_at_the_end_of_that_page_created_if_missing() throws {
        let h = try OutlHome()
        let r = try h.capture(["the", "first", "book"], extra: ["--page", "Reading list", "--at", "2026-12-02T10:00:00Z"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("Saved for \"Reading list\"; "), "\(r.stderr)")
        // The file says where it goes; --list shows it.
        let pending = h.pending()
        #expect(pending.count == 1)
        let c = try CaptureFile.decode(Array(readText(Path.join(h.inbox, pending[0]))!.utf8))
        #expect(c.page == "Reading list")
        #expect(try h.capture([], extra: ["--list"]).stdout.contains("[Reading list]  the first book"))
        // A page that differs only in case is the same page; today is the journal.
        _ = try h.capture(["the second book"], extra: ["--page", "READING LIST", "--quiet", "--at", "2026-12-02T10:01:00Z"])
        _ = try h.capture(["a journal line"], extra: ["--page", "today", "--quiet", "--at", "2026-12-02T10:02:00Z"])
        let once = try h.outld(["--once"])
        #expect(once.status == 0, "\(once.stderr)")
        let text = page(h, "Reading list.md")
        #expect(text.hasPrefix("- the first book\n"), "\(text)")
        #expect(text.contains("- the second book\n"), "\(text)")
        #expect(text.range(of: "the first book")!.lowerBound < text.range(of: "the second book")!.lowerBound)
        #expect(h.journal().contains("- a journal line\n") && !h.journal().contains("book"))
        #expect(listDir(Path.join(h.workspace, "pages")) == ["Reading list.md"])
        let check = try run(binPath("outl"), ["check"], env: h.env)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// A running outld never reads back a page it has just written: its write is a rename from
    /// .outl/tmp, a file it knows as it left it. Closed after the rename, the written descriptor
    /// made an IN_CLOSE_WRITE under the page's name, read as a person's edit: every capture's page
    /// was read, judged and rendered a second time (on a page of 20,000 blocks, 24M instructions).
    /// A person's edit in place is still taken.
    @Test func a_running_outld_does_not_read_back_the_page_it_wrote() throws {
        let h = try OutlHome()
        _ = try h.capture(["first"], extra: ["--page", "Inbox", "--quiet"])
        #expect(try h.outld(["--once"]).status == 0)
        let pages = Path.join(h.workspace, "pages")
        let d = try h.start()
        defer { d.stop() }
        #expect(eventually { d.log.contains("ready") }, "\(d.log)")
        let ino = inotify_init1(Int32(IN_NONBLOCK))
        defer { close(ino) }
        #expect(inotify_add_watch(ino, pages, UInt32(IN_OPEN | IN_MOVED_TO)) >= 0)
        /// The events so far, as (IN_OPEN or IN_MOVED_TO, name).
        func events() -> [(open: Bool, name: String)] {
            var out: [(Bool, String)] = []
            var buf = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buf.withUnsafeMutableBytes { read(ino, $0.baseAddress, $0.count) }
                if n <= 0 { return out }
                var i = 0
                while i < n {
                    let (mask, len) = buf.withUnsafeBytes { b in
                        (b.load(fromByteOffset: i + 4, as: UInt32.self), Int(b.load(fromByteOffset: i + 12, as: UInt32.self)))
                    }
                    let name = String(decoding: buf[(i + 16)..<(i + 16 + len)].prefix { $0 != 0 }, as: UTF8.self)
                    out.append((mask & UInt32(IN_OPEN) != 0, name))
                    i += 16 + len
                }
            }
        }
        _ = try h.capture(["second"], extra: ["--page", "Inbox", "--quiet"])
        // Waited for by its log and its rename (reading the page here would be an open too).
        var own = events()
        #expect(eventually { own += events(); return own.contains { !$0.open && $0.name == "Inbox.md" } }, "\(d.log)")
        usleep(500_000)  // its own rename's event reaches it, and, were it read as an edit, the page is read
        own += events()
        #expect(page(h, "Inbox.md").contains("- second\n"))
        let renamed = try #require(own.lastIndex { !$0.open && $0.name == "Inbox.md" }, "\(own)")
        #expect(!own[(renamed + 1)...].contains { $0.open && $0.name == "Inbox.md" }, "read back after its own write: \(own)")
        // A person's line typed into the file in place is still taken: it gets its id.
        let fd = open(Path.join(pages, "Inbox.md"), O_WRONLY | O_APPEND)
        #expect(fd >= 0)
        _ = "- typed by hand\n".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        #expect(eventually { page(h, "Inbox.md").contains("- typed by hand\n  id:: ") }, "\(page(h, "Inbox.md"))")
    }

    @Test func an_existing_page_gets_the_capture_after_its_own_blocks() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: Path.join(h.workspace, "pages"), withIntermediateDirectories: true)
        try writeText(Path.join(h.workspace, "pages/Ideas.md"), "- an idea typed in Logseq\n")
        _ = try h.capture(["a captured idea"], extra: ["--page", "ideas", "--quiet"])
        #expect(try h.outld(["--once"]).status == 0)
        let text = page(h, "Ideas.md")
        #expect(text.hasPrefix("- an idea typed in Logseq\n"), "\(text)")
        #expect(text.contains("- a captured idea\n"), "\(text)")
        #expect(listDir(Path.join(h.workspace, "pages")) == ["Ideas.md"])
    }

    @Test func a_link_and_outld_conf_name_the_page_and_the_flag_wins() throws {
        let h = try OutlHome()
        try FileManager.default.createDirectory(atPath: Path.join(h.home, ".config/outl"), withIntermediateDirectories: true)
        try writeText(Path.join(h.home, ".config/outl/outld.conf"), "page = Inbox\n")
        _ = try h.capture(["from the default"], extra: ["--quiet"])
        _ = try h.capture([], extra: ["--uri", "outl://capture?text=from%20a%20link&page=Links", "--quiet"])
        _ = try h.capture(["from the flag"], extra: ["--page", "Flagged", "--quiet"])
        let json = try h.capture(["to the journal"], extra: ["--page", "", "--json"])
        #expect(json.stdout.contains("\"page\": null"), "\(json.stdout)")
        #expect(try h.outld(["--once"]).status == 0)
        #expect(page(h, "Inbox.md").contains("- from the default\n"))
        #expect(page(h, "Links.md").contains("- from a link\n"))
        #expect(page(h, "Flagged.md").contains("- from the flag\n"))
        #expect(!page(h, "Inbox.md").contains("flag") && !page(h, "Inbox.md").contains("journal"))
        // A page outld.conf names that no file may have is the configuration's fault: 78, named.
        try writeText(Path.join(h.home, ".config/outl/outld.conf"), "page = " + String(repeating: "x", count: 1025) + "\n")
        let r = try h.capture(["never saved"])
        #expect(r.status == 78 && r.stderr.hasPrefix("outl-capture: outld.conf: page: page name over 1 KiB"), "\(r.stderr)")
        #expect(h.pending().isEmpty)
    }

    @Test func a_page_name_too_long_for_a_file_gets_a_shortened_one_and_bad_names_are_refused() throws {
        let h = try OutlHome()
        let long = String(repeating: "頁", count: 120)  // 360 bytes: no file name holds it
        _ = try h.capture(["into a long page"], extra: ["--page", long, "--quiet"])
        #expect(try h.outld(["--once"]).status == 0)
        let files = listDir(Path.join(h.workspace, "pages"))
        #expect(files.count == 1 && files[0].utf8.count <= 255, "\(files)")
        #expect(page(h, files[0]).contains("- into a long page\n"))
        // A control character, or a name over 1 KiB: refused with 65, nothing saved.
        for bad in ["a\u{1B}[2Jb", String(repeating: "x", count: 1025)] {
            let r = try h.capture(["never saved"], extra: ["--page", bad])
            #expect(r.status == 65 && r.stderr.hasPrefix("outl-capture: --page: "), "\(r.stderr)")
        }
        #expect(h.pending().isEmpty)
    }
}
