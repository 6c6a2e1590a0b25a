"""Checks over the schemathesis scenarios: one check per (operation, requirement).

Every generated case left findings tagged with the requirement they break
(conformance/scenarios/fuzz.py); a check here fails exactly when a generated
request broke its requirement, and shows the reproducing request (credential
redacted), the status and the start of the answer. A requirement no generated
request exercised is not assessed by these checks (the scripted checks judge it).
"""
from __future__ import annotations

from typing import Any

from conformance.vocab.traffic import MAPS
from conformance.outcomes import NotAssessed
from conformance.registry import rule

MAX_SHOWN = 3

# What each operation's generated cases can break (the union of what the scenario's rules map to).
_COMMON = ["GEN-RATE-002", "GEN-RATE-003"]
REQUIREMENTS: dict[str, list[str]] = {
    "invoke": ["INV-RES-001", "INV-SEL-001", "INV-ERR-002", "INV-ERR-003", "INV-ERR-004", "INV-ERR-005",
               "INV-SESS-006", "AUTH-KEY-002", *MAPS["error-body"].values(), *MAPS["invoke-result"].values(),
               *MAPS["invoke-event"].values(), *_COMMON],
    "agui": ["AGUI-FRAME-001", "AGUI-ERR-001", "AGUI-ERR-002", "AGUI-ERR-003", "AGUI-ERR-005", "AGUI-SESS-004",
             "AUTH-KEY-003", "GEN-ERR-001", *MAPS["error-body"].values(), *MAPS["agui-event"].values(),
             "AGUI-ID-001", "AGUI-ID-002", "AGUI-ID-003", *_COMMON],
    "mcp": ["MCP-ERR-001", "MCP-ERR-003", "MCP-METH-005", "AUTH-MCP-003", "AUTH-MCP-008", "AUTH-MCP-009",
            *MAPS["mcp-error-32022"].values(), *MAPS["mcp-tools-call-result"].values(),
            *MAPS["mcp-progress-notification"].values(), "GEN-RATE-002"],
    "metadata": ["META-DOC-001", "META-STATE-002", "META-STATE-003", *MAPS["protected-resource-metadata"].values(),
                 "GEN-RATE-002"],
}


def _cases(rec) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result = rec.facts.get("fuzz")
    if not isinstance(result, dict):
        raise NotAssessed(f"scenario {rec.scenario} left no schemathesis result")
    return result, result.get("cases", [])


def _show(case: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    """What the check said, then the whole exchange: the request as sent (credential redacted) and the
    answer as received, status, headers and body (the first and only observation of this case)."""
    req = case["request"]
    why = f" ({'; '.join(case['defects'])})" if case.get("defects") else ""
    said = "\n    ".join(f"[{f['check']}] {f['message'][:300]}" for f in findings)
    lines = [said, f"    sent ({case['kind']}{why}): {req['method']} {req['path']}"]
    lines += [f"      {k}: {v}" for k, v in req["headers"].items()]
    lines.append(f"      body: {req['body']}")
    resp = case.get("response")
    if resp:
        lines.append(f"    got: {resp['status']}")
        lines += [f"      {k}: {v}" for k, v in resp["headers"]]
        lines.append(f"      body: {resp['body']}")
    else:
        lines.append(f"    got: {case.get('status')} {case.get('content_type') or ''} "
                     f"{(case.get('answer') or case.get('error') or '')!r}")
    return "\n".join(lines)


def summary(result: dict[str, Any]) -> str:
    skipped = f", {result['skipped']} skipped by the run budget" if result.get("skipped") else ""
    return (f"schemathesis {result['operation']}: {result['requests']} requests, {result['runs']} agent runs, "
            f"statuses {result.get('statuses', {})}{skipped}")


def _fuzz_check(operation: str, rid: str):
    def run(rec) -> str:
        result, cases = _cases(rec)
        judged = [c for c in cases if rid in c.get("exercised", [])]
        if not judged:
            raise NotAssessed(f"no generated {operation} request exercised {rid} ({summary(result)})")
        broken = [(c, [f for f in c.get("findings", []) if rid in f["requirements"]]) for c in judged]
        broken = [(c, fs) for c, fs in broken if fs]
        if broken:
            shown = "\n  ".join(_show(c, fs) for c, fs in broken[:MAX_SHOWN])
            more = f"\n  … and {len(broken) - MAX_SHOWN} more" if len(broken) > MAX_SHOWN else ""
            raise AssertionError(f"{len(broken)} of {len(judged)} generated {operation} requests broke {rid}:\n  "
                                 f"{shown}{more}")
        return f"{len(judged)} generated requests kept {rid}; {summary(result)}"

    run.__doc__ = (f"Sends schemathesis-generated {operation} requests (positive, negative, no credential); "
                   f"none of the answers breaks {rid}.")
    run.__name__ = run.__qualname__ = f"{operation}_{rid.lower().replace('-', '_')}"
    return run


# One supplementary check per (operation, requirement), in order, without repeats.
rule(lambda case: _fuzz_check(*case), over=[(op, rid) for op, rids in REQUIREMENTS.items() for rid in dict.fromkeys(rids)],
     requirements=lambda case: case[1], scenarios=lambda case: [f"fuzz.{case[0]}"], supplementary=True)
