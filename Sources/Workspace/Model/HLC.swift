// HLC: hybrid logical clock (wall ms, counter, actor) giving every op of every device one total order.
// Invariant (a promise): `tick` never returns a stamp lower than one it returned or adopted, its counter
// carries into the wall time instead of wrapping; a stamp more than `maxAhead` ahead of this machine's
// clock is held back, never adopted; `stamp(after:)` is greater than the stamp it is given, within
// the one range every device writes and reads (`HLC.minWall` to `HLC.maxWall`), or nil where nothing in it is.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public struct HLC: Comparable, Hashable, Sendable {
    public var wall: Int64
    public var counter: UInt32
    public var actor: BlockID

    public init(wall: Int64, counter: UInt32, actor: BlockID) {
        self.wall = wall; self.counter = counter; self.actor = actor
    }

    @inline(__always)
    public static func < (a: HLC, b: HLC) -> Bool {
        if a.wall != b.wall { return a.wall < b.wall }
        if a.counter != b.counter { return a.counter < b.counter }
        return a.actor < b.actor
    }

    /// The top of the one range of stamps, shared by the writer and the reader: walls from `minWall`
    /// to the last millisecond of the year 9999 UTC, counters 0 to UInt32.max. The reader (OpParser)
    /// refuses an op stamped outside it, whoever wrote it, and this device writes none: its clock
    /// follows the machine's from `minWall` on (and adopts nothing more than `HLClock.maxAhead` ahead
    /// of it), and `stamp(after:)` answers nil rather than step past the top.
    public static let maxWall: Int64 = 253_402_300_799_999

    /// The bottom of the range: 2000-01-01T00:00:00Z. outl was written in 2026, so no device's op can
    /// be older; a peer's create stamped at 1970 would otherwise be older than every create and take
    /// its block (the least stamp's create wins). A machine whose clock says 1970 (a reset RTC)
    /// stamps from here on.
    public static let minWall: Int64 = 946_684_800_000

    /// Whether a wall time read is within the range.
    @inline(__always)
    public static func inRange(wall: Int64) -> Bool { wall >= minWall && wall <= maxWall }

    /// The least stamp of `actor` greater than this one, whatever the actors: the counter carries
    /// into the wall time at its maximum, so no successor is ever lower.
    public func successor(actor: BlockID) -> HLC {
        counter == UInt32.max ? HLC(wall: wall &+ 1, counter: 0, actor: actor)
                              : HLC(wall: wall, counter: counter + 1, actor: actor)
    }

    /// `successor(actor:)` within the range; nil for the very top (`maxWall`, UInt32.max), which
    /// no stamp of the range is greater than.
    public func successorInRange(actor: BlockID) -> HLC? {
        wall >= HLC.maxWall && counter == UInt32.max ? nil : successor(actor: actor)
    }

    /// A fixed-width base-36 spelling that sorts like the stamp; used as an append position key.
    public var positionKey: String {
        String(unsafeUninitializedCapacity: HLC.positionKeyBytes) { b in
            spellPositionKey(into: b)
            return HLC.positionKeyBytes
        }
    }

    /// How many bytes `positionKey` has.
    static let positionKeyBytes = 14

    /// `positionKey` into the first `positionKeyBytes` of `b` (a capture's, in its batch's bytes).
    @inline(__always)
    func spellPositionKey(into b: UnsafeMutableBufferPointer<UInt8>) {
        PositionKey.fixed(UInt64(max(0, wall)), width: 9, into: b, at: 0)
        PositionKey.fixed(UInt64(counter), width: 4, into: b, at: 9)
        b[13] = UInt8(ascii: "i")
    }
}

/// The device's clock: `tick` for a new local op, `observe` for every op read (at boot and in each live
/// merge), `stamp(after:)` for an edit that must win over the field it replaces.
public struct HLClock: Sendable {
    /// How far ahead of this machine's clock a stamp may be and still be adopted: 5 minutes.
    ///
    /// Why not CockroachDB's 500 ms max-offset or a tight HLC-paper ε: those assume every node runs
    /// NTP and a node beyond the offset is taken out of the cluster. Here no device can be refused (its
    /// ops are applied whatever its clock says, or devices would not converge), devices sync through
    /// Syncthing, and some have no NTP (a phone on NITZ alone, a laptop whose RTC drifted while off).
    /// Holding a stamp back costs only a warning, since an edit after a held-back one is stamped after
    /// the field it replaces (`stamp(after:)`); adopting one costs every later op of this device that
    /// much future time. Five minutes is Kerberos's default clock-skew tolerance (RFC 4120 §1.6), the
    /// long-standing figure for machines that merely try to agree: an honest clock never trips it, and
    /// a wrong one drags nobody further than that.
    public static let maxAhead: Int64 = 5 * 60 * 1000

    public let actor: BlockID
    public private(set) var last: HLC

    public init(actor: BlockID) {
        self.actor = actor
        last = HLC(wall: HLC.minWall, counter: 0, actor: actor)
    }

    /// Adopts `h` if it is newer than the clock and no more than `maxAhead` ahead of `now`; returns
    /// false for a stamp held back (its op is still applied: the model never depends on the clock).
    @discardableResult
    public mutating func observe(_ h: HLC, now: Int64) -> Bool {
        if h.wall > now &+ HLClock.maxAhead { return false }
        if h.wall > last.wall || (h.wall == last.wall && h.counter > last.counter) {
            last = HLC(wall: h.wall, counter: h.counter, actor: actor)
        }
        return true
    }

    public mutating func tick(now: Int64 = wallClockMilliseconds()) -> HLC {
        last = now > last.wall ? HLC(wall: now, counter: 0, actor: actor) : last.successor(actor: actor)
        return last
    }

    /// A stamp for an op that overwrites a field last written at `field`: after the field and after
    /// the clock, so a person's edit of what they saw wins whatever that version's stamp. A successor
    /// of a held-back stamp is issued but not adopted, so later ops carry no future time for it.
    /// Nil when `field` is the top of the range (a peer's doing: no clock gets there before the year
    /// 9999): no stamp the reader takes is greater, and the caller keeps the edit otherwise.
    public mutating func stamp(after field: HLC?, now: Int64 = wallClockMilliseconds()) -> HLC? {
        let t = tick(now: now)
        guard let field, !(field < t) else { return t }
        guard let s = field.successorInRange(actor: actor) else { return nil }
        observe(s, now: now)
        return s
    }
}

/// One device's ops whose stamps were further ahead of this machine's clock than `HLClock.maxAhead`
/// when read: applied like any op, held back from the clock, and reported (log, `outl status`).
public struct StampsAhead: Sendable, Equatable {
    public var ops = 0
    /// The furthest-ahead one: its stamp, its kind (the log's two-letter code) and the block or page it is about.
    public var furthest: HLC
    public var kind: String
    public var id: String
    /// How far `furthest` was ahead of this machine's clock when it was read, in ms.
    public var aheadMs: Int64

    init(_ h: HLC, kind: OpKind, id: BlockID, now: Int64) {
        furthest = h; self.kind = "\(kind.code)"; self.id = id.description; aheadMs = h.wall &- now
        ops = 1
    }

    /// Counts another such op, keeping the furthest ahead.
    mutating func add(_ h: HLC, kind: OpKind, id: BlockID, now: Int64) {
        ops += 1
        if furthest < h { furthest = h; self.kind = "\(kind.code)"; self.id = id.description; aheadMs = h.wall &- now }
    }

    /// Both counts as one, keeping the furthest ahead.
    func joined(_ o: StampsAhead) -> StampsAhead {
        var j = furthest < o.furthest ? o : self
        j.ops = ops + o.ops
        return j
    }

    /// "2056-12-03T13:34:44.120Z #4294967295": a stamp's wall time in UTC and its counter.
    public static func spelled(_ h: HLC) -> String {
        var t = time_t(h.wall / 1000)
        var tm = tm()
        var buf = [CChar](repeating: 0, count: 64)
        guard gmtime_r(&t, &tm) != nil else { return "\(h.wall) ms #\(h.counter)" }
        let n = strftime(&buf, buf.count, "%Y-%m-%dT%H:%M:%S", &tm)
        let ms = String(1000 + (h.wall % 1000 + 1000) % 1000).dropFirst()
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) + ".\(ms)Z #\(h.counter)"
    }

    /// "12 years", "10 min", "6 s": how far ahead, as a person reads it.
    public static func spelled(_ ms: Int64) -> String {
        let s = ms / 1000
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 2 * 86_400 { return "\(s / 3600) h" }
        if s < 2 * 365 * 86_400 { return "\(s / 86_400) days" }
        return "\(s / (365 * 86_400)) years"
    }
}

/// The held-back ops of each device (its actor id, UUID spelling), as read so far.
public typealias HeldBackStamps = [String: StampsAhead]

extension Dictionary where Key == String, Value == StampsAhead {
    mutating func note(_ h: HLC, kind: OpKind, id: BlockID, now: Int64) {
        let device = h.actor.description
        if self[device] == nil { self[device] = StampsAhead(h, kind: kind, id: id, now: now) }
        else { self[device]!.add(h, kind: kind, id: id, now: now) }
    }
}
