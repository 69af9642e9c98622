// NotifySocket: what systemd's $NOTIFY_SOCKET receives, for tests that wait on a daemon's own word
// (READY=1, each STATUS= it publishes after a pass) instead of on a fixed sleep.
import Foundation

public final class NotifySocket: @unchecked Sendable {
    private let dir = TempDir("notify")
    public let path: String
    private let fd: Int32
    /// Every datagram received so far, in order.
    public private(set) var messages: [String] = []

    public init() throws {
        path = dir.sub("notify.sock")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes + [0])
        }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else { let e = errno; close(fd); throw POSIXError(.init(rawValue: e) ?? .EIO) }
    }

    deinit { close(fd) }

    /// Reads whatever has arrived; returns every message so far.
    @discardableResult
    public func receive() -> [String] {
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            messages.append(String(decoding: buf[0..<n], as: UTF8.self))
        }
        return messages
    }

    /// Waits (bounded, polling the socket) until some message satisfies `condition`.
    public func waitFor(_ seconds: Double = 20, _ condition: (String) -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        repeat {
            if receive().contains(where: condition) { return true }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 50)
        } while Date() < end
        return receive().contains(where: condition)
    }
}
