# scale_bench.py: driver for bench/scale.sh (see there). Runs the real release outld under a
# notify socket of its own, as systemd would, and times start to READY=1; the boot alone is
# `outl debug-boot` of the same workspace and state directory.
import os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

BIN = os.environ["OUTL_BIN_DIR"]
OPS = int(os.environ.get("SCALE_OPS", "1000000"))
RUNS = int(os.environ.get("SCALE_RUNS", "3"))

def env_for(home, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OUTL_", "NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG"))}
    e.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_STATE_HOME=f"{home}/.local/state")
    e.update(extra)
    return e

def boot(home, ws, st):
    out = subprocess.run([f"{BIN}/outl", "--workspace", ws, "--state-dir", st, "debug-boot"],
                         env=env_for(home), capture_output=True, text=True, check=True).stdout
    return float(out.split("seconds=")[1].split()[0])

def start(home, ws, st, until_idle=False):
    """outld from exec to READY=1: seconds, then (until_idle) seconds to the first STATUS=idle after
    it (every page written), and VmRSS and VmHWM (MiB) at READY=1."""
    sock = f"{home}/notify"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock)
    s.settimeout(600)
    t0 = time.monotonic()
    d = subprocess.Popen([f"{BIN}/outld", "--workspace", ws, "--state-dir", st, "--log", "stderr"],
                         env=env_for(home, NOTIFY_SOCKET=sock), stderr=subprocess.DEVNULL)
    while "READY=1" not in s.recv(4096).decode():
        pass
    ready = time.monotonic() - t0
    mem = {}
    for l in open(f"/proc/{d.pid}/status"):
        if l.startswith(("VmRSS", "VmHWM")):
            mem[l.split(":")[0]] = int(l.split()[1]) // 1024
    idle = None
    while until_idle:
        if any(l.startswith("STATUS=idle") for l in s.recv(4096).decode().splitlines()):
            idle = time.monotonic() - t0
            break
    d.send_signal(signal.SIGTERM)
    d.wait()
    s.close()
    os.unlink(sock)
    return ready, idle, mem

def main():
    home = tempfile.mkdtemp(prefix="outl-bench-scale.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    ws, st = f"{home}/ws", f"{home}/state"
    os.makedirs(st)
    subprocess.run([f"{BIN}/outl", "--workspace", ws, "--state-dir", st, "debug-generate", str(OPS)],
                   env=env_for(home), check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sync"])
    boots = [boot(home, ws, st) for _ in range(RUNS)]
    # No page file and no record of any (a device that has received only the op logs): READY=1
    # after the boot, the pages written after it.
    shutil.rmtree(f"{ws}/journals", ignore_errors=True)
    for root, _, files in os.walk(st):
        for f in files:
            if f == "page-index":
                os.unlink(os.path.join(root, f))
    bare, written, bare_mem = start(home, ws, st, until_idle=True)
    pages = len(os.listdir(f"{ws}/journals"))
    subprocess.run(["sync"])
    starts = [start(home, ws, st) for _ in range(RUNS)]
    b = statistics.median(boots)
    r = statistics.median(x[0] for x in starts)
    mem = starts[-1][2]
    ops = OPS + OPS // 100
    print(f"workspace: {ops} ops, {pages} journal pages; median of {RUNS} runs where marked")
    print(f"{'':34s} {'seconds':>8s} {'x boot':>7s}")
    print(f"{'op-log boot (outl debug-boot)':34s} {b:8.3f} {1:7.2f}  (median; {ops / b / 1e6:.2f}M ops/s)")
    print(f"{'outld start -> READY, pages there':34s} {r:8.3f} {r / b:7.2f}  (median; target <= 1.50)")
    print(f"{'outld start -> READY, no pages':34s} {bare:8.3f} {bare / b:7.2f}  (then writes the pages)")
    label = f"  ... then all {pages} pages written"
    print(f"{label:34s} {written:8.3f} {written / b:7.2f}")
    print(f"resident after READY (pages there): {mem['VmRSS']} MiB ({mem['VmRSS'] * 1048576 // ops} bytes/op), "
          f"peak {mem['VmHWM']} MiB; with no pages: {bare_mem['VmRSS']} MiB, peak {bare_mem['VmHWM']} MiB")
    shutil.rmtree(home, ignore_errors=True)

main()
