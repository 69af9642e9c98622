// SyncToolNames: the file names file-sync tools use on their way to a page file: the temporary a
// received file is written to before its rename into place, and the conflict copy Syncthing leaves.
// The one owner of these patterns: the daemon tells a delivered page from a person's edit with them.
// Each pattern is the tool's own (read in its source), not a guess:
// * Syncthing `lib/fs/tempname.go`: `.syncthing.NAME.tmp` (`~syncthing~NAME.tmp` on Windows-style
//   file systems); long names are shortened with a hash, so only the prefix and suffix are checked.
// * rsync `receiver.c get_tmpname`: `.NAME.XXXXXX` (mkstemp's six characters) in the same directory.
// * Unison `os.ml`: `.unison.NAME.<host/hash>.unison.tmp`.
// * Nextcloud/ownCloud desktop `propagatedownload.cpp createDownloadTmpFileName`: `.NAME.~<8 hex>`
//   (NAME may be shortened to fit 254 characters).
// * Dropbox stages in `.dropbox.cache/` at the root of its folder, another directory: inotify cannot
//   pair that rename with a name in ours, so it is judged as a change of unknown origin.
public enum SyncToolNames {
    /// The tool whose temporary `from` became `final` by a rename, or nil when `from` is no sync
    /// tool's temporary (an editor's save by rename, `sed -i`, a person's `mv`).
    public static func deliveringTool(from: String, final: String) -> String? {
        if from.hasPrefix(".syncthing.") && from.hasSuffix(".tmp") { return "syncthing" }
        if from.hasPrefix("~syncthing~") && from.hasSuffix(".tmp") { return "syncthing" }
        if from.hasPrefix(".unison.") && from.hasSuffix(".unison.tmp") { return "unison" }
        guard from.hasPrefix("."), from.count > final.count else { return nil }
        let rest = from.dropFirst()
        // rsync: "." + final + "." + six characters of [A-Za-z0-9].
        if rest.hasPrefix(final + ".") {
            let tail = rest.dropFirst(final.count + 1)
            if tail.count == 6 && tail.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) { return "rsync" }
        }
        // Nextcloud: "." + (a prefix of) final + ".~" + eight hex digits.
        let chars = Array(rest)
        if chars.count > 10, chars[chars.count - 10] == ".", chars[chars.count - 9] == "~" {
            let stem = String(chars[..<(chars.count - 10)])
            if chars.suffix(8).allSatisfy(\.isHexDigit), !stem.isEmpty, final.hasPrefix(stem) { return "nextcloud" }
        }
        return nil
    }

    /// For a Syncthing conflict copy `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT`, the name of
    /// the file it is a copy of (`NAME.EXT`); nil for any other name.
    public static func conflictOriginal(_ name: String) -> String? {
        let marker = Array(".sync-conflict-")
        let chars = Array(name)
        guard chars.count > marker.count,
              let at = (0...(chars.count - marker.count)).first(where: { chars[$0..<($0 + marker.count)].elementsEqual(marker) })
        else { return nil }
        let stem = String(chars[..<at])
        let rest = String(chars[(at + marker.count)...])[...]
        // YYYYMMDD-HHMMSS-DEVICE then the extension (if any) from the first dot.
        let dot = rest.firstIndex(of: ".")
        let ext = dot.map { String(rest[$0...]) } ?? ""
        let stamp = dot.map { rest[..<$0] } ?? rest
        let parts = stamp.split(separator: "-", omittingEmptySubsequences: false)
        guard !stem.isEmpty, parts.count == 3, parts[0].count == 8, parts[1].count == 6,
              parts[0].allSatisfy(\.isNumber), parts[1].allSatisfy(\.isNumber), !parts[2].isEmpty else { return nil }
        return String(stem) + ext
    }
}

/// Who wrote a page file, as far as this device can tell. Decides how the reconciler reads it.
public enum PageFileOrigin: Sendable, Equatable {
    /// Written on this device by a person's editor: in place, or renamed into place from a name no
    /// sync tool uses. Reconciled three-way against this device's own projections, so a deletion
    /// by hand is honoured whatever the editor.
    case editedHere
    /// Renamed into place from a sync tool's temporary: another device's projection, or an edit
    /// made on a device without outld. Judged by its content: only what no op produced is an edit.
    case delivered(by: String)
    /// Its name was unlinked or renamed away (IN_DELETE, IN_MOVED_FROM): perhaps the first half of
    /// a replace (Syncthing 1.19 unlinks the old file, then renames its temporary in). A file found
    /// gone after this is written again only once nothing came to its name for the settle time.
    case removed
    /// Changed while nobody watched (outld was down, an inotify overflow, a rename from another
    /// directory): the file's inode decides, conservatively.
    case unknown
}
