"""`conformance run | serve | list` (names fixed by shared/design/runner-contract.md)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from conformance import __version__

USAGE = """usage: conformance {run,serve,list} [options]

  run     certify a server (no --base-url: the embedded reference server); pytest options pass through
  serve   run the reference server alone
  list    the requirement catalog with the checks that cover it
"""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "--version":
        print(__version__)
        return 0
    command, rest = argv[0], argv[1:]
    if command == "run":
        return run(rest)
    if command == "serve":
        from conformance.server import serve_main
        return serve_main(rest)
    if command == "list":
        return list_catalog(rest)
    print(f"conformance: unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


def run(args: list[str]) -> int:
    """pytest over the suite module, isolated from the caller's pytest configuration."""
    import pytest

    pytest_args = ["--pyargs", "conformance.test_suite", "-c", os.devnull, "--rootdir", os.getcwd(),
                   "-p", "no:cacheprovider", "--assert=plain", "-q", "-rfEs", "--tb=no", "-W", "ignore::DeprecationWarning"]
    if not any(a == "--report-dir" or a.startswith("--report-dir=") for a in args):
        pytest_args += ["--report-dir", "reports"]
    code = pytest.main(pytest_args + args)
    return int(code)


def list_catalog(args: list[str]) -> int:
    p = argparse.ArgumentParser(prog="conformance list")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--uncovered", action="store_true", help="only requirements no check covers")
    opts = p.parse_args(args)
    from conformance import catalog, registry

    cov = registry.coverage()
    reqs = catalog.load()
    rows = [{**r.as_dict(), "checks": cov.get(r.id, []),
             "coverage": ("unspecified" if not r.testable else "covered" if cov.get(r.id) else "uncovered")}
            for r in reqs.values()]
    if opts.uncovered:
        rows = [r for r in rows if r["coverage"] == "uncovered"]
    if opts.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for r in rows:
        checks = ", ".join(r["checks"]) or ("(supply: " + r.get("supply", "") + ")" if r["coverage"] == "unspecified" else "UNCOVERED")
        print(f"{r['id']:<16} {r['level']:<11} {r['section'][:60]:<60} {checks}")
    testable = [r for r in rows if r["coverage"] != "unspecified"]
    covered = sum(1 for r in testable if r["coverage"] == "covered")
    print(f"\n{len(rows)} requirements: {len(testable)} testable, {covered} covered, "
          f"{len(testable) - covered} uncovered, {len(rows) - len(testable)} unspecified")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
