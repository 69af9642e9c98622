// OtherForm: a page file another producer wrote that holds exactly what this device would write, in
// another form (a device whose outld.conf shows a capture's record, or an older outl): left as it is,
// said once, and written in this device's form only when the page next changes. Two devices that
// disagree on how a page looks then never write it back and forth through their sync tool.
// Invariant: only a file that reads, block for block, as this device's rendering is left; any
// content this device lacks was taken as ops before (PagePass.takeChanges), so none is lost.
import SystemCalls

extension WorkspaceCore {
    /// Whether `file` (not this device's own publication) shows exactly what `rendered` shows.
    func isInOtherForm(_ file: PageFileRead, of id: BlockID, rendered: [UInt8]) -> Bool {
        guard pages.records.publishedIdentity(of: id) != file.identity else { return false }
        // Each block's properties as this device would show them.
        let page = Reconciler.mapBlocks(Markdown.parse(file.bytes)) { b in
            guard let id = b.id, let r = model.blocks.find(id) else { return }
            let record = model.blocks.record(ofRow: r)
            guard !record.isEmpty else { return }
            b.props = CaptureRecord.shown(CaptureRecord.filled(b.props, record: record), record: record, showing: pageProperties)
        }
        return Markdown.render(page) == rendered
    }

    /// Says once per run that a page file was left in another form, and why.
    func leftInOtherForm(_ rel: String, page id: BlockID) {
        guard !saidOtherForm else { return }
        saidOtherForm = true
        log.warning("\(Path.join(root, rel)): holds this page as this device would, in another form (another device's "
                    + "page-properties in outld.conf, or another outl version); left as it is, and written in this device's "
                    + "form (page-properties = \(pageProperties)) when the page next changes; further such pages are not said",
                    ["OUTL_PAGE": id.description, "OUTL_PAGE_FILE": Path.join(root, rel)])
    }
}
