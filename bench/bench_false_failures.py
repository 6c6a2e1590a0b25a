"""False failures: certify the different-but-correct server (tests/selftest/variant.py) over random seeds.

    python bench/bench_false_failures.py [--runs 20]

Every run draws a new seed for the generated inputs. A correct server must pass every run: any requirement
failed, warned or in error is a false verdict of the suite. Prints one line per run and the count.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.api import certify  # noqa: E402
from conformance.server import ReferenceServer  # noqa: E402
from conformance.target import from_server_facts  # noqa: E402
from tests.selftest.variant import variant_config  # noqa: E402

WRONG = ("failed", "warning", "error")


def one_run() -> tuple[int, str, list[str], float]:
    t0 = time.monotonic()
    with ReferenceServer(variant_config()) as srv:
        report = certify(from_server_facts(srv.facts))
    wrong = [f"{r['id']}={r['status']}" for r in report["requirements"] if r["status"] in WRONG]
    return report["seed"], report["verdict"], wrong, time.monotonic() - t0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=20)
    runs = p.parse_args().runs
    false_runs = 0
    print(f"{'run':>3} {'seed':>10} {'seconds':>8}  verdict             false verdicts")
    for i in range(1, runs + 1):
        seed, verdict, wrong, secs = one_run()
        false_runs += bool(wrong)
        print(f"{i:>3} {seed:>10} {secs:>8.1f}  {verdict:<19} {', '.join(wrong) or '-'}", flush=True)
    print(f"\nfalse failures: {false_runs} of {runs} runs of a correct server had a failed, warned or error "
          f"requirement (reproduce one with --seed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
