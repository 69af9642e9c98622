// The attachments field of a capture file (SPEC 3.1): what the writer encodes the decoder reads
// back; every way an entry can be wrong is refused with its index; with attachments the text may be
// empty; attachment names in the inbox are bound to their capture; SHA-256 is sha256sum's.
import Testing
@testable import CaptureFormat

private let hashA = String(repeating: "0a", count: 32)
private let id = ULID(string: "01JEQ8Z3C1TVR4M0S6YF3D2K7H")!

@Test func attachments_round_trip_through_the_one_codec() throws {
    let files = [
        Attachment(file: CaptureName.attachmentFileName(for: id, index: 1), name: "Screenshot 2026-12-05 "/* trimmed */ + "at 10.11.png", size: 123_456, sha256: hashA),
        Attachment(file: CaptureName.attachmentFileName(for: id, index: 2), name: "notes \"q\" ü.pdf", size: 0, sha256: hashA),
    ]
    let bytes = CaptureFile.encode(Capture(text: "look", capturedAt: "2026-12-05T10:11:12Z", source: "cli", attachments: files))
    let d = try CaptureFile.decode(bytes)
    #expect(d.attachments == files)
    #expect(d.text == "look")
    #expect(try CaptureFile.decodeFull(bytes).attachments == files)
}

@Test func a_capture_with_attachments_may_have_no_caption() throws {
    let a = #"[{"file":"x.1.att","name":"a.png","size":1,"sha256":"\#(hashA)"}]"#
    #expect(try CaptureFile.decode(Array(#"{"attachments":\#(a)}"#.utf8)).text == "")
    #expect(try CaptureFile.decode(Array(#"{"text":"  ","attachments":\#(a)}"#.utf8)).text == "")
    #expect(throws: CaptureFormatError.textMissing) { try CaptureFile.decode(Array(#"{"attachments":[]}"#.utf8)) }
    #expect(throws: CaptureFormatError.textEmpty) { try CaptureFile.decode(Array(#"{"text":" ","attachments":[]}"#.utf8)) }
    #expect(throws: CaptureFormatError.textNotString(found: "a number")) { try CaptureFile.decode(Array(#"{"text":1,"attachments":\#(a)}"#.utf8)) }
}

@Test func every_bad_attachment_entry_is_refused_with_its_index() {
    func refusal(_ entry: String) -> String {
        do {
            _ = try CaptureFile.decode(Array(#"{"text":"t","attachments":[{"file":"ok.1.att","name":"n","size":1,"sha256":"\#(hashA)"},\#(entry)]}"#.utf8))
            return "accepted"
        } catch { return "\(error)" }
    }
    func entry(file: String? = "\"a.2.att\"", name: String = "\"n\"", size: String = "1", sha: String = "\"\(hashA)\"", extra: String = "") -> String {
        "{" + (file.map { "\"file\":\($0)," } ?? "") + "\"name\":\(name),\"size\":\(size),\"sha256\":\(sha)\(extra)}"
    }
    #expect(refusal(entry()) == "accepted")
    #expect(refusal("3") == "attachment 2: not an object (found a number)")
    #expect(refusal(entry(file: nil)) == "attachment 2: file missing")
    for file in ["../x", "", ".hidden", "a/b", "a\\u0001"] {
        #expect(refusal(entry(file: "\"\(file)\"")) == "attachment 2: file is not a plain file name", "\(file)")
    }
    #expect(refusal(entry(name: "\"  \"")) == "attachment 2: name is empty")
    #expect(refusal(entry(name: "\"a/b\"")) == "attachment 2: name has a slash (a name, not a path)")
    #expect(refusal(entry(name: "\"\(String(repeating: "é", count: 128))\"")) == "attachment 2: name over 255 bytes (256)")
    for size in ["-1", "1.5", "1e3", "\"1\"", "null", "1000000000000000"] {
        #expect(refusal(entry(size: size)) == "attachment 2: size is not a whole number of bytes", "\(size)")
    }
    #expect(refusal(entry(sha: "\"00\"")) == "attachment 2: sha256 is not 64 hex digits")
    #expect(refusal(entry(sha: "\"\(String(repeating: "g", count: 64))\"")) == "attachment 2: sha256 is not 64 hex digits")
    #expect(refusal(entry(extra: ",\"size\":2")) == "attachment 2: duplicate key \"size\"")
    #expect(refusal(entry(extra: ",\"other\":[1]")) == "accepted")  // a newer writer's member
    #expect(refusal(entry(sha: "\"\(hashA.uppercased())\"")) == "accepted")
}

@Test func the_attachments_list_itself_is_checked() {
    #expect(throws: CaptureFormatError.attachmentsNotList(found: "a string")) {
        try CaptureFile.decode(Array(#"{"text":"t","attachments":"a.1.att"}"#.utf8))
    }
    #expect(throws: CaptureFormatError.duplicateKey("attachments")) {
        try CaptureFile.decode(Array(#"{"text":"t","attachments":[],"attachments":[]}"#.utf8))
    }
    let entry = #"{"file":"a.1.att","name":"n","size":1,"sha256":"\#(hashA)"}"#
    let many = Array(repeating: entry, count: 65).joined(separator: ",")
    #expect(throws: CaptureFormatError.tooManyAttachments(65)) {
        try CaptureFile.decode(Array(#"{"text":"t","attachments":[\#(many)]}"#.utf8))
    }
}

@Test func attachment_names_in_the_inbox_are_bound_to_their_capture() {
    let name = CaptureName.attachmentFileName(for: id, index: 12)
    #expect(name == "01JEQ8Z3C1TVR4M0S6YF3D2K7H.12.att")
    #expect(CaptureName.attachment(of: name)?.id == id)
    #expect(CaptureName.attachment(of: name)?.index == 12)
    for other in ["01JEQ8Z3C1TVR4M0S6YF3D2K7H.0.att", "01JEQ8Z3C1TVR4M0S6YF3D2K7H.01.att", "01JEQ8Z3C1TVR4M0S6YF3D2K7H.att",
                  "01jeq8z3c1tvr4m0s6yf3d2k7h.1.att", "01JEQ8Z3C1TVR4M0S6YF3D2K7H.1.att.tmp", "01JEQ8Z3C1TVR4M0S6YF3D2K7H.12345.att",
                  "01JEQ8Z3C1TVR4M0S6YF3D2K7H.json", "01JEQ8Z3C1TVR4M0S6YF3D2K7H.1a.att"] {
        #expect(CaptureName.attachment(of: other) == nil, "\(other)")
        #expect(!CaptureName.isFinal(other) || other.hasSuffix(".json"))
    }
    #expect(!CaptureName.isFinal(name))  // never drained as a capture
}

@Test func sha256_is_the_standard_one() {
    #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    // Fed in uneven pieces, the same digest as in one.
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    var h = SHA256()
    var i = 0, step = 1
    while i < million.count { let j = min(million.count, i + step); h.update(Array(million[i..<j])); i = j; step = step * 3 % 997 + 1 }
    #expect(h.hexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
}
