// JournalDay and CaptureBlock: the calendar day a journal page stands for, and what the drain hands in.
// Invariant: a JournalDay is always a real Gregorian date. Its page is one BlockID whatever its file is
// called (`BlockID.journalPage`); the file is `YYYY_MM_DD.md` (Logseq) or `YYYY-MM-DD.md` (Obsidian).
import SystemCalls
public struct JournalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= Gregorian.daysIn(month: month, year: year) else { return nil }
        self.year = year; self.month = month; self.day = day
    }

    public static func < (a: JournalDay, b: JournalDay) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// The ten bytes of the day, zero-padded, with `separator` between its parts: a small String made
    /// in place.
    private func spelled(_ separator: UInt8) -> String {
        String(unsafeUninitializedCapacity: 10) { spell(separator, into: $0) }
    }

    /// Writes the ten bytes at the start of `b` (at least ten); returns 10.
    @discardableResult
    public func spell(_ separator: UInt8, into b: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(b.count >= 10, "JournalDay.spell: room for 10 bytes")
        // Two digits at a time from ByteWriter's pairs (each part modulo its width, as ever).
        let o = b.baseAddress!, pairs = ByteWriter.digitPairs.utf8Start
        func pair(_ v: Int, _ at: Int) { let v = v % 100; o[at] = pairs[2 * v]; o[at + 1] = pairs[2 * v + 1] }
        pair(year / 100, 0); pair(year, 2); o[4] = separator; pair(month, 5); o[7] = separator; pair(day, 8)
        return 10
    }

    /// "2026_12_02" (journals/2026_12_02.md)
    public var fileStem: String { spelled(UInt8(ascii: "_")) }
    /// "2026-12-02"
    public var iso: String { spelled(UInt8(ascii: "-")) }
    public var description: String { iso }

    /// Parses "YYYY-MM-DD" or "YYYY_MM_DD" (one separator throughout).
    public init?(parsing s: String) {
        let b = Array(s.utf8)
        guard b.count == 10, b[4] == b[7], b[4] == UInt8(ascii: "-") || b[4] == UInt8(ascii: "_"),
              b.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || ($0.element >= 48 && $0.element <= 57) }),
              let y = Int(s.prefix(4)), let m = Int(s.dropFirst(5).prefix(2)), let d = Int(s.suffix(2)) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The file stem of this day's journal in `format`.
    public func fileStem(_ format: JournalFileFormat) -> String { format == .logseq ? fileStem : iso }
}

/// How journal files are named (outld.conf `journal-file-format`). Either spelling is read as the
/// day's page; this one names a day's file when neither exists yet (`JournalFiles`).
public enum JournalFileFormat: String, Sendable, CaseIterable {
    /// `journals/2026_12_02.md`, Logseq's default `:journal/file-name-format`.
    case logseq = "yyyy_MM_dd"
    /// `journals/2026-12-02.md`, Obsidian's daily notes default.
    case iso = "yyyy-MM-dd"

    /// The setting's value as written in outld.conf, exactly (ConfigFile refuses other spellings).
    public init?(setting: String) {
        guard let f = JournalFileFormat.allCases.first(where: { $0.rawValue == setting }) else { return nil }
        self = f
    }
}

/// How a day's journal files are spelled. One day is one page on every device, so every device must
/// write the same file whatever its setting ("agree on one"): the file that exists wins; when both
/// spellings exist, Logseq's wins and the other is a second spelling whose additions are taken, then
/// removed; when neither exists, the device's setting names it (PagePass.location).
enum JournalFiles {
    static func relativePath(_ day: JournalDay, _ format: JournalFileFormat) -> String {
        "journals/\(day.fileStem(format)).md"
    }

    /// How the workspace's newest journal file is named (a program without the setting follows the
    /// one that has it); Logseq's spelling when there is none.
    static func format(ofWorkspace root: String) -> JournalFileFormat {
        var newest: (JournalDay, JournalFileFormat)? = nil
        for name in (try? Sys.readDirectory(Path.join(root, "journals"))) ?? [] where name.hasSuffix(".md") {
            let stem = String(name.dropLast(3))
            guard let day = JournalDay(parsing: stem) else { continue }
            let f: JournalFileFormat = stem == day.iso ? .iso : .logseq
            if newest == nil || newest!.0 < day || (newest!.0 == day && f == .logseq) { newest = (day, f) }
        }
        return newest?.1 ?? .logseq
    }
}

public struct CaptureBlock: Sendable {
    /// The lower-case UUID spelling of the capture's ULID: `blockID`'s when it is given (spelled
    /// only when asked: the drain never asks, and a String per capture cost it ~1,000 instructions).
    public var id: String { blockID?.description ?? givenID }
    private var givenID: String
    public var day: JournalDay
    public var text: String        // may contain newlines: stays ONE block; empty only with assets
    public var capturedAt: String  // RFC 3339, kept as a block property
    public var source: String      // kept as a block property
    /// The id already parsed (the drain has the ULID's bits): `appendCaptures` skips parsing `id`.
    public private(set) var blockID: BlockID?
    /// The named page the block goes to (`CaptureFile.checkedPage`); nil for `day`'s journal page.
    public var page: String?
    /// The files it brought, already in assets/: linked after the text, one per line.
    public var assets: [AssetLink] = []
    public init(id: String, day: JournalDay, text: String, capturedAt: String, source: String) {
        givenID = id; self.day = day; self.text = text; self.capturedAt = capturedAt; self.source = source
    }
    /// `id` is the block id's UUID spelling, so both always agree.
    public init(blockID: BlockID, day: JournalDay, text: String, capturedAt: String, source: String) {
        self.init(id: "", day: day, text: text, capturedAt: capturedAt, source: source)
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
