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

@Test func one_state_directory_rule() throws {
    let home = ["HOME": "/h"]
    func state(_ e: [String: String], flag: String? = nil) throws -> String {
        try OutlConfig.resolve(stateDirectory: flag, environment: env(home.merging(e) { $1 })).stateDirectory
    }
    #expect(try state([:]) == "/h/.local/state/outl")
    #expect(try state(["XDG_STATE_HOME": "/x"]) == "/x/outl")
    #expect(try state(["XDG_STATE_HOME": "relative"]) == "/h/.local/state/outl", "the XDG spec says to ignore a relative value")
    #expect(try state(["XDG_STATE_HOME": "/x", "OUTL_STATE_DIR": "~/s"]) == "/h/s")
    #expect(try state(["OUTL_STATE_DIR": "/s"], flag: "/f/") == "/f")
}

@Test func the_environment_inbox_is_used_only_without_an_inbox_or_workspace_flag() throws {
    let e = env(["HOME": "/h", "OUTL_CAPTURE_INBOX": "/device", "OUTL_WORKSPACE": "/w"])
    #expect(try OutlConfig.writeTarget(workspace: nil, inboxes: [], environment: e).inbox == "/device")
    let named = try OutlConfig.writeTarget(workspace: "/other", inboxes: [], environment: e)
    #expect(named.inbox == "/other/.outl/captures" && named.workspace == "/other" && named.origin == .commandLine)
    #expect(try OutlConfig.writeTarget(workspace: nil, inboxes: ["/x/"], environment: e).inbox == "/x")
    #expect(try OutlConfig.resolve(inboxes: ["/x"], environment: e).drainedInboxes == ["/w/.outl/captures", "/x"])
    #expect(try OutlConfig.resolve(environment: e).drainedInboxes == ["/w/.outl/captures", "/device"])
}

@Test func unusable_paths_are_refused_with_where_they_came_from() throws {
    func refusal(_ e: [String: String], workspace: String? = nil) -> ConfigError? {
        do {
            _ = try OutlConfig.resolve(workspace: workspace, environment: env(["HOME": "/h"].merging(e) { $1 }))
            return nil
        } catch { return error as? ConfigError }
    }
    let rel = refusal(["OUTL_WORKSPACE": "notes"])
    #expect(rel == ConfigError("$OUTL_WORKSPACE=notes: a relative path; write an absolute path or one starting with ~/"))
    #expect(rel?.exitStatus == 78)
    let user = refusal([:], workspace: "~bob/notes")
    #expect(user?.description == "--workspace ~bob/notes: only ~/ (your own home) is expanded; write the full path")
    #expect(user?.exitStatus == 64)
    #expect(refusal(["OUTL_STATE_DIR": "state"])?.description.hasPrefix("$OUTL_STATE_DIR=state: a relative path") == true)
    // A relative path on the command line is the working directory's, as in any shell command.
    let cwd = FileManager.default.currentDirectoryPath
    #expect(try OutlConfig.resolve(workspace: "./a//b/", environment: env(["HOME": "/h"])).workspaceRoot == cwd + "/a/b")
    // Empty and `.` components go, `..` and names that only start with a dot stay, written from `/`.
    for (given, spelled) in [("/", "/"), ("//", "/"), ("/./.", "/"), ("/a/./b//c/", "/a/b/c"), ("/a/../b", "/a/../b"),
                             ("/.x/..y/./.", "/.x/..y"), ("/é/./ü", "/é/ü")] {
        #expect(try OutlConfig.writeTarget(workspace: nil, inboxes: [given], environment: env(["HOME": "/h"])).inbox == spelled)
    }
}

@Test func each_refused_outld_conf_line_names_file_line_and_why() throws {
    let t = TempDir("outl-conf")
    try FileManager.default.createDirectory(atPath: t.sub(".config/outl"), withIntermediateDirectories: true)
    let conf = t.sub(".config/outl/outld.conf")
    let cases: [(String, String)] = [
        ("workspace = /a\n\nworkspace = /b\n", ":3: workspace is given twice (first on line 1); keep one"),
        ("workspace = '/a'\n", ":1: workspace = '/a': quotes are not removed; write the value without them"),
        ("inbox = ~x/in\n", ":1: ~x/in: only ~/ (your own home) is expanded; write the full path"),
        ("inbox = in\n", ":1: in: a relative path; write an absolute path or one starting with ~/"),
        ("inbox = /in # phone\n", ":1: inbox = /in # phone: a comment must be on a line of its own"),
        ("workspace =\n", ":1: empty value for workspace"),
        ("just words\n", ":1: expected `key = value`"),
    ]
    for (text, says) in cases {
        try writeText(conf, text)
        #expect {
            try OutlConfig.resolve(environment: env(["HOME": t.path]))
        } throws: { e in
            (e as? ConfigError)?.description == conf + says
        }
    }
    // inbox may repeat; the same directory twice is drained once.
    try writeText(conf, "inbox = /p\ninbox = /p/\n")
    #expect(try OutlConfig.resolve(environment: env(["HOME": t.path])).drainedInboxes == [t.path + "/outl/.outl/captures", "/p"])
}
