"""Faults gated by a request condition, drawn at random: how many a default run catches.

    python bench/bench_gated.py [--draws 200] [--seed N|random] [--jobs 2] [--family inventory|ordinary|always]
                                [--servers 'NAME,PATTERN*']
                                [--values 'VALUE,PATTERN*'] [--out reports/bench-gated.json]

Each draw is a single-fault server of the zoo (made by a middleware) whose fault shows only on requests carrying one
value of the inventory, read on the server's side (tests/selftest/gated.py). A draw whose fault never showed in the
run (no witness: no request carried the value, or the fault changed nothing on those that did) is not real and is
left out. Of the rest: caught when the fault's requirement failed (or warned, for a SHOULD), or was blocked by a
requirement that failed; also counted: the draws missed on the fault's requirement whose run failed on others
(the verdict still caught them), and the failed MUSTs per draw. Prints the kill rate over all draws, by dimension
and by the fault's zoo module; and the rate read as if every draw whose condition the run carried on the fault's
operations, never provoking it there, were a miss (a witness other than the run may provoke it: an upper bound).

`--family always` opens the gate: how many requests of a default run provoke each fault drawn (a fault provoked by
one request, gated by a condition a third of requests carry, is met a third of the time). `--family ordinary` gates
by conditions no model of the suite names (a body's size, a request's place on its connection or in the server's
sequence, what its key looks like, a hash: `gated.ORDINARY`) instead of the inventory's values.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def one(draw: tuple[str, str, str]) -> dict:
    from conformance.api import certify
    from conformance.server import ReferenceServer
    from conformance.target import from_server_facts
    from tests.selftest.gated import Witness, gated
    from tests.selftest.zoo import load_zoo

    name, dimension, value = draw
    b = load_zoo()[name]
    witness = Witness()
    t0 = time.monotonic()
    with ReferenceServer(gated(b, dimension, value, witness)) as srv:
        rep = certify(from_server_facts(srv.facts))
    rows = {r["id"]: r for r in rep["requirements"]}
    row = rows.get(b.breaks, {})
    roots = row.get("blocked_by") or ()
    roots = [roots] if isinstance(roots, str) else roots
    caught = row.get("status") in ("failed", "warning", "info") or any(
        rows.get(root, {}).get("status") == "failed" for root in roots)
    return {"server": name, "module": b.module.rpartition(".")[2], "breaks": b.breaks, "dimension": dimension,
            "value": value, "seen": witness.seen, "changed": witness.changed, "real": witness.changed > 0,
            "caught": caught, "verdict": rep["verdict"], "status": row.get("status"),
            "failed": [r["id"] for r in rep["requirements"] if r["status"] == "failed"],
            "seconds": round(time.monotonic() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", default="random")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--family", choices=("inventory", "ordinary", "always"), default="inventory",
                    help="gate by a value of the inventory, by a condition no model names (tests/selftest/gated.py), "
                         "or not at all (how many requests of a run provoke each fault)")
    ap.add_argument("--servers", default="",
                    help="draw only among these zoo servers (names or shell patterns, comma-separated)")
    ap.add_argument("--values", default="",
                    help="gate only by these values or conditions (names or shell patterns, comma-separated)")
    ap.add_argument("--out", default="reports/bench-gated.json")
    args = ap.parse_args()
    seed = random.SystemRandom().randrange(2**32) if args.seed == "random" else int(args.seed)
    from tests.selftest.gated import draws
    todo = draws(seed, args.draws, args.family, [p for p in args.servers.split(",") if p],
                 [p for p in args.values.split(",") if p])
    print(f"seed {seed}: {len(todo)} draws", flush=True)
    out = []
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for i, got in enumerate(pool.imap_unordered(one, todo), 1):
            out.append(got)
            mark = "caught" if got["caught"] else "MISSED" if got["real"] else "not real"
            print(f"{i:4d} {mark:8s} {got['server']} when {got['dimension']}={got['value']} "
                  f"(seen {got['seen']}, changed {got['changed']}; failed {len(got['failed'])}) {got['seconds']} s",
                  flush=True)
    if args.family == "always":
        provoked = sorted(g["changed"] for g in out if g["changed"])
        if provoked:
            print(f"requests of the run that provoke a fault (of {len(provoked)} the witness sees; "
                  f"{len(out) - len(provoked)} change only what it cannot read): "
                  f"median {provoked[len(provoked) // 2]}, at most 2: {sum(n <= 2 for n in provoked)}, "
                  f"at most 5: {sum(n <= 5 for n in provoked)}; were each gated by a condition a third of "
                  f"requests carry, independently: {100 * sum(1 - (2 / 3) ** n for n in provoked) / len(provoked):.1f} % "
                  f"caught, expected")
    real = [g for g in out if g["real"]]
    caught = [g for g in real if g["caught"]]
    print(f"\nreal draws: {len(real)} of {len(out)}; caught by a default run: {len(caught)} "
          f"({100 * len(caught) / max(1, len(real)):.1f} %)")
    for key in ("dimension", "module"):
        by = collections.defaultdict(lambda: [0, 0])
        for g in real:
            by[g[key]][0] += g["caught"]
            by[g[key]][1] += 1
        print(f"by {key}: " + ", ".join(f"{k} {c}/{n}" for k, (c, n) in sorted(by.items())))
    # A fault the run never provoked on a request that carried the condition may still be provoked there by another
    # client's request (a witness of its own would call it real): the measure read as if every one of them were.
    unprovoked = [g for g in out if not g["real"] and g["seen"]]
    bound = len(real) + len(unprovoked)
    print(f"carried on the fault's operations but never provoked: {len(unprovoked)}; counted as missed: "
          f"{len(caught)} of {bound} ({100 * len(caught) / max(1, bound):.1f} %)")
    elsewhere = [g for g in real if not g["caught"] and g["failed"]]
    print(f"missed, but the run failed on other requirements: {len(elsewhere)} "
          f"(the verdict caught {len(caught) + len(elsewhere)} of {len(real)})")
    failed = sorted(len(g["failed"]) for g in caught)
    if failed:
        print(f"failed MUSTs per caught draw: median {failed[len(failed) // 2]}, max {failed[-1]}, "
              f"at most 3 in {sum(n <= 3 for n in failed)} of {len(failed)}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"seed": seed, "draws": out}, indent=1))


if __name__ == "__main__":
    main()
