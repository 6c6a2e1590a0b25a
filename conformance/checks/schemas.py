"""Schema validation of recorded traffic: every body and frame against the JSON Schema of its kind.

The mapping of a violation to the requirement it breaks lives in `conformance.vocab.traffic` (shared with the
schemathesis checks, conformance/checks/fuzz.py). A schema check is one requirement over a few scenarios: it fails
only when a violation maps to its requirement, so a wrong `sessionId` never fails the requirement about
`versionNumber`. Each failure names the answers that have a violation. An answer that already broke a more basic
rule (a refusal sent as an event stream, say) has no schema to match: `vocab.traffic` leaves it to the check of that
rule, so it never fails a second requirement here. Like every check module it imports no scenario:
`registry.load_scenarios` registers them.
"""
from __future__ import annotations

from typing import Any, Iterable

from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import NotAssessed, joined, judge_all
from conformance.registry import SCENARIOS, load_scenarios, rule
from conformance.vocab import requests as rq, traffic
from conformance.vocab.protocols import META_CAPS
from conformance.vocab.traffic import exchange_violations
from conformance.wire.exchange import Exchange


# -- checks over the surface scenarios ---------------------------------------------------------
# requirement -> scenarios whose traffic shows the field (only scenarios that exist are used).
COVERAGE: dict[str, tuple[str, ...]] = {}


def _cover(rids: Iterable[str], scenarios: Iterable[str]) -> None:
    for rid in rids:
        COVERAGE.setdefault(rid, ())
        COVERAGE[rid] += tuple(s for s in scenarios if s not in COVERAGE[rid])


_INVOKE_RESULT_FIELDS = ["INV-RES-001", "INV-RES-002", "INV-RES-003", "INV-RES-005", "INV-RES-006", "INV-RES-007",
                         "INV-RES-008", "INV-RES-009", "INV-RES-010", "INV-RES-011", "INV-RES-012", "INV-RES-013"]
_cover(_INVOKE_RESULT_FIELDS, ["invoke.runs", "invoke.selection", "generated.round_trip"])
_cover(["INV-RES-015"], ["invoke.runs"])
_cover(["INV-STREAM-002", "INV-STREAM-004", "INV-STREAM-005", "INV-STREAM-006", "INV-STREAM-010", "INV-TERM-006"],
       ["invoke.runs", "generated.round_trip"])
_cover(["GEN-ERR-001", "GEN-ERR-002", "GEN-ERR-003", "GEN-ERR-004", "GEN-ERR-005"],
       ["invoke.refusals", "agui.refusals", "access.invoke", "access.agui"])
_cover(["AGUI-FRAME-003", "AGUI-ID-004", "AGUI-ID-005", "AGUI-ID-006", "AGUI-ID-007", "AGUI-ID-008",
        "AGUI-PROMPT-003", "AGUI-PROMPT-004"], ["agui.plain", "generated.round_trip"])
_cover(["AGUI-ID-001", "AGUI-ID-002", "AGUI-ID-003"], ["agui.plain", "generated.round_trip"])
_cover(["AGUI-FAIL-003"], ["agui.fail_after", "agui.fail_before"])
_cover(["MCP-TOOL-001", "MCP-TOOL-003", "MCP-SESS-001", "MCP-METH-005"], ["mcp.modern", "generated.round_trip"])
_cover(["MCP-TOOL-004"], ["mcp.failures"])
_cover(["MCP-ERR-001", "MCP-VER-002", "MCP-VER-003", "MCP-VER-004"], ["mcp.refusals"])
_cover(["MCP-ERR-001"], ["access.mcp"])
_cover(["MCP-PROG-004", "MCP-PROG-005", "MCP-PROG-006", "MCP-PROG-007"], ["mcp.progress"])
_cover(["META-DOC-001", "META-DOC-002", "META-DOC-003", "META-DOC-005", "META-DOC-007", "META-STATE-003"],
       ["metadata.document"])

MAX_LISTED = 5


def _schema_check(rid: str, scenario_name: str):
    def run(rec) -> str:
        judged = [ex for ex in rec.exchanges if ex.status is not None]
        if not judged:
            raise NotAssessed(f"scenario {scenario_name} recorded no answer to validate")

        def valid(ex) -> None:
            found = [v for v in exchange_violations(ex) if v.requirement == rid]
            if found:
                more = f"; … and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
                raise AssertionError(f"HTTP {ex.status}: {len(found)} schema violation(s) of what {rid} states: "
                                     + "; ".join(v.text for v in found[:MAX_LISTED]) + more)
        note = judge_all(judged, valid)
        return f"{len(judged)} answer(s) of {scenario_name} valid against the schemas" + (f"; {note}" if note else "")

    run.__doc__ = (f"Validates every body and frame of {scenario_name} against the shared JSON Schemas; "
                   f"fails on a violation of a field that {rid} states, naming each answer that has one.")
    run.__name__ = run.__qualname__ = f"{rid.lower().replace('-', '_')}_in_{scenario_name.replace('.', '_')}"
    return run


def register_schema_checks() -> list[str]:
    """One check per (requirement, scenario) for the scenarios that exist (a scenario failing
    or not assessed then affects only its own checks)."""
    load_scenarios()
    pairs = [(rid, name) for rid, wanted in COVERAGE.items() for name in wanted if name in SCENARIOS]
    made = rule(lambda pair: _schema_check(*pair), over=pairs, requirements=lambda pair: pair[0],
                scenarios=lambda pair: [pair[1]], supplementary=True)
    return [fn.__name__ for fn in made]


register_schema_checks()


# -- every answer of the run, whatever sent it (conformance.exchange_rules) -------------------------------------
# which operations each schema map's requirements are read on
OPERATIONS = {"error-body": ("invoke", "agui"), "invoke-result": ("invoke",), "invoke-event": ("invoke",),
              "agui-event": ("agui",), "mcp-error": ("mcp",), "mcp-error-32022": ("mcp",), "mcp-response": ("mcp",),
              "mcp-tools-call-result": ("mcp",), "mcp-progress-notification": ("mcp",),
              "protected-resource-metadata": ("metadata",)}
EXTRA = {"META-STATE-003": ("metadata",), "AGUI-ID-001": ("agui",), "AGUI-ID-002": ("agui",),
         "AGUI-ID-003": ("agui",)}


def _operations() -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for schema, table in traffic.MAPS.items():
        for rid in table.values():
            out.setdefault(rid, set()).update(OPERATIONS[schema])
    for rid, ops in EXTRA.items():
        out.setdefault(rid, set()).update(ops)
    return {rid: tuple(sorted(ops)) for rid, ops in sorted(out.items())}


def _has_schema(rid: str):
    """The exchange's answer was validated against a schema that states a field of `rid`."""
    mine = {name for name, table in traffic.MAPS.items() if rid in table.values()}
    if rid in EXTRA:
        mine |= {"agui-event"} if rid.startswith("AGUI") else {"error-body"}
    # a tool result's fields: a call that must run (not an input error), or one that continues a paused run
    ran = mine == {"mcp-tools-call-result"}

    def applies(ex: Exchange, target: Any) -> bool:
        return not mine.isdisjoint(traffic.schemas_applied(ex)) and not asks_for_input(ex) and (
            not ran or _runs_or_continues(rq.problems(ex, target)))
    return applies


def _runs_or_continues(problems: list[str]) -> bool:
    """A call that must run, or a `resume` of a paused run (its prompt may be left out: a resume answers the
    question the run asked)."""
    return not problems or ("resume" in problems and set(problems) <= {"resume", "prompt"})


def asks_for_input(ex: Exchange) -> bool:
    """An eliciting client's paused call answered with MCP 2026-07-28's input-required result (a form to fill in,
    MCP-PAUSE-003's): not a tool result, so not the tool result's schema."""
    return ex.remembered("asks for input", lambda: _asks_for_input(ex))


def _asks_for_input(ex: Exchange) -> bool:
    caps = rq.meta(ex).get(META_CAPS)
    if not (isinstance(caps, dict) and "elicitation" in caps):
        return False
    body = traffic.json_or_none(ex.body)
    if ex.stream is not None:      # answered as a stream: the response is its last frame
        frames = [f for f in ex.stream.dispatched]
        body = traffic.json_or_none(frames[-1].data) if frames else None
    result = body.get("result") if isinstance(body, dict) else None
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _schema_judge(rid: str):
    def judge(ex: Exchange, target: Any) -> None:
        found = [v for v in traffic.exchange_violations(ex) if v.requirement == rid]
        assert not found, f"HTTP {ex.status}: {len(found)} schema violation(s) of what {rid} states: " \
                          + joined([v.text for v in found])
    return judge


register(*(ExchangeRule(rid, "schema", ops, _has_schema(rid), _schema_judge(rid),
                        doc="its answer's fields against the JSON Schema of their kind.")
           for rid, ops in _operations().items()))
