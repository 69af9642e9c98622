// The writer stays tiny: no Foundation, whether linked dynamically or folded into the static
// executable, and no shared Swift runtime to load at start-up: it is a static executable.
import Foundation
import Testing
import TestSupport

/// The program header types of an ELF64 little-endian file (PT_INTERP = 3 names a dynamic loader).
func elfProgramHeaderTypes(_ bytes: Data) throws -> [UInt32] {
    let b = [UInt8](bytes.prefix(1 << 20))
    try #require(b.count > 64 && b[0..<4] == [0x7F, 0x45, 0x4C, 0x46] && b[4] == 2 && b[5] == 1, "not an ELF64 LE file")
    func int(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(b[at + $1]) << (8 * $1) } }
    let phoff = int(0x20, 8), phentsize = int(0x36, 2), phnum = int(0x38, 2)
    try #require(phoff + phentsize * phnum <= b.count)
    return (0..<phnum).map { UInt32(int(phoff + $0 * phentsize, 4)) }
}

@Test func outl_capture_links_neither_foundation_nor_a_shared_swift_runtime() throws {
    let r = try run("/usr/bin/ldd", [writer])
    let report = r.stdout + r.stderr
    #expect(report.contains("not a dynamic executable"), "\(report)")
    #expect(!report.contains("libFoundation"), "\(report)")
    #expect(!report.contains("libswiftCore"), "\(report)")
    let bytes = try #require(FileManager.default.contents(atPath: writer))
    // No PT_INTERP: the kernel runs it without a dynamic loader, so nothing shared is loaded.
    let types = try elfProgramHeaderTypes(bytes)
    #expect(!types.isEmpty)
    #expect(!types.contains(3), "\(writer) asks for a dynamic loader (PT_INTERP)")
    // A static link would hide Foundation from ldd: look for its mangled module name instead.
    #expect(bytes.range(of: Data("10Foundation".utf8)) == nil, "Foundation symbols inside \(writer)")
}

@Test func the_elf_check_sees_a_dynamic_loader_where_there_is_one() throws {
    // The same check on outld, which links libstdc++ and liburing dynamically: it must see PT_INTERP there,
    // or the assertion above could hold for any binary.
    let bytes = try #require(FileManager.default.contents(atPath: binPath("outld")))
    #expect(try elfProgramHeaderTypes(bytes).contains(3))
}

@Test func outl_capture_links_no_concurrency_runtime_or_libdispatch() throws {
    // Their start-up work (libdispatch_init reads sysfs; the actor runtime registers itself) and
    // pages would be every capture's. The symbol table is read as bytes: a name found in outld and
    // one the writer must have show the search can find what it looks for.
    let writerBytes = try #require(FileManager.default.contents(atPath: writer))
    let outldBytes = try #require(FileManager.default.contents(atPath: binPath("outld")))
    for name in ["libdispatch_init", "swift_task_create"] {
        #expect(outldBytes.range(of: Data((name + "\0").utf8)) != nil, "\(name) not seen in outld: the search finds nothing")
        #expect(writerBytes.range(of: Data((name + "\0").utf8)) == nil, "\(name) linked into \(writer)")
    }
    #expect(writerBytes.range(of: Data("swift_retain\0".utf8)) != nil, "no symbol table in \(writer)")
}
