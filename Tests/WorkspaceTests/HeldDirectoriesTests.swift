// HeldDirectoriesTests: a directory held open between passes is never used once it is no longer the
// directory at its path: replaced, removed, made a link to somewhere outside, or its root moved.
// Real directories and links; the workspace tests at the end go through projectDirtyPages.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemCalls
import Testing
import TestSupport
import Workspace

@Suite struct HeldDirectoriesTests {
    let dir = TempDir("outl-held")
    var root: String { dir.sub("root") }

    func make(_ rel: String) throws {
        try FileManager.default.createDirectory(atPath: Path.join(root, rel), withIntermediateDirectories: true)
    }

    func inode(_ fd: FileDescriptor) throws -> UInt64 { UInt64(try fd.stat().st_ino) }
    func inode(_ path: String) throws -> UInt64 { UInt64(try Sys.lstat(path).st_ino) }

    @Test func a_held_directory_is_reused_until_it_is_replaced() throws {
        try make("journals")
        let held = HeldDirectories(root: root)
        let first = try held.directory("journals")
        held.expire()
        #expect(try held.directory("journals").rawValue == first.rawValue, "opened again though nothing changed")
        try FileManager.default.moveItem(atPath: Path.join(root, "journals"), toPath: Path.join(root, "old"))
        try make("journals")
        // Within the pass, the tree is taken as it was; the next pass sees the new directory.
        #expect(try held.directory("journals").rawValue == first.rawValue)
        held.expire()
        let second = try held.directory("journals")
        #expect(try inode(second) == inode(Path.join(root, "journals")), "still the renamed-away directory")
        #expect(try inode(second) != inode(Path.join(root, "old")))
    }

    @Test(arguments: ["journals", ".outl/tmp", ".outl"])
    func a_held_directory_made_a_link_is_refused_and_its_target_never_reached(_ linked: String) throws {
        try make(".outl/tmp")
        try make("journals")
        let outside = dir.sub("outside")
        try FileManager.default.createDirectory(atPath: Path.join(outside, "tmp"), withIntermediateDirectories: true)
        let held = HeldDirectories(root: root)
        _ = try held.directory("journals")
        _ = try held.directory(".outl/tmp")
        try FileManager.default.moveItem(atPath: Path.join(root, linked), toPath: Path.join(root, "moved-away"))
        try FileManager.default.createSymbolicLink(atPath: Path.join(root, linked), withDestinationPath: linked == ".outl" ? outside : Path.join(outside, "tmp"))
        held.expire()
        let rel = linked == ".outl" ? ".outl/tmp" : linked
        #expect(throws: UnsafeComponent.self, "\(linked) made a link was used") { _ = try held.directory(rel) }
        #expect(throws: UnsafeComponent.self, "a refused link was held after all") { _ = try held.directory(rel) }
    }

    /// With the `own` hook, a directory below `.outl` that is a link, a FIFO or a file is taken away
    /// when it is asked for with `create` (told first, a file with its bytes) and made again; one the
    /// person owns (journals) is still refused; the link's target is never reached.
    @Test(arguments: ["link", "fifo", "file"])
    func an_own_directory_made_a_link_fifo_or_file_is_taken_away_when_made(_ what: String) throws {
        try make(".outl")
        let outside = dir.sub("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try writeText(Path.join(outside, "kept.md"), "outside\n")
        for rel in [".outl/tmp", "journals"] {
            let path = Path.join(root, rel)
            switch what {
            case "link": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside)
            case "fifo": #expect(mkfifo(path, 0o644) == 0)
            default: try writeText(path, "a peer's bytes\n")
            }
        }
        let held = HeldDirectories(root: root)
        var removed: [OwnDirectory.Found] = []
        // Told before the entry goes, so a file's bytes can be kept durably first.
        var presentWhenTold: [Bool] = []
        held.own = (".outl", 1 << 20, { removed.append($0); presentWhenTold.append((try? Sys.lstat($0.path)) != nil) })
        #expect(throws: UnsafeComponent.self) { _ = try held.directory(".outl/tmp") }  // not asked to make it
        let made = try held.directory(".outl/tmp", create: 0o700)
        #expect(try inode(made) == inode(Path.join(root, ".outl/tmp")))
        #expect(removed.map(\.path) == [Path.join(root, ".outl/tmp")] && presentWhenTold == [true])
        #expect(removed.first?.bytes.map { String(decoding: $0, as: UTF8.self) } == (what == "file" ? "a peer's bytes\n" : nil))
        #expect(removed.first?.what.hasPrefix(what == "link" ? "a symbolic link to \(outside)" : what == "fifo" ? "a FIFO" : "a file of 15 bytes") == true,
                "\(removed.map(\.what))")
        #expect(throws: UnsafeComponent.self, "journals is the person's") { _ = try held.directory("journals", create: 0o755) }
        #expect(listDir(outside) == ["kept.md"] && readText(Path.join(outside, "kept.md")) == "outside\n")
    }

    @Test func a_removed_directory_is_missing_and_made_again_on_request() throws {
        try make("pages")
        let held = HeldDirectories(root: root)
        _ = try held.directory("pages")
        try FileManager.default.removeItem(atPath: Path.join(root, "pages"))
        held.expire()
        #expect(throws: Errno(ENOENT)) { _ = try held.directory("pages") }
        let made = try held.directory("pages", create: 0o755)
        #expect(try inode(made) == inode(Path.join(root, "pages")))
    }

    @Test func a_moved_root_is_opened_again_at_its_path() throws {
        try make("journals")
        let held = HeldDirectories(root: root)
        let first = try held.directory("journals")
        let firstInode = try inode(first)
        try FileManager.default.moveItem(atPath: root, toPath: dir.sub("root-moved"))
        try make("journals")
        held.expire()
        let again = try held.directory("journals")
        #expect(try inode(again) != firstInode, "the moved root's journals/ was used")
        #expect(try inode(again) == inode(Path.join(root, "journals")))
    }

    @Test func a_moved_root_is_seen_once_its_check_is_due() throws {
        try make("journals")
        let held = HeldDirectories(root: root, rootCheckNs: 200_000_000)
        let first = try inode(try held.directory("journals"))
        try FileManager.default.moveItem(atPath: root, toPath: dir.sub("root-moved"))
        try make("journals")
        held.expire()
        // Within the interval the root stands as checked; what is below it is still checked (the
        // held journals/ moved with its root, so its name under the held root still matches).
        #expect(try inode(try held.directory("journals")) == first)
        usleep(250_000)
        held.expire()
        #expect(try inode(try held.directory("journals")) == inode(Path.join(root, "journals")), "the moved root is still used")
    }

    @Test func a_held_listing_sees_every_change_and_follows_a_replaced_directory() throws {
        try make(".outl/ops")
        let ops = Path.join(root, ".outl/ops")
        try putFile(Path.join(ops, "a"), [1])
        let held = HeldDirectories(root: root)
        #expect(try held.names(".outl/ops") == ["a"])
        try putFile(Path.join(ops, "b"), [1])
        try Sys.unlink(Path.join(ops, "a"))
        held.expire()
        #expect(try held.names(".outl/ops").sorted() == ["b"], "the stream was not rewound to the directory as it is now")
        try FileManager.default.moveItem(atPath: ops, toPath: Path.join(root, "ops-away"))
        try make(".outl/ops")
        try putFile(Path.join(ops, "c"), [1])
        held.expire()
        #expect(try held.names(".outl/ops") == ["c"], "listed the directory moved away")
    }

    // MARK: through the workspace

    @Test func journals_made_a_link_between_two_projections_is_refused_and_its_target_never_written() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("first")])
        _ = try await ws.projectDirtyPages()
        #expect((readText(t.journal(day1)) ?? "").contains("- first"))
        let outside = t.dir.sub("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: Path.join(t.root, "journals"), toPath: Path.join(t.root, "journals-away"))
        try FileManager.default.createSymbolicLink(atPath: Path.join(t.root, "journals"), withDestinationPath: outside)
        _ = try await ws.appendCaptures([capture("second")])
        _ = try await ws.projectDirtyPages()
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "written through the link")
        let away = readText(Path.join(t.root, "journals-away/\(day1.fileStem).md")) ?? ""
        #expect(!away.contains("second"), "written into the directory renamed away:\n\(away)")
        let failing = await ws.failingPages
        #expect(failing.count == 1 && failing.allSatisfy { $0.reason.contains("symbolic link") }, "\(failing)")
        await ws.close()
    }

    @Test func journals_replaced_between_two_projections_gets_the_page_written_again() async throws {
        let t = TestWorkspace()
        let ws = try t.open()
        _ = try await ws.appendCaptures([capture("first")])
        _ = try await ws.projectDirtyPages()
        try FileManager.default.moveItem(atPath: Path.join(t.root, "journals"), toPath: Path.join(t.root, "journals-away"))
        try FileManager.default.createDirectory(atPath: Path.join(t.root, "journals"), withIntermediateDirectories: false)
        _ = try await ws.appendCaptures([capture("second")])
        _ = try await ws.projectDirtyPages()
        let page = readText(t.journal(day1)) ?? ""
        #expect(page.contains("- first") && page.contains("- second"), "\(page)")
        #expect(!(readText(Path.join(t.root, "journals-away/\(day1.fileStem).md")) ?? "").contains("second"))
        await ws.close()
    }
}
