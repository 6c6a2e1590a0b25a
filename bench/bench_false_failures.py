"""False failures: certify every correct server of the repository (the reference server and every variant,
tests/selftest/variant_servers.py) with a full default run, over random seeds.

    python bench/bench_false_failures.py [--runs 20] [--servers 'reference,variant*'] [--jobs 2] [--seeds 1,2,3]
                                         [--out reports/bench-false-failures.json]

Every run draws a new seed for the generated inputs (or takes the next of `--seeds`, to reproduce one). A correct
server must pass every run: any requirement failed, warned or in error beyond what the server's design gives is a
false verdict of the suite. Prints one line per run, then per server the runs with a false verdict and their seeds
(reproduce one with `conformance run --seed N` against that server), and every warning and info each server got.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import multiprocessing
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


SAID = ("warning", "info")   # what a correct server is told besides pass: listed per server, deserved or not


def one_run(job: tuple[str, int]) -> dict:
    """A full default run of one correct server under one seed (in a worker process)."""
    from conformance.api import certify
    from conformance.server import ReferenceServer
    from conformance.target import from_server_facts
    from tests.selftest.variant_servers import SERVERS, false_verdicts

    name, seed = job
    server = SERVERS[name]
    t0 = time.monotonic()
    try:
        with ReferenceServer(server.config()) as srv:
            report = certify(from_server_facts(srv.facts, seed=seed))
    except Exception as exc:                      # noqa: BLE001 - a crash of the bench is reported, not hidden
        return {"server": name, "seed": seed, "verdict": "crash", "false": [f"{type(exc).__name__}: {exc}"],
                "messages": {}, "seconds": round(time.monotonic() - t0, 1)}
    wrong = false_verdicts(server, report)
    ids = {w.split("=")[0] for w in wrong}
    messages = {r["id"]: (r.get("message") or "")[:600] for r in report["requirements"] if r["id"] in ids}
    said = {status: [r["id"] for r in report["requirements"] if r["status"] == status] for status in SAID}
    return {"server": name, "seed": report["seed"], "verdict": report["verdict"], "false": wrong,
            "messages": messages, "seconds": round(time.monotonic() - t0, 1), **said}


def main() -> int:
    from tests.selftest.variant_servers import SERVERS

    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=20, help="seeds per server")
    p.add_argument("--servers", default="*", help="comma-separated names or patterns (default: every one)")
    p.add_argument("--seeds", default="", help="comma-separated seeds to use instead of random ones")
    p.add_argument("--jobs", type=int, default=1, help="runs at once (each in its own process)")
    p.add_argument("--out", default="reports/bench-false-failures.json")
    args = p.parse_args()
    patterns = [s.strip() for s in args.servers.split(",") if s.strip()]
    names = [n for n in SERVERS if any(fnmatch.fnmatch(n, pat) for pat in patterns)]
    if not names:
        p.error(f"no correct server matches {args.servers!r} (known: {', '.join(SERVERS)})")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()] or \
        [secrets.randbelow(2**32) for _ in range(args.runs)]
    jobs = [(name, seed) for seed in seeds for name in names]
    print(f"{len(names)} correct servers x {len(seeds)} seeds = {len(jobs)} full runs, {args.jobs} at once",
          flush=True)
    print(f"{'server':<22} {'seed':>10} {'seconds':>8}  {'verdict':<19} false verdicts", flush=True)
    rows = []
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=4) as pool:
        for row in pool.imap_unordered(one_run, jobs):
            rows.append(row)
            print(f"{row['server']:<22} {row['seed']:>10} {row['seconds']:>8.1f}  {row['verdict']:<19} "
                  f"{', '.join(row['false']) or '-'}", flush=True)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(rows, indent=1))
    print("\nper server: runs with a false verdict (failed, warned or error beyond the server's design)")
    total = 0
    for name in names:
        mine = [r for r in rows if r["server"] == name]
        bad = [r for r in mine if r["false"]]
        total += len(bad)
        seeds_shown = ", ".join(f"{r['seed']} ({'; '.join(r['false'])})" for r in bad)
        print(f"  {name:<22} {len(bad)} of {len(mine)}" + (f": {seeds_shown}" if bad else ""))
    print("\nper server: every warning and info, with the runs that gave it (a server's design may deserve some)")
    for name in names:
        mine = [r for r in rows if r["server"] == name]
        said = {status: sorted({rid for r in mine for rid in r.get(status, [])}) for status in SAID}
        told = "; ".join(f"{status}: " + ", ".join(f"{rid} ({sum(rid in r.get(status, []) for r in mine)}/{len(mine)})"
                                                  for rid in said[status]) for status in SAID if said[status])
        print(f"  {name:<22} {told or 'none'}")
    print(f"\nfalse verdicts: {total} of {len(rows)} runs")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
