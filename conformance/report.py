"""From check results to requirement statuses, the verdict, and report.json.

MUST failed → failed; SHOULD failed → warning; MAY failed → info. A requirement's
status is the conjunction of its checks: passed only when every check that applies
passed; partly assessed is not assessed; a suite fault is `error`, never `failed`.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import types
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from conformance import __version__, catalog, coverage, exchange_rules, registry, versions
from conformance.baseline import Baseline  # noqa: F401 (re-exported)
from conformance.judging import CheckResult
from conformance.model.dimensions import OPERATIONS
from conformance.options import ExitStatus
from conformance.vocab import inputs, silences

FAIL_AS = {"MUST": "failed", "SHOULD": "warning", "MAY": "info"}
UNCOVERED = "uncovered: no check covers this requirement"
NOT_JUDGED = "not judged: the run stopped before judging (see verdict_reason)"
EXIT = {"conformant": ExitStatus.OK, "conformant-partial": ExitStatus.OK, "non-conformant": ExitStatus.NON_CONFORMANT,
        "error": ExitStatus.ERROR}


def suite_identity() -> dict[str, str]:
    """What judged a run: the suite's version, the spec revision its catalog follows, and the catalog's digest
    (`catalog.digest`). Every report and `conformance --version` carry the same three."""
    return {"version": __version__, "spec_revision": catalog.SPEC_REVISION, "catalog_digest": catalog.digest()}


def utc_timestamp(when: datetime | None = None) -> str:
    """ISO 8601 in UTC to the second: `2026-11-24T10:10:18Z`."""
    when = when or datetime.now(timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _lines(results: Iterable[CheckResult]) -> str:
    return "; ".join(f"{r.check}: {r.message}" if r.message else r.check for r in results)


def _status_of(level: str, got: list[CheckResult], unrun: list[str]) -> tuple[str, str]:
    """A requirement's status is the conjunction of its evidence.

    Failed if any check failed; error if a check met a suite fault; passed only if every primary check
    passed (supplementary checks, over all traffic or generated inputs, fail a requirement but never pass
    it alone). Partly assessed is not assessed, saying what was seen; so is a check blocked by the failure of
    a more basic requirement. Info never satisfies a MUST."""
    by = {s: [r for r in got if r.status == s] for s in ("failed", "error", "passed", "info", "not_assessed", "blocked")}
    if by["failed"]:
        return FAIL_AS[level], _lines(by["failed"])
    if by["error"]:
        return "error", _lines(by["error"])
    primary = lambda rs: [r for r in rs if not r.supplementary]
    missing = [*(f"{r.check}: blocked by {r.blocked_by}: {r.message}" for r in by["blocked"]),
               *(f"{r.check}: {r.message}" for r in primary(by["not_assessed"])), *unrun]
    if level == "MUST":
        missing += [f"{r.check}: only observed, which never satisfies a MUST ({r.message})" for r in by["info"]]
    passed = primary(by["passed"])
    if missing:
        seen = passed + ([] if level == "MUST" else by["info"])
        prefix = f"partly assessed ({_lines(seen)} passed); not assessed: " if seen else ""
        return "not_assessed", prefix + "; ".join(missing)
    if by["info"]:
        return "info", _lines(by["info"])
    if not passed:
        return "not_assessed", "only supplementary evidence was seen: " + _lines(by["passed"] + by["not_assessed"])
    return "passed", _lines(r for r in by["passed"] if r.message)


def _is_supplementary(check_id: str) -> bool:
    c = registry.CHECKS.get(check_id)
    return bool(c and c.supplementary)


def _leads(result: CheckResult) -> tuple[bool, bool, bool]:
    """The order a requirement's checks are told in, so its message and its first evidence are the same check's:
    one that named the exchange that broke the rule first, a scripted check before a supplementary or generated
    one."""
    return not result.broke, result.supplementary, result.check.startswith("fuzz.")


def resolve_blocked(results: list[CheckResult], covered: Container[str] | None = None) -> list[CheckResult]:
    """A check stays blocked by ROOT only when ROOT failed in this run at a level at least as strict as the check's
    own (a MUST holds anything; a SHOULD holds SHOULDs and MAYs), or is itself blocked by one that did: then the
    run reports ROOT, and this requirement cannot be read on what broke it. When ROOT did not fail because none of
    its checks read the exchange, and a reader said that exchange broke it (`precondition`, whose message is ROOT's),
    ROOT fails by that reading (when ROOT is as strict, one of its checks ran: `covered`, and ROOT is not the status
    or form of an answer, a basic rule over every exchange: a call that ROOT's own checks saw served elsewhere was
    refused for what the check varied): one deviation, on the requirement it broke. A check of ROOT's own that named
    the same exchange blocked by a deeper failure holds it instead: ROOT could not be read there either, and the run
    reports that failure. Otherwise nothing else reports what the exchange broke as strictly, so the check fails with
    its own message: a precondition never lets a broken server pass, nor turns a failed MUST into a warning. A fault
    shown over one HTTP version alone is made one root first (`versions.one_root`)."""
    results = versions.one_root(results)
    reqs = catalog.load()
    strictness = {"MUST": 3, "SHOULD": 2, "MAY": 1}

    def level(rids: Iterable[str]) -> int:
        return max((strictness.get(reqs[rid].level, 0) for rid in rids if rid in reqs), default=0)

    failed: dict[str, int] = {}

    def count_failures() -> None:
        for r in results:
            if r.status == "failed":
                for rid in r.requirements:
                    failed[rid] = max(failed.get(rid, 0), level([rid]))
    count_failures()
    gates = exchange_rules.basic_requirements()

    def fails_by_reading(r: CheckResult) -> bool:
        return r.status == "blocked" and r.precondition and r.blocked_by in reqs \
            and (covered is None or r.blocked_by in covered) and r.blocked_by not in failed \
            and r.blocked_by not in gates and level([r.blocked_by]) >= level(r.requirements) > 0

    fails = set(failed) | {r.blocked_by for r in results if fails_by_reading(r)}
    # ROOT's own checks that could not read an exchange either, blocked by a failure of this run: ROOT rests on it
    held: dict[str, set[tuple[str, str]]] = {}
    for r in results:
        if r.status == "blocked" and r.blocked_by in fails:
            for rid in r.requirements:
                if rid != r.blocked_by:
                    held.setdefault(rid, set()).update(r.broke)
    # supplementary: a reading by another requirement's check, never one of ROOT's own
    results = results + [
        dataclasses.replace(r, status="failed", requirements=(r.blocked_by,), blocked_by=None, precondition=False,
                            supplementary=True, message=f"{r.message} (read by {r.check}: no check of {r.blocked_by} "
                                                        f"read this exchange)")
        for r in results if fails_by_reading(r) and not held.get(r.blocked_by, set()) & set(r.broke)]
    count_failures()
    roots_of: dict[str, set[str]] = {}
    for r in results:
        if r.status == "blocked":
            for rid in r.requirements:
                roots_of.setdefault(rid, set()).add(r.blocked_by)

    def holds(root: str, at: int, seen: frozenset[str] = frozenset()) -> bool:
        return failed.get(root, 0) >= at > 0 or (
            root not in seen and any(holds(up, at, seen | {root}) for up in roots_of.get(root, ())))

    return [r if r.status != "blocked" or holds(r.blocked_by, max(level(r.requirements), 1)) else
            dataclasses.replace(r, status="failed", blocked_by=None,
                                message=f"{r.message} (what this exchange breaks, {r.blocked_by}, did not fail in this "
                                        f"run, so the failure is reported here)")
            for r in results]


def checked(coverage: dict[str, list[str]]) -> set[str]:
    """The requirements one of the run's checks judges."""
    return {rid for rid, checks in coverage.items() if checks}


def requirement_rows(results: Iterable[CheckResult], coverage: dict[str, list[str]],
                     not_run: dict[str, str], baseline: Baseline = Baseline()) -> list[dict[str, Any]]:
    results = resolve_blocked(list(results), checked(coverage))
    by_req: dict[str, list[CheckResult]] = {}
    for r in results:
        for rid in r.requirements:
            by_req.setdefault(rid, []).append(r)
    rows = []
    for rid, req in catalog.load().items():
        if not req.testable:
            continue
        checks = coverage.get(rid, [])
        got = sorted(by_req.get(rid, []), key=_leads)
        row = {"id": rid, "level": req.level, "section": req.section, "checks": checks,
               "quote": req.quote}
        if not checks:
            row.update(status="not_assessed", message=UNCOVERED)
        else:
            judged = {r.check for r in got}
            unrun = [f"{c}: {not_run.get(c, 'not run')}" for c in checks
                     if c not in judged and not _is_supplementary(c)]
            status, message = _status_of(req.level, got, unrun)
            row.update(status=status, message=message or "")
            classes = sorted({c for r in got for c in r.input_classes if rid in inputs.CLASSES[c].applies})
            if classes:
                row["input_classes"] = classes
            histories = sorted({h for r in got for h in r.histories})
            if histories:
                row["histories"] = histories
            silent = sorted({n for r in got for n in r.silences if rid in silences.SILENCES[n].judged})
            if silent:
                row["silences"] = silent
                row["silences_left_out"] = silences.left_out_for(rid)
            judged_on = sorted({v for r in got for v in r.http_versions})
            if judged_on:
                row["http_versions"] = judged_on
            left_out = sorted({f"{r.check}: {r.left_out}" for r in got if r.left_out and not r.supplementary})
            if left_out:
                row["http2_left_out"] = left_out
            roots = sorted({r.blocked_by for r in got if r.status == "blocked"})
            if roots and status == "not_assessed":
                row["blocked_by"] = roots
            shown = {"failed": 0, "error": 1, "blocked": 2, "info": 3}
            evidence = [e for r in sorted(got, key=lambda r: shown.get(r.status, 9)) if r.status in shown
                        for e in r.evidence]
            evidence.sort(key=lambda e: not e.get("broke"))   # the exchanges that broke a rule first
            if status != "passed" and evidence:
                row["evidence"] = evidence
        if rid in baseline.known:
            row["baselined"] = True
        rows.append(row)
    blocks: dict[str, list[str]] = {}
    for row in rows:
        for root in row.get("blocked_by", ()):
            blocks.setdefault(root, []).append(row["id"])
    for row in rows:
        if row["id"] in blocks:
            row["blocks"] = blocks[row["id"]]
    return rows


def agent_summary(results: list[CheckResult], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The deployed agent as the run's readings of it showed it (`vocab.agent_readings`): each way it departed from its
    contract (docs/agent.md), how many readings showed it and the first one, and the requirements left not assessed
    because of it. A deviating agent is named here once, so a report says "your agent is off its contract in this
    way" instead of only listing what it left not assessed. Built from the check results alone, so `conformance
    rejudge` builds the same."""
    not_assessed = {row["id"] for row in rows if row["status"] == "not_assessed"}
    ways: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        for f in r.agent:
            way = ways.setdefault((f["reading"], f["said"]), {
                "reading": f["reading"], "way": f["said"], "contract": f["contract"], "vector": f["vector"],
                "hides": False, "seen": {}, "not_assessed": set()})
            way["seen"].setdefault((f["scenario"], f["label"]), {k: f[k] for k in ("scenario", "label", "expected",
                                                                                 "got")})
            if f["hides"]:
                way["hides"] = True
                if r.status == "not_assessed":
                    way["not_assessed"].update(set(r.requirements) & not_assessed)
    deviations = [{**{k: v for k, v in w.items() if k not in ("seen", "not_assessed")}, "readings": len(w["seen"]),
                   "example": w["seen"][min(w["seen"])], "not_assessed": sorted(w["not_assessed"])}
                  for w in sorted(ways.values(), key=lambda w: (not w["hides"], w["reading"], w["way"]))]
    if not deviations:
        return {"status": "no-deviation-seen", "deviations": []}
    return {"status": "off-contract", "deviations": deviations}


LISTED = 12     # requirements a verdict's reason names (a capture leaves most not assessed: a list no one reads)


def verdict(rows: list[dict[str, Any]], *, ran: int, error: str | None = None) -> tuple[str, str]:
    """The run's verdict and its reason. A baselined MUST failure waives the exit status, never the verdict."""
    if error:
        return "error", error
    if ran == 0:
        return "error", "no check could judge anything"
    must = [r for r in rows if r["level"] == "MUST"]
    faults = [r["id"] for r in must if r["status"] == "error"]
    if faults:
        return "error", f"the suite could not judge {len(faults)} MUST requirement(s) (a fault of the suite, " \
                        f"not of the server): {', '.join(faults)}"
    failing = [r["id"] for r in must if r["status"] == "failed"]
    if failing:
        waived = [r for r in failing if _baselined(rows, r)]
        why = f"{len(failing)} MUST requirement(s) failed: {', '.join(failing)}"
        if waived:
            why += f" (waived by the baseline, so the exit status is 0: {', '.join(waived)})" if len(waived) == len(failing) \
                else f" ({len(waived)} of them waived by the baseline: {', '.join(waived)})"
        return "non-conformant", why
    missing = [r["id"] for r in must if r["status"] == "not_assessed"]
    if missing:
        named = ", ".join(missing[:LISTED]) + (f" and {len(missing) - LISTED} more (each with its reason in the "
                                               f"report)" if len(missing) > LISTED else "")
        return "conformant-partial", f"{len(missing)} MUST requirement(s) not assessed: {named}"
    return "conformant", "every MUST requirement was assessed and passed"


def only_requested(rep: dict[str, Any], ids: str | None, *, ran: int, error: str | None) -> dict[str, Any]:
    """With --requirements the report (and its verdict) is about those requirements alone."""
    if not ids:
        return rep
    wanted = {i.strip() for i in ids.split(",") if i.strip()}
    rows = [r for r in rep["requirements"] if r["id"] in wanted]
    rep["requirements"] = rows
    rep["verdict"], rep["verdict_reason"] = verdict(rows, ran=ran, error=error)
    rep["summary"] = {}
    for r in rows:
        rep["summary"][r["status"]] = rep["summary"].get(r["status"], 0) + 1
    return rep


def _baselined(rows: list[dict[str, Any]], rid: str) -> bool:
    return any(r["id"] == rid and r.get("baselined") for r in rows)


def waived(rows: list[dict[str, Any]]) -> list[str]:
    """MUST failures the baseline waives."""
    return [r["id"] for r in rows if r["level"] == "MUST" and r["status"] == "failed" and r.get("baselined")]


def exit_code(rep: dict[str, Any], *, require_complete: bool = False) -> ExitStatus:
    """The contract's exit status. A non-conformant verdict whose every MUST failure is baselined exits OK:
    the baseline waives the failures for CI, the verdict still says non-conformant."""
    v = rep["verdict"]
    if v == "non-conformant" and rep.get("waived") and set(rep["waived"]) >= set(
            r["id"] for r in rep["requirements"] if r["level"] == "MUST" and r["status"] == "failed"):
        return ExitStatus.OK
    if v == "conformant-partial" and require_complete:
        return ExitStatus.INCOMPLETE
    return EXIT[v]


def build(*, target: dict[str, Any], results: list[CheckResult], coverage: dict[str, list[str]],
          not_run: dict[str, str], baseline: Baseline, stats: dict[str, Any], error: str | None,
          options: dict[str, Any], started_at: str | None = None, finished_at: str | None = None,
          http_versions: dict[str, Any] | None = None) -> dict[str, Any]:
    rows = requirement_rows(results, coverage, not_run, baseline)
    stats = dict(stats)
    cut = stats.pop("cut_advice", None)    # what the run's deadline or cap cut, and the option that finishes it
    ran = sum(1 for r in results if r.status in ("passed", "failed", "info"))
    if error and not ran:   # the run stopped before judging: its reason is stated once, in verdict_reason
        for row in rows:
            if row["message"] != UNCOVERED:
                row.update(status="not_assessed", message=NOT_JUDGED)
                row.pop("evidence", None)
    v, why = verdict(rows, ran=ran, error=error)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    stale = sorted(r["id"] for r in rows if r.get("baselined") and r["status"] == "passed")
    seed = options.get("seed", target.get("seed"))
    finished_at = finished_at or utc_timestamp()
    return {
        "verdict": v,
        "verdict_reason": why,
        "target": {k: target.get(k) for k in ("base_url", "agent_id", "embedded")},
        "suite": suite_identity(),
        "started_at": started_at or finished_at,
        "finished_at": finished_at,
        "seed": seed,
        "options": {"seed_source": target.get("seed_source"), **options, "seed": seed},
        "summary": counts,
        "cost": stats,
        **({"run_cut": cut} if cut else {}),
        **({"http_versions": http_versions} if http_versions is not None else {}),
        "agent": agent_summary(results, rows),
        # names of the inventory's values and of requirements only: no secret to redact in 450 kB of them
        "dimensions": Redacted(dimensions_covered(results, target, http_versions,
                                                  thorough=bool(options.get("thorough")))),
        "baseline": {"file": baseline.source, "known": sorted(baseline.known), "stale": stale} if baseline.source else None,
        "waived": waived(rows),
        "requirements": rows,
        "unspecified": [{"id": q.id, "quote": q.quote, "supply": q.supply, "section": q.section}
                        for q in catalog.load().values() if not q.testable],
        "checks": [{"id": r.check, "requirements": list(r.requirements), "status": r.status,
                    "message": r.message, "duration": round(r.duration, 3), "evidence": r.evidence,
                    **({"blocked_by": r.blocked_by} if r.blocked_by else {}),
                    **({"http_versions": list(r.http_versions)} if r.http_versions else {})}
                   for r in resolve_blocked(results, checked(coverage))],
    }


def requirement_operations() -> dict[str, set[str]]:
    """requirement -> the operations its checks send over (the protocols of their scenarios, or of their rules)."""
    out: dict[str, set[str]] = {}
    for c in registry.CHECKS.values():
        for rid in c.requirements:
            out.setdefault(rid, set()).update(c.protocols)
    # a rule of one protocol applies to that protocol's requests, though a scenario that reads it also sends others
    for q in catalog.load().values():
        if q.protocol in OPERATIONS and q.id in out:
            out[q.id] = {q.protocol}
    return out


def dimensions_covered(results: list[CheckResult], target: dict[str, Any],
                       http_versions: dict[str, Any] | None, thorough: bool = False) -> dict[str, Any]:
    """report.json `dimensions` (`conformance.coverage`): per requirement judged, the values of each request
    dimension it was judged on, its scope and what of it the run missed; the pairs of free values met, and with
    --thorough the triples."""
    spoken = "HTTP/2" in ((http_versions or {}).get("judged") or [])
    facts = types.SimpleNamespace(**{k: target.get(k) for k in ("agent_id", "other_agent_id", "undeployed_agent_id",
                                                                 "extra_data_field", "base_url")})
    targets = collections.defaultdict(lambda: facts)
    rows = coverage.judged(results, targets)
    ops = requirement_operations()
    ruled = set(exchange_rules.requirements())
    return {**coverage.summary(rows, {rid: coverage.scope(ops.get(rid, ()), spoken, rid in ruled, rid) for rid in rows}),
            "pairwise": coverage.pairwise(results, targets, spoken),
            **({"triples": coverage.triples(results, targets)} if thorough else {})}


class Redacted(dict):
    """A report whose every string is redacted already (a run's, redacted once for all its files)."""


def redacted(value: Any, redact) -> Any:
    """Every string of a report redacted before it is serialised: a pattern run over JSON text could eat an
    escape (`\\"`) and break the document."""
    if isinstance(value, Redacted):
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redacted(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v, redact) for v in value]
    return value


def write_json(report: dict[str, Any], directory: Path, redact) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "report.json"
    path.write_text(json.dumps(redacted(report, redact), indent=2, ensure_ascii=False))
    return path
