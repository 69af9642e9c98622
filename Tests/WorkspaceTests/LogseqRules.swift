// LogseqRules: what Logseq (a file graph: mldoc's Markdown parser, then graph-parser's block
// extraction) reads from a page, written from their sources and independent of Sources/Workspace, as
// the conformance tests' and fuzz-markdown's oracle. Standard library only (fuzz/ links this file).
// It models, line by line and in mldoc's order (lib/mldoc_parser.ml `parsers`): blank lines,
// Directive (`#+NAME:`), Drawer (property lines `key:: v`, `#+NAME: v`, `:NAME:`…`:END:`), Heading
// (`-` or `#` at any indentation, heading0.ml), Latex_env, Block (fence, `#+BEGIN_`, `>` quote, `$$`,
// raw HTML; block0.ml), Footnote, Lists, Paragraph; a heading's title is empty when a Drawer or Block
// starts right after its marker (heading0.ml `title_aux_p`). Then graph-parser's `extract-blocks`: each
// heading is a block, its first Property_Drawer is its properties, every Directive is a page property.
// A heading's task marker and priority are read too (heading0.ml). Scope: structure and metadata, and
// backslashes as mldoc shows them (`unescape`), not other inline formatting (a line's text is its
// source). Held to mldoc itself by LogseqRulesTests over pages mldoc read (tools/mldoc/record.sh).

struct LogseqRead {
    struct Block {
        var level = 1                    // indentation characters + 1, as mldoc counts them
        var properties: [(String, String)] = []
        var extraPropertyGroups = 0      // property groups after the first: read, not the block's
        var drawers: [String] = []       // names of drawers (`:LOGBOOK:` …) in the block
        var marker: String? = nil        // heading0.ml `marker`: the block is a task
        var priority: UInt8? = nil       // heading0.ml `priority`: `[#A]` after the marker
        /// The block's text as Logseq shows it: the title line (with its `#`s when a heading) and the
        /// body, de-indented, without the properties; a backslash before ASCII punctuation is taken
        /// away outside code (type_op.ml `unescaped_md_string`).
        var lines: [String] = []
    }
    var blocks: [Block] = []
    var directives: [String] = []        // `#+NAME:` lines anywhere: page properties
    var preBlockLines = 0
}

enum LogseqRules {
    typealias Bytes = ArraySlice<UInt8>

    static func read(_ page: [UInt8]) -> LogseqRead {
        var lines = page.split(separator: 10, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var out = LogseqRead()
        var cur: LogseqRead.Block? = nil
        var indent = 0
        var sawProperties = false
        func finish() { if let b = cur { out.blocks.append(b) }; cur = nil }
        func body(_ l: Bytes, code: Bool) {
            guard cur != nil else { out.preBlockLines += 1; return }
            let s = deindent(l, indent + 2)
            cur!.lines.append(code ? string(s) : unescape(s))
        }
        var i = 0
        // `rest` is the input from the middle of line i when a heading's title is empty.
        var rest: Bytes? = nil
        while i < lines.count {
            let line = rest ?? lines[i]
            let fromMiddle = rest != nil
            rest = nil
            if line.isEmpty { body(line, code: false); i += 1; continue }
            let t = dropBlanks(line)
            // Directive (directive.ml): `#+NAME:` with NAME up to the colon, not BEGIN_.
            if let name = directiveName(t), !hasPrefixCI(name, "begin_") {
                out.directives.append(string(name)); i += 1; continue
            }
            // Drawer.parse (drawer.ml): a group of property lines and `#+NAME: v` lines, or a drawer.
            if isProperty(t) || parse2Name(t) != nil || propertiesDrawer(t, lines, i) != nil {
                var props: [(String, String)] = []
                while i < lines.count {
                    let l = (props.isEmpty && fromMiddle) ? line : lines[i]
                    let lt = dropBlanks(l)
                    if let p = property(lt) { props.append(p) }
                    else if let n = parse2Name(lt) { props.append((string(n), "")) }
                    else if let (drawn, end) = propertiesDrawer(lt, lines, i) { props += drawn; i = end }
                    else { break }
                    i += 1
                }
                if cur != nil {
                    if cur!.properties.isEmpty && !sawProperties { cur!.properties = props; sawProperties = true }
                    else { cur!.extraPropertyGroups += 1 }
                } else { out.preBlockLines += props.count }
                continue
            }
            if let name = drawerName(t), let end = (i + 1 ..< lines.count).first(where: { isEnd(lines[$0]) }) {
                if cur != nil { cur!.drawers.append(name) }
                i = end + 1; continue
            }
            // Heading (heading0.ml): `-` + blank or end, or `#`s + blank or end, at any indentation.
            let bullet = t.first == 45 && (t.count == 1 || isBlank(t[t.startIndex + 1]))
            let hashes = t.prefix { $0 == 35 }.count
            let heading = !bullet && hashes > 0 && (t.count == hashes || isBlank(t[t.startIndex + hashes]))
            if !fromMiddle, bullet || heading {
                finish()
                indent = t.startIndex - line.startIndex
                var b = LogseqRead.Block()
                b.level = indent + 1
                sawProperties = false
                let title = bullet ? dropBlanks(t.dropFirst()) : t
                (b.marker, b.priority) = markerAndPriority(bullet ? t.dropFirst() : t.dropFirst(hashes))
                cur = b
                // title_aux_p: a Drawer or a Block right after the marker leaves the title empty and
                // is read from there.
                if bullet, startsElement(title, lines, i) {
                    rest = title
                    continue
                }
                cur!.lines.append(unescape(title))
                i += 1
                continue
            }
            // Latex_env: `\begin{name}` to `\end{name}`, or to the end of the page.
            if let name = latexName(t) {
                let end = find("\\end{" + name + "}", in: lines, from: i, caseless: true) ?? lines.count - 1
                for k in i...end { body(k == i ? line : lines[k], code: true) }
                i = end + 1; continue
            }
            // Block (block0.ml).
            if let end = blockEnd(t, lines, i) {
                for k in i...end { body(k == i ? line : lines[k], code: true) }
                i = end + 1; continue
            }
            if t.first == 62 {   // md_blockquote: to a line starting "- ", "# ", "id:: ", "-", "#" or blank
                body(line, code: false); i += 1
                while i < lines.count {
                    var q = dropBlanks(lines[i])
                    if q.first == 62 {
                        q = dropBlanks(q.dropFirst())
                        if q.isEmpty { body(lines[i], code: false); i += 1; continue }   // `>` alone
                    }
                    if q.isEmpty || hasPrefix(q, "- ") || hasPrefix(q, "# ") || hasPrefix(q, "id:: ")
                        || q.elementsEqual([45]) || q.elementsEqual([35]) { break }
                    body(lines[i], code: false); i += 1
                }
                continue
            }
            // Footnote (footnote.ml): `[^label]:`, then lines not starting with - * # [.
            if hasPrefix(t, "[^"), let c = t.firstIndex(of: 93), c + 1 < t.endIndex, t[c + 1] == 58 {
                body(line, code: false); i += 1
                while i < lines.count, let f = dropBlanks(lines[i]).first, ![45, 42, 35, 91].contains(f) {
                    body(lines[i], code: false); i += 1
                }
                continue
            }
            // Lists (lists0.ml): `*`/`+` or `N.` + blank; the item goes on over indented lines that
            // are not headings, blank-only ones included (only an empty line, `two_eols`, ends it).
            if isListItem(t) {
                body(line, code: false); i += 1
                while i < lines.count, let f = lines[i].first, isBlank(f) {
                    let n = dropBlanks(lines[i])
                    if n.first == 45 && (n.count == 1 || n[n.startIndex + 1] == 32) { break }
                    body(lines[i], code: false); i += 1
                }
                continue
            }
            body(line, code: false)   // a paragraph line
            i += 1
        }
        finish()
        for k in out.blocks.indices {
            while out.blocks[k].lines.last?.allSatisfy({ $0 == " " || $0 == "\t" }) == true { out.blocks[k].lines.removeLast() }
        }
        return out
    }

    // MARK: constructs

    /// Not mldoc's but outl's task-marker rule (outl-inbox(5)), written apart from TaskMarkers as the
    /// oracle: a capture is a task when its first word (after blanks and a heading's `#`s) is TODO or LATER
    /// followed by a space.
    /// On bytes, as mldoc reads: "TODO " then a combining mark is still a marker and a space to it,
    /// though Swift's characters join the space and the mark.
    static func meantAsTask(_ typed: String) -> Bool {
        var t = Array(typed.utf8)[...].drop { isBlank($0) }
        if t.first == 35 {
            let rest = t.drop { $0 == 35 }
            if let f = rest.first, isBlank(f) { t = rest.drop { isBlank($0) } }
        }
        return hasPrefix(t, "TODO ") || hasPrefix(t, "LATER ")
    }

    static let markers = ["TODO", "DOING", "WAITING", "WAIT", "DONE", "CANCELED", "CANCELLED", "STARTED",
                          "IN-PROGRESS", "NOW", "LATER"]

    /// heading0.ml after `level`: for a bullet an optional `#`… size (followed by a blank), then
    /// `ws *> marker` (a marker word followed by a space) and `ws *> priority` (`[#` + one byte + `]`);
    /// `ws` is one blank or more (parsers.ml). `afterLevel` is the line after `-` or after the `#`s.
    static func markerAndPriority(_ afterLevel: Bytes) -> (String?, UInt8?) {
        var r = afterLevel
        let h = dropBlanks(r)
        if h.first == 35, h.startIndex > r.startIndex {
            let rest = h.drop { $0 == 35 }
            if rest.isEmpty || isBlank(rest.first!) { r = rest }
        }
        // Each of marker and priority is `ws *> …`: one blank or more first.
        func afterWS(_ x: Bytes) -> Bytes? { x.first.map(isBlank) == true ? dropBlanks(x) : nil }
        var marker: String? = nil
        if let w = afterWS(r), let m = markers.first(where: { hasPrefix(w, $0 + " ") }) {
            marker = m
            r = w.dropFirst(m.utf8.count)
        }
        if let w = afterWS(r), w.count >= 4, hasPrefix(w, "[#"), w[w.startIndex + 3] == 93 {
            return (marker, w[w.startIndex + 2])
        }
        return (marker, nil)
    }

    static func isBlank(_ c: UInt8) -> Bool { c == 32 || c == 9 }
    static func dropBlanks(_ l: Bytes) -> Bytes { l.drop { isBlank($0) } }
    static func string(_ b: Bytes) -> String { String(decoding: b, as: UTF8.self) }
    static func hasPrefix(_ l: Bytes, _ p: String) -> Bool { l.starts(with: p.utf8) }
    static func hasPrefixCI(_ l: Bytes, _ p: String) -> Bool {
        l.count >= p.utf8.count && zip(l, p.utf8).allSatisfy { ($0 | 0x20) == ($1 | 0x20) }
    }

    static func directiveName(_ t: Bytes) -> Bytes? {
        guard hasPrefix(t, "#+") else { return nil }
        let n = t.dropFirst(2)
        guard let c = n.firstIndex(of: 58), c > n.startIndex else { return nil }
        return n[..<c]
    }

    static func parse2Name(_ t: Bytes) -> Bytes? {
        guard hasPrefix(t, "#+") else { return nil }
        let n = t.dropFirst(2)
        let name = n.prefix { $0 != 58 && !isBlank($0) }
        guard !name.isEmpty, name.endIndex < n.endIndex, n[name.endIndex] == 58 else { return nil }
        return name
    }

    /// markdown_property.ml: blanks, key (no colon, no blank), `:: ` value, or `::` and blanks.
    static func property(_ t: Bytes) -> (String, String)? {
        let key = t.prefix { $0 != 58 && !isBlank($0) }
        guard !key.isEmpty else { return nil }
        let after = t[key.endIndex...]
        guard hasPrefix(after, "::") else { return nil }
        let v = after.dropFirst(2)
        if v.first == 32 { return (string(key), string(dropBlanks(v))) }
        return v.allSatisfy(isBlank) ? (string(key), "") : nil
    }
    static func isProperty(_ t: Bytes) -> Bool { property(t) != nil }

    /// drawer.ml `parse1`: `:PROPERTIES:` alone on line i, then only `:KEY: value` lines (KEY not
    /// END) up to an `:END:` line: (its properties, the `:END:` line).
    static func propertiesDrawer(_ t: Bytes, _ lines: [Bytes], _ i: Int) -> ([(String, String)], Int)? {
        guard hasPrefixCI(t, ":properties:"), t.dropFirst(12).allSatisfy(isBlank) else { return nil }
        var props: [(String, String)] = []
        var k = i + 1
        while k < lines.count {
            let l = dropBlanks(lines[k])
            if isEnd(l) { return (props, k) }
            guard l.first == 58, let c = l.dropFirst().firstIndex(of: 58) else { return nil }
            let key = l[(l.startIndex + 1)..<c]
            guard !key.isEmpty, !key.contains(32) else { return nil }
            props.append((string(key), string(dropBlanks(l[(c + 1)...]))))
            k += 1
        }
        return nil
    }

    static func drawerName(_ t: Bytes) -> String? {
        guard t.first == 58, t.count >= 3, t.last == 58 else { return nil }
        let name = t.dropFirst().dropLast()
        return name.contains(58) || name.contains(32) ? nil : string(name)
    }

    static func isEnd(_ l: Bytes) -> Bool {
        let t = dropBlanks(l)
        let e = t.reversed().drop { isBlank($0) }
        return e.count == 5 && hasPrefixCI(t, ":end:")
    }

    static func isListItem(_ t: Bytes) -> Bool {
        if let f = t.first, f == 42 || f == 43 { return t.count > 1 && isBlank(t[t.startIndex + 1]) }
        let d = t.prefix { $0 >= 48 && $0 <= 57 }
        return !d.isEmpty && d.endIndex + 1 < t.endIndex && t[d.endIndex] == 46 && isBlank(t[d.endIndex + 1])
    }

    static func latexName(_ t: Bytes) -> String? {
        guard hasPrefixCI(t, "\\begin{"), let e = t.dropFirst(7).firstIndex(of: 125), e > t.startIndex + 7 else { return nil }
        return string(t[(t.startIndex + 7)..<e])
    }

    /// A Drawer or Block can start at the title (heading0.ml `title_aux_p`).
    static func startsElement(_ title: Bytes, _ lines: [Bytes], _ i: Int) -> Bool {
        if isProperty(title) || parse2Name(title) != nil { return true }
        if hasPrefix(title, "[^"), let c = title.firstIndex(of: 93), c + 1 < title.endIndex, title[c + 1] == 58 { return true }
        if let _ = drawerName(title), (i + 1 ..< lines.count).contains(where: { isEnd(lines[$0]) }) { return true }
        if title.first == 62 { return true }
        return blockEnd(title, lines, i) != nil
            || (latexName(title).map { find("\\end{" + $0 + "}", in: lines, from: i, caseless: true) != nil } ?? false)
    }

    /// The last line of a fence, `#+BEGIN_` block, `$$` math or raw HTML opening at `t` (line i).
    static func blockEnd(_ t: Bytes, _ lines: [Bytes], _ i: Int) -> Int? {
        if hasPrefix(t, "```") || hasPrefix(t, "~~~") {
            return (i + 1 ..< lines.count).first { k in
                let s = dropBlanks(lines[k]); return hasPrefix(s, "```") || hasPrefix(s, "~~~")
            }
        }
        if hasPrefixCI(t, "#+begin_") {
            let name = t.dropFirst(8).prefix { !isBlank($0) }
            guard !name.isEmpty else { return nil }
            return (i + 1 ..< lines.count).first { hasPrefixCI(dropBlanks(lines[$0]), "#+end_" + string(name)) }
        }
        if hasPrefix(t, "$$") { return find("$$", in: lines, from: i, skip: t.startIndex + 2 - lines[i].startIndex) }
        if hasPrefix(t, "<!--") { return find("-->", in: lines, from: i, skip: t.startIndex + 4 - lines[i].startIndex) }
        if hasPrefix(t, "<?") { return find("?>", in: lines, from: i, skip: t.startIndex + 2 - lines[i].startIndex) }
        if hasPrefix(t, "<!") { return find(">", in: lines, from: i, skip: t.startIndex + 2 - lines[i].startIndex) }
        if t.first == 60 {
            let tag = t.dropFirst().prefix { !isBlank($0) && $0 != 62 }
            let known = ["div", "span", "p", "b", "i", "a", "img", "br", "pre", "code", "table", "ul", "ol", "li", "details"]
            guard known.contains(string(tag).lowercased()) else { return nil }
            let skip = t.startIndex + 1 + tag.count - lines[i].startIndex
            return find("</" + string(tag) + ">", in: lines, from: i, skip: skip, caseless: true)
                ?? find("/>", in: lines, from: i, skip: skip)
        }
        return nil
    }

    /// The line where `p` next occurs, from line i (skipping `skip` bytes of it).
    static func find(_ p: String, in lines: [Bytes], from i: Int, skip: Int = 0, caseless: Bool = false) -> Int? {
        let pat = Array(p.utf8)
        for k in i..<lines.count {
            let l = Array(lines[k])
            var j = k == i ? skip : 0
            while j + pat.count <= l.count {
                if (0..<pat.count).allSatisfy({ caseless ? (l[j + $0] | 0x20) == (pat[$0] | 0x20) : l[j + $0] == pat[$0] }) { return k }
                j += 1
            }
        }
        return nil
    }

    /// graph-parser `remove-indentation-spaces`: up to `n` leading blanks go.
    static func deindent(_ l: Bytes, _ n: Int) -> Bytes {
        var s = l.startIndex, c = 0
        while s < l.endIndex, c < n, isBlank(l[s]) { c += 1; s += 1 }
        return l[s...]
    }

    /// type_op.ml `unescaped_md_string`: `\` + ASCII punctuation is that character.
    /// A line as mldoc shows it (backticks of code kept): outside inline code (`inline.ml` `md_code`:
    /// one backtick to the next, or two to the next two when one would be empty), `\` + ASCII
    /// punctuation shows the punctuation (`md_escape_chars`, so `\\` shows one backslash), and a
    /// backslash before a letter is gone (`entity`: `\pi` is a symbol, `\Users` reads `Users`);
    /// any other backslash shows. (Latex fragments `\(`…`\)` lose their backslash here too.)
    static func unescape(_ l: Bytes) -> String {
        var code = Set<Int>()
        var i = l.startIndex
        while i < l.endIndex {
            guard l[i] == 96 else { i += 1; continue }
            var close: Int? = nil
            if i + 1 < l.endIndex, l[i + 1] != 96 {
                close = l[(i + 1)...].firstIndex(of: 96).map { $0 + 1 }
            } else {
                var j = i + 3
                while j + 1 < l.endIndex { if l[j] == 96, l[j + 1] == 96 { close = j + 2; break }; j += 1 }
            }
            if let c = close { for x in i..<c { code.insert(x) }; i = c } else { i += 1 }
        }
        var out: [UInt8] = []
        i = l.startIndex
        while i < l.endIndex {
            if l[i] == 92, !code.contains(i), i + 1 < l.endIndex {
                let c = l[i + 1]
                if isPunct(c) { out.append(c); i += 2; continue }
                if (c | 0x20) >= 97 && (c | 0x20) <= 122 { i += 1; continue }
            }
            out.append(l[i]); i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isPunct(_ c: UInt8) -> Bool {
        (33...47).contains(c) || (58...64).contains(c) || (91...96).contains(c) || (123...126).contains(c)
    }
}
