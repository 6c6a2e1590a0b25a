"""Every broken server of the zoo is caught on the requirement it breaks; every covered MUST has one.

One case per broken server: start the reference server with its deviation, certify
it on that requirement alone (only the checks that cover it: fast ones first, the
slow ones only when the fast ones did not catch it, and a ``--thorough`` run only when
the requirement was not assessed without it), and expect the requirement's
row to be ``failed`` (MUST), ``warning`` (SHOULD) or ``info`` (MAY). Each report is also judged again from
its recording, in memory and without the server (``conformance rejudge``'s code): the statuses and the verdict
must be the same. The rows go to ``reports/selftest-zoo.md`` (see conftest.py).
"""
from __future__ import annotations

import dataclasses
import secrets
import time

import pytest

from conformance import catalog, registry
from conformance.api import certify
from conformance.rejudge import verify
from conformance.report import FAIL_AS
from conformance.server import ReferenceServer
from conformance.target import Profile, Timeouts, from_server_facts
from tests.selftest.resend import resend_failures
from tests.selftest.tables import record_result
from tests.selftest.zoo import Broken, load_zoo

ZOO = load_zoo()
# Bounded exchanges: a broken server that hangs costs seconds, not minutes (the silence scenario needs > 16 s idle).
ZOO_SEED = 1   # a broken server caught only through generated inputs is caught under this seed every time
ZOO_TIMEOUTS = Timeouts(connect=5.0, headers=20.0, idle=25.0, request=45.0)


def covering_checks(requirement: str) -> list[registry.Check]:
    return [c for c in registry.load_all().values() if requirement in c.requirements]


def exploration() -> set[str]:
    """The scenarios that explore the space beyond the scripted ones: the sequences model's chains, overlaps, long runs
    and history, and the silences at every position (agui.silence, silent before the first output, is scripted)."""
    from conformance.vocab import sequences, silences
    return (set(sequences.CHAINS) | {s.scenario for s in silences.SILENCES.values()}) - {"agui.silence"}


def passes_without(b: Broken, scenarios: set[str], what: str) -> None:
    """The other half of a conditional server's proof: certified on its requirement by every check covering it but
    those over `scenarios` (`what` they are), it passes."""
    ids = [c.id for c in covering_checks(b.breaks) if not set(c.scenarios) & scenarios]
    assert ids, f"{b.name}: no check covers {b.breaks} without {what}"
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS), seed=ZOO_SEED)
        row = row_of(certify(target, check_ids=ids), b.breaks)
    assert row["status"] == "passed", (f"{b.name} ({b.doc}) is already caught without {what}, so it is no "
                                       f"conditional server: {b.breaks} {row['status']}: {row.get('message', '')[:400]}")


def check_rounds(requirement: str) -> list[list[str]]:
    """The checks to run, cheapest first: fast ones, then (only if needed) those with slow scenarios, with the rules
    over every exchange again (they judge whatever was recorded, the slow scenarios' calls too)."""
    checks = covering_checks(requirement)
    fast = [c.id for c in checks if not c.slow]
    slow = [c.id for c in checks if c.slow] + [c.id for c in checks if c.every and not c.slow]
    return [r for r in (fast, slow) if r]


def row_of(report: dict, requirement: str) -> dict:
    for row in report["requirements"]:
        if row["id"] == requirement:
            return row
    raise AssertionError(f"the report has no row for {requirement}")


def cause_of(report: dict, requirement: str) -> str:
    """'check' when a check judged the server wrong; 'scenario' when a scenario could not continue."""
    failing = [c for c in report["checks"] if requirement in c["requirements"] and c["status"] in ("failed", "error")]
    if failing and all(str(c.get("message", "")).startswith("scenario ") for c in failing):
        return "scenario"
    return "check" if failing else ""


def judge(b: Broken) -> dict:
    """Runs the broken server and returns what the suite said about its requirement."""
    level = catalog.load()[b.breaks].level
    expected = FAIL_AS.get(level, "failed")
    rounds = check_rounds(b.breaks)
    out = {"breaks": b.breaks, "level": level, "expected": expected, "status": "not_assessed",
           "message": f"uncovered: no check covers {b.breaks}", "caught": False, "cause": "", "rounds": 0,
           "rejudged": []}
    with ReferenceServer(b.server_config()) as srv:
        target = from_server_facts(srv.facts, profile=Profile(timeouts=ZOO_TIMEOUTS), seed=ZOO_SEED)
        every = any(c.every for c in covering_checks(b.breaks))
        for ids in rounds + [[] for _ in rounds[-1:]] + ([None] if every else []):
            if ids == []:  # checks that only a --thorough run assesses (e.g. the ping repeating)
                if out["status"] != "not_assessed" or "--thorough" not in out["message"]:
                    continue
                target, ids = dataclasses.replace(target, thorough=True), [c.id for c in covering_checks(b.breaks)]
            # None, last resort: a whole default run, whose every exchange its rules over every exchange read (a
            # fault gated on a form that only some scenario's requests carry)
            # each round a run of its own (a fresh run tag, so fresh keys): a round's sessions are not the last round's,
            # whose runs a key's count would otherwise read as runs of another key
            target = dataclasses.replace(target, run_tag=secrets.token_hex(4))
            report = certify(dataclasses.replace(target, thorough=False) if ids is None else target, check_ids=ids,
                             keep_recording=True)
            document = report.pop("recording")["document"]
            out["rejudged"] += verify(report, document).differences
            row = row_of(report, b.breaks)
            out.update(status=row["status"], message=row.get("message", ""), rounds=out["rounds"] + 1,
                       verdict=report["verdict"], requests=report.get("cost", {}).get("requests"))
            if row["status"] == expected:
                out.update(caught=True, cause=cause_of(report, b.breaks))
                out["resent"] = [dataclasses.asdict(r) for r in resend_failures(report, document, target) if not r.ok]
                break
    return out


@pytest.mark.parametrize("name", sorted(ZOO))
def test_broken_server_is_caught(name: str) -> None:
    b = ZOO[name]
    t0 = time.time()
    try:
        got = judge(b)
    except Exception as exc:
        record_result("zoo", name, {"breaks": b.breaks, "caught": False, "status": "error",
                                    "message": f"{type(exc).__name__}: {exc}", "seconds": time.time() - t0,
                                    "t_start": t0, "t_end": time.time()})
        raise
    t1 = time.time()
    record_result("zoo", name, {**got, "doc": b.doc, "seconds": t1 - t0, "t_start": t0, "t_end": t1})
    assert got["caught"], (
        f"broken server {name} ({b.doc}) was not caught on {b.breaks} [{got['level']}]: expected status "
        f"{got['expected']!r}, got {got['status']!r}: {got['message'][:600]}")
    assert not got["rejudged"], f"judged again from its recording, {name}'s report differs: {got['rejudged']}"
    assert not got.get("resent"), (f"{name}: re-sent, the first evidence of a failed MUST did not show the deviation "
                                   f"again: {got['resent']}")


def test_every_broken_server_names_a_testable_requirement() -> None:
    reqs = catalog.load()
    bad = [f"{b.name} -> {b.breaks}" for b in ZOO.values() if b.breaks not in reqs or not reqs[b.breaks].testable]
    assert not bad, "broken servers naming unknown or UNSPECIFIED requirements: " + ", ".join(bad)


def test_every_covered_must_has_a_broken_server() -> None:
    reqs = catalog.load()
    covered = {rid for rid, checks in registry.coverage().items() if checks}
    broken_for = {b.breaks for b in ZOO.values()}
    missing = sorted(rid for rid in covered if reqs[rid].level == "MUST" and rid not in broken_for)
    assert not missing, (f"{len(missing)} covered MUST requirements have no broken server in the zoo "
                         f"(tests/selftest/zoo_*.py): " + ", ".join(missing))
