// fuzz-markdown: libFuzzer target over the Workspace Markdown module (SPEC 2.2). Invariants:
// * any bytes parse without crashing or hanging, and after one projection a page is a fixed point:
//   p2 = parse(render(parse(x))) gives parse(render(p2)) == p2, so re-projecting never churns (the
//   first render normalizes a bare CR: corpus/fuzz-markdown/regress-cr-*);
// * the input read as capture texts (split at 0x1E; each normalized as a page holds it) projects
//   to a page that parses back to exactly those blocks, and that Logseq's rules (LogseqRules.swift,
//   the conformance tests' oracle, linked here) read as exactly one top-level block per text whose
//   only properties are its own, with no page property, drawer or stray property group;
// * each text goes through what a capture does (Markdown.capturedText), and the task-marker rule
//   holds: a text is a task in Logseq exactly when it starts with TODO or LATER, and a priority
//   comes only with a marker; a one-line text of words, backslashes and plain punctuation is shown
//   by Logseq exactly as typed, every backslash included.
import Workspace

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMarkdown(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let p2 = Markdown.parse(Markdown.render(Markdown.parse(bytes)))
    let p3 = Markdown.parse(Markdown.render(p2))
    precondition(p3 == p2, "projection is not a fixed point\nonce:  \(p2)\ntwice: \(p3)")

    var blocks: [MDBlock] = [], typedTexts: [String] = []
    for (n, piece) in bytes.split(separator: 0x1E, omittingEmptySubsequences: false).enumerated() {
        let typed = Markdown.normalizedText(String(decoding: piece, as: UTF8.self))
        let text = Markdown.capturedText(typed)
        typedTexts.append(typed)
        blocks.append(MDBlock(id: BlockID(hi: 0x0123_4567_89AB_7000 | UInt64(n), lo: 0x8000_0000_0000_0000 | UInt64(n)),
                              text: text, props: [Property("captured-at", "2026-12-02T09:00:00Z"), Property("source", "fuzz")]))
    }
    let page = MDPage(blocks: blocks)
    let out = Markdown.render(page)
    let back = Markdown.parse(out)
    precondition(back == page, "parse(render(page)) != page\npage: \(page)\nfile:\n\(String(decoding: out, as: UTF8.self))\nback: \(back)")
    let read = LogseqRules.read(out)
    precondition(read.blocks.count == blocks.count && read.directives.isEmpty && read.preBlockLines == 0,
                 "Logseq reads \(read.blocks.count) blocks for \(blocks.count) texts\n\(String(decoding: out, as: UTF8.self))")
    for (b, (m, typed)) in zip(read.blocks, zip(blocks, typedTexts)) {
        let props = b.properties.map { "\($0.0)=\($0.1)" }.sorted()
        let want = ["captured-at=2026-12-02T09:00:00Z", "id=\(m.id!)", "source=fuzz"]
        precondition(b.level == 1 && props == want && b.extraPropertyGroups == 0 && b.drawers.isEmpty,
                     "Logseq reads \(b) for \(m.text.debugDescription)\n\(String(decoding: out, as: UTF8.self))")
        precondition((b.marker != nil) == LogseqRules.meantAsTask(typed) && (b.priority == nil || b.marker != nil),
                     "Logseq reads marker \(b.marker ?? "none") for \(m.text.debugDescription)")
        let plain = typed.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A) || Array(" \\.,;!?'\"()/".utf8).contains(c)
        }
        if plain, let f = typed.utf8.first, f != 0x20, typed.utf8.last != 0x20, b.marker == nil {
            var shown = ""
            shown.unicodeScalars.append(contentsOf: (b.lines.first ?? "").unicodeScalars.filter { $0 != "\u{2060}" })
            precondition(shown == typed, "Logseq shows \(shown.debugDescription) for \(typed.debugDescription)")
        }
    }
    return 0
}
