// PageNames: the one canonical form of a page name, from which every device derives a named page's
// id (`BlockID.namedPage`) and its file name (`PageFileName.fileStem`). Invariants: names that differ
// only in case or in Unicode normalization have one key; for a name already in NFC (what keyboards,
// Logseq and Syncthing's `autoNormalize` produce) the key is exactly `name.lowercased()`, the key ids
// were hashed from before normalization was added, so no id already in an op log changes.
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
