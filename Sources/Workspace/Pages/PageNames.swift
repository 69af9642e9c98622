// PageNames: the one canonical form of a page name, from which every device derives a named page's
// id (`BlockID.namedPage`) and its file name (`PageFileName.fileStem`). Invariants: canonically
// equivalent names have one key, and so do names that differ only in case (save where lower-casing
// undoes NFC: `key`); for a name already in NFC (what keyboards,
// Logseq and Syncthing's `autoNormalize` produce) the key is exactly `name.lowercased()`, the key ids
// were hashed from before normalization was added, so no id already in an op log changes.
// A name not in NFC hashed to another id before (its lower case unnormalized). A page created under that
// legacy id is refused like any non-canonical one (Model), not accepted as a second canonical id: two
// ids for one name is two pages projected to one file, each taking the other's blocks as hand edits,
// the fault the canonical id ends. Such pages are rare: outl names pages from their file names, and
// Syncthing renames every non-NFC file name to NFC (lib/scanner/walk.go, `autoNormalize`, on by
// default), so only a page file made by hand in NFD and never synced ever had one. It stays in the op
// log and in `Model.refusedPages`, for `outl check` to name; its blocks are no longer projected.
// Foundation-free: NFC comes from the standard library.
public enum PageNames {
    /// The name in Unicode Normalization Form C. The standard library's own NFC (the one String's
    /// `==` and hashing use), reached through its public but underscored `_nfcCodeUnits`: nothing
    /// else in a Foundation-free build normalizes. `PageIdentityTests` pins what it must return, so a
    /// toolchain that changes it fails a test rather than every id.
    public static func nfc(_ name: String) -> String {
        if isASCII(name) { return name }
        return String(decoding: name._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `name` is already NFC: such a name keeps the file name and id it always had.
    public static func isNFC(_ name: String) -> Bool {
        isASCII(name) || name.utf8.elementsEqual(name._nfcCodeUnits)
    }

    /// The key a named page's id hashes: NFC first, then lower-cased. Logseq keys pages by
    /// lower-case-then-NFC; the two differ only where lower-casing undoes the normalization (the
    /// rare "J\u{30C}", whose lower case has the precomposed "\u{1F0}"), and there this order keeps the
    /// ids those names always had: such case variants stay two pages, as they were.
    public static func key(_ name: String) -> String { nfc(name).lowercased() }

    private static func isASCII(_ s: String) -> Bool { s.utf8.allSatisfy { $0 < 0x80 } }
}
