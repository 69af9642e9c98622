// fuzz-path: libFuzzer target over the Path helpers, which every inbox and op-log path goes through.
// Invariants checked: no crash on any bytes; parent(of:) is a prefix of a non-relative path and
// never longer than it; join then lastComponent gives the component back.
import SystemCalls

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let s = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parent = Path.parent(of: s)
    if s.utf8.first == UInt8(ascii: "/") {
        precondition(s.utf8.starts(with: parent.utf8), "parent \(parent) is not a prefix of \(s)")
    }
    precondition(parent.utf8.count <= max(1, s.utf8.count), "parent longer than the path")
    _ = Path.lastComponent(s)
    let name = s.utf8.split(separator: UInt8(ascii: "/")).first.map { String(decoding: $0, as: UTF8.self) } ?? "x"
    precondition(Path.lastComponent(Path.join("/base", name)) == name, "join/lastComponent disagree on \(name)")
    _ = Path.expandTilde(s)
    return 0
}
