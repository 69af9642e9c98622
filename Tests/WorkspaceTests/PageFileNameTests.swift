// Page file names: a name that fits keeps the stem it always had and round-trips; one that does not
// gets a shortened stem within the budget that leaves room for our temporary and Syncthing's
// conflict copy, cut between whole characters, recognisable as shortened and different for
// different pages.
import SystemCalls
import TestSupport
import Testing
@testable import Workspace

private let nameMax = 255
private let conflictSuffix = ".sync-conflict-20261203-164501-ABCDEFG"

/// What `parse` says of the stem, and the bytes before the marker of a shortened one.
private func prefix(ofShortened stem: String) -> [UInt8]? {
    guard case .shortened = PageFileName.parse(stem) else { return nil }
    return Array(stem.utf8.dropLast(34))
}

/// Every '%' in `bytes` starts a whole %XX escape.
private func escapesAreWhole(_ bytes: [UInt8]) -> Bool {
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%") {
            guard i + 2 < bytes.count, BlockID.hexValue(bytes[i + 1]) != nil, BlockID.hexValue(bytes[i + 2]) != nil else { return false }
            i += 3
        } else {
            i += 1
        }
    }
    return true
}

private func expectFits(_ stem: String, _ comment: Comment? = nil) {
    #expect(stem.utf8.count <= PageFileName.maxStemBytes, comment)
    #expect((stem + ".md").utf8.count <= nameMax, comment)
    #expect((stem + ".md.tmp").utf8.count <= nameMax, comment)
    #expect((stem + conflictSuffix + ".md").utf8.count <= nameMax, comment)
    #expect((stem + conflictSuffix + ".md.tmp").utf8.count <= nameMax, comment)
}

private let shortNames = ["Inbox", "a/b", "..", ".hidden", "100% done", "what? <x>|*:\"\\", "ünï 🧪", "tab\there",
                          "50%~off", "x%~0123456789abcdef0123456789abcdef", "%~", "a.b.c", "time: 10:30", "%41",
                          "日本語", "e\u{301}", String(repeating: "a", count: PageFileName.maxStemBytes),
                          String(repeating: "漢", count: 70), "notes.sync-conflict-20260101-120000-ABCDEFG"]

@Test func a_name_that_fits_keeps_the_stem_it_always_had() {
    #expect(PageFileName.fileStem(for: "Inbox") == "Inbox")
    #expect(PageFileName.fileStem(for: "a/b") == "a%2Fb")
    #expect(PageFileName.fileStem(for: ".hidden") == "%2Ehidden")
    #expect(PageFileName.fileStem(for: "100% done") == "100%25 done")
    #expect(PageFileName.fileStem(for: "time: 10:30") == "time%3A 10%3A30")
    #expect(PageFileName.fileStem(for: "a.b.c") == "a.b.c")
    #expect(PageFileName.fileStem(for: String(repeating: "a", count: 210)) == String(repeating: "a", count: 210))
    for name in shortNames where !name.contains(".sync-conflict-") {
        #expect(PageFileName.fileStem(for: name) == PageFileName.encode(name))
    }
}

@Test func every_name_that_fits_round_trips_through_its_stem() {
    for name in shortNames {
        let stem = PageFileName.fileStem(for: name)
        expectFits(stem, "\(name)")
        #expect(PageFileName.parse(stem) == .name(PageNames.nfc(name)), "\(name)")
        #expect(!stem.contains("/") && !stem.hasPrefix(".") && !stem.contains(":") && !stem.contains("\t"))
        #expect(escapesAreWhole(Array(stem.utf8)), "\(stem)")
    }
}

@Test func a_stem_is_the_nfc_spelling_of_the_name() {
    #expect(PageFileName.fileStem(for: "Cafe\u{301}") == "Caf\u{E9}")
    #expect(Array(PageFileName.fileStem(for: "Cafe\u{301}").utf8) == Array("Caf\u{E9}".utf8))
}

@Test func an_83_character_cjk_name_gets_a_shortened_stem_that_fits() {
    let name = String(repeating: "漢", count: 83)
    #expect(PageFileName.encode(name).utf8.count + 3 == 252)  // fits NAME_MAX alone, not with its temporary
    let stem = PageFileName.fileStem(for: name)
    expectFits(stem)
    #expect(PageFileName.parse(stem) == .shortened(BlockID.namedPage(name)))
    let kept = String(decoding: prefix(ofShortened: stem)!, as: UTF8.self)
    #expect(kept == String(repeating: "漢", count: kept.count) && kept.count == 58)  // 176 bytes of whole characters
}

@Test func a_300_character_ascii_name_gets_a_shortened_stem_that_fits() {
    let name = String(repeating: "x", count: 300)
    let stem = PageFileName.fileStem(for: name)
    expectFits(stem)
    #expect(stem.utf8.count == PageFileName.maxStemBytes)
    #expect(PageFileName.parse(stem) == .shortened(BlockID.namedPage(name)))
    #expect(stem.hasPrefix(String(repeating: "x", count: 176) + "%~"))
    #expect(Page(id: BlockID.namedPage(name), kind: .named, name: name).relativePath() == "pages/\(stem).md")
}

@Test func names_that_differ_only_after_the_cut_get_different_stems() {
    let base = String(repeating: "word ", count: 60)
    let stems = ["x", "y", "x:", "x%", ".", "漢"].map { PageFileName.fileStem(for: base + $0) }
    #expect(Set(stems).count == stems.count)
    for s in stems { expectFits(s) }
    // Case and normalization variants are one page, so they share one stem.
    #expect(PageFileName.fileStem(for: base + "X") == PageFileName.fileStem(for: base + "x"))
    #expect(PageFileName.fileStem(for: base + "é") == PageFileName.fileStem(for: base + "e\u{301}"))
}

@Test func the_cut_never_splits_an_escape_a_utf8_sequence_or_a_character() {
    // Every alignment of escapes, multi-byte scalars and combining marks against the cut.
    let fillers = [":", "%", ".", "漢", "🧪", "e\u{301}", "\u{1F1EF}\u{1F1F5}", "a\u{323}\u{302}"]
    for filler in fillers {
        for lead in 0..<8 {
            let name = String(repeating: "a", count: lead) + String(repeating: filler, count: 250)
            let stem = PageFileName.fileStem(for: name)
            expectFits(stem, "\(filler) after \(lead)")
            guard let kept = prefix(ofShortened: stem) else { Issue.record("\(filler) after \(lead) was not shortened"); continue }
            #expect(escapesAreWhole(kept), "\(filler) after \(lead)")
            let decoded = PageFileName.decode(String(decoding: kept, as: UTF8.self))
            let nfc = PageNames.nfc(name)
            // What is kept is the first whole characters of the name.
            #expect(Array(nfc).starts(with: Array(decoded)) && nfc.utf8.starts(with: decoded.utf8), "\(filler) after \(lead)")
            #expect(kept.count > PageFileName.maxStemBytes - 34 - 16, "the cut wastes at most one character's escapes")
        }
    }
}

@Test func a_shortened_stem_is_never_the_stem_of_a_name_that_fits() {
    // Names made to look like shortened stems encode to stems that are not.
    let id = BlockID.namedPage("anything")
    let hex = String(id.description.filter { $0 != "-" })
    for name in ["%~" + hex, "page%~" + hex, String(repeating: "p", count: 100) + "%~" + hex] {
        let stem = PageFileName.fileStem(for: name)
        #expect(PageFileName.parse(stem) == .name(name))
        #expect(!stem.contains("%~"))
    }
    #expect(PageFileName.parse("page%~" + hex) == .shortened(id))
    #expect(PageFileName.parse("page%~" + hex.uppercased()) == .name("page%~" + hex.uppercased()))
    #expect(PageFileName.parse("page%~" + hex.dropLast()) == .name("page%~" + hex.dropLast()))
}

@Test func a_name_holding_a_sync_conflict_marker_is_not_taken_for_a_conflict_copy() {
    let name = "notes.sync-conflict-20260101-120000-ABCDEFG"
    let stem = PageFileName.fileStem(for: name)
    #expect(stem == "notes%2Esync-conflict-20260101-120000-ABCDEFG")
    #expect(SyncToolNames.conflictOriginal(stem + ".md") == nil)
    #expect(PageFileName.parse(stem) == .name(name))
}

@Test func a_page_with_a_long_name_is_projected_to_its_shortened_file() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    let name = String(repeating: "漢", count: 83)
    let page = BlockID.namedPage(name)
    var cp = Op(hlc: HLC(wall: 1_796_206_489_000, counter: 0, actor: BlockID.random()), kind: .createPage, id: page)
    cp.pageKind = .named; cp.text = name
    var b = Op(hlc: HLC(wall: 1_796_206_489_001, counter: 0, actor: cp.hlc.actor), kind: .createBlock, id: BlockID.random())
    b.page = page; b.pos = "a0"; b.text = "a long page's block"
    try await ws.commitAsIs([cp, b])
    _ = try await ws.projectDirtyPages()
    let path = Path.join(t.root, "pages/\(PageFileName.fileStem(for: name)).md")
    #expect(readText(path)?.contains("- a long page's block") == true)
    await ws.close()
}
