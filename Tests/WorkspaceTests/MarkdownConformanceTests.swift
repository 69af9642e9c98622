// Conformance of the projection (SPEC 2.2): captures of Markdown-looking text, projected through the
// real Workspace, are each exactly one block with only their own properties and their text as
// captured, read (a) by Logseq's rules (LogseqRules, written from mldoc and graph-parser) and (b) by
// CommonMark's reference implementation, the `cmark` binary, and GitHub's, `cmark-gfm` with its
// table, strikethrough, autolink and task-list extensions (what Obsidian's reading view is closest
// to), each run as a process (skipped, and reported as skipped, where one is not installed:
// `make deps` installs both).
import Foundation
import SystemCalls
import Testing
import TestSupport
@testable import Workspace

/// One kind of line (or lines) a capture may hold. `cmText`: CommonMark shows its characters as
/// text (a list item marker, a quote mark, a setext underline or raw HTML it turns into structure
/// instead, so only the structural checks apply to captures holding one).
struct Piece { let text: String; let cmText: Bool }

let conformancePieces: [Piece] = {
    let text: [String] = [
        "plain words", "- bullet", "-", "-\ttab after the dash", "  - indented bullet", "\t- tab-indented bullet",
        "\\- escaped by hand", "\\\\- two backslashes", "# heading", "## second", "###### six", "####### seven",
        "#tag is no heading", "#", "#\ttab heading", "key:: value", "id:: 00000000-0000-0000-0000-000000000000",
        "source:: forged", "collapsed:: true", "a.b:: c", "ünï:: ü", "key::", "key::value is no property",
        "\\key:: the old escape", "k:\\: typed with a backslash", "k\\:: v", "a:::: b", "#+title: Hijack",
        "#+TITLE:no space", "  #+begin_src: x", ":LOGBOOK:", ":END:", ":PROPERTIES:", ":a-b:",
        "trailing backslash \\", "C:\\Users\\me\\", "two \\\\", "three \\\\\\", "emoji 🧪👩‍👩‍👧 ok",
        "RTL עברית والعربية", "zero\u{200B}width", "   three spaces", "\tleading tab", "key :: spaced, no property",
        "a:: b:: c", "see the note:: here", "trailing colons::", "::", "\\", "\\\\", "a \\* b \\# c",
        "```\n- in code\nkey:: in code\n# in code\n:LOGBOOK:\n```", "~~~\n:LOGBOOK:\n#+title: in code\n~~~",
        "```swift\nlet s = \"\\\\\"\n```", "````\n```\n- a fence inside a longer one\n````",
        "```\n- never closed", "~~~\n- mldoc closes this at backticks\n```\n- after",
        "```\nid:: 11111111-1111-1111-1111-111111111111\n```", "\\```", "  ```indented opener\n  - x\n  ```",
        // Task markers: TODO and LATER make a task, the others and a lone priority are text.
        "TODO buy milk", "LATER tonight", "TODO [#A] call the bank", "NOW I get it", "DONE with taxes!",
        "DOING laundry", "WAITING for the bus", "WAIT what", "CANCELED plans", "CANCELLED plans",
        "STARTED over", "IN-PROGRESS report", "[#A] urgent", "[#B]", "# NOW a heading", "## TODO heading task",
        "NOW", "TODO", "NOW: a colon", "TODONE", "todo lower case", "\u{2060}NOW typed joiner",
        // Backslashes a person types: paths, regexes, TeX, escapes meant for another tool; each is shown.
        "C:\\Users\\bob\\new_folder\\x.txt", "\\\\server\\share", "grep '^\\s*- \\[ \\]' notes.md",
        "\\pi \\times 2\\deg", "\\[ x^2 \\]", "inline \\(y\\) math", "regex \\d+\\.\\d+$", "1\\2 é\\é \\ done",
        "`code\\path` and ``c\\d``", "escaped \\* star \\_under\\_", "line ends \\\\\nnext", "\\\\\\\\ four",
        "\\begin{equation}\nx\n\\end{equation}", "\\NOW not a task",
        // Logseq-only syntax CommonMark shows as text: timestamps, entity references.
        "pay rent SCHEDULED: <2026-12-05 Sat>", "DEADLINE: <2026-12-31 Thu 17:00>", "met [2026-12-01 Tue] at noon",
        "fish &amp; chips &#38; &copy; &nbsp;", "\\begin{x} never ended", "a &b; c",
        "\\:: typed key of a backslash", ":\\:",
        "#+BEGIN_QUOTE\nquoted\n#+END_QUOTE", "#+begin_src sh\necho $HOME\n#+end_src", "a\n#+END_QUOTE alone",
        // A setext underline under the first line would make it and the properties one heading.
        "first\n===", "first\n---", "first\n=", "first\n  ==  ", "| not a table\nplain",
    ]
    let structure: [String] = [
        "* star", "+ plus", "1. one", "2) two", "> quote", "> quote:: x", "[^1]: a footnote",
        "[ref]: https://example.com", "$$", "$$ x $$", "\\begin{equation}", "\\end{equation}", "<div>", "</div>",
        "<!-- comment", "-->", "#+BEGIN_QUOTE", "#+END_QUOTE", "---", "***", "===", "| a | b |",
        "#+BEGIN_QUERY\n{:title \"x\"}\n- not a block\n#+END_QUERY", "$$\n- math line\n$$",
        "\\begin{equation}\n- x\n\\end{equation}", "<div>\n- html line\n</div>", "> quote\n- after a quote",
        "* item\n```\n- a fence in a list\n```", "<!x", "<b>bold</b> - tail",
        // Constructs that start on the first line and would take in lines after it (issue 16).
        "| a | b |\n| - | - |\n| 1 | 2 |", "a | b\n--|--\n1 | 2", "> quote\n> more", "> [!note] callout\n> body",
        "<div>\nhtml\n</div>", "<b>\nbold\n</b>", "<!-- c -->\nafter", "<details>\n<summary>s</summary>",
    ]
    return text.map { Piece(text: $0, cmText: true) } + structure.map { Piece(text: $0, cmText: false) }
}()

/// What the drain hands in: white space trimmed at both ends, never empty.
func drained(_ s: String) -> String? {
    let t = s.trimmingCharacters(in: .whitespacesAndNewlines)
    return t.isEmpty ? nil : t
}

/// Every piece alone, after a first line, before a last line, in pairs, and random combinations with
/// LF, CRLF, lone CR and blank lines between them; (text, CommonMark shows it as text).
func conformanceCorpus() -> [(String, Bool)] {
    var out: [(String, Bool)] = []
    let p = conformancePieces
    for x in p {
        out.append((x.text, x.cmText))
        out.append(("first line\n" + x.text, x.cmText))
        out.append((x.text + "\nlast line", x.cmText))
    }
    var r = Rng(s: 2026)
    for _ in 0..<400 {
        var s = ""
        var cm = true
        for n in 0..<(1 + r.below(5)) {
            if n > 0 { s += ["\n", "\n", "\n", "\r\n", "\r", "\n\n"][r.below(6)] }
            let x = p[r.below(p.count)]
            s += x.text
            cm = cm && x.cmText
        }
        out.append((s, cm))
    }
    return out.compactMap { t, cm in drained(t).map { ($0, cm) } }
}

/// `text`: what the block holds (normalized, the task-marker rule applied); `typed`: what was captured.
struct Captured { let id: BlockID; let text: String; let typed: String; let props: [Property]; let cmText: Bool }

/// Projects the captures onto one day's page through the real Workspace; returns the page's bytes.
func project(_ texts: [(String, Bool)], in t: TestWorkspace, day: JournalDay) async throws -> ([UInt8], [Captured]) {
    let ws = try t.open()
    var caps: [Captured] = []
    var blocks: [CaptureBlock] = []
    for (text, cm) in texts {
        let c = capture(text, day: day)
        blocks.append(c)
        caps.append(Captured(id: BlockID(c.id)!, text: Markdown.capturedText(text), typed: Markdown.normalizedText(text),
                             props: [], cmText: cm))  // its page leaves out its record (CaptureRecord)
    }
    _ = try await ws.appendCaptures(blocks)
    _ = try await ws.projectDirtyPages()
    await ws.close()
    let bytes = try Durable.readRegularFile(t.journal(day), limit: 64 << 20)
    return (bytes, caps)
}

/// Equal as shown: every character the person typed, every backslash included (issue 16), up to the
/// delimiters of the person's own inline markup (CommonMark shows code and emphasis without them) and
/// the invisible U+2060 of the task-marker rule.
func sameAsShown(_ shown: String, _ captured: String) -> Bool {
    func text(_ s: String) -> String { s.filter { $0 != "`" && $0 != "*" && $0 != "_" && $0 != "\u{2060}" } }
    return text(shown) == text(captured)
}

// MARK: (a) Logseq's rules


func logseqProblems(_ page: [UInt8], _ caps: [Captured]) -> [String] {
    let read = LogseqRules.read(page)
    var problems: [String] = []
    if !read.directives.isEmpty { problems.append("page properties from directives: \(read.directives)") }
    if read.preBlockLines > 0 { problems.append("\(read.preBlockLines) line(s) before the first block") }
    guard read.blocks.count == caps.count else {
        return problems + ["\(read.blocks.count) blocks for \(caps.count) captures"]
    }
    for (b, c) in zip(read.blocks, caps) {
        let want = (c.props.map { ($0.key, $0.value) } + [("id", c.id.description)]).sorted { $0.0 < $1.0 }
        let have = b.properties.sorted { $0.0 < $1.0 }
        if b.level != 1 { problems.append("\(c.text.debugDescription): level \(b.level)") }
        if have.map(\.0) != want.map(\.0) || have.map(\.1) != want.map(\.1) {
            problems.append("\(c.text.debugDescription): properties \(b.properties)")
        }
        if b.extraPropertyGroups > 0 { problems.append("\(c.text.debugDescription): a property group in its text") }
        if !b.drawers.isEmpty { problems.append("\(c.text.debugDescription): drawers \(b.drawers)") }
        if (b.marker != nil) != LogseqRules.meantAsTask(c.typed) {
            problems.append("\(c.typed.debugDescription): marker \(b.marker ?? "none")")
        }
        if b.marker == nil, let p = b.priority { problems.append("\(c.typed.debugDescription): priority \(p) without a marker") }

        let shown = b.lines.joined(separator: "\n")
        if !sameAsShown(shown, c.typed) { problems.append("\(c.typed.debugDescription) shown as \(shown.debugDescription)") }
    }
    return problems
}

// MARK: (b) CommonMark (cmark) and GitHub-flavoured Markdown (cmark-gfm)

func installed(_ name: String) -> String? {
    ["/usr/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
}
let cmarkPath = installed("cmark"), cmarkGFMPath = installed("cmark-gfm")
let gfmExtensions = ["-e", "table", "-e", "strikethrough", "-e", "autolink", "-e", "tasklist"]

/// The tree `cmark -t xml` prints (CommonMark.dtd): elements with attributes, and text.
final class XNode {
    let name: String
    var attrs: [String: String] = [:]
    var children: [XNode] = []
    var text = ""
    init(_ name: String) { self.name = name }

    static func parse(_ xml: String) -> XNode {
        let root = XNode("#root")
        var stack = [root]
        var s = Substring(xml)
        func decode(_ t: Substring) -> String {
            var out = ""
            var i = t.startIndex
            while i < t.endIndex {
                if t[i] == "&", let semi = t[i...].firstIndex(of: ";") {
                    let e = t[t.index(after: i)..<semi]
                    let map = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]
                    if let v = map[String(e)] { out += v }
                    else if e.hasPrefix("#x"), let n = UInt32(e.dropFirst(2), radix: 16), let u = Unicode.Scalar(n) { out.unicodeScalars.append(u) }
                    else if e.hasPrefix("#"), let n = UInt32(e.dropFirst()), let u = Unicode.Scalar(n) { out.unicodeScalars.append(u) }
                    else { out += "&" + e + ";" }
                    i = t.index(after: semi)
                } else {
                    out.append(t[i]); i = t.index(after: i)
                }
            }
            return out
        }
        while let lt = s.firstIndex(of: "<") {
            stack.last!.text += decode(s[..<lt])
            guard let gt = s[lt...].firstIndex(of: ">") else { break }
            let tag = s[s.index(after: lt)..<gt]
            s = s[s.index(after: gt)...]
            if tag.hasPrefix("?") || tag.hasPrefix("!") { continue }
            if tag.hasPrefix("/") { if stack.count > 1 { stack.removeLast() }; continue }
            let selfClosing = tag.hasSuffix("/")
            let body = selfClosing ? tag.dropLast() : tag
            let parts = body.split(separator: " ", maxSplits: 1)
            let node = XNode(String(parts[0]))
            if parts.count > 1 {
                var rest = parts[1]
                while let eq = rest.firstIndex(of: "=") {
                    let key = rest[..<eq].trimmingCharacters(in: .whitespaces)
                    let q1 = rest.index(eq, offsetBy: 2)
                    guard let q2 = rest[q1...].firstIndex(of: "\"") else { break }
                    node.attrs[key] = decode(rest[q1..<q2])
                    rest = rest[rest.index(after: q2)...]
                }
            }
            stack.last!.children.append(node)
            if !selfClosing { stack.append(node) }
        }
        return root
    }

    /// Every text below this node, HTML blocks' included.
    func allText() -> String { text + children.map { $0.allText() }.joined(separator: "\n") }

    func all(_ name: String) -> [XNode] { (self.name == name ? [self] : []) + children.flatMap { $0.all(name) } }

    /// Lines as CommonMark shows them; false when it made structure (a list, quote, HTML, rule).
    func shownLines(_ out: inout [String], _ cur: inout String) -> Bool {
        var plain = true
        switch name {
        case "text", "code", "html_inline": cur += text
        case "softbreak", "linebreak": out.append(cur); cur = ""
        case "paragraph":
            for c in children { plain = c.shownLines(&out, &cur) && plain }
            out.append(cur); cur = ""
        case "heading":
            cur = String(repeating: "#", count: Int(attrs["level"] ?? "1") ?? 1) + " "
            for c in children { plain = c.shownLines(&out, &cur) && plain }
            out.append(cur); cur = ""
        case "code_block":
            out.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init))
        case "list", "block_quote", "html_block", "thematic_break", "table":
            plain = false
            for c in children { _ = c.shownLines(&out, &cur) }
        default:
            for c in children { plain = c.shownLines(&out, &cur) && plain }
        }
        return plain
    }
}

func cmarkProblems(_ page: [UInt8], _ caps: [Captured], reader: String = cmarkPath!, options: [String] = []) throws -> [String] {
    let r = try run(reader, ["-t", "xml"] + options, stdin: page)
    guard r.status == 0 else { return ["\(reader) exited \(r.status): \(r.stderr)"] }
    let doc = XNode.parse(r.stdout).children.first { $0.name == "document" }
    let top = doc?.children ?? []
    guard top.count == 1, top[0].name == "list", top[0].attrs["type"] == "bullet" else {
        return ["the page is not one bullet list: \(top.map(\.name))"]
    }
    let items = top[0].children.filter { $0.name == "item" }
    guard items.count == caps.count else { return ["\(items.count) list items for \(caps.count) captures"] }
    var problems: [String] = []
    func trimmed(_ s: String) -> String { s.trimmingCharacters(in: .whitespaces) }
    func isFenceLine(_ s: String) -> Bool { let t = trimmed(s); return t.hasPrefix("```") || t.hasPrefix("~~~") }
    for (item, c) in zip(items, caps) {
        let ours = Set(c.props.map { "\($0.key):: \($0.value)" } + ["id:: \(c.id)"])
        // No construct of the capture's holds a property line: a quote, table, HTML block or heading.
        for kind in ["block_quote", "table", "html_block", "heading"] {
            for node in item.all(kind) where node.allText().contains("id:: \(c.id)") || node.allText().contains("captured-at:: ") {
                problems.append("\(c.text.debugDescription): its properties are inside a \(kind)")
            }
        }
        for code in item.all("code_block") {
            for l in code.text.split(separator: "\n") where ours.contains(String(l)) {
                problems.append("\(c.text.debugDescription): property line \(l) inside its code")
            }
            // Code shows exactly the captured lines, nothing escaped.
            let lines = code.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().joined(separator: "\n")
            if !lines.isEmpty, !c.typed.contains(lines) { problems.append("\(c.text.debugDescription): code shown as \(lines.debugDescription)") }
        }
        var shown: [String] = [], cur = ""
        var plain = true
        for child in item.children { plain = child.shownLines(&shown, &cur) && plain }
        guard plain, c.cmText else { continue }
        let have = shown.map(trimmed).filter { !$0.isEmpty && !ours.contains($0) && !isFenceLine($0) }
        let want = c.typed.split(separator: "\n", omittingEmptySubsequences: false).map { trimmed(String($0)) }
            .filter { !$0.isEmpty && !isFenceLine($0) }
        // CommonMark shows a run of blanks inside a line as it is, but a heading's `#` and a tab
        // after it as one space.
        func blanks(_ s: String) -> String { s.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
        if !sameAsShown(blanks(have.joined(separator: "\n")), blanks(want.joined(separator: "\n"))) {
            problems.append("\(c.text.debugDescription) shown as \(have.joined(separator: "\n").debugDescription)")
        }
    }
    return problems
}

// MARK: the tests

@Suite struct MarkdownConformanceTests {
    /// Pages of at most 60 captures, one day each, all through the real Workspace.
    static func pages() async throws -> [([UInt8], [Captured])] {
        let corpus = conformanceCorpus()
        let t = TestWorkspace()
        var out: [([UInt8], [Captured])] = []
        var day = JournalDay(year: 2026, month: 1, day: 1)!
        for start in stride(from: 0, to: corpus.count, by: 60) {
            out.append(try await project(Array(corpus[start..<min(start + 60, corpus.count)]), in: t, day: day))
            day = day.next
        }
        // tools/mldoc/record.sh has mldoc read these pages (the readings LogseqRulesTests replays).
        if let dir = ProcessInfo.processInfo.environment["OUTL_DUMP_PAGES"] {
            for (k, page) in out.enumerated() {
                try Data(page.0).write(to: URL(fileURLWithPath: dir).appendingPathComponent(String(format: "corpus-%02d.md", k)))
            }
        }
        return out
    }

    @Test func every_capture_is_one_block_with_only_its_properties_by_logseqs_rules() async throws {
        var checked = 0
        for (page, caps) in try await Self.pages() {
            let problems = logseqProblems(page, caps)
            #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))\n--- page:\n\(String(decoding: page, as: UTF8.self))")
            checked += caps.count
        }
        #expect(checked > 500)
    }

    @Test(.enabled(if: cmarkPath != nil, "cmark is not installed (make deps installs it)"))
    func every_capture_is_one_list_item_reading_as_captured_in_commonmark() async throws {
        var checked = 0, textChecked = 0
        for (page, caps) in try await Self.pages() {
            let problems = try cmarkProblems(page, caps)
            #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))\n--- page:\n\(String(decoding: page, as: UTF8.self))")
            checked += caps.count
            textChecked += caps.filter(\.cmText).count
        }
        #expect(checked > 500 && textChecked > 300)
    }

    @Test(.enabled(if: cmarkGFMPath != nil, "cmark-gfm is not installed (make deps installs it)"))
    func every_capture_is_one_list_item_reading_as_captured_in_gfm() async throws {
        var checked = 0, textChecked = 0
        for (page, caps) in try await Self.pages() {
            let problems = try cmarkProblems(page, caps, reader: cmarkGFMPath!, options: gfmExtensions)
            #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))\n--- page:\n\(String(decoding: page, as: UTF8.self))")
            checked += caps.count
            textChecked += caps.filter(\.cmText).count
        }
        #expect(checked > 500 && textChecked > 300)
    }

    @Test func every_projected_page_reads_back_as_the_captures() async throws {
        for (page, caps) in try await Self.pages() {
            let back = Markdown.parse(page)
            #expect(back.blocks.map(\.id) == caps.map(\.id))
            #expect(back.blocks.map(\.text) == caps.map(\.text))
            #expect(back.blocks.map(\.props) == caps.map(\.props))
            #expect(back.blocks.allSatisfy { $0.children.isEmpty })
        }
    }
}
