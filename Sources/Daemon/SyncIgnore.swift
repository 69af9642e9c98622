// SyncIgnore: the .stignore outld writes into a workspace Syncthing shares, when there is none, so
// the device-local temporaries never travel. Syncthing never syncs .stignore itself, so each
// device's copy is its own; an existing one is the person's and is never touched.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

enum SyncIgnore {
    static let text = """
        // Written by outld because this folder is shared by Syncthing and had no .stignore.
        // Device-local: outld's temporaries and each device's set-aside captures (outld(1)).
        /.outl/tmp
        /.outl/captures/tmp
        /.outl/captures/rejected
        /assets/.outl-*.tmp

        """

    /// Writes `<root>/.stignore` if `<root>/.stfolder` marks a Syncthing folder and none exists.
    /// Returns whether it wrote one.
    @discardableResult
    static func writeIfMissing(root: String) throws -> Bool {
        guard (try? Sys.lstat(Path.join(root, ".stfolder"))) != nil else { return false }
        let path = Path.join(root, ".stignore")
        if (try? Sys.lstat(path)) != nil { return false }
        let tmp = Path.join(root, ".outl/tmp/stignore.tmp")
        try Durable.makeDirectory(Path.join(root, ".outl/tmp"), mode: 0o700)
        try? Sys.unlink(tmp)
        // link(2), not rename: if a .stignore appeared meanwhile, it wins and ours is dropped.
        try Durable.publish(Array(text.utf8), to: tmp, via: tmp + ".w", mode: 0o644)
        defer { try? Sys.unlink(tmp) }
        do { try Sys.link(tmp, path) } catch let e as Errno where e == .EEXIST { return false }
        try Durable.syncDirectory(root)
        return true
    }
}
