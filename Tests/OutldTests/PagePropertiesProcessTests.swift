// outld.conf `page-properties` through the real programs: by default a day's page holds only what
// was typed and the id:: Logseq hides, `outl show --details` prints each capture's record; the
// setting writes the record on the page (every page once, after a restart); a bad value stops outld
// with its line (78) before anything is written (as it stops a writer of the workspace inbox).
import SystemCalls
import Testing
import TestSupport

@Suite(.serialized) struct PagePropertiesProcessTests {
    func conf(_ h: OutlHome, _ text: String) throws {
        try Durable.makeDirectory(Path.join(h.home, ".config"), mode: 0o755)
        try Durable.makeDirectory(Path.join(h.home, ".config/outl"), mode: 0o755)
        try writeText(Path.join(h.home, ".config/outl/outld.conf"), text)
    }

    @Test func outld_writes_a_captures_record_only_where_page_properties_says() throws {
        let h = try OutlHome()
        _ = try h.captureID("buy oat milk")
        #expect(try h.outld(["--once"]).status == 0)
        let page = h.journal()
        #expect(page.hasPrefix("- buy oat milk\n  id:: ") && !page.contains("captured-at") && !page.contains("source::"), "\(page)")
        let details = try h.outl(["show", "--details", "2026-12-02"])
        #expect(details.status == 0 && details.stdout.contains("- buy oat milk\n  captured-at:: 2026-12-02T10:00:00.000Z\n  source:: "),
                "\(details.stdout)\(details.stderr)")
        #expect(try h.outl(["check", "--details"]).status == 64)
        // Shown on the page after a restart with the setting: every page written once anew.
        try conf(h, "page-properties = captured-at source\n")
        #expect(try h.outld(["--once"]).status == 0)
        #expect(h.journal().hasPrefix("- buy oat milk\n  captured-at:: 2026-12-02T10:00:00.000Z\n  source:: "), "\(h.journal())")
        #expect(try h.outl(["check"]).status == 0)
        // A value that cannot mean one thing: refused with its line, the page left as it is.
        let before = h.journal()
        _ = try h.captureID("before the bad line", at: "2026-12-02T11:00:00Z")
        try conf(h, "page-properties = sometimes\n")
        let r = try h.outld(["--once"])
        #expect(r.status == 78 && r.stderr.contains("outld.conf:1: page-properties is captured-at, source, both (captured-at source) or none, not \"sometimes\""),
                "\(r.status) \(r.stderr)")
        #expect(h.journal() == before && h.pending().count == 1)
    }
}
