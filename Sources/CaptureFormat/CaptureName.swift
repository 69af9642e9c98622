// CaptureName: which names in an inbox are captures. Only the exact final form `<ULID>.json` is;
// everything else (temps, backups, a sync tool's files, lower case, `.json.bak`) is left alone.

public enum CaptureName {
    public static let suffix = ".json"

    public static func isFinal(_ name: String) -> Bool { ulid(of: name) != nil }

    /// The id of a final-form name, nil for anything else.
    public static func ulid(of name: String) -> ULID? {
        let u = name.utf8
        guard u.count == 26 + 5, name.hasSuffix(suffix) else { return nil }
        return ULID(string: String(name.prefix(26)))
    }

    /// The capture id a final-form name spells (for logs and listings), nil for any other name.
    public static func captureID(of name: String) -> String? { ulid(of: name)?.string }

    public static func fileName(for id: ULID) -> String { id.string + suffix }
}
