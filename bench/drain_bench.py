# drain_bench.py: driver for bench/drain.sh (see there). Runs real outld and outl-capture release
# binaries in a private HOME; a bench may poll a trace file, the daemon never polls.
import os, subprocess, sys, tempfile, time, json, shutil, signal, random

BIN = os.environ["OUTL_BIN_DIR"]
CAPTURE, OUTLD = os.path.join(BIN, "outl-capture"), os.path.join(BIN, "outld")
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, (len(xs) * p) // 100)]

def env_for(home, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OUTL_", "NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG"))}
    e.update(HOME=home, XDG_CONFIG_HOME=f"{home}/.config", XDG_STATE_HOME=f"{home}/.local/state")
    e.update(extra)
    return e

BENCH_DIR = os.environ.get("TMPDIR", "/var/tmp")

def fresh_home():
    d = tempfile.mkdtemp(prefix="outl-bench.", dir=BENCH_DIR)
    os.makedirs(f"{d}/outl", exist_ok=True)
    return d

def wait_until(pred, limit, what):
    end = time.time() + limit
    while not pred():
        if time.time() > end:
            sys.exit(f"bench: timed out waiting for {what}")
        time.sleep(0.0005)

def latency(io, n=200):
    home = fresh_home()
    trace = f"{home}/trace"
    d = subprocess.Popen([OUTLD, "--log", "stderr", "--io", io], env=env_for(home, OUTL_BENCH_TRACE=trace), stderr=subprocess.DEVNULL)
    inbox = f"{home}/outl/.outl/captures"
    wait_until(lambda: os.path.isdir(inbox), 30, "outld to start")
    time.sleep(0.3)
    durable, projected, writer = [], [], []
    # The floor runs in chunks between outld's captures, so both meet the same moments of a shared
    # disk (run after them, its p99 and outld's moved 1.0-4.4x apart from one run to the next).
    chunk = 20
    floor_samples = {"append": [], "publish": []}
    def floor_chunk():
        out = subprocess.run(["out/floor", f"{home}", str(chunk)], capture_output=True, text=True, check=True,
                             env={**os.environ, "FLOOR_SAMPLES": "1"}).stdout
        for l in out.splitlines():
            if l.startswith("sample "):
                _, kind, us = l.split()
                floor_samples[kind].append(int(us))
    seen = 0
    for i in range(n):
        if i % chunk == 0:
            floor_chunk()
        t0 = time.time_ns() // 1000
        cid = subprocess.run([CAPTURE, "--quiet", f"latency probe {i}"], env=env_for(home), capture_output=True, check=True).stdout.decode().strip()
        t_exit = time.time_ns() // 1000
        writer.append(t_exit - t0)
        def landed():
            try:
                with open(trace) as f:
                    return any(l.startswith(cid) for l in f.readlines()[seen:])
            except FileNotFoundError:
                return False
        wait_until(landed, 10, f"capture {cid} to land")
        with open(trace) as f:
            lines = f.readlines()
        for l in lines[seen:]:
            c, du, pu = l.split()
            if c == cid:
                durable.append(int(du) - t_exit)
                projected.append(int(pu) - t_exit)
        seen = len(lines)
        time.sleep(0.01)
    d.send_signal(signal.SIGTERM); d.wait()
    print(f"-- latency, outld --io {io}, {n} captures one at a time")
    print(f"writer run time          p50 {pct(writer,50):6d} us  p99 {pct(writer,99):6d} us")
    print(f"writer exit -> durable   p50 {pct(durable,50):6d} us  p99 {pct(durable,99):6d} us")
    print(f"writer exit -> projected p50 {pct(projected,50):6d} us  p99 {pct(projected,99):6d} us")
    for kind, xs in floor_samples.items():
        print(f"floor {kind:8} p50 {pct(xs,50):6d} us  p99 {pct(xs,99):6d} us  (n={len(xs)}, in runs of {chunk} between the captures)")
    fa = pct(floor_samples["append"], 99)
    fp = pct(floor_samples["publish"], 99)
    print(f"ratio p99 durable/floor(append) {pct(durable,99)/max(fa,1):.1f}x, projected/floor(append+publish) {pct(projected,99)/max(fa+fp,1):.1f}x  (target <= 2x)")
    shutil.rmtree(home, ignore_errors=True)

def versus_daily_append(nops=100000, n=30):
    """Issue 3's baseline: `outl daily append` boots the whole workspace for one line; outld keeps it
    booted. Both on the same workspace of `nops` ops, in one run."""
    home = fresh_home()
    ws = f"{home}/outl"
    outl = os.path.join(BIN, "outl")
    subprocess.run([outl, "--workspace", ws, "debug-generate", str(nops)], env=env_for(home), check=True, capture_output=True)
    slow = []
    for i in range(5):
        t0 = time.monotonic()
        subprocess.run([outl, "--workspace", ws, "daily", "append", f"slow path {i}"], env=env_for(home), check=True, capture_output=True)
        slow.append(int((time.monotonic() - t0) * 1e6))
    trace = f"{home}/trace"
    d = subprocess.Popen([OUTLD, "--log", "stderr"], env=env_for(home, OUTL_BENCH_TRACE=trace), stderr=subprocess.DEVNULL)
    wait_until(lambda: os.path.isdir(f"{ws}/.outl/captures"), 60, "outld to start")
    time.sleep(1)
    fast = []
    for i in range(n):
        t0 = time.time_ns() // 1000
        cid = subprocess.run([CAPTURE, "--quiet", f"fast path {i}"], env=env_for(home), capture_output=True, check=True).stdout.decode().strip()
        def landed():
            try:
                with open(trace) as f:
                    return any(l.startswith(cid) for l in f)
            except FileNotFoundError:
                return False
        wait_until(landed, 30, f"capture {cid}")
        with open(trace) as f:
            pu = [int(l.split()[2]) for l in f if l.startswith(cid)][0]
        fast.append(pu - t0)
        time.sleep(0.01)
    d.send_signal(signal.SIGTERM); d.wait()
    print(f"-- on a {nops}-op workspace: outl daily append (boot + append + project) p50 {pct(slow,50)/1000:.1f} ms; "
          f"outl-capture start -> projected by outld p50 {pct(fast,50)/1000:.1f} ms, p99 {pct(fast,99)/1000:.1f} ms "
          f"({pct(slow,50)/max(pct(fast,50),1):.0f}x faster)")
    shutil.rmtree(home, ignore_errors=True)

def ulid(ms, n):
    v = (ms << 80) | n
    return "".join(ALPHABET[(v >> (5 * (25 - i))) & 31] for i in range(26))

def drop(inbox, count):
    os.makedirs(f"{inbox}/tmp", exist_ok=True)
    ms = int(time.time() * 1000)
    for n in range(count):
        name = ulid(ms, n + 1)
        with open(f"{inbox}/tmp/{name}", "w") as f:
            f.write(json.dumps({"text": f"burst {n}", "captured_at": "2026-12-02T12:00:00.000Z", "source": "bench"}))
        os.rename(f"{inbox}/tmp/{name}", f"{inbox}/{name}.json")
    os.sync()

def timed(argv, env=None):
    """Runs argv to its end: (wall s, user ms, sys ms, returncode, stderr) from its own rusage."""
    err = tempfile.TemporaryFile()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    return dt, ru.ru_utime * 1000, ru.ru_stime * 1000, p.returncode, err.read().decode(errors="replace")

def floor_burst(count):
    """The same syscalls in C on the same kind of burst: (wall s, user ms, sys ms)."""
    home = fresh_home()
    inbox = f"{home}/inbox"
    drop(inbox, count)
    dt, user, system, rc, err = timed(["out/drain_floor", inbox, f"{home}/floor-ops.log"])
    shutil.rmtree(home, ignore_errors=True)
    if rc != 0:
        sys.exit(f"bench: drain_floor failed: {err[-500:]}")
    return dt, user, system

def cat_burst(count):
    """`cat` of the same files: what reading them alone costs here."""
    home = fresh_home()
    inbox = f"{home}/inbox"
    drop(inbox, count)
    t0 = time.monotonic()
    subprocess.run(f"find {inbox} -maxdepth 1 -name '*.json' -print0 | xargs -0 cat > /dev/null", shell=True, check=True)
    dt = time.monotonic() - t0
    shutil.rmtree(home, ignore_errors=True)
    return dt

def burst(count, io, batch=None):
    """One `outld --once` over `count` files: (wall s, user ms, sys ms, files left)."""
    home = fresh_home()
    inbox = f"{home}/outl/.outl/captures"
    # Boot once so the workspace exists, then drop the burst and time one drain of it.
    subprocess.run([OUTLD, "--once", "--log", "stderr"], env=env_for(home), check=True, capture_output=True)
    drop(inbox, count)
    extra = {"OUTL_BATCH_LIMIT": str(batch)} if batch else {}
    dt, user, system, rc, err = timed([OUTLD, "--once", "--io", io, "--log", "stderr"], env_for(home, **extra))
    if rc != 0:
        sys.exit(f"bench: outld --once failed: {err[-500:]}")
    left = len([f for f in os.listdir(inbox) if f.endswith(".json")])
    shutil.rmtree(home, ignore_errors=True)
    return dt, user, system, left

def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]

def ratio_interval(floors, runs, draws=2000):
    """A 90% bootstrap interval of median(floors) / median(runs): both resampled with replacement,
    with a fixed seed so that one set of runs always prints the same interval."""
    rng = random.Random(17)
    xs = sorted(median(rng.choices(floors, k=len(floors))) / median(rng.choices(runs, k=len(runs))) for _ in range(draws))
    return xs[draws // 20], xs[draws - 1 - draws // 20]

def bursts():
    global BENCH_DIR
    fs = os.popen(f"stat -f -c %T {BENCH_DIR}").read().strip()
    opts = os.popen(f"findmnt -n -o OPTIONS --target {BENCH_DIR}").read().strip().splitlines()[0]
    print(f"-- bursts on {BENCH_DIR} ({fs}; {opts})")
    sizes = [10000, 100000] if os.environ.get("OUTL_BENCH_QUICK") is None else [10000]
    # This machine is shared: one run of each moves by 15% or more. Each size is run `reps` times,
    # outld and its C floor interleaved, and the ratio is of their medians (100,000: 5 runs). Even
    # over 30 runs of 10,000 the ratio's 90% interval was 0.14 wide (0.71-0.85), wider than what
    # separated a median from its target: each ratio is printed with that interval (a bootstrap).
    reps = int(os.environ.get("OUTL_BENCH_BURST_REPS", "15"))
    per_capture_n = 2000
    dt_single, _, _, _ = burst(per_capture_n, "plain", batch=1)
    rate_single = per_capture_n / dt_single
    print(f"burst {per_capture_n:>6} fdatasync per capture: {rate_single:9.0f} captures/s ({dt_single:.2f} s)")
    # On tmpfs the disk costs nothing: what is left is outld's CPU per capture against the same
    # syscalls in C (issue 17: at least 0.8x). On a disk: 50,000/s and 20x the per-capture path.
    target = "target >= 0.80x the C floor" if fs == "tmpfs" else "target >= 50000/s and >= 20x"
    for n in sizes:
        k = reps if n <= 10000 else min(reps, 5)
        floors, runs = [], {"uring": [], "plain": []}
        for _ in range(k):
            floors.append(floor_burst(n))
            for io in runs:
                runs[io].append(burst(n, io))
        fdt = median([f[0] for f in floors])
        print(f"burst {n:>6} floor: C same syscalls {n / fdt:9.0f} files/s (median of {k}: {fdt:.3f} s, "
              f"user {median([f[1] for f in floors]):.0f} ms, sys {median([f[2] for f in floors]):.0f} ms); "
              f"cat of the data {n / cat_burst(n):9.0f} files/s")
        for io, rs in runs.items():
            dt = median([r[0] for r in rs])
            rate = n / dt
            ratios = sorted(f[0] / r[0] for f, r in zip(floors, rs))
            low, high = ratio_interval([f[0] for f in floors], [r[0] for r in rs])
            print(f"burst {n:>6} {io:5} group commit:        {rate:9.0f} captures/s (median of {k}: {dt:.3f} s, "
                  f"user {median([r[1] for r in rs]):.0f} ms, sys {median([r[2] for r in rs]):.0f} ms, {max(r[3] for r in rs)} left)  "
                  f"{rate / rate_single:5.1f}x per-capture path, {fdt / dt:4.2f}x the C floor "
                  f"(90% interval {low:.2f}-{high:.2f}; pairs {ratios[0]:.2f}-{ratios[-1]:.2f}; {target})")

def idle():
    secs = int(os.environ.get("OUTL_BENCH_IDLE_SECONDS", "60"))
    home = fresh_home()
    d = subprocess.Popen([OUTLD, "--log", "stderr"], env=env_for(home), stderr=subprocess.DEVNULL)
    wait_until(lambda: os.path.isdir(f"{home}/outl/.outl/captures"), 30, "outld to start")
    time.sleep(1)
    def sample():
        with open(f"/proc/{d.pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        cpu = (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
        cs = 0
        for task in os.listdir(f"/proc/{d.pid}/task"):
            with open(f"/proc/{d.pid}/task/{task}/status") as f:
                for l in f:
                    if "ctxt_switches" in l:
                        cs += int(l.split()[1])
        return cpu, cs
    c0, s0 = sample()
    time.sleep(secs)
    c1, s1 = sample()
    d.send_signal(signal.SIGTERM); d.wait()
    print(f"idle {secs} s without a watchdog: CPU {1000*(c1-c0):.0f} ms, context switches {s1-s0} (all threads)")
    shutil.rmtree(home, ignore_errors=True)

latency("uring")
latency("plain")
versus_daily_append()
bursts()
# The same bursts on tmpfs: no disk, no discard, fdatasync is free, so this is the CPU cost of
# the drain against the same syscalls in C.
if os.path.isdir("/dev/shm"):
    BENCH_DIR = "/dev/shm"
    bursts()
idle()
