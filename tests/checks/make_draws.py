"""Writes conformance/draws.json: every input a default run draws (the default seed, depth 1), drawn afresh.

A default run then reads them instead of drawing (conformance/draw_cache.py), also on its very first run after an
install. `tests/checks/test_draw_cache.py` checks that the committed file is what this script writes today:

    python -m tests.checks.make_draws          # rewrite the file
    python -m tests.checks.make_draws --check  # exit 1 if the file is stale
"""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Iterator

from conformance import draw_cache
from conformance.scenarios import fuzz, generated
from conformance.target import DEFAULT_SEED
from conformance.vocab.fuzzing import PLAN

TARGET = draw_cache.SHIPPED
ABOUT = ("The inputs a default run of this suite version sends (seed of the suite version, depth 1), as drawn by "
         "hypothesis and schemathesis, read instead of drawing them again (conformance/draw_cache.py). Keys: "
         "draw_cache.shipped_key. Written by tests/checks/make_draws.py; do not edit by hand.")


@contextmanager
def fresh_draws(collected: dict[str, Any]) -> Iterator[None]:
    """Every draw made inside is drawn afresh (no shipped file, no cache) and collected under its shipped key."""
    remembered, shipped, before = draw_cache.remembered, draw_cache._shipped, os.environ.get("CONFORMANCE_CACHE_DIR")

    def collect(kind: str, params: dict[str, Any], seed: int, draw) -> Any:
        value = remembered(kind, params, seed, draw)
        collected[draw_cache.shipped_key(kind, params, seed)] = draw_cache.encoded(value)
        return value

    draw_cache.remembered, draw_cache._shipped = collect, lambda: {}
    os.environ["CONFORMANCE_CACHE_DIR"] = ""
    try:
        yield
    finally:
        draw_cache.remembered, draw_cache._shipped = remembered, shipped
        if before is None:
            os.environ.pop("CONFORMANCE_CACHE_DIR", None)
        else:
            os.environ["CONFORMANCE_CACHE_DIR"] = before


def build(seed: int = DEFAULT_SEED, depth: int = 1) -> dict[str, Any]:
    """The draws of a run with this seed and depth, as the scenarios make them (no server needed)."""
    target = SimpleNamespace(agent_id="agt_make", api_key="make", depth=depth, seed=seed, secrets=("make",))
    collected: dict[str, Any] = {}
    with fresh_draws(collected):
        for name in PLAN:
            fuzz.build_probes(name, fuzz.Plan(target, lambda label: label, tool="make"), depth, seed)
        generated.round_trip_texts(depth, seed)
        generated.extra_params(depth, seed)
    return collected


def render(draws: dict[str, Any]) -> str:
    """The file: one line per field, one line per draw (ASCII JSON, so lone surrogates survive)."""
    head = {"about": ABOUT, "format": draw_cache.FORMAT, "suite": draw_cache.suite_identity(),
            "libraries": draw_cache.library_versions()}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines += [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}," for k, v in sorted(draws.items())]
    lines[-1] = lines[-1].rstrip(",")
    return "{\n" + "\n".join(lines[:len(head)]) + '\n "draws": {\n' + "\n".join(lines[len(head):]) + "\n }\n}\n"


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        fresh = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print("fresh" if fresh else f"{TARGET} is stale: run `python -m tests.checks.make_draws`")
        return 0 if fresh else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({len(text)} bytes, {len(json.loads(text)['draws'])} draws)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
