"""Random internal errors (issue 31): many default runs, several at once, against correct servers; a correct
server must get a verdict every time, never an internal error or `error`.

    python bench/bench_internal_errors.py [--runs 500] [--jobs 4] [--targets embedded,h1,h2] [--seed N|random]
                                          [--keep reports/bench-internal-errors]

Each run is `conformance run` in a process of its own with CONFORMANCE_DEBUG=1 (an internal error prints its
traceback) and no draw cache (CONFORMANCE_CACHE_DIR empty). The targets take turns: `embedded` (no --base-url:
each run boots its own reference server), `h1` and `h2` (one reference server each, started here with
`conformance serve --json --rate-limit 100000/1s` so their own default rate limit never answers 429, `h2` with
--http2; both name the extra data field `payload`, not the embedded server's `data`; their facts reach the runs
through the CONFORMANCE_* variables, so no credential is on a command line). `--seed random` makes every run draw
its generated inputs instead of reading the shipped ones.

Prints one line per run (target, seconds, exit status, verdict, requests, what was wrong), then the counts: exit
statuses, verdicts, internal errors (a traceback or "internal error" in the output), runs with a requirement in
`error` (a fault of the suite), and every `error` verdict with its reason. The output and reports of every run
that was not a clean verdict are kept under --keep (run-<n>-<target>/), with each server's log; a summary in
--keep/summary.json. Exit 1 when any run went wrong.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_ratelimit import RateLimitedServer  # noqa: E402 - this script's folder is on the path
from conformance.target import FACTS  # noqa: E402 - the fact -> (option, environment variable) table

CLEAN = ("conformant", "conformant-partial")      # what a correct server's default run may end in
INTERNAL = ("internal error", "Traceback (most recent call last)", "changed size during iteration")
UNLIMITED = "100000/1s"    # the servers' own rate limit (default 600/300s) never answers a run 429
RUN_BOUND = 600.0       # seconds a run may take before the bench kills it (and counts it as wrong)


def one_run(n: int, target: str, env: dict[str, str], extra: list[str], keep: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-internal-") as tmp:
        reports = Path(tmp) / "reports"
        t0 = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--report-dir", str(reports), *extra],
                                  capture_output=True, text=True, errors="replace", cwd=tmp, timeout=RUN_BOUND,
                                  env=env)
            code, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            said = [b.decode("utf-8", "replace") if isinstance(b, bytes) else b or "" for b in (exc.stdout, exc.stderr)]
            code, out = "killed", "".join(said) + f"\n(killed after {RUN_BOUND:g} s)"
        row = {"run": n, "target": target, "seconds": round(time.monotonic() - t0, 1), "exit": code}
        try:
            report = json.loads((reports / "report.json").read_text())
        except (OSError, ValueError):
            report = {}
        row.update(verdict=report.get("verdict", "no report"), reason=report.get("verdict_reason", ""),
                   requests=(report.get("cost") or {}).get("requests"),
                   internal=any(mark in out for mark in INTERNAL),
                   suite_faults=[r["id"] for r in report.get("requirements", []) if r.get("status") == "error"])
        row["wrong"] = row["internal"] or bool(row["suite_faults"]) or row["verdict"] not in CLEAN or code != 0
        if row["wrong"]:
            kept = keep / f"run-{n}-{target}"
            if reports.is_dir():
                shutil.copytree(reports, kept / "reports")
            kept.mkdir(parents=True, exist_ok=True)
            (kept / "output.txt").write_text(out, encoding="utf-8")
        return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--jobs", type=int, default=4, help="runs at once")
    p.add_argument("--targets", default="embedded,h1,h2", help="comma-separated, taking turns: embedded, h1, h2")
    p.add_argument("--seed", default=None, help="passed to every run (default: the suite's; `random` draws anew)")
    p.add_argument("--keep", default="reports/bench-internal-errors", help="where wrong runs and the summary go")
    args = p.parse_args()
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    if not targets or set(targets) - {"embedded", "h1", "h2"}:
        p.error(f"--targets: embedded, h1 and/or h2, not {args.targets!r}")
    keep = Path(args.keep).resolve()
    keep.mkdir(parents=True, exist_ok=True)
    extra = ["--seed", args.seed] if args.seed else []
    # a target's facts are its own: none of this shell's CONFORMANCE_* facts reach a run
    shell = {k: v for k, v in os.environ.items() if k not in {var for _, var in FACTS.values()}}
    shell.update(CONFORMANCE_DEBUG="1", CONFORMANCE_CACHE_DIR="")
    print(f"{args.runs} {'default ' if not args.seed else ''}runs, {args.jobs} at once, targets {', '.join(targets)} "
          f"taking turns" + (f", seed {args.seed}" if args.seed else ""), flush=True)
    print(f"{'run':>4} {'target':<8} {'seconds':>7} {'exit':>6}  {'verdict':<19} {'requests':>8}  wrong", flush=True)
    rows: list[dict] = []

    def done(row: dict) -> None:
        rows.append(row)
        what = "; ".join(filter(None, ["internal error" if row["internal"] else "",
                                       f"suite faults {', '.join(row['suite_faults'][:5])}"
                                       if row["suite_faults"] else "",
                                       row["reason"][:100] if row["verdict"] not in CLEAN else ""]))
        print(f"{row['run']:>4} {row['target']:<8} {row['seconds']:>7.1f} {row['exit']!s:>6}  "
              f"{row['verdict']:<19} {row['requests'] if row['requests'] is not None else '-':>8}  "
              f"{what or ('-' if not row['wrong'] else 'exit ' + str(row['exit']))}", flush=True)

    with contextlib.ExitStack() as stack, ThreadPoolExecutor(args.jobs) as pool:
        env = {"embedded": shell}
        for name in (t for t in ("h1", "h2") if t in targets):    # both name the extra data field `payload`
            log = stack.enter_context(open(keep / f"server-{name}.log", "wb"))
            server = stack.enter_context(RateLimitedServer(UNLIMITED, "--extra-data-field", "payload",
                                                           *(["--http2"] if name == "h2" else []), log=log))
            env[name] = {**shell, **{var: str(server.facts[fact]) for fact, (_, var) in FACTS.items()
                                     if server.facts.get(fact)}}
        futures = [pool.submit(one_run, n, targets[n % len(targets)], env[targets[n % len(targets)]], extra, keep)
                   for n in range(args.runs)]
        try:
            for future in as_completed(futures):
                done(future.result())
        except KeyboardInterrupt:       # the runs under way end; the others never start
            for future in futures:
                future.cancel()
            raise
    rows.sort(key=lambda r: r["run"])
    count = lambda key: dict(collections.Counter(str(r[key]) for r in rows).most_common())
    summary = {"runs": len(rows), "exit": count("exit"), "verdicts": count("verdict"),
               "internal_errors": sum(r["internal"] for r in rows),
               "runs_with_suite_faults": sum(bool(r["suite_faults"]) for r in rows),
               "error_verdicts": [f"run {r['run']} ({r['target']}): {r['reason']}" for r in rows
                                  if r["verdict"] == "error"],
               "wrong": [r["run"] for r in rows if r["wrong"]], "rows": rows}
    (keep / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nexit statuses: {summary['exit']}\nverdicts: {summary['verdicts']}\n"
          f"internal errors: {summary['internal_errors']} of {len(rows)} runs\n"
          f"runs with a requirement in error (a fault of the suite): {summary['runs_with_suite_faults']}")
    for line in summary["error_verdicts"]:
        print(f"  error verdict: {line}")
    print(f"wrong runs: {len(summary['wrong'])}" + (f" (kept under {keep}/run-<n>-<target>/)" if summary["wrong"]
                                                    else ""))
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
