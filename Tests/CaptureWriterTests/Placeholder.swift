import Testing
@Test func CaptureWriterTests_placeholder() {}
