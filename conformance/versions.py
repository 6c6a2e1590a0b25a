"""HTTP versions: the core scenarios recorded over HTTP/2 as well, when the target offers it by ALPN.

Every scenario runs over HTTP/1.1. In the preflight one TLS handshake (no request) offers `h2` and `http/1.1` by
ALPN; when the target picks `h2`, each scenario of `HTTP2_SCENARIOS` runs a second time as its twin
(`<name>@h2`, registered with the scenarios, at import) on clients that offer HTTP/2, and every check that reads core scenarios alone is judged on the twins
too, by the same code (`judge_twin`): one result per check, failed when either version failed, its message saying
on which version the failure showed and its evidence that version's exchange (whose curl carries `--http2`). A
target that offers only HTTP/1.1 costs nothing more and loses nothing: the twins are not run. The report says
which versions were judged (`summary`), from the recording alone, so `conformance rejudge` says the same.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Callable, Iterable

from conformance.outcomes import NotAssessed
from conformance.registry import CHECKS, SCENARIOS, Check, Scenario, derive
from conformance.wire.http import HTTP1, HTTP2

TWIN = "@h2"
#: the core scenarios, recorded over HTTP/2 too, and what each brings to it. Not the refusals of
#: a body over 1 MB: httpcore's HTTP/2 sends the whole body before it reads an answer, so a server that refuses early
#: (as it may, RFC 9113 §8.1) could not be recorded
HTTP2_SCENARIOS: dict[str, str] = {
    "invoke.runs": "invoke as JSON and as a stream, for every kind of run (text, tool call, step, failures)",
    "invoke.timing": "an invoke stream delivered as it is produced, not buffered until the end",
    "agui.plain": "the plain AG-UI stream",
    "agui.silence": "the 16 s AG-UI silence with its `: ping` comments",
    "mcp.modern": "MCP server/discover, tools/list and tools/call answered as JSON",
    "mcp.progress": "the MCP progress stream",
    "mcp.refusals": "MCP's refusals: versions and headers that do not match the body (header names are lower case "
                    "on HTTP/2)",
    "metadata.document": "the sign-in metadata document",
    "access.mcp": "MCP's credential refusals, each a 401 with its WWW-Authenticate challenge (or a 404)",
    "metadata.challenge": "the MCP 401 challenge and the metadata it names",
}
#: the preflight's fact: whether the run speaks HTTP/2, and why (`decide`)
FACT = "http2"
#: what a result over one version becomes when the other version's is worse (the order they win in)
WORSE = ("failed", "error", "blocked")


def twin_name(scenario: str) -> str:
    return scenario + TWIN


def is_twin(scenario: str) -> bool:
    return scenario.endswith(TWIN)


def _twins(scn: Scenario) -> list[Scenario]:
    """The HTTP/2 twin of a core scenario: the same function, steps and lane kind."""
    return [dataclasses.replace(scn, name=twin_name(scn.name))] if scn.name in HTTP2_SCENARIOS else []


derive(_twins)     # once, with the scenarios: nothing registers while a run records


def twins_of(scenarios: Iterable[str]) -> list[str]:
    """The twins of the core scenarios among `scenarios`."""
    return [twin_name(s) for s in sorted(set(scenarios)) if twin_name(s) in SCENARIOS]


def twin_check(check: Check) -> Check | None:
    """The check judged on the twins of its scenarios; None when it reads a scenario that runs over HTTP/1.1 only."""
    if not check.scenarios or not all(s in HTTP2_SCENARIOS for s in check.scenarios):
        return None
    return dataclasses.replace(check, scenarios=tuple(twin_name(s) for s in check.scenarios))


def decide(chosen: str | None, how: str, *, wanted: bool, needed: bool) -> dict[str, Any]:
    """The preflight's fact: speak HTTP/2 or not, in words (`chosen`, `how`: `Client.alpn_choice`'s answer)."""
    if not wanted:
        return {"spoken": False, "why": "not spoken: --no-http2"}
    if not needed:
        return {"spoken": False, "why": "not spoken: no selected check reads a scenario that runs over HTTP/2 too"}
    if chosen == "h2":
        return {"spoken": True, "alpn": chosen, "why": f"spoken: the core scenarios ran over HTTP/2 as well ({how})"}
    return {"spoken": False, "alpn": chosen, "why": f"not spoken: {how}"}


# -- judging ---------------------------------------------------------------------------------------------------
def judge_twin(source: Any, check: Check, first: Any, judge: Callable[[Any, Check], Any]) -> Any:
    """`first` (the check judged on its HTTP/1.1 recordings) merged with the check judged on its twins, when they
    were recorded; unchanged otherwise. A version's failure, error or blocked reading wins, in that order; the
    message says over which version it showed and what the other version gave."""
    twin_ = twin_check(check)
    if twin_ is None:
        return first
    twins = [source.recording(s) for s in twin_.scenarios]
    if any(_not_recorded(got) for got in twins):
        return first
    second = judge(source, twin_)
    over = (_spoken(source.recording(s) for s in check.scenarios) or HTTP1, _spoken(twins) or HTTP2)
    if first.status == "failed" and second.status == "failed":
        both = (f" (over {over[0]} and over {over[1]})" if _same(first.message, second.message) else
                f" (over {over[0]}; over {over[1]} as well: {second.message})")
        return dataclasses.replace(first, message=first.message + both, broke=first.broke + second.broke,
                                   evidence=[*first.evidence[:2], *second.evidence[:2]],
                                   duration=first.duration + second.duration)
    for worse in WORSE:
        for this, other, (mine, theirs) in ((first, second, over), (second, first, over[::-1])):
            if this.status == worse:
                return dataclasses.replace(this, message=f"{this.message} (over {mine}; over {theirs} it "
                                                         f"{_said(other.status)})",
                                           duration=first.duration + second.duration)
    return dataclasses.replace(first, duration=first.duration + second.duration)


def _not_recorded(got: Any) -> bool:
    """A twin scenario that was not run (HTTP/2 not spoken) or could not be (the run's deadline, a missing fact)."""
    return isinstance(got, NotAssessed)


def _exchanges(got: Any) -> list[Any]:
    rec = getattr(got, "recording", None) if isinstance(got, BaseException) else got
    return list(getattr(rec, "exchanges", None) or ())


def _spoken(outcomes: Iterable[Any]) -> str:
    """The versions the answered exchanges of these outcomes went over, in words."""
    return " and ".join(sorted({ex.http_version for got in outcomes for ex in _exchanges(got)
                                if ex.status is not None and ex.http_version}))


def _same(a: str, b: str) -> bool:
    return a.split(" (", 1)[0] == b.split(" (", 1)[0]


def _said(status: str) -> str:
    return {"passed": "passed", "not_assessed": "was not assessed", "info": "was only observed",
            "blocked": "was blocked", "error": "met a fault of the suite", "failed": "failed"}.get(status, status)


# -- the report ------------------------------------------------------------------------------------------------
def summary(source: Any, check_ids: Iterable[str]) -> dict[str, Any]:
    """Which HTTP versions the judged checks read, and how many answered exchanges each: from the recordings (the
    live session's or a kept one), so a re-judged report says the same."""
    names = {s for cid in check_ids if cid in CHECKS for s in CHECKS[cid].scenarios}
    names |= {twin_name(s) for s in names if s in HTTP2_SCENARIOS}
    counts: Counter[str] = Counter()
    outcomes = [source.preflight, *(_recorded(source, n) for n in sorted(names))]
    for got in outcomes:
        counts.update(ex.http_version for ex in _exchanges(got) if ex.status is not None and ex.http_version)
    fact = source.preflight.facts.get(FACT) or {}
    return {"judged": sorted(counts), "exchanges": dict(sorted(counts.items())),
            "http2": fact.get("why", "not spoken")}


def _recorded(source: Any, name: str) -> Any:
    try:
        return source.recording(name)
    except Exception:        # a recorder cancelled by an interrupted run: nothing of it was judged
        return None

