import Testing
@Test func DrainTests_placeholder() {}
