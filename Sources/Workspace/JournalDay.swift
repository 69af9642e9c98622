// JournalDay and CaptureBlock: the calendar day a journal page stands for, and what the drain hands in.
// Invariant: a JournalDay is always a real Gregorian date; its file stem is the Logseq default.
public struct JournalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= JournalDay.daysIn(month: month, year: year) else { return nil }
        self.year = year; self.month = month; self.day = day
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (a: JournalDay, b: JournalDay) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    private static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// "2026_12_02" (journals/2026_12_02.md)
    public var fileStem: String { "\(JournalDay.pad(year, 4))_\(JournalDay.pad(month, 2))_\(JournalDay.pad(day, 2))" }
    /// "2026-12-02"
    public var iso: String { "\(JournalDay.pad(year, 4))-\(JournalDay.pad(month, 2))-\(JournalDay.pad(day, 2))" }
    public var description: String { iso }

    /// Parses "YYYY-MM-DD" or "YYYY_MM_DD".
    public init?(parsing s: String) {
        let parts = s.split(whereSeparator: { $0 == "-" || $0 == "_" })
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }
}

public struct CaptureBlock: Sendable {
    public var id: String          // lower-case UUID spelling of the capture's ULID
    public var day: JournalDay
    public var text: String        // may contain newlines: stays ONE block
    public var capturedAt: String  // RFC 3339, kept as a block property
    public var source: String      // kept as a block property
    /// The id already parsed (the drain has the ULID's bits): `appendCaptures` skips parsing `id`.
    public var blockID: BlockID?
    public init(id: String, day: JournalDay, text: String, capturedAt: String, source: String) {
        self.id = id; self.day = day; self.text = text; self.capturedAt = capturedAt; self.source = source
    }
    /// `id` is set to the block id's UUID spelling, so both always agree.
    public init(blockID: BlockID, day: JournalDay, text: String, capturedAt: String, source: String) {
        self.init(id: blockID.description, day: day, text: text, capturedAt: capturedAt, source: source)
        self.blockID = blockID
    }
}

public enum AppendOutcome: Sendable, Equatable { case created, alreadyPresent }

extension JournalDay {
    /// The following calendar day.
    public var next: JournalDay {
        if let d = JournalDay(year: year, month: month, day: day + 1) { return d }
        if let d = JournalDay(year: year, month: month + 1, day: 1) { return d }
        return JournalDay(year: year + 1, month: 1, day: 1) ?? self
    }
}

/// Fresh block ids for callers that have no ULID of their own (the CLI, hand-made blocks).
public enum BlockIDs {
    public static func fresh() -> String { BlockID.random().description }
}
