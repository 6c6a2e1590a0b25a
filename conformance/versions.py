"""HTTP versions: how a check's two readings become one result, and what the report says of the versions. Which
rules are judged over HTTP/2 too and what the model leaves out is data, in `conformance.model.versions`.

Every scenario runs over HTTP/1.1. In the preflight one TLS handshake (no request) offers `h2` and `http/1.1` by
ALPN; when the target picks `h2`, each scenario of `HTTP2_SCENARIOS` runs a second time as its twin (`<name>@h2`)
on clients that offer HTTP/2. Those are the core scenarios (each protocol's answers and streams) and every scenario
whose rules read request or response headers: over HTTP/2 a header travels otherwise (lower-case names, HPACK,
`:authority` instead of `Host`, `:path`), and a server or proxy that treats the versions apart breaks a header rule
on one of them only. A twin sends every step of its scenario but those of `HTTP1_ONLY_STEPS`; the scenarios left
over HTTP/1.1 alone say why in `HTTP1_ONLY` (the rest: `UNTWINNED`). The twins are registered with the scenarios,
at import, so nothing is registered while a run records.

A check over twinned scenarios is judged on each version by the same code (`judge_twin`): one result, failed when
either version failed, its message naming the version it showed on (`json-plain_reply over HTTP/2 (over HTTP/1.1
it passed): …`) and its evidence that version's exchange (`< HTTP/2 200` in the transcript, `--http2` in its curl).
A fault that shows over one version only is one root (`one_root`): the other failures over that version alone on
the same operation, or the same exchange, are blocked by it; a protocol whose plain call over HTTP/2 alone is
refused gates its checks there (`PLAIN_CALLS_OVER_HTTP2`, read by `judging`). The report says per requirement which versions it was judged on, for
the run which versions were judged and why any exchange went over another (`summary`), all from the recording, so
`conformance rejudge` says the same. A target that offers only HTTP/1.1 costs nothing more: no twin runs.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import functools
from collections import Counter
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

from conformance import catalog
from conformance.outcomes import NotAssessed
from conformance.registry import CHECKS, SCENARIOS, Check, Scenario, derive, steps_used
from conformance.model.versions import (  # noqa: F401 (the model's data, read through this module too)
    TWIN, HTTP2_SCENARIOS, BODY_OVER_1MB, HTTP1_ONLY_STEPS, HTTP1_ONLY, UNTWINNED, PLAIN_CALLS_OVER_HTTP2)
from conformance.wire.http import HTTP1, HTTP2

#: the preflight's fact: whether the run speaks HTTP/2, and why (`decide`)
FACT = "http2"
#: what a result over one version becomes when the other version's is worse (the order they win in)
WORSE = ("failed", "error", "blocked")
#: statuses that judged something (a version is listed as judged only for them)
JUDGED = ("passed", "failed", "info")
#: statuses whose message is a finding: it names the version it showed on
FINDINGS = ("failed", "error", "blocked", "info")


def twin_name(scenario: str) -> str:
    return scenario + TWIN


def is_twin(scenario: str) -> bool:
    return scenario.endswith(TWIN)


def base_name(scenario: str) -> str:
    return scenario.removesuffix(TWIN)


def _twins(scn: Scenario) -> list[Scenario]:
    """The HTTP/2 twin of a scenario of `HTTP2_SCENARIOS`: the same function, steps and lane kind."""
    return [dataclasses.replace(scn, name=twin_name(scn.name))] if scn.name in HTTP2_SCENARIOS else []


derive(_twins)


def twins_of(scenarios: Iterable[str]) -> list[str]:
    """The twins of the scenarios among `scenarios` that run over HTTP/2 too."""
    return [twin_name(s) for s in sorted(set(scenarios)) if twin_name(s) in SCENARIOS]


def twin_check(check: Check) -> Check | None:
    """The check judged on the twins of its scenarios; None when it reads a scenario that runs over HTTP/1.1 only."""
    if not check.scenarios or not all(s in HTTP2_SCENARIOS for s in check.scenarios):
        return None
    return dataclasses.replace(check, scenarios=tuple(twin_name(s) for s in check.scenarios))


def why_untwinned(check: Check) -> str:
    """Why a check is read over HTTP/1.1 alone: the reason of its first scenario that runs over HTTP/1.1 only."""
    return next((HTTP1_ONLY.get(s, UNTWINNED) for s in check.scenarios if s not in HTTP2_SCENARIOS), UNTWINNED)


def left_out(scenario: str, label: str) -> str | None:
    """Why `scenario` does not send step `label` (or any of the family `label`) over its HTTP version, or None."""
    if not is_twin(scenario):
        return None
    for pattern, why in HTTP1_ONLY_STEPS.get(base_name(scenario), {}).items():
        if fnmatch.fnmatchcase(label, pattern) or label == pattern:
            return f"{label} is not sent over HTTP/2: {why}"
    return None


def decide(chosen: str | None, how: str, *, wanted: bool, needed: bool) -> dict[str, Any]:
    """The preflight's fact: speak HTTP/2 or not, in words (`chosen`, `how`: `Client.alpn_choice`'s answer)."""
    if not wanted:
        return {"spoken": False, "why": "not spoken: --no-http2"}
    if not needed:
        return {"spoken": False, "why": "not spoken: no selected check reads a scenario that runs over HTTP/2 too"}
    if chosen == "h2":
        return {"spoken": True, "alpn": chosen,
                "why": f"spoken: the scenarios of the core and of the header rules ran over HTTP/2 as well ({how})"}
    return {"spoken": False, "alpn": chosen, "why": f"not spoken: {how}"}


def spoken(source: Any) -> bool:
    """The run spoke HTTP/2 too (the preflight's fact, recorded)."""
    preflight = getattr(source, "preflight", None)
    return bool(((getattr(preflight, "facts", None) or {}).get(FACT) or {}).get("spoken"))


# -- judging ---------------------------------------------------------------------------------------------------
def judge_twin(source: Any, check: Check, first: Any, judge: Callable[[Any, Check], Any]) -> Any:
    """`first` (the check judged on its HTTP/1.1 recordings) merged with the check judged on its twins. Against a
    target that spoke HTTP/2, every finding names the version it showed on: a version's failure, error or blocked
    reading wins, in that order, its message saying what the other version gave; a check read over HTTP/1.1 alone
    says so. Each result lists the versions it was judged on (`http_versions`) and what it left out over HTTP/2."""
    first.http_versions = _judged_versions(source, check.scenarios, first)
    if not spoken(source):
        return first
    twin_ = twin_check(check)
    over_http1 = _version_of(source, check.scenarios, HTTP1)
    if twin_ is None:
        first.left_out = why_untwinned(check)
        return _over_one(first, over_http1, "not sent over HTTP/2")
    twins = [source.recording(s) for s in twin_.scenarios]
    missing = next((got for got in twins if _not_recorded(got)), None)
    if missing is not None:
        first.left_out = str(missing)
        return _over_one(first, over_http1, "not assessed over HTTP/2")
    second = judge(source, twin_)
    second.http_versions = _judged_versions(source, twin_.scenarios, second)
    merged = merge(first, second, (over_http1, _version_of(source, twin_.scenarios, HTTP2)))
    merged.left_out = (str(second.message) if second.status == "not_assessed" and first.status != "not_assessed"
                       else steps_left_out(check))
    return merged


def merge(first: Any, second: Any, over: tuple[str, str]) -> Any:
    """One result of a check judged over two versions (`over`: their names, HTTP/1.1's first)."""
    versions = tuple(sorted(set(first.http_versions) | set(second.http_versions)))
    took = first.duration + second.duration
    if first.status == second.status and first.status in FINDINGS:
        if _same(first.message, second.message):
            message = noted(first, f"over {over[0]} and {over[1]}")
        else:
            message = f"{noted(first, f'over {over[0]}')}; {noted(second, f'over {over[1]} as well')}"
        return dataclasses.replace(first, message=message, broke=first.broke + second.broke,
                                   evidence=[*first.evidence[:2], *second.evidence[:2]], duration=took,
                                   http_versions=versions)
    for worse in WORSE:
        for this, other, (mine, theirs) in ((first, second, over), (second, first, over[::-1])):
            if this.status == worse:
                alone = worse == "failed" and other.status in ("passed", "info")
                return dataclasses.replace(this, message=noted(this, f"over {mine} (over {theirs} it "
                                                                     f"{_said(other.status)})"),
                                           duration=took, http_versions=versions,
                                           version_only=(mine,) if alone else ())
    message = first.message
    if first.status == "info":     # what the server chose where the spec is open, and over which version
        message = noted(first, f"over {over[0]} (over {over[1]} it {_said(second.status)})")
    return dataclasses.replace(first, message=message, duration=took, http_versions=versions)


def _over_one(result: Any, version: str, why: str) -> Any:
    """A finding read over one version alone (the other not sent or not assessed) says so."""
    if result.status in FINDINGS:
        result.message = noted(result, f"over {version} ({why})")
    return result


def noted(result: Any, note: str) -> str:
    """The message with `note` (the versions) right after the step label it starts with, where every report shows
    it however much of the message it cuts; before the message when it starts with none."""
    message = str(result.message or "")
    label = (result.evidence[0].get("label") if result.evidence else "") or ""
    if label and message.startswith(f"{label}: "):
        return f"{label} {note}: {message[len(label) + 2:]}"
    return f"{note}: {message}" if message else note


def _not_recorded(got: Any) -> bool:
    """A twin scenario that was not run (HTTP/2 not spoken) or could not be (the run's deadline, a missing fact)."""
    return isinstance(got, NotAssessed)


def _exchanges(got: Any) -> list[Any]:
    rec = getattr(got, "recording", None) if isinstance(got, BaseException) else got
    return list(getattr(rec, "exchanges", None) or ())


def _scheme(source: Any) -> str:
    target = getattr(getattr(source, "preflight", None), "target", None)
    return urlsplit(getattr(target, "base_url", "") or "").scheme


def _negotiated(scheme: str, ex: Any) -> bool:
    """The exchange went to the target by the scheme of its base URL (`scheme`: over TLS for an https:// target, its
    version negotiated), not a probe of another scheme (the cleartext probe's http://)."""
    return not scheme or urlsplit(ex.url or "").scheme == scheme


def _answered(source: Any, outcomes: Iterable[Any]) -> set[str]:
    scheme = _scheme(source)
    return {ex.http_version for got in outcomes for ex in _exchanges(got)
            if ex.status is not None and ex.http_version and _negotiated(scheme, ex)}


def _judged_versions(source: Any, scenarios: Iterable[str], result: Any) -> tuple[str, ...]:
    """The versions a result was judged on: those of the answered exchanges of its recordings, when it judged."""
    if result.status not in JUDGED:
        return ()
    return tuple(sorted(_answered(source, (source.recording(s) for s in scenarios))))


def _version_of(source: Any, scenarios: Iterable[str], lane: str) -> str:
    """The version a side was read over, in words: its lane's, unless the server answered it over another."""
    return " and ".join(sorted(_answered(source, (source.recording(s) for s in scenarios)))) or lane


@functools.cache
def steps_left_out(check: Check) -> str:
    """What a twinned check reads over HTTP/1.1 alone (the steps its twins do not send) and why, or ''. The steps
    are those its code names (`registry.steps_used`); a check that names none (it reads every exchange) reads
    them all."""
    reads = steps_used(check.fn)
    whys = {f"{s} {pattern}: {why}" for s in check.scenarios for pattern, why in HTTP1_ONLY_STEPS.get(s, {}).items()
            if not reads or any(fnmatch.fnmatchcase(label, pattern) or label == pattern for label in reads)}
    return "; ".join(sorted(whys))


def _same(a: str, b: str) -> bool:
    return a.split(" (", 1)[0] == b.split(" (", 1)[0]


def _said(status: str) -> str:
    return {"passed": "passed", "not_assessed": "was not assessed", "info": "was only observed",
            "blocked": "was blocked", "error": "met a fault of the suite", "failed": "failed"}.get(status, status)


# -- one root --------------------------------------------------------------------------------------------------
def one_root(results: list[Any]) -> list[Any]:
    """A fault that shows over one HTTP version only is one failure. The failures over one version alone (the other
    version passed) on one operation (invoke, AG-UI, MCP, the metadata), or naming a common exchange, are one group:
    the server answers that operation apart over that version. Its root is the strictest requirement among them
    (then the one whose check named the most exchanges, then the first by id); every other check of the group is
    blocked by it, its own message kept."""
    out = list(results)
    levels = {r.id: r.level for r in catalog.load().values()}
    strict = lambda rid: {"MUST": 3, "SHOULD": 2, "MAY": 1}.get(levels.get(rid, ""), 0)
    members = [i for i, r in enumerate(out) if r.status == "failed" and r.version_only]
    keys = lambda i: {*(("exchange", *named) for named in out[i].broke),
                      *(("operation", out[i].version_only[0], op) for op in out[i].version_only[1:])}
    rank = lambda i: (-max(map(strict, out[i].requirements)), -len(set(out[i].broke)), sorted(out[i].requirements))
    for group in _connected(members, keys):
        lead = out[min(group, key=rank)]
        root = min(lead.requirements, key=lambda rid: (-strict(rid), rid))
        version, where = lead.version_only[0], " and ".join(lead.version_only[1:]) or "the same exchange"
        for i in group:
            if root not in out[i].requirements:
                out[i] = dataclasses.replace(out[i], status="blocked", blocked_by=root, message=(
                    f"{out[i].message} (one fault over {version} alone, on {where} as {root}'s: reported there)"))
    return out


def _connected(items: list[int], keys: Callable[[int], set]) -> list[list[int]]:
    """`items` grouped so that two share a group when their keys meet (directly or through others)."""
    groups: list[tuple[list[int], set]] = []
    for item in items:
        mine = keys(item)
        meeting = [g for g in groups if g[1] & mine]
        merged = ([item] + [i for g in meeting for i in g[0]], mine.union(*(g[1] for g in meeting)))
        groups = [g for g in groups if not any(g is m for m in meeting)] + [merged]
    return [sorted(g[0]) for g in groups if len(g[0]) > 1]


# -- the report ------------------------------------------------------------------------------------------------
def summary(source: Any, results: Iterable[Any]) -> dict[str, Any]:
    """The versions the run judged (those its checks were judged on), the answered exchanges by version, whether
    HTTP/2 was spoken and why, why any exchange went over a version other than its client's (`other`), and what the
    version model leaves out (`left_out`): from the recordings (the live session's or a kept one), so a re-judged
    report says the same."""
    results = list(results)
    names = {s for r in results if r.check in CHECKS for s in CHECKS[r.check].scenarios}
    names |= {twin_name(s) for s in names if s in HTTP2_SCENARIOS}
    counts: Counter[str] = Counter()
    other: list[dict[str, Any]] = []
    for name, got in [("preflight", source.preflight), *((n, _recorded(source, n)) for n in sorted(names))]:
        for ex in _exchanges(got):
            if ex.status is None or not ex.http_version:
                continue
            counts[ex.http_version] += 1
            why = off_version(source, name, ex)
            if why:
                other.append({"scenario": name, "label": ex.label, "http_version": ex.http_version, "why": why})
    fact = source.preflight.facts.get(FACT) or {}
    return {"judged": sorted({v for r in results for v in getattr(r, "http_versions", ())}),
            "exchanges": dict(sorted(counts.items())), "http2": fact.get("why", "not spoken"), "other": other,
            "left_out": model_left_out({base_name(n) for n in names})}


def off_version(source: Any, scenario: str, ex: Any) -> str | None:
    """Why an answered exchange went over a version other than the one its client negotiated, or None."""
    if not _negotiated(_scheme(source), ex):
        return (f"sent over plain {urlsplit(ex.url).scheme}:// on purpose (the cleartext probe of an https:// target): "
                f"no TLS, so no ALPN; the target answered in {ex.http_version}. Judged only as that probe, not as "
                f"a version the service speaks")
    asked = HTTP2 if is_twin(scenario) else HTTP1
    if ex.http_version == asked:
        return None
    if asked == HTTP2 and ex.http_version == HTTP1:
        return ("offered h2 and http/1.1 by ALPN on its connection, the target picked http/1.1 there (it picked h2 "
                "in the preflight's handshake): judged as HTTP/1.1")
    return f"sent over {asked}; the target answered in {ex.http_version}"


def model_left_out(scenarios: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """What the version model runs over HTTP/1.1 alone, among `scenarios` (None: all), grouped by why."""
    names = sorted(SCENARIOS if scenarios is None else scenarios)
    by_why: dict[str, list[str]] = {}
    for name in names:
        if is_twin(name) or name not in SCENARIOS:
            continue
        if name in HTTP2_SCENARIOS:
            for pattern, why in HTTP1_ONLY_STEPS.get(name, {}).items():
                by_why.setdefault(why, []).append(f"{name} {pattern}")
        else:
            by_why.setdefault(HTTP1_ONLY.get(name, UNTWINNED), []).append(name)
    return [{"what": what, "why": why} for why, what in by_why.items()]


def of_requirement(requirement: str) -> dict[str, Any]:
    """What the model judges a requirement on against a target that offers HTTP/2 (`conformance list`): the
    versions, and why any of its checks (or the steps they read) stay over HTTP/1.1."""
    versions, whys = {HTTP1}, set()
    covering = [c for c in CHECKS.values() if requirement in c.requirements]
    for c in [c for c in covering if not c.supplementary] or covering:   # a scripted check's pass is what counts
        if twin_check(c) is None:
            whys.add(f"{c.id}: {why_untwinned(c)}")
            continue
        reads = steps_used(c.fn)
        if not reads or not all(any(left_out(twin_name(s), label) for s in c.scenarios) for label in reads):
            versions.add(HTTP2)
        if steps_left_out(c):
            whys.add(f"{c.id}: {steps_left_out(c)}")
    return {"http_versions": sorted(versions), "http2_left_out": sorted(whys)}


def _recorded(source: Any, name: str) -> Any:
    try:
        return source.recording(name)
    except Exception:        # a recorder cancelled by an interrupted run: nothing of it was judged
        return None
