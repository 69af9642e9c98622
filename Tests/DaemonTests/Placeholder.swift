import Testing
@Test func DaemonTests_placeholder() {}
