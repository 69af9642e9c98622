import Testing
@Test func WorkspaceTests_placeholder() {}
