"""One fault, one failure: certify every broken server of the zoo with a full default run.

    python bench/bench_zoo_fanout.py [--jobs 3] [--only PATTERN[,PATTERN]] [--class zoo_inputs,zoo_http2]
                                     [--out reports/bench-zoo-fanout.json]

For each single-fault server: the requirements that failed (MUST) or warned, those blocked and by which root,
whether the broken requirement itself was caught, and for each failed MUST whether its first evidence is the
exchange its message names (the message starts with that step's label), and whether that exchange, re-sent to the
same server and judged by the same rule, shows the deviation again (tests/selftest/resend.py). Prints one line per
server, the distribution of failed requirements per server, and the servers caught per zoo module (the class of
fault: `--class` takes module names, e.g. zoo_inputs, zoo_sequences, zoo_http2).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import fnmatch
import json
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def names_its_evidence(row: dict) -> bool:
    """The first evidence is an exchange a check named as breaking the rule, and the message (`<check>: <label>: …`,
    or `<check>: <label> over HTTP/2 (…): …` when the target spoke HTTP/2 too) starts with that exchange's label."""
    ev = (row.get("evidence") or [{}])[0]
    first = (row.get("message") or "").split(": ", 1)[-1]
    return bool(ev.get("broke")) and first.startswith((f"{ev.get('label')}:", f"{ev.get('label')} over HTTP/"))


def caught(row: dict, rows: dict) -> bool:
    """Failed on its level, or blocked by a requirement that failed in the run."""
    return row.get("status") in ("failed", "warning", "info") or any(
        rows.get(root, {}).get("status") == "failed" for root in row.get("blocked_by", ()))


def one(name: str) -> dict:
    from conformance.api import certify
    from conformance.server import ReferenceServer
    from conformance.target import from_server_facts
    from tests.selftest.zoo import load_zoo

    from tests.selftest.resend import resend_failures

    b = load_zoo()[name]
    t0 = time.monotonic()
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts)
        rep = certify(target, keep_recording=True)
        row = next((r for r in rep["requirements"] if r["id"] == b.breaks), {})
        thorough = row.get("status") == "not_assessed"
        if thorough:   # its requirement is judged only by a --thorough run (the ping repeating, the 429 probe)
            rep = certify(dataclasses.replace(target, thorough=True), keep_recording=True)
        resent = resend_failures(rep, rep.pop("recording")["document"], target)
    rows = {r["id"]: r for r in rep["requirements"]}
    failed = [r for r in rep["requirements"] if r["status"] == "failed"]
    named_first = sum(1 for r in failed if names_its_evidence(r))
    focused = None
    if not caught(rows.get(b.breaks, {}), rows):
        # a server a whole run cannot judge in time (a rate limit of one request in 5 s): the zoo's own focused
        # run of the covering checks, its failures re-sent as there
        from tests.selftest.test_zoo import judge
        got = judge(b)
        focused = {"caught": got["caught"], "status": got["status"], "not_reproduced": got.get("resent", []),
                   "why_not_whole": rows.get(b.breaks, {}).get("message", "")[:200]}
    return {"name": name, "module": b.module.rpartition(".")[2], "breaks": b.breaks, "verdict": rep["verdict"], "seconds": round(time.monotonic() - t0, 1),
            "caught": caught(rows.get(b.breaks, {}), rows) or bool(focused and focused["caught"]),
            "focused": focused,
            "failed": [r["id"] for r in failed],
            "warned": [r["id"] for r in rep["requirements"] if r["status"] == "warning"],
            "errors": [r["id"] for r in rep["requirements"] if r["status"] == "error"],
            "blocked": {r["id"]: r["blocked_by"] for r in rep["requirements"] if r.get("blocked_by")},
            "named_first": named_first, "thorough": thorough, "reproduced": sum(r.ok for r in resent),
            "not_reproduced": [f"{r.requirement} {r.label}: {r.outcome} {r.detail[:160]}" for r in resent if not r.ok]}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--only", default="*", help="comma-separated names or patterns")
    p.add_argument("--class", dest="modules", default="", help="comma-separated zoo modules (default: every one)")
    p.add_argument("--out", default="reports/bench-zoo-fanout.json")
    args = p.parse_args()
    from tests.selftest.zoo import load_zoo
    patterns = [s.strip() for s in args.only.split(",") if s.strip()]
    modules = {s.strip() for s in args.modules.split(",") if s.strip()}
    names = sorted(n for n, b in load_zoo().items() if any(fnmatch.fnmatch(n, pat) for pat in patterns)
                   and (not modules or b.module.rpartition(".")[2] in modules))
    rows = []
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for row in pool.imap_unordered(one, names):
            rows.append(row)
            how = "MISSED" if not row["caught"] else "focused" if row["focused"] else "caught"
            print(f"{row['name']:<58} {how:<7} failed {len(row['failed']):>2} "
                  f"(named first {row['named_first']}, re-sent and reproduced {row['reproduced']} of "
                  f"{len(row['failed'])}) blocked {len(row['blocked']):>2} "
                  f"{row['seconds']:>5} s  {','.join(row['failed'])[:120]}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(sorted(rows, key=lambda r: r["name"]), indent=1))
    dist = collections.Counter(len(r["failed"]) for r in rows)
    total = sum(len(r["failed"]) for r in rows)
    named = sum(r["named_first"] for r in rows)
    reproduced = sum(r["reproduced"] for r in rows)
    focused = [r["name"] for r in rows if r["focused"]]
    print(f"\n{len(rows)} servers; caught {sum(r['caught'] for r in rows)} ({len(focused)} only by the focused run "
          f"of their covering checks: {', '.join(focused) or 'none'}); failed MUSTs per server: "
          f"{dict(sorted(dist.items()))}; more than 3: {sum(1 for r in rows if len(r['failed']) > 3)}; "
          f"first evidence is the named exchange: {named}/{total}; re-sent and reproduced: {reproduced}/{total}")
    for module in sorted({r["module"] for r in rows}):
        of = [r for r in rows if r["module"] == module]
        print(f"{module:<16} caught {sum(r['caught'] for r in of)}/{len(of)}: "
              f"{sum(r['caught'] and not r['thorough'] and not r['focused'] for r in of)} by a default run, "
              f"{sum(r['caught'] and r['thorough'] and not r['focused'] for r in of)} by --thorough, "
              f"{sum(bool(r['focused'] and r['caught']) for r in of)} only by the focused run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
