// The writer stays tiny: no Foundation, whether linked dynamically or folded into the static
// executable, and no shared Swift runtime to load at start-up.
import Foundation
import Testing
import TestSupport

@Test func outl_capture_links_neither_foundation_nor_a_shared_swift_runtime() throws {
    let r = try run("/usr/bin/ldd", [writer])
    let report = r.stdout + r.stderr
    #expect(report.contains("not a dynamic executable") || r.status == 0, "\(report)")
    #expect(!report.contains("libFoundation"), "\(report)")
    #expect(!report.contains("libswiftCore"), "\(report)")
    // A static link would hide Foundation from ldd: look for its mangled module name instead.
    let bytes = try #require(FileManager.default.contents(atPath: writer))
    #expect(bytes.range(of: Data("10Foundation".utf8)) == nil, "Foundation symbols inside \(writer)")
}
