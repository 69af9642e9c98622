# scale_bench.py: driver for bench/scale.sh (see there). Runs the real release outld under a
# notify socket of its own, as systemd would, and times start to READY=1; the boot alone is
# `outl debug-boot` of the same workspace and state directory.
import os, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

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
    it (every page written), and VmRSS and VmHWM (kB) at READY=1 (and VmRSS at that idle, "idle")."""
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
            mem[l.split(":")[0]] = int(l.split()[1])  # kB
    idle = None
    while until_idle:
        if any(l.startswith("STATUS=idle") for l in s.recv(4096).decode().splitlines()):
            idle = time.monotonic() - t0
            # What it holds once every page is written: the pages' records must not stay behind.
            for l in open(f"/proc/{d.pid}/status"):
                if l.startswith("VmRSS"):
                    mem["idle"] = int(l.split()[1])
            break
    d.send_signal(signal.SIGTERM)
    d.wait()
    s.close()
    os.unlink(sock)
    return ready, idle, mem

def merge_under_load(home, ws):
    """A second device's outld, ready and idle, receives the whole op log of `ws` as a sync tool
    delivers it (a temporary renamed into .outl/ops). From the rename until it has merged it and
    written its pages, a capture every 200 ms; each one's latency is writer exit to its page
    written (OUTL_BENCH_TRACE). The notify socket is read throughout, as systemd reads it, for the
    watchdog pings (WatchdogSec=30 as the shipped unit: a ping every 15 s is owed) and STATUS=."""
    dev = f"{home}/device-b"
    ws2, st2 = f"{dev}/ws", f"{dev}/state"
    os.makedirs(f"{ws2}/.outl/ops", exist_ok=True)
    os.makedirs(st2, exist_ok=True)
    sock = f"{dev}/notify"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock)
    s.settimeout(0.2)
    trace = f"{dev}/trace"
    d = subprocess.Popen([f"{BIN}/outld", "--workspace", ws2, "--state-dir", st2, "--log", "stderr"],
                         env=env_for(dev, NOTIFY_SOCKET=sock, WATCHDOG_USEC="30000000", OUTL_BENCH_TRACE=trace),
                         stderr=subprocess.DEVNULL)
    events = []  # (monotonic time, message)
    stop = threading.Event()
    def listen():
        while not stop.is_set():
            try:
                m = s.recv(65536).decode()
            except socket.timeout:
                continue
            events.append((time.monotonic(), m))
    t = threading.Thread(target=listen)
    t.start()
    while not any("READY=1" in m for _, m in events):
        time.sleep(0.01)
    name = [f for f in os.listdir(f"{ws}/.outl/ops") if f.startswith("ops-")][0]
    tmp = f"{ws2}/.outl/ops/.syncthing.{name}.tmp"
    shutil.copyfile(f"{ws}/.outl/ops/{name}", tmp)
    subprocess.run(["sync"])
    cap_env = env_for(dev)
    t0 = time.monotonic()
    os.rename(tmp, f"{ws2}/.outl/ops/{name}")
    exits = {}
    def done():
        # Merged (STATUS= no longer says merging) and every page written (idle again).
        st = [m for _, m in events if "STATUS=" in m]
        return any("STATUS=merging" in m for m in st) and "STATUS=idle" in st[-1]
    i = 0
    while not done() and time.monotonic() - t0 < 600:
        cid = subprocess.run([f"{BIN}/outl-capture", "--workspace", ws2, "--quiet", f"capture {i} during the merge"], env=cap_env,
                             capture_output=True, check=True).stdout.decode().strip()
        exits[cid] = time.time_ns() // 1000
        i += 1
        time.sleep(0.2)
    end = time.monotonic()
    deadline = time.time() + 30
    lat = {}
    while len(lat) < len(exits) and time.time() < deadline:
        time.sleep(0.05)
        try:
            for l in open(trace):
                c, _, pu = l.split()
                if c in exits:
                    lat[c] = (int(pu) - exits[c]) / 1e6
        except FileNotFoundError:
            pass
    merged_at = max((t for t, m in events if "STATUS=merging" in m), default=t0) - t0
    pings = [t for t, m in events if "WATCHDOG=1" in m and t >= t0]
    gaps = [b - a for a, b in zip([t0] + pings, pings + [end])]
    stop.set(); t.join()
    d.send_signal(signal.SIGTERM)
    d.wait()
    s.close()
    v = sorted(lat.values())
    print(f"foreign merge of {name[4:12]}...'s op log under load: merging until about {merged_at:.1f} s, "
          f"merged and all pages written {end - t0:.1f} s after the rename")
    print(f"  {len(exits)} captures every 200 ms meanwhile, {len(lat)} landed: latency to their page "
          f"p50 {v[len(v) // 2] if v else float('nan'):.3f} s, max {v[-1] if v else float('nan'):.3f} s (target <= 1 s)")
    print(f"  largest gap between watchdog pings {max(gaps):.1f} s (WatchdogSec=30 owes one every 15 s)")

def main():
    home = tempfile.mkdtemp(prefix="outl-bench-scale.", dir=os.environ.get("TMPDIR", "/var/tmp"))
    ws, st = f"{home}/ws", f"{home}/state"
    os.makedirs(st)
    subprocess.run([f"{BIN}/outl", "--workspace", ws, "--state-dir", st, "debug-generate", str(OPS)],
                   env=env_for(home), check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sync"])
    boots = [boot(home, ws, st) for _ in range(RUNS)]
    memory = subprocess.run([f"{BIN}/outl", "--workspace", ws, "--state-dir", st, "debug-memory"],
                            env=env_for(home), capture_output=True, text=True, check=True).stdout
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
    mib = lambda kb: f"{kb / 1024:.1f} MiB"
    print(f"resident after READY (pages there): {mib(mem['VmRSS'])} ({mem['VmRSS'] * 1024 // ops} bytes/op; target <= 150), "
          f"peak {mib(mem['VmHWM'])}; with no pages: {mib(bare_mem['VmRSS'])}, peak {mib(bare_mem['VmHWM'])}, "
          f"{mib(bare_mem['idle'])} once it has written them")
    print("where it goes (outl debug-memory: the model after the op-log boot, part by part):")
    for l in memory.splitlines()[1:]:
        print(f"  {l}")
    merge_under_load(home, ws)
    shutil.rmtree(home, ignore_errors=True)

main()
