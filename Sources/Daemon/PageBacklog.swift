// PageBacklog: pages left stale after a pass in slices (a start without page files, a large merge),
// counted so STATUS= and `outld --once` on a terminal can say how far the writing is. Invariant:
// `total` only grows while a backlog lasts (pages marked meanwhile join it), and `written` is what
// it holds less what is left.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Workspace

struct PageBacklog {
    /// Pages this backlog has had to write so far, and how many of them are left.
    private(set) var total = 0
    private(set) var left = 0
    private(set) var startedNs: UInt64 = 0

    var written: Int { total - left }
    var active: Bool { left > 0 }

    /// One pass is at most this long (`OUTL_PAGE_SLICE_MS`, default 50), and at most
    /// `OUTL_PAGE_SLICE_PAGES` pages (tests make it small to see the loop between slices).
    static func slice() -> PageSlice {
        let ms = Path.environment("OUTL_PAGE_SLICE_MS").flatMap { Int($0) }.map { max(1, $0) } ?? 50
        let pages = Path.environment("OUTL_PAGE_SLICE_PAGES").flatMap { Int($0) }.map { max(1, $0) } ?? Int.max
        return PageSlice(milliseconds: ms, pages: pages)
    }

    enum Change { case none, started, finished(Int, UInt64) }

    /// What a pass left: returns whether a backlog began or ended with it.
    mutating func update(left now: Int) -> Change {
        defer { left = now }
        if left == 0 && now == 0 { return .none }
        if left == 0 {
            total = now
            startedNs = monotonicNanoseconds()
            return .started
        }
        if now > left { total += now - left }
        if now == 0 {
            let done = (total, monotonicNanoseconds() - startedNs)
            total = 0
            return .finished(done.0, done.1)
        }
        return .none
    }

    /// "writing pages: 3,100 of 10,000"
    var status: String { "writing pages: \(PageBacklog.grouped(written)) of \(PageBacklog.grouped(total))" }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}

/// One line on a terminal's stderr, rewritten in place ("\r", then erase to the end of the line).
enum ProgressLine {
    /// Work shorter than this shows no line at all (`OUTL_PROGRESS_AFTER_MS`, for tests).
    static let after: UInt64 = UInt64(Path.environment("OUTL_PROGRESS_AFTER_MS").flatMap { Int($0) }.map { max(0, $0) } ?? 300) * 1_000_000
    static func show(_ text: String) { write("\r\u{1B}[K" + text) }
    static func clear() { write("\r\u{1B}[K") }

    private static func write(_ s: String) {
        var b = Array(s.utf8)
        _ = b.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
