#!/usr/bin/env python3
# sync-checks.py: the file-level checks of Tests/integration/sync.sh (issue 8, SPEC 2.1), run on the
# workspaces of several devices after they settled. Prints one "ok   NAME: ..." or "FAIL NAME: ..."
# line per check (details indented below a FAIL) and exits 1 when any check failed. Reads only.
#
#   sync-checks.py journals LABEL  DEV=WS...   same journals/ everywhere; each capture once per device
#   sync-checks.py oplogs          DEV=WS...   valid logs, identical everywhere, each op made by its device
#   sync-checks.py leftovers       DEV=WS...   no sync-conflict copies, nothing rejected, inboxes drained
#
# Environment: SYNC_CAPTURES (lines "DEV ULID TOKEN"; DEV "both" = one file dropped into every inbox),
# SYNC_EDITS (lines "DEV ULID OLD_TEXT<TAB>NEW_TEXT": a person's hand edit on DEV), SYNC_ACTORS (lines
# "DEV ACTOR"), SYNC_LOGS (lines "DEV OUTLD_LOG"), SYNC_DELETES (lines "DEV ULID": deletions a person
# made; the test makes none today, but a delete op is only acceptable if it is listed here).
import collections, difflib, glob, json, os, re, sys

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TOKEN = re.compile(r"sy-[a-z]+-\d+-end")
failures = 0
MAX_DETAILS = int(os.environ.get("SYNC_MAX_DETAILS", "25"))


def report(ok, name, summary, details=()):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {summary}")
    if not ok:
        failures += 1
        for d in list(details)[:MAX_DETAILS]:
            print(f"       {d}")
        if len(details) > MAX_DETAILS:
            print(f"       ... and {len(details) - MAX_DETAILS} more")


def ulid_to_uuid(ulid):
    v = 0
    for c in ulid:
        v = v * 32 + ALPHABET.index(c)
    h = f"{v & ((1 << 128) - 1):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _table():
    t = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _table()


def lines_of(var):
    path = os.environ.get(var, "")
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def captures(var="SYNC_CAPTURES"):
    """[(dev, ulid, token, uuid)]"""
    out = []
    for l in lines_of(var):
        dev, ulid, token = l.split()
        out.append((dev, ulid, token, ulid_to_uuid(ulid)))
    return out


def edits():
    """[(dev, uuid, old, new)]"""
    out = []
    for l in lines_of("SYNC_EDITS"):
        head, new = l.split("\t", 1)
        dev, ulid, old = head.split(" ", 2)
        out.append((dev, ulid_to_uuid(ulid), old, new))
    return out


def files_under(ws, sub):
    base = os.path.join(ws, sub)
    out = {}
    for dirpath, dirs, names in os.walk(base):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, ws)] = f.read()
    return out


def is_page(rel):
    """A page file, not a sync tool's conflict copy or temporary (those are the leftovers check's)."""
    n = os.path.basename(rel)
    return n.endswith(".md") and ".sync-conflict-" not in n and not n.startswith((".syncthing.", "~syncthing~"))


def check_journals(label, devs):
    caps, eds = captures(), edits()
    pages = {d: {p: v for p, v in files_under(ws, "journals").items() if is_page(p)} for d, ws in devs}
    names = list(pages)
    first = names[0]
    details = []
    for other in names[1:]:
        a, b = pages[first], pages[other]
        for p in sorted(set(a) | set(b)):
            if p not in a or p not in b:
                details.append(f"{p} only on {other if p not in a else first}")
            elif a[p] != b[p]:
                details.append(f"{p} differs between {first} and {other}:")
                diff = difflib.unified_diff(a[p].decode("utf-8", "replace").splitlines(),
                                            b[p].decode("utf-8", "replace").splitlines(),
                                            f"{first}/{p}", f"{other}/{p}", lineterm="", n=1)
                details.extend("  " + l for l in list(diff)[:60])
    total = sum(len(v) for v in pages[first].values())
    report(not details, f"{label}: journals identical on {' and '.join(names)}",
           f"{len(pages[first])} page(s), {total} bytes" if not details else "they differ", details)

    edited = {u: (old, new) for _, u, old, new in eds}
    for d in names:
        text = b"".join(pages[d].values()).decode("utf-8", "replace")
        counts = collections.Counter(TOKEN.findall(text))
        bad, missing, doubled = [], 0, 0
        for dev, ulid, token, uuid in caps:
            n_tok, n_id = counts[token], text.count(f"id:: {uuid}")
            if n_tok != 1 or n_id != 1:
                missing += n_tok == 0 or n_id == 0
                doubled += n_tok > 1 or n_id > 1
                bad.append(f"{token} (capture {ulid} on {dev}, block {uuid}): text {n_tok} time(s), id:: {n_id} time(s)")
        for uuid, (old, new) in edited.items():
            if text.count(new) != 1:
                bad.append(f"hand edit of block {uuid}: the new text '{new}' is there {text.count(new)} time(s)")
        known = {t for _, _, t, _ in caps}
        strays = sorted(t for t in counts if t not in known)
        if strays:
            bad.append(f"tokens no capture made: {strays[:10]}")
        report(not bad, f"{label}: every capture exactly once in {d}'s journals",
               f"{len(caps)} captures, {len(edited)} hand edit(s) shown" if not bad
               else f"{len(bad)} of {len(caps)} captures wrong ({missing} missing, {doubled} more than once)", bad)


def parse_oplog(path):
    """(ops, problems): ops as (line number, raw line, dict)."""
    ops, problems = [], []
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        problems.append(f"{os.path.basename(path)}: last line has no newline (torn): {lines[-1][:120]!r}")
        lines.pop()
    for i, line in enumerate(lines, 1):
        ok = len(line) > 11 and line[8:9] == b" "
        if ok:
            try:
                ok = int(line[:8], 16) == crc32c(line[9:])
            except ValueError:
                ok = False
        if not ok:
            problems.append(f"{os.path.basename(path)}:{i}: bad CRC or shape: {line[:120]!r}")
            continue
        try:
            ops.append((i, line.decode(), json.loads(line[9:])))
        except ValueError as e:
            problems.append(f"{os.path.basename(path)}:{i}: not JSON ({e}): {line[:120]!r}")
    return ops, problems


def drained_by(devlogs):
    """{dev: set of capture ULIDs its outld drained into a new block}."""
    out = collections.defaultdict(set)
    for l in lines_of("SYNC_LOGS"):
        dev, path = l.split(" ", 1)
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                for m in re.finditer(r"^outld: drained ([0-9A-Z]{26}) ", f.read(), re.M):
                    out[dev].add(m.group(1))
    return out


def short(line, n=200):
    return line if len(line) <= n else line[:n] + "..."


def check_oplogs(devs):
    # Captures to a named page (SYNC_PAGE_CAPTURES) are held to the op-log checks; their pages are
    # the script's to check, not the journals check's.
    caps, eds = captures() + captures("SYNC_PAGE_CAPTURES"), edits()
    actors = dict(l.split() for l in lines_of("SYNC_ACTORS"))
    dev_of_actor = {a: d for d, a in actors.items()}
    drained = drained_by(devs)
    deletes = {(l.split()[0], ulid_to_uuid(l.split()[1])) for l in lines_of("SYNC_DELETES")}

    # The op logs themselves: the same files, byte for byte, on every device.
    logs = {d: files_under(ws, ".outl/ops") for d, ws in devs}
    names = list(logs)
    details = []
    for other in names[1:]:
        a, b = logs[names[0]], logs[other]
        for p in sorted(set(a) | set(b)):
            if p not in a or p not in b:
                details.append(f"{p} only on {other if p not in a else names[0]}")
            elif a[p] != b[p]:
                la, lb = a[p].count(b"\n"), b[p].count(b"\n")
                details.append(f"{p} differs: {la} lines on {names[0]}, {lb} on {other}")
    report(not details, "op logs identical on " + " and ".join(names),
           ", ".join(f"{os.path.basename(p)} {len(v.splitlines())} ops" for p, v in sorted(logs[names[0]].items())),
           details)

    # Each device's own file, read from its own disk (the authority for what that device wrote).
    expected = {f"ops-{actors[d]}.jsonl" for d, _ in devs if d in actors}
    per_dev, problems = {}, []
    for d, ws in devs:
        opsdir = os.path.join(ws, ".outl/ops")
        present = set(os.listdir(opsdir)) if os.path.isdir(opsdir) else set()
        for extra in sorted(present - expected):
            problems.append(f"{d}: unexpected file in .outl/ops: {extra}")
        for missing in sorted(expected - present):
            problems.append(f"{d}: {missing} is missing")
        if d not in actors:
            problems.append(f"{d}: no actor id found in its state directory")
            continue
        path = os.path.join(opsdir, f"ops-{actors[d]}.jsonl")
        if not os.path.exists(path):
            continue
        ops, probs = parse_oplog(path)
        problems += [f"{d}: {p}" for p in probs]
        for i, raw, op in ops:
            if op.get("a") != actors[d]:
                problems.append(f"{d}: ops-{actors[d]}.jsonl:{i} carries actor {op.get('a')}: {short(raw)}")
        per_dev[d] = ops
    report(not problems, "op logs well-formed, one per device, each op signed by its file's actor",
           ", ".join(f"{d} ({actors.get(d, '?')[:13]}…) {len(per_dev.get(d, []))} ops" for d, _ in devs), problems)

    # Every capture is exactly one block in the merged op logs, created where it was drained.
    owner = {uuid: (dev, ulid, token) for dev, ulid, token, uuid in caps}
    cb = collections.defaultdict(list)  # uuid -> [(dev, line no, raw, op)]
    for d, ops in per_dev.items():
        for i, raw, op in ops:
            if op.get("k") == "cb":
                cb[op.get("id")].append((d, i, raw, op))
    # (Which log a create belongs in is the cross-recording check's business, below.)
    bad = []
    blocks_of = collections.defaultdict(set)  # token -> ids of the blocks whose create or update carries it
    for d, ops in per_dev.items():
        for i, raw, op in ops:
            for t in TOKEN.findall(op.get("t", "")):
                blocks_of[t].add(op.get("id"))
    for dev, ulid, token, uuid in caps:
        made = cb.get(uuid, [])
        where = collections.Counter(m[0] for m in made)
        if not made:
            bad.append(f"{token} (capture {ulid} on {dev}): no create op in any log")
        if any(n > 1 for n in where.values()):
            bad.append(f"{token}: created more than once in one log: {dict(where)}")
        for m in made:
            if token not in m[3].get("t", ""):
                bad.append(f"{token}: the create op in {m[0]}'s log has text {m[3].get('t')!r}")
        others = blocks_of[token] - {uuid}
        if others:
            bad.append(f"{token}: its text is also in ops of other block(s) {sorted(others)}")
    report(not bad, "every capture exactly once in the merged op logs (one block, created at most once per log)",
           f"{len(caps)} captures, {sum(len(v) for v in cb.values())} create ops" if not bad else f"{len(bad)} wrong", bad)

    # No cross-recording: a block is created only by a device that drained its capture file.
    cross, notes, by = [], [], collections.Counter()
    for uuid, made in cb.items():
        for d, i, raw, op in made:
            if uuid not in owner:
                cross.append(f"{d}: ops-{actors[d]}.jsonl:{i} creates a block no capture made: {short(raw)}")
                continue
            dev, ulid, token = owner[uuid]
            if dev == d or dev == "both":
                continue
            if ulid in drained.get(d, set()):
                notes.append(f"{token} (captured on {dev}) was drained by {d} from its synced inbox")
                continue
            cross.append(f"{d} recorded {token}, captured on {dev}: ops-{actors[d]}.jsonl:{i}: {short(raw)}")
            by[(d, dev)] += 1
    report(not cross, "no block captured on one device created in another device's op log",
           "none" + (f" ({len(notes)} drained from a synced inbox)" if notes else "") if not cross
           else f"{len(cross)} create op(s) recorded by the wrong device ("
                + ", ".join(f"{d} re-recorded {n} of {src}'s" for (d, src), n in sorted(by.items())) + ")", cross)
    for n in notes:
        print(f"     note: {n}")

    # No delete op that a person did not make; no other op that no one asked for.
    dels = [f"{d}: ops-{actors[d]}.jsonl:{i}: {short(raw)}" for d, ops in per_dev.items()
            for i, raw, op in ops if op.get("k") == "db" and (d, op.get("id")) not in deletes]
    made_dels = sum(1 for d, ops in per_dev.items() for i, raw, op in ops if op.get("k") == "db")
    report(not dels, "no delete op that the test's person did not make",
           f"{made_dels} delete op(s), {len(deletes)} made by hand" if not dels else f"{len(dels)} unasked-for delete op(s)",
           dels)

    edited_on = collections.defaultdict(set)
    final_text = {}
    for dev, uuid, old, new in eds:
        edited_on[uuid].add(dev)
        final_text[uuid] = new
    stray, recorded = [], collections.defaultdict(list)
    for d, ops in per_dev.items():
        for i, raw, op in ops:
            k = op.get("k")
            if k in ("cp", "cb", "db"):
                continue
            if k == "ub" and d in edited_on.get(op.get("id"), ()):
                recorded[op.get("id")].append(op)
                continue
            what = {"ub": "an edit no person made on this device", "mb": "a move no one made",
                    "pp": "a preamble no one wrote"}.get(k, f"an op of kind {k!r}")
            stray.append(f"{d}: {what}: ops-{actors[d]}.jsonl:{i}: {short(raw)}")
    report(not stray, "each op log holds only its own device's work (no edit, move or preamble no one made there)",
           "none" if not stray else f"{len(stray)} op(s)", stray)
    lost = [f"hand edit of {uuid} on {', '.join(sorted(edited_on[uuid]))}: no update op with the new text in that log"
            for uuid in final_text if not any(op.get("t") == final_text[uuid] for op in recorded[uuid])]
    report(not lost, "each hand edit recorded as ops by the device it was made on",
           f"{len(final_text)} edit(s)" if not lost else f"{len(lost)} missing", lost)


def check_leftovers(devs):
    conflicts, rejected, waiting, temps = [], [], [], []
    final = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}\.(json|[1-9][0-9]*\.att)$")
    for d, ws in devs:
        for dirpath, dirs, names in os.walk(ws):
            for n in names + dirs:
                rel = os.path.relpath(os.path.join(dirpath, n), ws)
                # Syncthing's own temporaries come first: a pull of a conflict copy that the
                # other device's outld removed meanwhile leaves `.syncthing.X.sync-conflict-….tmp`,
                # which Syncthing keeps to resume and removes itself (keepTemporariesH); no copy
                # of a page under its final name is left, which is what a person would see.
                if n.startswith(".syncthing.") or n.startswith("~syncthing~"):
                    temps.append(f"{d}: {rel}")
                elif ".sync-conflict-" in n:
                    conflicts.append(f"{d}: {rel}")
        inbox = os.path.join(ws, ".outl/captures")
        rej = os.path.join(inbox, "rejected")
        if os.path.isdir(rej):
            for n in sorted(os.listdir(rej)):
                body = ""
                if n.endswith(".reason"):
                    with open(os.path.join(rej, n), errors="replace") as f:
                        body = " (" + f.read().strip()[:200] + ")"
                rejected.append(f"{d}: rejected/{n}{body}")
        if os.path.isdir(inbox):
            waiting += [f"{d}: .outl/captures/{n}" for n in sorted(os.listdir(inbox)) if final.match(n)]
    report(not conflicts, "no *.sync-conflict-* file anywhere", "none" if not conflicts else f"{len(conflicts)}", conflicts)
    report(not rejected, "nothing in rejected/", "empty" if not rejected else f"{len(rejected)} file(s)", rejected)
    report(not waiting, "every inbox drained (no capture file left or resurrected)",
           "empty" if not waiting else f"{len(waiting)} file(s)", waiting)
    for t in temps:
        print(f"     note: Syncthing temporary left: {t}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    label = args.pop(0) if cmd == "journals" else ""
    devs = [tuple(a.split("=", 1)) for a in args]
    {"journals": lambda: check_journals(label, devs), "oplogs": lambda: check_oplogs(devs),
     "leftovers": lambda: check_leftovers(devs)}[cmd]()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
