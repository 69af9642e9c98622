// OutlConfig: the one place that decides which workspace, which inboxes and which device-local state
// directory outl, outld, outld --once and outl-capture mean. One order for every setting: the
// command line, then the environment, then outld.conf, then the defaults (SPEC section 5).
// Invariants: resolving creates nothing; a value that cannot mean one thing is refused here, before
// any program acts on it; the command line naming a workspace or an inbox shuts out the
// environment's inbox, and naming a workspace shuts out outld.conf altogether.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

/// A setting that cannot be used, as one sentence that names where it came from.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    public let description: String
    /// True when the value came from the command line (a usage error, 64), else the environment
    /// or outld.conf (a configuration error, 78).
    public let fromCommandLine: Bool
    public init(_ d: String, fromCommandLine: Bool = false) {
        description = d
        self.fromCommandLine = fromCommandLine
    }
    /// The sysexits status a program exits with for this error.
    public var exitStatus: Int32 { fromCommandLine ? 64 : 78 }
}

public struct OutlConfig: Equatable, Sendable {
    /// Where the workspace setting came from.
    public enum Origin: String, Sendable {
        case commandLine = "--workspace"
        case environment = "$OUTL_WORKSPACE"
        case configFile = "outld.conf"
        case builtIn = "the default"
    }

    public var workspaceRoot: String
    public var workspaceOrigin: Origin
    /// Where a writer puts a capture: the first --inbox, else $OUTL_CAPTURE_INBOX (when neither
    /// --inbox nor --workspace was given), else the workspace inbox.
    public var writeInbox: String
    /// Every inbox outld drains and `outl-capture --list` lists, each once, workspace inbox first.
    public var drainedInboxes: [String]
    /// The base of the device-local state (write lock, actor id, projection records); one
    /// `ws-…` directory per workspace lives under it.
    public var stateDirectory: String
    /// The outld.conf that was read, or nil when there was none (or it was not needed).
    public var configFile: String?
    /// outld.conf's `journal-file-format` as written (`yyyy_MM_dd` or `yyyy-MM-dd`), nil when unset.
    public var journalFileFormat: String? = nil
    /// outld.conf's `attachment-limit` in bytes, nil when unset (the format's default applies).
    public var attachmentLimit: Int? = nil
    /// outld.conf's `page-properties` (checked words: `captured-at`, `source`, `none`), nil when unset.
    public var pageProperties: String? = nil

    /// The command line named the workspace: a missing one is a typo, never created.
    public var workspaceIsExplicit: Bool { workspaceOrigin == .commandLine }

    /// The one sentence for a workspace that does not exist, said by every program but the daemon
    /// (only a running `outld` creates one): where the path came from, and how to make it.
    public static func missingWorkspace(_ root: String, origin: Origin) -> String {
        "no workspace at \(root) (from \(origin.rawValue)); start outld to create it, or create the directory"
    }

    /// Resolves everything. `workspace`, `inboxes` and `stateDirectory` are what the command line
    /// gave (nil or empty when it gave nothing).
    ///   workspace = --workspace | $OUTL_WORKSPACE | outld.conf `workspace` | ~/outl
    ///   inboxes   = <workspace>/.outl/captures, then outld.conf `inbox` lines (unless --workspace),
    ///               $OUTL_CAPTURE_INBOX (unless --workspace or --inbox), then each --inbox
    ///   state     = --state-dir | $OUTL_STATE_DIR | $XDG_STATE_HOME/outl | ~/.local/state/outl
    public static func resolve(workspace: String? = nil, inboxes: [String] = [], stateDirectory: String? = nil,
                               environment: @escaping (String) -> String? = Path.environment) throws -> OutlConfig {
        var r = Resolver(workspace: workspace, inboxes: inboxes, stateDirectory: stateDirectory, environment: environment)
        let (root, origin) = try r.workspace()
        let workspaceInbox = inboxOf(root: root)
        let flagInboxes = try inboxes.map { try r.commandLinePath($0, "--inbox") }
        let envInbox = try r.environmentInbox()
        var drained: [String] = []
        for dir in [workspaceInbox] + (try r.configFile()?.inboxes ?? []) + (envInbox.map { [$0] } ?? []) + flagInboxes
        where !drained.contains(dir) {
            drained.append(dir)
        }
        return OutlConfig(workspaceRoot: root, workspaceOrigin: origin,
                          writeInbox: flagInboxes.first ?? envInbox ?? workspaceInbox,
                          drainedInboxes: drained, stateDirectory: try r.stateDirectory(),
                          configFile: r.configFileRead, journalFileFormat: try r.configFile()?.journalFileFormat,
                          attachmentLimit: try r.configFile()?.attachmentLimit, pageProperties: try r.configFile()?.pageProperties)
    }

    /// Only where a writer writes, reading no more than it needs: an explicit --inbox needs no
    /// configuration at all, so a broken outld.conf cannot stop it. `workspace` is the root whose
    /// inbox it is, when it is the workspace inbox, with where its setting came from (the writer
    /// checks that it exists: it never creates a workspace; nothing below that
    /// root is followed as a link), nil for a device-local inbox the user named. `page` and
    /// `attachmentLimit` are outld.conf's when the workspace inbox is written (the file is read then).
    public static func writeTarget(workspace: String?, inboxes: [String],
                                   environment: @escaping (String) -> String? = Path.environment) throws -> WriteTarget {
        var r = Resolver(workspace: workspace, inboxes: inboxes, stateDirectory: nil, environment: environment)
        if let first = inboxes.first { return WriteTarget(inbox: try r.commandLinePath(first, "--inbox")) }
        if let env = try r.environmentInbox() { return WriteTarget(inbox: env) }
        let (root, origin) = try r.workspace()
        let conf = try r.configFile()
        return WriteTarget(inbox: inboxOf(root: root), workspace: root, origin: origin, page: conf?.page,
                           attachmentLimit: conf?.attachmentLimit)
    }

    /// Where a writer writes (see `writeTarget`). A struct, not a tuple: a tuple's type is made at run
    /// time from its mangled name when a generic function returns it, on every capture.
    public struct WriteTarget {
        public var inbox: String
        public var workspace: String? = nil
        public var origin: Origin? = nil
        public var page: String? = nil
        public var attachmentLimit: Int? = nil
    }

    /// The workspace inbox of a root (SPEC section 2).
    public static func inboxOf(root: String) -> String { Path.join(root, ".outl/captures") }
}

/// One resolution in progress: the environment, and outld.conf read at most once and only when a
/// setting needs it.
struct Resolver {
    let workspaceFlag: String?
    let inboxFlags: [String]
    let stateFlag: String?
    let env: (String) -> String?
    let home: String
    private var conf: ConfigFile?? = nil
    private(set) var configFileRead: String?

    init(workspace: String?, inboxes: [String], stateDirectory: String?, environment: @escaping (String) -> String?) {
        workspaceFlag = workspace
        inboxFlags = inboxes
        stateFlag = stateDirectory
        env = { name in environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        home = env("HOME") ?? Path.home()
    }

    /// outld.conf, unless the command line named the workspace (its inboxes and workspace belong
    /// together, so neither applies to another workspace).
    mutating func configFile() throws -> ConfigFile? {
        if workspaceFlag != nil { return nil }
        if let c = conf { return c }
        let path = Path.join(xdg("XDG_CONFIG_HOME", default: ".config"), "outl/outld.conf")
        let c = try ConfigFile.read(path, home: home)
        conf = .some(c)
        if c != nil { configFileRead = path }
        return c
    }

    mutating func workspace() throws -> (String, OutlConfig.Origin) {
        if let flag = workspaceFlag { return (try commandLinePath(flag, "--workspace"), .commandLine) }
        if let e = env("OUTL_WORKSPACE") { return (try environmentPath(e, "OUTL_WORKSPACE"), .environment) }
        if let w = try configFile()?.workspace { return (w, .configFile) }
        return (Path.join(home, "outl"), .builtIn)
    }

    /// $OUTL_CAPTURE_INBOX, only when the command line named neither a workspace nor an inbox.
    func environmentInbox() throws -> String? {
        guard workspaceFlag == nil, inboxFlags.isEmpty, let e = env("OUTL_CAPTURE_INBOX") else { return nil }
        return try environmentPath(e, "OUTL_CAPTURE_INBOX")
    }

    func stateDirectory() throws -> String {
        if let flag = stateFlag { return try commandLinePath(flag, "--state-dir") }
        if let e = env("OUTL_STATE_DIR") { return try environmentPath(e, "OUTL_STATE_DIR") }
        return Path.join(xdg("XDG_STATE_HOME", default: ".local/state"), "outl")
    }

    /// An XDG base directory: the variable when it is absolute (the XDG spec says to ignore a
    /// relative one), else the default under $HOME.
    func xdg(_ name: String, default rel: String) -> String {
        if let v = env(name), v.hasPrefix("/") { return v }
        return Path.join(home, rel)
    }

    func commandLinePath(_ raw: String, _ flag: String) throws -> String {
        switch PathSpelling.interpret(raw, home: home, relativeAllowed: true) {
        case .success(let p): return p
        case .failure(let why): throw ConfigError("\(flag) \(raw): \(why)", fromCommandLine: true)
        }
    }

    func environmentPath(_ raw: String, _ name: String) throws -> String {
        switch PathSpelling.interpret(raw, home: home, relativeAllowed: false) {
        case .success(let p): return p
        case .failure(let why): throw ConfigError("$\(name)=\(raw): \(why)")
        }
    }
}

struct PathError: Error, Equatable, CustomStringConvertible {
    let description: String
}

/// How a directory may be spelled in a setting. `~` and `~/…` mean $HOME; `~user` is refused
/// rather than looked up; a relative path is resolved against the working directory only on the
/// command line (a daemon's working directory is nobody's choice). The result has no trailing
/// slash and no empty or `.` components, so one directory spelled two ways is drained once.
enum PathSpelling {
    static func interpret(_ raw: String, home: String, relativeAllowed: Bool) -> Result<String, PathError> {
        var path = raw
        // On bytes, as the kernel reads a path (a combining mark after "/" is still a slash).
        let u = raw.utf8, slash = UInt8(ascii: "/")
        if u.first == UInt8(ascii: "~") {
            guard u.count == 1 || u.dropFirst().first == slash else {
                return .failure(PathError(description: "only ~/ (your own home) is expanded; write the full path"))
            }
            path = Path.expandTilde(path, home: home)
        } else if u.first != slash {
            guard relativeAllowed else {
                return .failure(PathError(description: "a relative path; write an absolute path or one starting with ~/"))
            }
            guard let cwd = workingDirectory() else {
                return .failure(PathError(description: "a relative path, and the working directory is unknown"))
            }
            path = Path.join(cwd, path)
        }
        return .success(normalized(path))
    }

    /// The path with its empty and `.` components dropped, from `/`. By bytes: split and joined, it
    /// made an [Substring] and its conformances at run time, on every capture.
    static func normalized(_ path: String) -> String {
        var out: [UInt8] = [47]
        out.reserveCapacity(path.utf8.count + 1)
        var part: [UInt8] = []
        func end() {
            if !part.isEmpty && part != [46] {
                if out.count > 1 { out.append(47) }
                out.append(contentsOf: part)
            }
            part.removeAll(keepingCapacity: true)
        }
        for c in path.utf8 {
            if c == 47 { end() } else { part.append(c) }
        }
        end()
        return String(decoding: out, as: UTF8.self)
    }

    static func workingDirectory() -> String? {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buf, buf.count) != nil else { return nil }
        return String(cString: buf)
    }
}
