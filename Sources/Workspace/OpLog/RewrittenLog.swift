// RewrittenLog: the rule for another device's op log that changed before what this device had read
// of it, and now holds mostly ops never seen: a log rewritten to new content (a buggy or hostile
// peer), which op logs, append-only by contract, never are. Such a version is not read: what this
// device had of the file is kept from its archive, and each version is said once, with its device.
// A log that lost its tail and then grew (a restore, a sync tool's cut) keeps most of what it had,
// and is read as before, whatever it adds.

struct RewrittenLog: Equatable {
    var kept: Int
    var new: Int
    var had: Int

    /// At most this many new ops are taken from a rewritten log that keeps under half of what it had.
    static let newOpsBound = 1000

    /// Whether the version is a log rewritten to new content: it brings more than the bound of ops
    /// never seen and keeps under half of those it had.
    var isNewContent: Bool { new > RewrittenLog.newOpsBound && kept * 2 < had }

    /// The sentence for the log, naming the file's device.
    func said(file: String, device: String) -> String {
        "device \(device) rewrote its op log \(file) to new content (\(new) ops this device never saw, \(kept) of the \(had) "
            + "it had): this version is not read, and what this device had of it is kept from its archive; an op log only grows"
    }
}
