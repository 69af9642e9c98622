// Markdown: the projection's file format, written and read. An outline of "- " bullets, two spaces per
// level, continuation lines indented two more, Logseq-style `key:: value` properties right after a
// block's first line. Invariant: parse(render(p)) == p for any text: a text line that would read as
// structure (a bullet, a property, a leading backslash) gets one leading backslash, which parse strips.
// Inside a closed ``` fence of a block's text, bullet-looking lines stay as written (code, diffs, YAML):
// render and parse find the same fences (a text line starting with ``` up to the next one).
public struct MDBlock: Equatable, Sendable {
    public var id: BlockID?
    public var text: String
    public var props: [Property]
    public var children: [MDBlock]
    public init(id: BlockID?, text: String, props: [Property] = [], children: [MDBlock] = []) {
        self.id = id; self.text = text; self.props = props; self.children = children
    }
}

public struct MDPage: Equatable, Sendable {
    /// Lines before the first bullet (e.g. Logseq page properties), kept verbatim.
    public var preamble: String
    public var blocks: [MDBlock]
    public init(preamble: String = "", blocks: [MDBlock] = []) { self.preamble = preamble; self.blocks = blocks }
}

public enum Markdown {
    // MARK: render

    public static func render(_ page: MDPage) -> [UInt8] {
        var out: [UInt8] = []
        if !page.preamble.isEmpty {
            out.append(contentsOf: page.preamble.utf8)
            out.append(10)
        }
        for b in page.blocks { render(b, depth: 0, &out) }
        return out
    }

    static func render(_ b: MDBlock, depth: Int, _ out: inout [UInt8]) {
        // A one-line text (nearly every capture) has no continuation lines and no fence: write it
        // straight, without splitting, copying the properties or spelling the id as a String.
        if !b.text.utf8.contains(10) {
            pad(depth, &out)
            out.append(45); out.append(32)
            let line = Array(b.text.utf8)
            if needsEscape(line) { out.append(92) }
            out.append(contentsOf: line)
            out.append(10)
            for p in b.props { property(p.key, p.value, depth, &out) }
            if let id = b.id {
                pad(depth + 1, &out)
                out.append(contentsOf: "id:: ".utf8)
                OpEncoder.uuid(id, &out)
                out.append(10)
            }
            for c in b.children { render(c, depth: depth + 1, &out) }
            return
        }
        let indent = [UInt8](repeating: 32, count: depth * 2)
        let lines = b.text.utf8.split(separator: 10, omittingEmptySubsequences: false)
        out.append(contentsOf: indent)
        out.append(contentsOf: "- ".utf8)
        let code = fenceInterior(lines.map { Array($0) })
        escapeLine(lines[0], &out)
        out.append(10)
        var props = b.props
        if let id = b.id { props.append(Property("id", id.description)) }
        for p in props {
            out.append(contentsOf: indent); out.append(contentsOf: "  ".utf8)
            out.append(contentsOf: p.key.utf8); out.append(contentsOf: ":: ".utf8)
            // A property value is one line by nature; newlines become spaces (the op keeps the original).
            for c in p.value.utf8 { out.append(c == 10 || c == 13 ? 32 : c) }
            out.append(10)
        }
        for (k, line) in lines.enumerated().dropFirst() {
            out.append(contentsOf: indent); out.append(contentsOf: "  ".utf8)
            escapeLine(line, &out, inCode: code.contains(k))
            out.append(10)
        }
        for c in b.children { render(c, depth: depth + 1, &out) }
    }

    @inline(__always)
    static func pad(_ depth: Int, _ out: inout [UInt8]) {
        for _ in 0..<depth { out.append(32); out.append(32) }
    }

    /// One `key:: value` line of a block at `depth`; newlines in the value become spaces.
    static func property(_ key: String, _ value: String, _ depth: Int, _ out: inout [UInt8]) {
        pad(depth + 1, &out)
        out.append(contentsOf: key.utf8); out.append(contentsOf: ":: ".utf8)
        for c in value.utf8 { out.append(c == 10 || c == 13 ? 32 : c) }
        out.append(10)
    }

    static func escapeLine(_ line: Substring.UTF8View.SubSequence, _ out: inout [UInt8], inCode: Bool = false) {
        let l = Array(line)
        if inCode ? l.first == 92 || propertyKey(l[...]) != nil : needsEscape(l) { out.append(92) }
        out.append(contentsOf: line)
    }

    static func isFence(_ l: ArraySlice<UInt8>) -> Bool {
        l.count >= 3 && l[l.startIndex] == 96 && l[l.startIndex + 1] == 96 && l[l.startIndex + 2] == 96
    }

    /// Indices of a block's text lines strictly inside a closed fence; an unclosed fence has none.
    static func fenceInterior(_ lines: [[UInt8]]) -> Set<Int> {
        var out = Set<Int>()
        var open: Int? = nil
        for (k, l) in lines.enumerated() where isFence(l[...]) {
            if let o = open { for x in (o + 1)..<k { out.insert(x) }; open = nil } else { open = k }
        }
        return out
    }

    /// Whether a fence opened by the block at `col` closes before the block's text ends: a later line
    /// indented exactly col+2 that starts with ```, before any line indented less.
    static func fenceCloses(_ lines: [[UInt8]], after k: Int, col: Int) -> Bool {
        var n = k + 1
        while n < lines.count {
            let line = lines[n]
            n += 1
            if line.isEmpty { continue }
            var j = 0, c = 0
            while j < line.count, c < col + 2, line[j] == 32 || line[j] == 9 { c += line[j] == 9 ? 2 : 1; j += 1 }
            if c < col + 2 { return false }
            if isFence(line[j...]) { return true }
        }
        return false
    }

    static func needsEscape(_ l: [UInt8]) -> Bool {
        guard let first = l.first else { return false }
        if first == 92 { return true }
        var i = 0
        while i < l.count, l[i] == 32 || l[i] == 9 { i += 1 }
        let rest = l[i...]
        if isBullet(rest) { return true }
        if let f = rest.first, f == UInt8(ascii: "*") || f == UInt8(ascii: "+"),
           rest.count == 1 || rest[rest.startIndex + 1] == 32 { return true }
        return propertyKey(rest) != nil
    }

    @inline(__always)
    static func isBullet(_ s: ArraySlice<UInt8>) -> Bool {
        guard let f = s.first, f == 45 else { return false }
        return s.count == 1 || s[s.startIndex + 1] == 32 || s[s.startIndex + 1] == 9
            || s[s.startIndex + 1] == 13 && s.count == 2
    }

    /// "key:: value" or "key::" → (key, value); keys are [A-Za-z0-9_-]+.
    static func propertyKey(_ s: ArraySlice<UInt8>) -> (String, String)? {
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            let ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c == 45
            if !ok { break }
            i += 1
        }
        guard i > s.startIndex, i + 1 < s.endIndex, s[i] == 58, s[i + 1] == 58 else { return nil }
        let after = i + 2
        if after == s.endIndex {
            return (String(decoding: s[s.startIndex..<i], as: UTF8.self), "")
        }
        guard s[after] == 32 else { return nil }
        return (String(decoding: s[s.startIndex..<i], as: UTF8.self),
                String(decoding: s[(after + 1)...], as: UTF8.self))
    }

    // MARK: parse

    final class Node {
        var col: Int
        var id: BlockID?
        var lines: [[UInt8]]
        var props: [Property] = []
        var inProps = true
        var pendingBlank = 0
        var inCode = false
        var children: [Node] = []
        init(col: Int, first: [UInt8]) { self.col = col; lines = [first] }
        func block() -> MDBlock {
            var text: [UInt8] = []
            for (i, l) in lines.enumerated() {
                if i > 0 { text.append(10) }
                text.append(contentsOf: l)
            }
            return MDBlock(id: id, text: String(decoding: text, as: UTF8.self), props: props,
                           children: children.map { $0.block() })
        }
    }

    /// Reads any outline a person or another tool may have written; never fails, never drops a line.
    public static func parse(_ bytes: [UInt8]) -> MDPage {
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { Array($0) }
        if lines.last?.isEmpty == true { lines.removeLast() }
        // A file saved with CRLF endings throughout (a Windows editor) reads as LF. Every trailing
        // CR goes, not just one: a line of such a file never ends in a meaningful CR, and keeping
        // the rest made each projection drop one more (found by fuzz-markdown).
        if !lines.isEmpty, lines.allSatisfy({ $0.last == 13 }) {
            lines = lines.map { l in
                var l = l
                while l.last == 13 { l.removeLast() }
                return l
            }
        }
        var preamble: [[UInt8]] = []
        var roots: [Node] = []
        var stack: [Node] = []
        for (k, line) in lines.enumerated() {
            var i = 0, col = 0
            while i < line.count, line[i] == 32 || line[i] == 9 { col += line[i] == 9 ? 2 : 1; i += 1 }
            let rest = line[i...]
            let code = stack.last.map { $0.inCode && col >= $0.col + 2 } ?? false
            if !code, isBullet(rest) {
                var first = Array(rest.dropFirst(rest.count >= 2 ? 2 : 1))
                let opensCode = isFence(first[...]) && fenceCloses(lines, after: k, col: col)
                if first.first == 92 { first.removeFirst() }
                let node = Node(col: col, first: first)
                node.inCode = opensCode
                while let top = stack.last, top.col >= col { stack.removeLast() }
                if let parent = stack.last { parent.children.append(node) } else { roots.append(node) }
                stack.append(node)
                continue
            }
            guard let cur = stack.last else { preamble.append(line); continue }
            if line.isEmpty { cur.pendingBlank += 1; continue }  // blank lines count only inside a block
            // Strip the block's continuation indent (col + 2 columns), no more.
            var j = 0, c = 0
            while j < line.count, c < cur.col + 2, line[j] == 32 || line[j] == 9 {
                c += line[j] == 9 ? 2 : 1; j += 1
            }
            var content = Array(line[j...])
            if cur.inProps, cur.pendingBlank == 0, let (k, v) = propertyKey(content[...]) {
                if k == "id", cur.id == nil, let id = BlockID(v.trimmingSpaces) { cur.id = id }
                else if k != "id" { cur.props.append(Property(k, v)) }
                continue
            }
            cur.inProps = false
            if isFence(content[...]) { cur.inCode = cur.inCode ? false : fenceCloses(lines, after: k, col: cur.col) }
            for _ in 0..<cur.pendingBlank { cur.lines.append([]) }
            cur.pendingBlank = 0
            if content.first == 92 { content.removeFirst() }
            cur.lines.append(content)
        }
        var pre: [UInt8] = []
        for (i, l) in preamble.enumerated() {
            if i > 0 { pre.append(10) }
            pre.append(contentsOf: l)
        }
        return MDPage(preamble: String(decoding: pre, as: UTF8.self), blocks: roots.map { $0.block() })
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\r" { s.removeLast() }
        return String(s)
    }
}
