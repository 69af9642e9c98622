// fuzz-oplog: libFuzzer target over the op-log reader (OpFileCursor, LineScan, OpParser), which reads
// files any peer or sync tool may have written. The first input byte sets the cursor's line bound
// (0: the real 4 MiB one, else 8 bytes per unit), the rest is the file, read as this device's own
// (writable, so its tail is cut). Invariants checked against a plain split at newlines:
// * no input crashes, hangs or allocates beyond the bound;
// * the ops handed over are exactly the complete lines within the bound that parse, in order;
// * the offset is the end of the last valid line (and of blank lines right after it), and the file is
//   cut there: no valid line is ever cut, whatever overlong or invalid line came before it;
// * a second cursor over the cut file reads the same ops and leaves no tail.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
@testable import Workspace

/// One file, reused input after input (tmpfs when there is one: the fuzzer does I/O on every run).
nonisolated(unsafe) let scratchPath: String = {
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(base)/outl-fuzz-oplog.\(getpid()).jsonl"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpLog(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bound = data[0] == 0 ? OpFileCursor.maxLineBytes : Int(data[0]) * 8
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    // The reference: complete lines only; a valid one is within the bound and parses.
    var expected: [BlockID] = []
    var validEnd = 0
    var start = 0
    for (i, b) in bytes.enumerated() where b == 10 {
        let line = bytes[start..<i]
        if line.isEmpty {
            if validEnd == start { validEnd = i + 1 }
        } else if line.count <= bound {
            var scratch = ParseScratch()
            let raw = line.withUnsafeBufferPointer { OpParser.parseRaw($0, &scratch) }
            _ = line.withUnsafeBufferPointer { OpParser.parse($0) }
            if let raw {
                expected.append(raw.id)
                validEnd = i + 1
            }
        }
        start = i + 1
    }

    unlink(scratchPath)
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    precondition(fd >= 0, "cannot create \(scratchPath)")
    bytes.withUnsafeBytes { b in
        var done = 0
        while done < b.count {
            let n = write(fd, b.baseAddress! + done, b.count - done)
            precondition(n > 0, "write failed")
            done += n
        }
    }
    close(fd)

    var cursor = OpFileCursor()
    cursor.maxLine = bound
    var got: [BlockID] = []
    do {
        _ = try cursor.read(scratchPath, writable: true, sink: { op, _ in got.append(op.raw.id) })
    } catch {
        preconditionFailure("reading a regular file failed: \(error)")
    }
    precondition(got == expected, "ops \(got.count), expected \(expected.count)")
    precondition(cursor.offset == validEnd, "offset \(cursor.offset), expected \(validEnd)")
    var st = stat()
    precondition(stat(scratchPath, &st) == 0 && Int(st.st_size) == validEnd, "cut at \(st.st_size), not at \(validEnd)")

    var again = OpFileCursor()
    again.maxLine = bound
    var second: [BlockID] = []
    let outcome = try? again.read(scratchPath, writable: false, sink: { op, _ in second.append(op.raw.id) })
    precondition(second == expected, "a second read differs")
    if case .read(_, _, _, _, let tail)? = outcome { precondition(tail == 0, "a tail left after the cut: \(tail)") }
    unlink(scratchPath)
    return 0
}
