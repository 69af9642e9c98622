// CaptureList: the captures of one append, each one's text, captured-at and source spans of one byte
// buffer, so the drain hands a batch over without a String per capture (it copies the bytes it read).
// Invariant: every item's spans lie within `bytes`.

public struct CaptureList: Sendable {
    public struct Item: Sendable {
        public let blockID: BlockID
        public let day: JournalDay
        let text: Range<Int>, capturedAt: Range<Int>, source: Range<Int>
        /// The named page the block goes to (`CaptureFile.checkedPage`); nil for `day`'s journal page.
        public let page: String?
        /// The files it brought, already in assets/: linked after the text, one per line.
        public let assets: [AssetLink]
    }

    public private(set) var bytes: [UInt8] = []
    public private(set) var items: [Item] = []

    /// Room for `count` captures of about `bytes` bytes of strings.
    public init(count: Int, bytes: Int) {
        items.reserveCapacity(count)
        self.bytes.reserveCapacity(bytes)
    }

    /// A capture whose strings are bytes: copied in with one append.
    public mutating func append(blockID: BlockID, day: JournalDay, text: UnsafeBufferPointer<UInt8>, capturedAt: UnsafeBufferPointer<UInt8>,
                                source: UnsafeBufferPointer<UInt8>, page: String? = nil, assets: [AssetLink] = []) {
        let t = bytes.count, a = t + text.count, s = a + capturedAt.count
        bytes.appendWritten(atMost: text.count + capturedAt.count + source.count) { w in
            w.bytes(text); w.bytes(capturedAt); w.bytes(source)
        }
        items.append(Item(blockID: blockID, day: day, text: t..<a, capturedAt: a..<s, source: s..<(s + source.count),
                          page: page, assets: assets))
    }

    /// A capture whose strings are Strings (any caller of `Workspace.appendCaptures`); a block
    /// whose id is not a UUID is refused before anything is appended.
    public mutating func append(_ block: CaptureBlock) throws {
        guard let id = block.blockID ?? BlockID(block.id) else { throw WorkspaceError.badID(block.id) }
        append(block, id: id)
    }

    /// The same with its id already known.
    public mutating func append(_ block: CaptureBlock, id: BlockID) {
        var text = block.text, at = block.capturedAt, source = block.source
        text.withUTF8 { t in
            at.withUTF8 { a in
                source.withUTF8 { s in append(blockID: id, day: block.day, text: t, capturedAt: a, source: s, page: block.page, assets: block.assets) }
            }
        }
    }

    /// Item `k`'s source, as a String (for the drain's log).
    public func source(of k: Int) -> String {
        String(decoding: bytes[items[k].source], as: UTF8.self)
    }
}
