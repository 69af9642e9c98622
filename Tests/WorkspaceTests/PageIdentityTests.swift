// Page identity: a page exists only under the one id every device derives from what it names (a
// journal's day, a named page's canonical name); a createPage under any other id is refused by the
// model, from the op alone, on both readers of the op log. Names that differ in case or Unicode
// normalization are one page, and no id a name already in NFC ever had changes.
import SystemCalls
import TestSupport
import Testing
@testable import Workspace

private let peer = BlockID.random()
private let day3 = JournalDay(year: 2026, month: 12, day: 3)!

private func stamp(_ wall: Int64, _ actor: BlockID = peer) -> HLC { HLC(wall: wall, counter: 0, actor: actor) }

private func createPage(_ id: BlockID, _ kind: PageKind, _ name: String, wall: Int64 = 1_796_206_489_000, actor: BlockID = peer) -> Op {
    var op = Op(hlc: stamp(wall, actor), kind: .createPage, id: id)
    op.pageKind = kind; op.text = name
    return op
}

private func createBlock(_ page: BlockID, _ text: String, wall: Int64 = 1_796_206_489_500) -> Op {
    var op = Op(hlc: stamp(wall), kind: .createBlock, id: BlockID.random())
    op.page = page; op.pos = "a0"; op.text = text
    return op
}

/// The derivation of named page ids before names were normalized: FNV-1a of `lowercased()`.
private func preNFCNamedPage(_ name: String) -> BlockID {
    let lowered = name.lowercased().utf8
    var h1 = FNV1a(), h2 = FNV1a(seed: 0x6C62_272E_07BB_0142)
    h1.add(lowered)
    h2.add(lowered)
    return BlockID(hi: (h1.value & ~0xF000) | 0x8000, lo: (h2.value & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
}

/// Applies `ops` the way the boot does: each op encoded to its line, parsed, applied from the bytes.
private func applyAsLines(_ ops: [Op]) -> Model {
    var model = Model()
    var scratch = ParseScratch()
    for op in ops {
        let line = Array(OpEncoder.line(op).dropLast())
        line.withUnsafeBufferPointer { l in
            guard let raw = OpParser.parseRaw(l, &scratch) else { Issue.record("line did not parse"); return }
            scratch.bytes.withUnsafeBufferPointer { sb in
                scratch.props.withUnsafeBufferPointer { pp in
                    _ = model.apply(RawOpView(raw: raw, json: UnsafeBufferPointer(rebasing: l[9...]), scratch: sb, props: pp))
                }
            }
        }
    }
    return model
}

private func applied(_ ops: [Op]) -> Model {
    var m = Model()
    for op in ops { m.apply(op) }
    return m
}

@Test func a_journal_page_under_another_id_is_refused() {
    let rogue = BlockID.random()
    let block = createBlock(rogue, "on the peer's own page")
    let m = applied([createPage(rogue, .journal, day3.iso), block])
    #expect(m.pages[rogue]?.known == false)
    #expect(m.pages[rogue]?.relativePath() == nil)
    #expect(m.refusedPages[rogue] == RefusedPage(kind: .journal, name: day3.iso, actor: peer, hlc: stamp(1_796_206_489_000)))
    // The day's own page is not made from it, and the block stays on the refused id, unprojected.
    #expect(m.pages[BlockID.journalPage(day3)] == nil)
    #expect(m.blocks[block.id]?.page == rogue)
}

@Test func a_peers_journal_page_under_another_id_does_not_take_the_days_file() {
    let day = BlockID.journalPage(day3)
    let rogue = BlockID.random()
    // The peer's page is older, and would have won the file by its stamp.
    let ops = [createPage(rogue, .journal, day3.iso, wall: 1), createBlock(rogue, "theirs"),
               createPage(day, .journal, day3.iso, wall: 5), createBlock(day, "ours")]
    let m = applied(ops)
    #expect(m.pages[day]?.known == true && m.pages[day]?.relativePath() == "journals/2026_12_03.md")
    #expect(m.pages.values.filter { $0.relativePath() == "journals/2026_12_03.md" }.count == 1)
    #expect(m.tree(of: day).map { m.blocks[$0.id]!.text } == ["ours"])
}

@Test func a_named_page_under_a_random_id_is_refused_and_under_its_derived_id_is_not() {
    let rogue = BlockID.random(), derived = BlockID.namedPage("Project X")
    let m = applied([createPage(rogue, .named, "Project X"), createPage(derived, .named, "Project X", wall: 1_796_206_490_000)])
    #expect(m.pages[rogue] == nil && m.refusedPages[rogue]?.name == "Project X")
    #expect(m.pages[derived]?.known == true && m.refusedPages[derived] == nil)
    #expect(m.pages.values.filter { $0.relativePath() == "pages/Project X.md" }.map(\.id) == [derived])
}

@Test func a_create_page_naming_something_other_than_its_id_is_refused() {
    let day = BlockID.journalPage(day3)
    let cases: [Op] = [
        createPage(day, .named, day3.iso),                             // the day's id, as a named page
        createPage(BlockID.namedPage(day3.iso), .journal, day3.iso),   // a name's id, as a journal
        createPage(BlockID.namedPage("x"), .journal, "not a date"),   // a journal of no day
        createPage(BlockID.journalPage(day3.next), .journal, day3.iso), // another day's id
        createPage(BlockID.namedPage(""), .named, ""),                // no name at all
        createPage(BlockID.namedPage("Alpha"), .named, "Beta"),        // another name's id
    ]
    for op in cases {
        let m = applied([op])
        #expect(m.pages[op.id]?.known != true, "\(op.pageKind) \(op.text) under \(op.id)")
        #expect(m.refusedPages[op.id]?.actor == peer)
        #expect(m.opsSkipped == 1)
    }
    // Both spellings of a day name the day's page.
    #expect(applied([createPage(day, .journal, "2026_12_03")]).pages[day]?.known == true)
}

@Test func refusals_do_not_depend_on_the_order_of_the_ops() {
    let rogue = BlockID.random(), day = BlockID.journalPage(day3)
    var ops = [createPage(rogue, .journal, day3.iso, wall: 3), createPage(rogue, .named, "other", wall: 2, actor: BlockID.random()),
               createBlock(rogue, "x"), createPage(day, .journal, day3.iso, wall: 4), createBlock(day, "y"),
               createPage(day, .named, "a named page under the day's id", wall: 1)]
    let reference = applied(ops)
    #expect(reference.refusedPages[rogue]?.name == "other" && reference.refusedPages[day]?.hlc.wall == 1)
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<20 {
        ops.shuffle(using: &rng)
        let m = applied(ops + ops.reversed())
        #expect(m.refusedPages == reference.refusedPages)
        #expect(m.pages.mapValues(\.known) == reference.pages.mapValues(\.known))
        #expect(m.pages[day]?.name == day3.iso)
    }
}

@Test func both_readers_of_the_op_log_refuse_the_same_pages() {
    let rogue = BlockID.random(), named = BlockID.random()
    let ops = [createPage(rogue, .journal, day3.iso), createBlock(rogue, "x"), createPage(named, .named, "Café"),
               createPage(BlockID.namedPage("Café"), .named, "Cafe\u{301}"), createPage(BlockID.journalPage(day3), .journal, day3.iso)]
    let viaOps = applied(ops), viaLines = applyAsLines(ops)
    #expect(viaLines.refusedPages == viaOps.refusedPages && Set(viaLines.refusedPages.keys) == [rogue, named])
    #expect(viaLines.pages.mapValues(\.known) == viaOps.pages.mapValues(\.known))
    #expect(viaLines.opsSkipped == viaOps.opsSkipped && viaLines.opsSkipped == 2)
}

@Test func a_peers_page_under_another_id_gets_no_file_in_the_workspace() async throws {
    let t = TestWorkspace()
    let ws = try t.open()
    try Durable.makeDirectory(Path.join(t.root, ".outl"), mode: 0o755)
    try Durable.makeDirectory(opsDir(t.root), mode: 0o755)
    let rogue = BlockID.random(), rogueNamed = BlockID.random()
    let ops = [createPage(rogue, .journal, day3.iso), createBlock(rogue, "takes the day's file"),
               createPage(rogueNamed, .named, "Inbox"), createBlock(rogueNamed, "takes the page's file")]
    try deliverByRename(Path.join(opsDir(t.root), "ops-\(peer).jsonl"), encode(ops))
    let r = try await ws.mergeForeignOps()
    #expect(r.read == 4 && r.applied == 2 && r.dirtyPages.isEmpty)  // the refused createPages change nothing
    _ = try await ws.projectDirtyPages()
    #expect(readText(Path.join(t.root, "journals/2026_12_03.md")) == nil)
    #expect(readText(Path.join(t.root, "pages/Inbox.md")) == nil)
    await ws.close()
    // A fresh boot over the same op file refuses them too.
    let again = try t.open()
    #expect(await again.journalMarkdown(day3) == nil)
    _ = try await again.projectDirtyPages()
    #expect(readText(Path.join(t.root, "journals/2026_12_03.md")) == nil)
    await again.close()
}

@Test func names_that_differ_only_in_case_or_normalization_are_one_page() {
    let spellings = ["Café", "Cafe\u{301}", "CAFÉ", "CAFE\u{301}", "café", "cafe\u{301}"]
    #expect(Set(spellings.map(BlockID.namedPage)).count == 1)
    // Canonical reordering of marks, Hangul jamo and singletons are normalized as well.
    #expect(BlockID.namedPage("a\u{323}\u{302}") == BlockID.namedPage("a\u{302}\u{323}"))
    #expect(BlockID.namedPage("\u{1100}\u{1161}") == BlockID.namedPage("\u{AC00}"))
    #expect(BlockID.namedPage("\u{212B}ngström") == BlockID.namedPage("Ångström"))
    #expect(BlockID.namedPage("Café") != BlockID.namedPage("Cafe"))
    // A decomposed name's page is created by either spelling.
    let m = applied([createPage(BlockID.namedPage("Café"), .named, "Cafe\u{301}")])
    #expect(m.pages[BlockID.namedPage("Café")]?.known == true)
}

@Test func ids_of_names_already_in_nfc_are_the_ids_they_always_had() {
    let names = ["Inbox", "project x", "Ünïcödé", "日本語のページ", "Ἀθῆναι", "🧪 lab", "İstanbul", "ß", "J\u{30C}", "\u{1F0}",
                 "a/b", "100% done", String(repeating: "漢", count: 83), "ΣΑΣ"]
    for name in names {
        #expect(PageNames.isNFC(name), "\(name) is NFC")
        #expect(BlockID.namedPage(name) == preNFCNamedPage(name), "\(name)")
    }
    // Pinned: the derivation as it is in users' op logs.
    #expect(BlockID.namedPage("Inbox").description == preNFCNamedPage("inbox").description)
    // Where lower-casing undoes NFC, the two case variants stay the two pages they always were.
    #expect(BlockID.namedPage("J\u{30C}") != BlockID.namedPage("\u{1F0}"))
}

@Test func a_page_created_under_the_pre_nfc_id_of_a_decomposed_name_is_refused() {
    let legacy = preNFCNamedPage("Cafe\u{301}")
    #expect(legacy != BlockID.namedPage("Cafe\u{301}"))
    let m = applied([createPage(legacy, .named, "Cafe\u{301}"), createPage(BlockID.namedPage("Café"), .named, "Café", wall: 2)])
    #expect(m.pages[legacy] == nil && m.refusedPages[legacy]?.name == "Cafe\u{301}")
    // One page, one file: the legacy id no longer feeds a second page into the same name.
    #expect(m.pages.values.filter(\.known).map(\.id) == [BlockID.namedPage("Café")])
}

@Test func the_standard_librarys_nfc_is_the_normalization_ids_need() {
    #expect(Array(PageNames.nfc("Cafe\u{301}").utf8) == Array("Caf\u{E9}".utf8))
    #expect(Array(PageNames.nfc("a\u{302}\u{323}").utf8) == Array("\u{1EAD}".utf8))
    #expect(Array(PageNames.nfc("\u{212B}").utf8) == Array("\u{C5}".utf8))
    // A composition excluded from NFC stays decomposed.
    #expect(Array(PageNames.nfc("\u{958}").utf8) == Array("\u{915}\u{93C}".utf8))
    #expect(PageNames.isNFC("Café") && !PageNames.isNFC("Cafe\u{301}") && PageNames.isNFC("plain ascii"))
    #expect(PageNames.key("CAFE\u{301}") == "café")
}
