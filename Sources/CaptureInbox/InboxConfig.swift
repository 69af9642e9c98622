// InboxConfig: which workspace, which inbox a writer writes to, and which inboxes outld drains.
// One resolution for outld and `outl-capture --list`, so both always see the same set of inboxes.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

public struct InboxConfigError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

public struct InboxConfig: Equatable, Sendable {
    public var workspaceRoot: String
    public var writeInbox: String
    public var drainedInboxes: [String]
    /// The config file that was read, or nil when there was none.
    public var configFile: String?
    /// outld.conf `journal-file-format` as written (`yyyy_MM_dd` or `yyyy-MM-dd`, any case), or nil.
    public var journalFileFormat: String? = nil

    /// Flags win over the environment, which wins over the config file, which wins over defaults:
    /// root = --workspace | $OUTL_WORKSPACE | config `workspace` | ~/outl;
    /// write inbox = --inbox (first) | $OUTL_CAPTURE_INBOX | <root>/.outl/captures;
    /// drained = <root>/.outl/captures, config `inbox =` lines, $OUTL_CAPTURE_INBOX, `inboxes`.
    public static func resolve(workspace: String?, inboxes: [String],
                               environment: (String) -> String? = Path.environment) throws -> InboxConfig {
        let home = environment("HOME") ?? Path.home()
        let xdg = environment("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? Path.join(home, ".config")
        let confPath = Path.join(xdg, "outl/outld.conf")
        let conf = try ConfigFile.read(confPath, home: home)

        let root = absolute(workspace ?? environment("OUTL_WORKSPACE") ?? conf?.workspace
                            ?? Path.join(home, "outl"))
        let workspaceInbox = inboxOf(root: root)
        let envInbox = environment("OUTL_CAPTURE_INBOX").map(absolute)
        let flagInboxes = inboxes.map(absolute)
        let write = flagInboxes.first ?? envInbox ?? workspaceInbox

        var drained: [String] = []
        for dir in [workspaceInbox] + (conf?.inboxes ?? []) + (envInbox.map { [$0] } ?? []) + flagInboxes
        where !drained.contains(dir) {
            drained.append(dir)
        }
        return InboxConfig(workspaceRoot: root, writeInbox: write, drainedInboxes: drained,
                           configFile: conf == nil ? nil : confPath, journalFileFormat: conf?.journalFileFormat)
    }

    /// The workspace inbox of a root (SPEC section 2).
    public static func inboxOf(root: String) -> String { Path.join(root, ".outl/captures") }

    /// A path made absolute against the working directory, without trailing slashes, so the same
    /// directory spelled two ways is drained once.
    static func absolute(_ p: String) -> String {
        var path = Path.expandTilde(p)
        if !path.hasPrefix("/") {
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buf, buf.count) != nil {
                let cwd = String(cString: buf)
                path = path == "." ? cwd : Path.join(cwd, path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
            }
        }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// `outld.conf`: `key = value` lines, `#` comments and blank lines. Keys: `workspace` (once),
/// `inbox` (any number), `journal-file-format` (once: `yyyy_MM_dd` or `yyyy-MM-dd`). `~/` expands
/// to $HOME. Anything else is an error with its line number.
struct ConfigFile: Equatable {
    var workspace: String?
    var inboxes: [String] = []
    var journalFileFormat: String?

    static func read(_ path: String, home: String) throws -> ConfigFile? {
        let bytes: [UInt8]
        do {
            bytes = try Durable.readRegularFile(path, limit: 1 << 20)
        } catch let e as Errno where e == .ENOENT || e == .ENOTDIR {
            return nil
        } catch {
            throw InboxConfigError("\(path): cannot read: \(error)")
        }
        return try parse(String(decoding: bytes, as: UTF8.self), path: path, home: home)
    }

    static func parse(_ text: String, path: String, home: String) throws -> ConfigFile {
        var c = ConfigFile()
        for (n, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = CaptureFormatTrim.trim(rawLine)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw InboxConfigError("\(path):\(n + 1): expected `key = value`")
            }
            let key = CaptureFormatTrim.trim(line[..<eq])
            var value = CaptureFormatTrim.trim(line[line.index(after: eq)...])
            if value == "~" || value.hasPrefix("~/") {
                value = value == "~" ? home : Path.join(home, String(value.dropFirst(2)))
            }
            guard !value.isEmpty else { throw InboxConfigError("\(path):\(n + 1): empty value for \(key)") }
            switch key {
            case "workspace": c.workspace = InboxConfig.absolute(value)
            case "inbox": c.inboxes.append(InboxConfig.absolute(value))
            case "journal-file-format":
                guard ["yyyy_mm_dd", "yyyy-mm-dd"].contains(value.lowercased()) else {
                    throw InboxConfigError("\(path):\(n + 1): journal-file-format is yyyy_MM_dd or yyyy-MM-dd, not \"\(value)\"")
                }
                guard c.journalFileFormat == nil else {
                    throw InboxConfigError("\(path):\(n + 1): journal-file-format is given twice")
                }
                c.journalFileFormat = value
            default: throw InboxConfigError("\(path):\(n + 1): unknown key \"\(key)\"")
            }
        }
        return c
    }
}

/// ASCII-space trimming for config lines.
enum CaptureFormatTrim {
    static func trim(_ s: Substring) -> String {
        var t = s
        while let f = t.first, f == " " || f == "\t" || f == "\r" { t.removeFirst() }
        while let l = t.last, l == " " || l == "\t" || l == "\r" { t.removeLast() }
        return String(t)
    }
}
