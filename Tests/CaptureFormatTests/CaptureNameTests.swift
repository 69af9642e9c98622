// Name validation: exactly `<ULID>.json` is a capture; everything an editor, a sync tool or a
// careless script may leave next to it is not.
import Testing
@testable import CaptureFormat

@Test func only_the_final_form_is_a_capture() {
    #expect(CaptureName.isFinal("01ARZ3NDEKTSV4RRFFQ69G5FAV.json"))
    for name in ["01arz3ndektsv4rrffq69g5fav.json", "01ARZ3NDEKTSV4RRFFQ69G5FAV.JSON",
                 "81ARZ3NDEKTSV4RRFFQ69G5FAV.json", "01ARZ3NDEKTSV4RRFFQ69G5FAV.json.bak",
                 "01ARZ3NDEKTSV4RRFFQ69G5FAV.json~", "01ARZ3NDEKTSV4RRFFQ69G5FAV.tmp.json",
                 ".01ARZ3NDEKTSV4RRFFQ69G5FAV.json", "01ARZ3NDEKTSV4RRFFQ69G5FA.json",
                 ".syncthing.01ARZ3NDEKTSV4RRFFQ69G5FAV.json.tmp", "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                 "01ARZ3NDEKTSV4RRFFQ69G5FAV.12.tmp", "tmp", "rejected", "", ".json"] {
        #expect(!CaptureName.isFinal(name), "\(name)")
        #expect(CaptureName.ulid(of: name) == nil)
    }
}

@Test func file_name_and_ulid_of_are_inverse() {
    var gen = ULIDGenerator()
    for _ in 0..<100 {
        let id = gen.next()
        #expect(CaptureName.ulid(of: CaptureName.fileName(for: id)) == id)
    }
}

@Test func the_writers_temp_name_is_the_id_the_pid_and_tmp() throws {
    let id = try #require(ULID(string: "01JDQ3Z6M9X8K7V5T4R3P2N1QW"))
    #expect(CaptureName.tempFileName(for: id, pid: 4_194_304) == "01JDQ3Z6M9X8K7V5T4R3P2N1QW.4194304.tmp")
    #expect(CaptureName.tempFileName(for: id, pid: 7) == "01JDQ3Z6M9X8K7V5T4R3P2N1QW.7.tmp")
    #expect(CaptureName.tempFileName(for: id, pid: 0) == "01JDQ3Z6M9X8K7V5T4R3P2N1QW.0.tmp")
    #expect(CaptureName.tempFileName(for: id, pid: Int32.max) == "01JDQ3Z6M9X8K7V5T4R3P2N1QW.2147483647.tmp")
    // Never a capture, so no drain takes a half-written temp for one.
    #expect(CaptureName.ulid(of: CaptureName.tempFileName(for: id, pid: 12)) == nil)
}
