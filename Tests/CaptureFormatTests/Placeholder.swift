import Testing
@Test func CaptureFormatTests_placeholder() {}
