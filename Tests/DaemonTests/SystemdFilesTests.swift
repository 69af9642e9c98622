// The files in systemd/: the units as `make install` renders them pass `systemd-analyze verify`,
// and the catalog compiles with journalctl and explains every MessageID the code logs.
import Foundation
import Testing
import Daemon
import SystemCalls
import TestSupport

private let repoRoot: String = {
    var u = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { u.deleteLastPathComponent() }
    return u.path
}()

@Suite struct SystemdFilesTests {
    static let units = ["outld.service", "outld-drain.service", "outld-drain.path"]

    @Test(.enabled(if: access("/usr/bin/systemd-analyze", X_OK) == 0, "needs systemd-analyze"))
    func units_pass_systemd_analyze_verify() throws {
        let t = TempDir("units")
        let bin = t.sub("bin")
        try Durable.makeDirectory(bin, mode: 0o755)
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: Path.join(bin, "outld"))
        for u in Self.units {
            let template = try #require(readText(Path.join(repoRoot, "systemd/\(u).in")))
            #expect(template.contains("@bindir@") || u.hasSuffix(".path"))
            try writeText(t.sub(u), template.replacingOccurrences(of: "@bindir@", with: bin))
        }
        let runtime = t.sub("xdg")
        try Durable.makeDirectory(runtime, mode: 0o700)
        for scope in [["--user"], []] {
            let r = try run("/usr/bin/systemd-analyze", ["verify", "--man=no"] + scope + Self.units.map { t.sub($0) },
                            env: ["XDG_RUNTIME_DIR": runtime])
            #expect(r.status == 0, "systemd-analyze verify \(scope): \(r.stderr)")
            #expect(r.stderr.isEmpty, "\(scope): \(r.stderr)")
        }
    }

    /// The statuses no restart fixes (a usage or configuration error, no workspace or a linked
    /// inbox, a lock another outld holds, no permission or a read-only file system) are exactly the
    /// ones the unit tells systemd not to restart on, and each is in outld(1) EXIT STATUS.
    @Test func the_unit_restarts_on_no_status_a_restart_cannot_fix() throws {
        let unit = try #require(readText(Path.join(repoRoot, "systemd/outld.service.in")))
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("RestartPreventExitStatus=") })
        let listed = Set(line.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").compactMap { Int32($0) })
        #expect(listed == [Sysexits.usage, Sysexits.cantCreate, Sysexits.tempFail, Sysexits.noPermission, Sysexits.config])
        let man = try #require(readText(Path.join(repoRoot, "man/outld.1")))
        for s in listed { #expect(man.contains(".It \(s)\n"), "outld(1) EXIT STATUS lacks \(s)") }
        // What a retry may fix is restarted: a full disk (74), an unusable workspace (69).
        #expect(!listed.contains(Sysexits.ioError) && !listed.contains(Sysexits.unavailable))
        #expect(Sysexits.of(errno: EROFS, otherwise: 69) == Sysexits.noPermission)
        #expect(Sysexits.of(errno: EACCES, otherwise: 69) == Sysexits.noPermission)
        #expect(Sysexits.of(errno: ENOSPC, otherwise: 69) == Sysexits.ioError)
    }

    /// Every MessageID the catalog explains is one outld logs (a catalog entry for an id nothing
    /// emits explains nothing), read from the sources: each is passed as `id: .name` somewhere.
    @Test func every_message_id_is_emitted_somewhere() throws {
        var code = ""
        let dir = Path.join(repoRoot, "Sources/Daemon")
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) where f.hasSuffix(".swift") {
            code += readText(Path.join(dir, f)) ?? ""
        }
        for id in MessageID.allCases {
            #expect(code.contains("id: .\(id)"), "MessageID.\(id) is in the catalog but never logged")
        }
    }

    @Test(.enabled(if: access("/usr/bin/journalctl", X_OK) == 0, "needs journalctl"))
    func catalog_compiles_and_explains_every_message_id() throws {
        let t = TempDir("catalog")
        let dir = t.sub("usr/lib/systemd/catalog")
        try Durable.makeDirectory(dir, mode: 0o755)
        try Durable.makeDirectory(t.sub("var/lib/systemd/catalog"), mode: 0o755)
        try FileManager.default.copyItem(atPath: Path.join(repoRoot, "systemd/outld.catalog"),
                                         toPath: Path.join(dir, "outld.catalog"))
        let update = try run("/usr/bin/journalctl", ["--root", t.path, "--update-catalog"])
        #expect(update.status == 0, "\(update.stderr)")
        let list = try run("/usr/bin/journalctl", ["--root", t.path, "--list-catalog"])
        let listed = Set(list.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        #expect(listed == Set(MessageID.allCases.map(\.rawValue)))
    }
}
