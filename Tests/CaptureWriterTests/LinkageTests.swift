// The writer stays tiny: it must not link Foundation, and the Swift runtime is linked statically.
import Testing
import TestSupport

@Test func outl_capture_links_neither_foundation_nor_a_shared_swift_runtime() throws {
    let r = try run("/usr/bin/ldd", [writer])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(!r.stdout.contains("libFoundation"), "\(r.stdout)")
    #expect(!r.stdout.contains("libswiftCore"), "\(r.stdout)")
}
