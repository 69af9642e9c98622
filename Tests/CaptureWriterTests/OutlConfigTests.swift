// OutlConfig.resolve: flags over environment over outld.conf over defaults, and the drained set
// (de-duplicated, in order) that outld and `outl-capture --list` share.
import Foundation
import Testing
import OutlConfig
import TestSupport

private func env(_ d: [String: String]) -> (String) -> String? { { d[$0] } }

@Test func defaults_are_home_outl_and_its_inbox() throws {
    let t = TempDir("outl-conf")
    let c = try OutlConfig.resolve(workspace: nil, inboxes: [], environment: env(["HOME": t.path]))
    #expect(c.workspaceRoot == t.path + "/outl")
    #expect(c.writeInbox == t.path + "/outl/.outl/captures")
    #expect(c.drainedInboxes == [c.writeInbox])
    #expect(c.configFile == nil)
}

@Test func config_file_environment_and_flags_each_win_in_turn() throws {
    let t = TempDir("outl-conf")
    try FileManager.default.createDirectory(atPath: t.sub("xdg/outl"), withIntermediateDirectories: true)
    try writeText(t.sub("xdg/outl/outld.conf"), """
        # my setup
        workspace = ~/notes
          inbox = /srv/phone-inbox/
        inbox=~/notes/.outl/captures

        """)
    var e = ["HOME": t.path, "XDG_CONFIG_HOME": t.sub("xdg")]
    var c = try OutlConfig.resolve(workspace: nil, inboxes: [], environment: env(e))
    #expect(c.workspaceRoot == t.path + "/notes")
    #expect(c.drainedInboxes == [t.path + "/notes/.outl/captures", "/srv/phone-inbox"])
    #expect(c.configFile == t.sub("xdg/outl/outld.conf"))

    e["OUTL_WORKSPACE"] = "/w"
    e["OUTL_CAPTURE_INBOX"] = "/device"
    c = try OutlConfig.resolve(workspace: nil, inboxes: [], environment: env(e))
    #expect(c.workspaceRoot == "/w" && c.writeInbox == "/device")
    #expect(c.drainedInboxes == ["/w/.outl/captures", "/srv/phone-inbox", t.path + "/notes/.outl/captures", "/device"])

    c = try OutlConfig.resolve(workspace: "/flag", inboxes: ["/x", "/device"], environment: env(e))
    #expect(c.workspaceRoot == "/flag" && c.writeInbox == "/x")
    // The command line named the workspace: outld.conf's inboxes and $OUTL_CAPTURE_INBOX belong
    // to the configured one and are not drained into this one (SPEC section 5).
    #expect(c.drainedInboxes == ["/flag/.outl/captures", "/x", "/device"])
    #expect(c.drainedInboxes.filter { $0 == "/device" }.count == 1)
}

@Test func a_bad_config_line_is_an_error_naming_its_line() throws {
    let t = TempDir("outl-conf")
    try FileManager.default.createDirectory(atPath: t.sub(".config/outl"), withIntermediateDirectories: true)
    try writeText(t.sub(".config/outl/outld.conf"), "workspace = /w\ncolour = blue\n")
    #expect(throws: ConfigError.self) {
        try OutlConfig.resolve(workspace: nil, inboxes: [], environment: env(["HOME": t.path]))
    }
    do {
        _ = try OutlConfig.resolve(workspace: nil, inboxes: [], environment: env(["HOME": t.path]))
    } catch {
        #expect("\(error)".hasSuffix("outld.conf:2: unknown key \"colour\""))
    }
}
