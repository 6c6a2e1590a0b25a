"""Generated inputs are drawn once per seed (conformance/draw_cache.py): a warm run sends exactly what a cold one
sends, `--seed N` sends a run's inputs again, nothing of the target reaches the cache, a cache that is broken in
any way is passed over (the same inputs drawn afresh, never an error), hypothesis and schemathesis never run in
the suite's own process (what is drawn is drawn in the drawing process, which a run whose draws are all kept never
starts), and the shipped default draws are what the generators draw today."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance import draw_cache, generate
from conformance.api import certify
from conformance.outcomes import SuiteFault
from conformance.scenarios import fuzz, generated
from conformance.target import DEFAULT_SEED, from_server_facts
from conformance.vocab.fuzzing import PLAN
from tests.checks import make_draws
from tests.checks.support import checks_in

ROOT = Path(__file__).resolve().parents[2]
SEED = 4711


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    """An empty cache of the test's own; the shipped draws set aside, so every draw is made or read here."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(draw_cache, "_shipped", lambda: {})
    return tmp_path / "cache"


def _target(agent: str = "agt_draws", key: str = "ais_live_draws", seed: int = SEED):
    return SimpleNamespace(agent_id=agent, api_key=key, depth=1, seed=seed, secrets=(key,))


def every_input(target, operations=tuple(PLAN)) -> list:
    """What a run with this target draws, as its scenarios build it (unique keys numbered in order)."""
    counter = iter(range(100_000))
    out = []
    for name in operations:
        plan = fuzz.Plan(target, lambda label: f"{label}-{next(counter)}", tool="ask_draws")
        out += [(p.op, p.kind, p.label, repr(p.body), sorted(p.case.headers.items()), p.case.formatted_path)
                for p in fuzz.build_probes(name, plan, target.depth, target.seed)]
    return out + [generated.round_trip_texts(target.depth, target.seed),
                  generated.extra_params(target.depth, target.seed)]


def some_inputs(target) -> list:
    """The cheaper draws: every kind of draw (cases, texts, fields), the costly operations left out."""
    return every_input(target, ("metadata", "mcp"))


def test_a_warm_draw_is_the_cold_one_and_is_read_not_drawn(cache, monkeypatch):
    cold = every_input(_target())
    kept = sorted(cache.glob("draws/*.json"))
    assert len(kept) == 10                               # 2 per operation (metadata: 2 positive), texts, params
    monkeypatch.setattr(generate, "drawn", lambda *a: pytest.fail("drew although the draw was kept"))
    assert every_input(_target()) == cold


def test_the_target_never_reaches_the_cache(cache):
    secret_key, agent = "ais_live_S3CR3Tk3yN0tT0B3C4ch3d", "agt_0nlyTh1sT4rg3t"
    probes = every_input(_target(agent=agent, key=secret_key))
    assert any(agent in str(p) for p in probes) and any(secret_key in str(p) for p in probes[:-2])   # were sent
    for path in cache.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert secret_key not in text and agent not in text and "ask_draws" not in text, path
            assert "conf-" not in text                   # no unique key either


@pytest.mark.parametrize("damage", ["truncated", "not json", "another key", "edited value", "a directory"])
def test_a_damaged_entry_is_passed_over_and_drawn_again_the_same(cache, damage):
    cold = some_inputs(_target())
    files = sorted(cache.glob("draws/*.json"))
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8")
        if damage == "truncated":
            path.write_text(text[:len(text) // 2], encoding="utf-8")
        elif damage == "not json":
            path.write_bytes(b"\xff\xfe garbage")
        elif damage == "another key":
            path.write_text(files[i - 1].read_text(encoding="utf-8") if i else "{}", encoding="utf-8")
        elif damage == "edited value":
            entry = json.loads(text)
            entry["value"] = entry["value"].replace("a", "b", 1)
            path.write_text(json.dumps(entry), encoding="utf-8")
        else:
            path.unlink()
            path.mkdir()
    assert some_inputs(_target()) == cold


def test_an_unwritable_or_disabled_cache_draws_the_same_without_error(cache, monkeypatch, tmp_path):
    cold = some_inputs(_target())
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(blocked))
    assert some_inputs(_target()) == cold
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "")
    assert draw_cache.cache_dir() is None and some_inputs(_target()) == cold


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.delenv("CONFORMANCE_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert draw_cache.cache_dir() == tmp_path / "home" / ".cache" / "conformance"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")              # invalid by the XDG spec: ignored
    assert draw_cache.cache_dir() == tmp_path / "home" / ".cache" / "conformance"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert draw_cache.cache_dir() == tmp_path / "xdg" / "conformance"
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(tmp_path / "mine"))
    assert draw_cache.cache_dir() == tmp_path / "mine"


def test_the_least_recently_used_draws_go_beyond_the_cap(cache, monkeypatch):
    for seed in (1, 2, 3):
        generate.texts(8, seed)
    files = sorted(cache.glob("draws/*.json"), key=lambda p: p.stat().st_mtime_ns)
    os.utime(files[0], ns=(1, 1))                                        # the oldest read
    monkeypatch.setattr(draw_cache, "MAX_BYTES", sum(p.stat().st_size for p in files[1:]) + 10)
    generate.texts(8, 4)
    left = set(cache.glob("draws/*.json"))
    assert files[0] not in left and len(left) <= 3


WARM_RUN = """
import json, sys
from conformance.target import DEFAULT_SEED
from tests.checks.test_draw_cache import every_input, some_inputs, _target
seed = int(sys.argv[1])
(every_input if seed == DEFAULT_SEED else some_inputs)(_target(seed=seed))
from conformance import generate
print(json.dumps([generate._DRAWER._proc is not None, [m for m in ("hypothesis", "schemathesis") if m in sys.modules]]))
"""


def _drawing(seed: int, env: dict[str, str]) -> tuple[bool, list[str]]:
    """Whether drawing the inputs of a run started the drawing process, and which generators the drawing imported
    into the suite's own process."""
    out = subprocess.run([sys.executable, "-c", WARM_RUN, str(seed)], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, **env}, timeout=300)
    started, imported = json.loads(out.stdout.splitlines()[-1])
    return started, imported


def test_hypothesis_never_runs_in_the_suites_process_and_kept_draws_start_no_drawing_process(tmp_path):
    env = {"CONFORMANCE_CACHE_DIR": str(tmp_path)}
    assert _drawing(DEFAULT_SEED, env) == (False, [])                    # shipped: nothing drawn, even cold
    assert _drawing(SEED, env) == (True, [])                             # cold: drawn, in the drawing process
    assert _drawing(SEED, env) == (False, [])                            # warm


def test_a_draw_that_crashes_or_a_drawing_process_that_ends_is_a_fault_of_the_suite_and_the_next_draw_is_made():
    with pytest.raises(SuiteFault, match=r"drawing builtins:int crashed: ValueError: invalid literal"):
        generate.drawn(int, "not a number")
    with pytest.raises(SuiteFault, match=r"the drawing process ended while drawing \(exit status 3\)"):
        generate.drawn(os._exit, 3)
    assert generate.drawn(sorted, [3, 1, 2]) == [1, 2, 3]


def test_the_shipped_draws_are_a_fresh_generation():
    shipped = json.loads(make_draws.TARGET.read_text(encoding="utf-8"))
    stale = "conformance/draws.json is stale: run `python -m tests.checks.make_draws`"
    assert shipped["suite"] == draw_cache.suite_identity(), stale        # generators or schemas changed
    if shipped["libraries"] != draw_cache.library_versions():
        pytest.skip(f"drawn with {shipped['libraries']}, installed {draw_cache.library_versions()}: the "
                    f"shipped draws stay the default inputs of this suite version")
    assert make_draws.TARGET.read_text(encoding="utf-8") == make_draws.render(make_draws.build()), stale


def test_the_shipped_draws_are_what_a_default_run_reads(monkeypatch, tmp_path):
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", "")
    monkeypatch.setattr(generate, "drawn", lambda *a: pytest.fail("a default run drew"))
    assert every_input(_target(seed=DEFAULT_SEED))


# -- end to end: the requests a run sends ---------------------------------------------------------------------
def _requests_sent(report: dict) -> list[tuple]:
    """Every generated request of the run as recorded (method, URL, headers, body)."""
    doc = report["recording"]["document"]
    out = []
    for rec in doc["scenarios"]:
        if rec["scenario"].split(".")[0] not in ("fuzz", "generated"):
            continue
        for ex in rec["exchanges"]:
            headers = sorted(ex["request_headers"].items())
            out.append((rec["scenario"], json.dumps([ex["label"], ex["method"], ex["url"], headers,
                                                     ex["request_body"]])))
    return sorted(out)


def test_seed_n_sends_a_random_runs_inputs_again_and_a_warm_cache_sends_the_cold_ones(server, cache):
    checks = checks_in("fuzz") + checks_in("generated")
    explore = from_server_facts(server.facts, seed="random", run_tag="d1ce5eed")   # keys are made from the tag
    first = certify(explore, check_ids=checks, keep_recording=True)
    assert first["seed"] == explore.seed and explore.seed_source == "random"
    again = from_server_facts(server.facts, seed=explore.seed, run_tag=explore.run_tag)
    second = certify(again, check_ids=checks, keep_recording=True)
    sent = _requests_sent(first)
    assert len(sent) > 40     # the fuzz and generated scenarios send about 45 generated requests
    assert sent == _requests_sent(second)
