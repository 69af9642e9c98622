// Markdown: the projection's page dialect (SPEC 2.2): "- " bullets, two spaces per level,
// continuation lines two more, `key:: value` properties after a block's first line. Its roles live side by
// side in this folder: the page model and normalization (here), rendering (MarkdownRender), parsing
// (MarkdownParse), the regions mldoc reads whole (Regions) and the escape rules both share (Escapes,
// EscapeConstructs, EscapeSites, BlockPlan), and a capture's text as the source its block holds
// (CaptureSource: its backslashes shown; TaskMarkers: when it is a task). Invariants, each tested
// (MarkdownTests, conformance tests):
// * parse(render(p)) == p for every page whose texts are normalized (`normalizedText`) and whose
//   property keys are keys: render's escapes (the `Escapes` rule set) are the only change it
//   makes to a text, and parse undoes exactly them, so a person's own backslashes survive;
// * a text renders as exactly one block whose only properties are its own, in Logseq (mldoc) and in
//   CommonMark (Obsidian), and a capture's source (`capturedText`) reads as it was captured;
// * no CR and no control character (C0 but tab and LF, DEL, C1) is ever written (`normalizedText`).
public struct MDBlock: Equatable, Sendable {
    public var id: BlockID?
    public var text: String
    /// `key:: value` properties in file order; a Logseq drawer (`:LOGBOOK:` … `:END:`) found in a
    /// page is kept here as the property `:LOGBOOK:` whose value is its lines, so it stays a drawer.
    public var props: [Property]
    public var children: [MDBlock]
    public init(id: BlockID?, text: String, props: [Property] = [], children: [MDBlock] = []) {
        self.id = id; self.text = text; self.props = props; self.children = children
    }
}

public struct MDPage: Equatable, Sendable {
    /// Lines before the first block (page properties, YAML front matter), kept verbatim.
    public var preamble: String
    public var blocks: [MDBlock]
    public init(preamble: String = "", blocks: [MDBlock] = []) { self.preamble = preamble; self.blocks = blocks }
}

typealias Line = ArraySlice<UInt8>

// The bytes the dialect's rules are written in (internal to the Workspace module).

let LF: UInt8 = 10, CR: UInt8 = 13, SP: UInt8 = 32, TAB: UInt8 = 9, BS: UInt8 = 92
let COLON: UInt8 = 58, DASH: UInt8 = 45, HASH: UInt8 = 35, PLUS: UInt8 = 43, STAR: UInt8 = 42
let TICK: UInt8 = 96, TILDE: UInt8 = 126, GT: UInt8 = 62, LBRACK: UInt8 = 91, RBRACK: UInt8 = 93
let DOT: UInt8 = 46, RPAREN: UInt8 = 41, DOLLAR: UInt8 = 36, LT: UInt8 = 60, RBRACE: UInt8 = 125
let EQ: UInt8 = 61, PIPE: UInt8 = 124, SLASH: UInt8 = 47, AMP: UInt8 = 38
/// DEL, and the lead byte of every C1 control's UTF-8 (C2 80 to C2 9F).
let DEL: UInt8 = 0x7F, C1LEAD: UInt8 = 0xC2
/// U+FFFD, what a control in a text becomes (a visible mark of "something unprintable was here").
let REPLACEMENT: [UInt8] = [0xEF, 0xBF, 0xBD]

public enum Markdown {
    // MARK: normalization (SPEC 2.2: no CR, no control character reaches a page)

    /// The text as a page holds it: CRLF and lone CR become LF on every line, and every control
    /// character (C0 other than tab and LF, DEL U+007F, C1 U+0080-U+009F, NEL U+0085 among them)
    /// becomes U+FFFD, as outl-inbox(5) says: an editor may take NEL for a line break, and none of
    /// them shows as anything. Render applies it to whatever an op carries, so an op with a NUL
    /// never puts one in a file.
    public static func normalizedText(_ s: String) -> String {
        if !s.utf8.contains(where: { ($0 < SP && $0 != TAB && $0 != LF) || $0 == DEL || $0 == C1LEAD }) { return s }
        var out: [UInt8] = []
        normalize(Array(s.utf8)[...], newline: LF, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A block's text and properties as a projected page holds them (what parse reads back from
    /// render): the text normalized, a property value on one line, a key without blank or colon.
    /// The reconciler compares a model's state in this form with a file's, so an op that carried a
    /// CR or a control is not mistaken for an edit on a device that reads its projection.
    public static func projected(_ text: String, _ props: [Property]) -> (text: String, props: [Property]) {
        (normalizedText(text), props.map { p in
            var k: [UInt8] = [], v: [UInt8] = []
            normalize(Array(p.key.utf8)[...], newline: UInt8(ascii: "_"), into: &k)
            for (i, c) in k.enumerated() where !Escapes.isKeyByte(c) { k[i] = UInt8(ascii: "_") }
            if isDrawerKey(p.key) { return Property(p.key, normalizedText(p.value)) }
            normalize(Array(p.value.utf8)[...], newline: SP, into: &v)
            if v.allSatisfy(Escapes.isBlank) { v = [] }
            return Property(k.isEmpty ? "_" : String(decoding: k, as: UTF8.self), String(decoding: v, as: UTF8.self))
        })
    }

    /// Appends `s` normalized; line breaks (LF, CRLF, CR) are written as `newline`.
    static func normalize(_ s: Line, newline: UInt8, into out: inout [UInt8]) {
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == CR {
                out.append(newline)
                if i + 1 < s.endIndex, s[i + 1] == LF { i += 1 }
            } else if c == LF {
                out.append(newline)
            } else if c < SP && c != TAB || c == DEL {
                out.append(contentsOf: REPLACEMENT)
            } else if c == C1LEAD, i + 1 < s.endIndex, (0x80...0x9F).contains(s[i + 1]) {
                out.append(contentsOf: REPLACEMENT)
                i += 1
            } else {
                out.append(c)
            }
            i += 1
        }
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
