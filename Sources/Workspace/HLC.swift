// HLC: hybrid logical clock (wall ms, counter, actor) giving every op of every device one total order.
// Invariant: a clock never issues a stamp lower than one it issued or observed.
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

    /// A fixed-width base-36 spelling that sorts like the stamp; used as an append position key.
    public var positionKey: String {
        PositionKey.fixed(UInt64(max(0, wall)), width: 9) + PositionKey.fixed(UInt64(counter), width: 4) + "i"
    }
}

/// The device's clock: `tick` for a new local op, `observe` for every op read (at boot and in each live merge).
public struct HLClock: Sendable {
    public let actor: BlockID
    public private(set) var last: HLC

    public init(actor: BlockID) {
        self.actor = actor
        last = HLC(wall: 0, counter: 0, actor: actor)
    }

    public mutating func observe(_ h: HLC) {
        if h.wall > last.wall || (h.wall == last.wall && h.counter > last.counter) {
            last = HLC(wall: h.wall, counter: h.counter, actor: actor)
        }
    }

    public mutating func tick(now: Int64 = wallClockMilliseconds()) -> HLC {
        if now > last.wall {
            last = HLC(wall: now, counter: 0, actor: actor)
        } else {
            last = HLC(wall: last.wall, counter: last.counter &+ 1, actor: actor)
        }
        return last
    }
}
