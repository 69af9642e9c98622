// Screenshot: `--screenshot` runs a screenshot program into a private temporary directory and hands
// back the open image for staging. $OUTL_SCREENSHOT (a shell command writing the image to the file
// $OUTL_SCREENSHOT_FILE names) wins; else grim on Wayland, then maim, scrot or ImageMagick's import
// on X11. The temporary directory is outside the workspace and removed whatever happens.
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

enum Screenshot {
    /// Each program with the arguments that make it shoot the whole screen into the path appended,
    /// and the display it needs.
    static let programs: [(argv: [String], display: String)] = [
        (["grim"], "WAYLAND_DISPLAY"),
        (["maim"], "DISPLAY"),
        (["scrot"], "DISPLAY"),
        (["import", "-window", "root"], "DISPLAY"),
    ]

    static let names = "grim (Wayland), maim, scrot or import (X11)"

    /// Takes a screenshot and runs `body` with the image open for reading; returns what `body`
    /// returns. Throws a `Failure` (69) when no program can take one or it fails.
    static func take<R>(environment: (String) -> String?, _ body: (Int32) throws -> R) throws -> R {
        let base = environment("TMPDIR") ?? "/tmp"
        var template = Array(Path.join(base, "outl-screenshot.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw Failure(ExitStatus.cantCreate, "--screenshot: cannot make a temporary directory in \(base): \(Errno.current)")
        }
        let dir = String(cString: made)
        let file = Path.join(dir, "screenshot.png")
        defer { unlink(file); rmdir(dir) }

        let argv: [String], what: String
        var extraEnv: [String] = []
        if let custom = environment("OUTL_SCREENSHOT"), !custom.isEmpty {
            argv = ["/bin/sh", "-c", custom]
            what = "OUTL_SCREENSHOT (\(custom))"
            extraEnv.append("OUTL_SCREENSHOT_FILE=\(file)")
        } else {
            let path = environment("PATH")
            let shown = programs.filter { !(environment($0.display) ?? "").isEmpty }
            guard let (found, p) = shown.lazy.compactMap({ p in ChildProcess.find(p.argv[0], path: path).map { ($0, p) } }).first else {
                throw Failure(ExitStatus.unavailable, "--screenshot: no screenshot program for this display (install \(names), or set OUTL_SCREENSHOT)")
            }
            argv = [found] + p.argv.dropFirst() + [file]
            what = p.argv[0]
        }
        guard let r = ChildProcess.run(argv, captureOutput: false, environment: extraEnv) else {
            throw Failure(ExitStatus.unavailable, "--screenshot: cannot start \(argv[0])")
        }
        guard r.status == 0 else {
            throw Failure(ExitStatus.unavailable, "--screenshot: \(what) failed (exit \(r.status)\(r.complaint.map { ": \($0)" } ?? "")); nothing saved")
        }
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure(ExitStatus.unavailable, "--screenshot: \(what) wrote no image; nothing saved")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size > 0 else {
            throw Failure(ExitStatus.unavailable, "--screenshot: \(what) wrote an empty image; nothing saved")
        }
        return try body(fd)
    }

    /// "Screenshot 2026-12-05 at 10.11.12.png": the name a person sees, from the capture's time.
    static func name(_ rfc3339: String) -> String {
        let u = Array(rfc3339.utf8)
        guard u.count >= 19 else { return "Screenshot.png" }
        let date = String(decoding: u[0..<10], as: UTF8.self)
        let time = String(decoding: u[11..<19], as: UTF8.self).split(separator: ":").joined(separator: ".")
        return "Screenshot \(date) at \(time).png"
    }
}
