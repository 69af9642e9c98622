// CaptureRecord: a capture's own record, the `captured-at` and `source` its winning create gave it,
// and the one rule for where they show. Nobody typed them, so a page leaves them out (unless
// `page-properties` names them) while the block still holds the values its create gave; a value a
// person set shows. Invariant: a function of the model's state alone (the least create's content,
// the row's content), never of the order ops arrived in, so every device writes the same page.

/// Which of a capture's record a page shows (outld.conf `page-properties`); by default none.
public struct PageProperties: Sendable, Equatable, CustomStringConvertible {
    public var capturedAt = false
    public var source = false

    public init(capturedAt: Bool = false, source: Bool = false) { self.capturedAt = capturedAt; self.source = source }

    public static let none = PageProperties()
    public static let all = PageProperties(capturedAt: true, source: true)

    /// `captured-at source`, `source`, `none` or empty (none), as outld.conf spells it.
    public init?(setting: String) {
        for word in setting.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }) {
            switch word {
            case "captured-at": capturedAt = true
            case "source": source = true
            case "none": continue
            default: return nil
            }
        }
    }

    func shows(_ key: String) -> Bool { key == CaptureRecord.capturedAt ? capturedAt : key == CaptureRecord.source ? source : true }

    /// As outld.conf spells it (and the page index's header records it).
    public var description: String {
        let words = (capturedAt ? [CaptureRecord.capturedAt] : []) + (source ? [CaptureRecord.source] : [])
        return words.isEmpty ? "none" : words.joined(separator: " ")
    }
}

enum CaptureRecord {
    /// The keys a capture's create holds its record under (CaptureOp writes them).
    static let capturedAtKey: StaticString = "captured-at"
    static let sourceKey: StaticString = "source"
    static let capturedAt = "\(capturedAtKey)"
    static let source = "\(sourceKey)"

    static func isRecordKey(_ key: String) -> Bool { key == capturedAt || key == source }

    /// The properties a page shows of `props`: all but a record key whose value is still the one
    /// the capture recorded, unless `showing` names it. A block with no record shows them all (a
    /// person's own `source::` on a block they typed is theirs).
    static func shown(_ props: [Property], record: [Property], showing: PageProperties) -> [Property] {
        guard !record.isEmpty else { return props }
        return props.filter { p in
            showing.shows(p.key) || !record.contains(p)
        }
    }

    /// A file's properties for a block with this record, as the block holds them: a record key the
    /// file leaves out is the recorded value (absent from a page never means removed), put first in
    /// the record's order, as a capture's create holds them.
    static func filled(_ props: [Property], record: [Property]) -> [Property] {
        let missing = record.filter { r in !props.contains { $0.key == r.key } }
        return missing.isEmpty ? props : missing + props
    }
}

extension BlockTable {
    /// Row `r`'s capture record: the record keys its winning create held, when it held a
    /// `captured-at` (a capture's does); none for a block a person typed, whose `source::` is theirs.
    func record(ofRow r: Int) -> [Property] {
        let offset = edits[r]?.createContent ?? rows[r].content
        let record = content(at: offset).props.filter { CaptureRecord.isRecordKey($0.key) }
        return record.contains { $0.key == CaptureRecord.capturedAt } ? record : []
    }

    /// Row `r`'s text and the properties its page shows: its record where an update (an older
    /// outl's, which read a page without it as removing it) left it out, then `shown`.
    func shownContent(ofRow r: Int, showing: PageProperties) -> (text: String, props: [Property]) {
        let (text, props) = content(ofRow: r)
        let record = record(ofRow: r)
        if record.isEmpty { return (text, props) }
        return (text, CaptureRecord.shown(CaptureRecord.filled(props, record: record), record: record, showing: showing))
    }

    /// Whether the row is a capture (its create recorded when it was captured).
    func isCapture(row r: Int) -> Bool { !record(ofRow: r).isEmpty }
}
