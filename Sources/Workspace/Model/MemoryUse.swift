// MemoryUse: where the model's memory goes, part by part (`outl debug-memory`, bench/scale.sh).
// Rows and arena count what they fill (room reserved and never touched costs address space, not
// memory); the small tables count their capacity, a dictionary estimated from its entries' strides:
// close figures, not exact.
#if canImport(Glibc)
import Glibc
#endif

public struct MemoryPart: Sendable {
    public var name: String
    public var bytes: Int
}

extension BlockTable {
    func memoryUse() -> [MemoryPart] {
        var editBytes = edits.capacity * (MemoryLayout<Int>.stride + MemoryLayout<BlockEdits>.stride)
        for e in edits.values { editBytes += e.otherPages.capacity * MemoryLayout<BlockID>.stride + (e.topMovePos?.utf8.count ?? 0) }
        return [
            MemoryPart(name: "block rows (\(count) of \(MemoryLayout<BlockRow>.stride) B; room for \(rows.capacity))",
                       bytes: count * MemoryLayout<BlockRow>.stride),
            MemoryPart(name: "block id index (\(slots.count) slots of 4 B)", bytes: slots.count * 4),
            MemoryPart(name: "arena: texts, properties, positions, parents, create stamps (room for \(arena.capacity) B)",
                       bytes: arena.count),
            MemoryPart(name: "stamps of edited blocks (\(edits.count))", bytes: editBytes),
            MemoryPart(name: "property keys, actors and page numbers", bytes: keys.flat.capacity + keys.starts.capacity * 8
                       + keys.names.capacity * 16 + keys.index.capacity * 16 + actors.capacity * 16 + actorNumbers.capacity * 24
                       + pageIDs.capacity * 16 + pageNumbers.capacity * 24),
        ]
    }
}

extension Model {
    func memoryUse() -> [MemoryPart] {
        var pageBytes = pages.capacity * (MemoryLayout<BlockID>.stride + MemoryLayout<Page>.stride)
        var rowBytes = 0
        for p in pages.values {
            rowBytes += p.rows.bytes
            pageBytes += p.name.utf8.count + p.preamble.utf8.count + p.maxTopPos.utf8.count
        }
        var pendingBytes = pending.capacity * (MemoryLayout<BlockID>.stride + 8)
        for w in pending.values { pendingBytes += w.capacity * MemoryLayout<Op>.stride }
        return blocks.memoryUse() + [
            MemoryPart(name: "pages (\(pages.count))", bytes: pageBytes),
            MemoryPart(name: "pages' lists of their blocks", bytes: rowBytes),
            MemoryPart(name: "ops waiting for their block (\(pending.count))", bytes: pendingBytes),
        ]
    }
}

/// The process as the kernel sees it.
public enum ProcessMemory {
    /// VmRSS and VmHWM of /proc/self/status, in bytes (nil where unreadable).
    public static func resident() -> (now: Int, peak: Int)? {
        guard let f = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(f) }
        var now: Int?, peak: Int?
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), f) != nil {
            let s = String(cString: line)
            let kib = { Int(s.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).dropFirst().first ?? "").map { $0 * 1024 } }
            if s.hasPrefix("VmRSS:") { now = kib() } else if s.hasPrefix("VmHWM:") { peak = kib() }
        }
        guard let now, let peak else { return nil }
        return (now, peak)
    }
}
