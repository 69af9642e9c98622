// Op: one change to the workspace, the unit of the op log. Ops are idempotent and commute: the model is a
// function of the set of ops applied, in any order (see Model); an op kind this build does not know
// is kept in the log and skipped (`.unknown`), never fatal.
public struct Property: Hashable, Sendable {
    public var key: String
    public var value: String
    public init(_ key: String, _ value: String) { self.key = key; self.value = value }
}

public enum PageKind: UInt8, Sendable { case journal, named }

public enum OpKind: UInt8, Sendable {
    case createPage, createBlock, updateBlock, moveBlock, deleteBlock, setPreamble, unknown

    /// The two-letter spelling in the log.
    var code: StaticString {
        switch self {
        case .createPage: return "cp"
        case .createBlock: return "cb"
        case .updateBlock: return "ub"
        case .moveBlock: return "mb"
        case .deleteBlock: return "db"
        case .setPreamble: return "pp"
        case .unknown: return "??"
        }
    }
}

public struct Op: Sendable {
    public var hlc: HLC
    public var kind: OpKind
    /// The page (createPage, setPreamble) or the block (the others).
    public var id: BlockID
    /// createBlock: the page the block lives on.
    public var page: BlockID = BlockID(hi: 0, lo: 0)
    /// createBlock, moveBlock: the parent block, nil for top level.
    public var parent: BlockID? = nil
    /// createBlock, moveBlock: the sibling order key.
    public var pos: String = ""
    /// createBlock, updateBlock, setPreamble: the text; createPage: the page's name (a day's ISO date).
    public var text: String = ""
    /// createBlock, updateBlock: the block's properties (the id is never one of them).
    public var props: [Property] = []
    /// createPage
    public var pageKind: PageKind = .journal
    /// updateBlock: the stamp of the text its editor saw (the update, or the create, it replaces),
    /// so an update made without seeing another is known as made at once with it (Model's
    /// concurrent edits); nil in ops written before it was kept (the newest text wins alone).
    public var base: HLC? = nil

    public init(hlc: HLC, kind: OpKind, id: BlockID) {
        self.hlc = hlc; self.kind = kind; self.id = id
    }
}
