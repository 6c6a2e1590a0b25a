"""No thread of a run iterates what another thread changes (issue 31: "RuntimeError: dictionary changed size during
iteration", a run's verdict `error` at random).

A run has threads from its first second: the recording lanes, the preloader importing the SDKs, the main thread
importing pytest and its plugins, workers sending generated cases. Every import adds to `sys.modules`; hypothesis
iterates `sys.modules` in Python when it matches a lambda's source (hypothesis/internal/lambda_sources.py), so a draw
in the suite's process could meet an import whatever lock the suite held. These tests make that meeting likely
(a thread adding and removing a module as fast as the interpreter switches) instead of waiting for it in a long loop.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance import engine, judging, registry, versions
from conformance.target import Target

ROOT = Path(__file__).resolve().parents[2]

# A process that draws generated cases afresh (nothing shipped, nothing kept) while a thread keeps changing
# `sys.modules` the way an import does; it prints what it drew and whether hypothesis ever ran in it.
DRAW_WHILE_IMPORTING = """
import json, sys, threading, time, types
from conformance import draw_cache, generate
draw_cache._shipped = lambda: {}
stop = threading.Event()

def importing():
    module = types.ModuleType("conformance_test_import")
    while not stop.is_set():
        sys.modules["conformance_test_import"] = module
        time.sleep(0)            # the other thread runs while sys.modules is one entry larger
        del sys.modules["conformance_test_import"]
        time.sleep(0)

sys.setswitchinterval(1e-5)
threading.Thread(target=importing, daemon=True).start()
try:
    placeholders = {"agentId": "agt_placeholder"}, {"Authorization": "Bearer placeholder"}
    drawn = [len(generate.cases(op, mode, 4, 7, *placeholders)) for op in ("invoke", "agui")
             for mode in ("positive", "negative")]
finally:
    stop.set()
print(json.dumps({"drawn": drawn, "hypothesis_here": "hypothesis" in sys.modules}))
"""


def test_a_draw_never_meets_an_import():
    out = subprocess.run([sys.executable, "-c", DRAW_WHILE_IMPORTING], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "CONFORMANCE_CACHE_DIR": ""}, timeout=600)
    assert "changed size during iteration" not in out.stderr, out.stderr[-3000:]
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert all(n > 0 for n in got["drawn"]), got
    assert got["hypothesis_here"] is False     # every draw was made in the drawing process, none in this one


def test_the_scenario_registry_is_complete_before_the_first_lane_starts():
    """The HTTP/2 twins are registered with the scenarios they twin (`registry.derive`), never while a run's lanes
    run or its checks are judged: nothing changes `registry.SCENARIOS` once a thread of the run could be reading it."""
    checks = registry.load_all()
    registered = dict(registry.SCENARIOS)
    assert all(versions.twin_name(s) in registered for s in versions.HTTP2_SCENARIOS if s in registered)
    core = [c for c in checks.values() if c.scenarios and set(c.scenarios) <= set(versions.HTTP2_SCENARIOS)][:3] \
        + [c for c in checks.values() if c.slow][:1]
    session = engine.Session(Target(base_url="https://127.0.0.1:1", agent_id="agt_nobody", api_key="k"), core)
    try:
        session.start()              # nothing listens there: the preflight fails, every check is judged on it
        for check in core:
            judging.assess(session, check)
    finally:
        session.close()
    assert registry.SCENARIOS == registered
