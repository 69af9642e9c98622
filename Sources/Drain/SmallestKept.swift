// SmallestKept: at most `limit` elements of a stream, the smallest by `precedes`, so a pass's listing
// of an inbox a peer filled holds a bounded number of names. Invariant: once something was dropped
// (`cut`), every element kept precedes every element dropped, so the next pass, listing again,
// goes on exactly where this one stopped.

public struct SmallestKept<Element> {
    public let limit: Int
    private let precedes: (Element, Element) -> Bool
    private var elements: [Element] = []
    /// Whether an element was offered and not kept.
    public private(set) var cut = false
    /// A max-heap by `precedes` once full (its root the last kept); a plain list before, so a
    /// listing within the limit costs an append per name and nothing more.
    private var isHeap = false

    public init(limit: Int, by precedes: @escaping (Element, Element) -> Bool) {
        self.limit = max(1, limit)
        self.precedes = precedes
    }

    public var count: Int { elements.count }

    public mutating func offer(_ x: Element) {
        if elements.count < limit {
            elements.append(x)
            return
        }
        cut = true
        if !isHeap {
            // Floyd's: sift down every parent, the last first.
            for i in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
            isHeap = true
        }
        guard precedes(x, elements[0]) else { return }
        elements[0] = x
        siftDown(0)
    }

    /// The kept elements, in order (sorted where they are, then handed over: none is left).
    public mutating func takeSorted() -> [Element] {
        elements.sort(by: precedes)
        defer { elements = [] }
        return elements
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        let n = elements.count
        while true {
            let l = 2 * i + 1, r = l + 1
            var top = i
            if l < n, precedes(elements[top], elements[l]) { top = l }
            if r < n, precedes(elements[top], elements[r]) { top = r }
            if top == i { return }
            elements.swapAt(i, top)
            i = top
        }
    }
}
