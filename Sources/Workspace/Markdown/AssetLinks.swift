// AssetLinks: the Markdown a capture's attachment becomes in its block: `![name](../assets/FILE)` for
// an image, `[name](../assets/FILE)` otherwise, one per line after the caption. Invariant: both
// readers show the link's text as the attachment's name and open the same file. FILE is the asset's
// name (AssetNames: ASCII letters, digits, `-`, `_` and `.`), so the destination needs no escape;
// the name is escaped where mldoc and CommonMark both take a backslash away (checked with mldoc
// bedae990 and cmark-gfm: `\[ \] \* \_ \< \> \& \$ \# \\`), and a backquote, which mldoc reads as
// code even after a backslash, is shown as an apostrophe.

/// A file a capture brought, as its block links it.
public struct AssetLink: Equatable, Sendable {
    /// The name a person gave the file, shown as the link's text.
    public var label: String
    /// Its name in assets/.
    public var file: String
    public init(label: String, file: String) { self.label = label; self.file = file }

    /// Shown inline by Logseq, Obsidian and CommonMark renderers.
    public var isImage: Bool { AssetLink.imageExtensions.contains(AssetLink.fileExtension(file)) }

    static let imageExtensions: Set<String> = ["png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "avif"]

    /// The lower-case extension of a file name, "" when it has none.
    static func fileExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }
}

extension Markdown {
    /// The directory of assets as a page file sees it: every page file is one level deep
    /// (journals/ or pages/), as in Logseq.
    public static let assetsPrefix = "../assets/"

    /// One attachment's line.
    public static func assetLink(_ a: AssetLink) -> String {
        var label = ""
        for ch in a.label.unicodeScalars {
            switch ch {
            case "`": label.append("'")
            case "\\", "[", "]", "*", "_", "<", ">", "&", "$", "#": label.append("\\"); label.unicodeScalars.append(ch)
            default: label.unicodeScalars.append(ch)
            }
        }
        return (a.isImage ? "!" : "") + "[\(label)](\(assetsPrefix)\(a.file))"
    }

    /// A capture's block source: its caption as source (`capturedText`), then one line per attachment.
    public static func captureSource(caption: String, assets: [AssetLink]) -> String {
        // Nearly every capture: a caption alone, made into no list and no joined copy.
        if assets.isEmpty { return caption.isEmpty ? "" : capturedText(caption) }
        var lines = caption.isEmpty ? [] : [capturedText(caption)]
        lines += assets.map(assetLink)
        return lines.joined(separator: "\n")
    }
}
