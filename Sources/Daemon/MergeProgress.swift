// MergeProgress: a live merge read in slices (a device joining with years of ops, one back after a
// long time away), one slice per turn of outld's loop. Invariant: the slices' reports are summed
// into one, so the journal says once per device what its ops did, when the merge is done.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import Workspace

struct MergeProgress {
    /// What the slices so far did, as one report.
    private(set) var report = MergeReport()
    private(set) var slices = 0
    private(set) var startedNs: UInt64 = 0

    /// A slice stopped with more to read: the next is due.
    var active: Bool { report.more }

    /// One slice is at most this long (`OUTL_MERGE_SLICE_MS`, default 50) and reads at most
    /// `OUTL_MERGE_SLICE_BYTES` (tests make it small to see the loop between slices).
    static func slice() -> MergeSlice {
        let ms = Path.environment("OUTL_MERGE_SLICE_MS").flatMap { Int($0) }.map { max(1, $0) } ?? 50
        let bytes = Path.environment("OUTL_MERGE_SLICE_BYTES").flatMap { Int($0) }.map { max(1, $0) } ?? Int.max
        return MergeSlice(milliseconds: ms, bytes: bytes)
    }

    enum Step {
        /// The first slice stopped with more to read.
        case started
        /// Another slice, more to read still.
        case going
        /// The merge read all there was: its slices as one report, how many, and how long they took.
        case finished(MergeReport, slices: Int, ns: UInt64)
    }

    /// Adds one slice's report.
    mutating func add(_ r: MergeReport) -> Step {
        let first = slices == 0
        if first { startedNs = monotonicNanoseconds() }
        slices += 1
        report.add(r)
        if r.more { return first ? .started : .going }
        let done = Step.finished(report, slices: slices, ns: monotonicNanoseconds() - startedNs)
        self = MergeProgress()
        return done
    }

    /// "merging 420,000 of about 1,010,000 ops from device 01a2…": the total estimated from the
    /// bytes left at the ops per byte read so far.
    var status: String {
        let read = report.read
        let total = report.bytesRead > 0 ? read + Int(Double(report.bytesLeft) * Double(read) / Double(report.bytesRead)) : read
        let devices = report.appliedByActor.keys
        let from = devices.count == 1 ? "from device \(devices.first!.prefix(8))…" : "from \(devices.count) devices"
        return "merging \(PageBacklog.grouped(read)) of about \(PageBacklog.grouped(total)) ops \(from)"
    }
}
