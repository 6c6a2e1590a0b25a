"""Checks over the schemathesis scenarios: one check per (operation, requirement).

The scenarios (conformance/scenarios/fuzz.py) send every generated case once and record it; here each recorded
answer is judged, once per recording: against schemas/openapi.yaml as schemathesis' own checks read it (no 5xx, a
status and content type the document allows, response headers; read here without schemathesis) and by the suite's
custom checks (refusals have the error body with a `req_` request id, bodies and frames match the shared schemas,
negative data the spec names is refused, a missing `Authorization` is refused). Every finding is tagged with the catalog requirement it breaks; a check fails exactly when a generated
request broke its requirement, and shows the reproducing request (credential redacted), the status and the answer.
A requirement no generated request exercised is not assessed by these checks (the scripted checks judge it).
Error bodies count as JSON under `application/json` or any `+json` type (RFC 6839). A crash of the judging
machinery is a SuiteFault (an error of the suite), never a finding.

Only a case whose right answer is unambiguous is judged (`Probe.judged`, conformance/vocab/fuzzing.py): a negative
breaking exactly one stated rule with every other part valid, or a positive; a case the spec leaves open is
counted, never judged. A 429 is evidence only for the rate-limit requirements. A failure names the exchange of
every case that broke the rule, the first one's step label starting its message, its answer the first evidence.
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

from conformance.outcomes import Deviation, NotAssessed, SuiteFault
from conformance.registry import rule
from conformance.vocab import is_json_media_type
from conformance.vocab.values import error_object, media_type, same_json
from conformance.vocab.fuzzing import (OPENAPI, OPERATIONS, SAFE_INTEGER, Probe, Sent, content_type, expected_code,
                                       json_body)
from conformance.vocab.protocols import SSE
from conformance.vocab.traffic import MAPS, body_violations
from conformance.wire.sse import parse_sse

MAX_SHOWN = 3
RATE_LIMITED = 429
# The requirement a refusal's body breaks when it is not the protocol's JSON error body (whatever the refusal was for).
REFUSAL_BODY = {"invoke": ["GEN-ERR-001"], "agui": ["AGUI-ERR-005"], "mcp": ["MCP-ERR-001"],
                "metadata": ["META-STATE-003"]}
# The requirement a refusal's status breaks when it is no 4xx (a 5xx: neither refused nor accepted).
REFUSAL_STATUS = {"invoke": ["GEN-ERR-001"], "agui": ["GEN-ERR-001"], "mcp": ["MCP-ERR-001"],
                  "metadata": ["META-STATE-003"]}

# What each operation's generated cases can break (the union of what the rules below map to).
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
    "metadata": ["META-DOC-001", "META-COMPAT-001", "META-STATE-002", "META-STATE-003",
                 *MAPS["protected-resource-metadata"].values(), "GEN-RATE-002"],
}


# -- the rules: which requirement an answer to a generated case breaks -------------------------------
def status_requirement(p: Probe, stream_selected: bool, status: int | None = None,
                       in_band: bool = False) -> list[str]:
    """The requirement an unexpected status (5xx, undeclared) or content type of this case breaks. A case that
    must be refused and was neither accepted nor refused with a 4xx (a 5xx, or the error body under a 2xx: in
    band) broke the status rule of refusals, not the rule that it be refused: that one breaks only by accepting
    it."""
    if (p.kind == "no-auth" or p.defects) and status is not None and (
            in_band or not (200 <= status < 300 or 400 <= status < 500)):
        return REFUSAL_STATUS[p.op]
    if p.kind == "no-auth":
        return {"invoke": ["AUTH-KEY-002"], "agui": ["AUTH-KEY-003"], "mcp": ["AUTH-MCP-003"]}[p.op]
    if p.defects:
        return sorted({d[0] for d in p.defects})
    if p.op == "invoke":
        if p.kind == "positive":
            return ["INV-SEL-001"] if stream_selected else ["INV-RES-001"]
        return ["GEN-ERR-001"]
    if p.op == "agui":
        return ["AGUI-FRAME-001"] if p.kind == "positive" else ["GEN-ERR-001"]
    if p.op == "mcp":
        return ["MCP-ERR-001"]
    return ["META-DOC-001"] if p.kind == "positive" else ["META-STATE-002"]


class Finding(AssertionError):
    """A custom-check failure that knows the requirements it breaks."""

    def __init__(self, requirements: list[str], message: str):
        super().__init__(message)
        self.requirements = requirements


@dataclass
class _Judging:
    probe: Probe
    applied: list[str] = field(default_factory=list)    # schemas the answer was validated against


# The case a custom check judges is set per call: checks are called as schemathesis calls them, (ctx, response, case).
_current = threading.local()


def _probe() -> Probe:
    return _current.judging.probe


def refusal_is_4xx(ctx, response, case) -> None:
    """Negative data the spec names, or a missing credential, is refused with a 4xx (no run)."""
    p = _probe()
    if response.status_code == RATE_LIMITED:
        return                               # says nothing of the case: only the rate-limit rules judge it
    if p.kind == "no-auth" or p.defects:
        if not 400 <= response.status_code < 500:
            why = "no `Authorization` header" if p.kind == "no-auth" else "; ".join(d[2] for d in p.defects)
            raise Finding(status_requirement(p, False, response.status_code, refused_in_band(response)),
                          f"expected a 4xx refusal ({why}), got {response.status_code}")


def refused_in_band(response) -> bool:
    """A 2xx carrying the error body (a JSON-RPC error under 200): a refusal that lost its status, not a run."""
    return 200 <= response.status_code < 300 and error_object(json_body(response)) is not None


def refusal_carries_code(ctx, response, case) -> None:
    """A refusal whose defects all state one `error.code` carries that code."""
    p = _probe()
    if p.op not in ("invoke", "agui") or not 400 <= response.status_code < 500 or response.status_code == RATE_LIMITED:
        return
    want = "unauthenticated" if p.kind == "no-auth" else expected_code(p.defects, p.other_broken)
    doc = json_body(response)
    got = (error_object(doc) or {}).get("code")
    if want and isinstance(got, str) and got != want:
        raise Finding(status_requirement(p, False), f"expected error.code {want!r}, got {got!r}")


def refusal_is_json_error(ctx, response, case) -> None:
    """A refusal of invoke/AG-UI is a JSON error body, not an event stream (MCP: a JSON-RPC error)."""
    p = _probe()
    if not 400 <= response.status_code < 500 or response.status_code == 404 and p.op == "metadata":
        return
    ct = content_type(response)
    if not is_json_media_type(ct):       # application/json or any +json type (RFC 6839)
        raise Finding(REFUSAL_BODY[p.op], f"a {response.status_code} refusal came as {ct or 'no content type'!r}, "
                           f"not a JSON (application/json or +json) error body")


def mcp_unauthenticated(ctx, response, case) -> None:
    """MCP without a credential answers 401 with JSON-RPC error -32600 (AUTH-MCP-003/009)."""
    p = _probe()
    if p.op != "mcp" or p.kind != "no-auth" or response.status_code == RATE_LIMITED:
        return
    if response.status_code != 401:
        raise Finding(status_requirement(p, False, response.status_code, refused_in_band(response)),
                      f"expected 401 without a credential, got {response.status_code}")
    doc = json_body(response)
    code = (error_object(doc) or {}).get("code")
    if code != -32600:
        raise Finding(["AUTH-MCP-009"], f"expected JSON-RPC error.code -32600 on the 401, got {code!r}")


def mcp_response_id(ctx, response, case) -> None:
    """A JSON-RPC response carries the request's id (an error may carry null)."""
    p = _probe()
    if p.op != "mcp" or not is_json_media_type(content_type(response)) or not isinstance(p.body, dict):
        return
    doc = json_body(response)
    if not isinstance(doc, dict) or "id" not in doc:
        return                                  # shape is the schema check's business
    sent = p.body.get("id")
    # an id every reader reads alike: a string, or an integer within ±(2^53−1) (RFC 8259 §6), echoed by value
    sent_ok = "id" in p.body and (isinstance(sent, str) or type(sent) is int and abs(sent) <= SAFE_INTEGER)
    if "result" in doc and sent_ok and not same_json(doc["id"], sent):
        raise Finding(["MCP-METH-005"], f"response id {doc['id']!r} is not the request's id {sent!r}")
    if "error" in doc and sent_ok and doc["id"] is not None and not same_json(doc["id"], sent):
        raise Finding(["MCP-METH-005"], f"error id {doc['id']!r} is neither the request's id {sent!r} nor null")


def bodies_match_schemas(ctx, response, case) -> None:
    """Every body and stream frame matches its shared JSON Schema (field-mapped to requirements)."""
    p = _probe()
    ct = content_type(response)
    frames = None
    if ct == SSE:
        frames = [(e.event, e.data) for e in parse_sse(response.content).events if e.dispatched]
    found = body_violations(p.op, response.status_code, ct, response.content, frames,
                            p.body if isinstance(p.body, dict) else None, "answer", _current.judging.applied)
    if found:
        raise Finding(sorted({v.requirement for v in found}), "; ".join(v.text for v in found[:3]))


CUSTOM_CHECKS = [refusal_is_4xx, refusal_carries_code, refusal_is_json_error, mcp_unauthenticated,
                 mcp_response_id, bodies_match_schemas]


# -- the answers schemas/openapi.yaml documents -----------------------------------------------------------
# What schemathesis' response checks read (not_a_server_error, status_code_conformance, content_type_conformance,
# response_headers_conformance), read here from the same document: judging needs neither schemathesis nor
# hypothesis, so a run whose inputs come from the draw cache imports neither (tests/checks/test_fuzz_documented.py
# holds these readings equal to schemathesis' own on every answer form).
@dataclass(frozen=True)
class Documented:
    title: str                      # the kind of deviation, as schemathesis names it
    message: str
    header: str | None = None       # the response header it is about


@functools.cache
def _openapi() -> dict[str, Any]:
    import yaml
    return yaml.load(OPENAPI.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _resolved(node: Any) -> Any:
    """A local `$ref` (`#/components/...`) followed to what it names."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = _openapi()
        for part in node["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


@functools.cache
def _responses(op: str) -> dict[str, dict[str, Any]]:
    """The documented responses of an operation: status key ("200", "4XX", "default") -> response object."""
    method, path = OPERATIONS[op]
    responses = _openapi()["paths"][path][method.lower()].get("responses") or {}
    return {str(k): _resolved(v) for k, v in responses.items()}


def _response_for(op: str, status: int) -> dict[str, Any] | None:
    """The response object documenting a status: its own, else its class (`4XX`), else `default`."""
    found = _responses(op)
    return next((found[k] for k in (str(status), f"{status // 100}XX", f"{status // 100}xx", "default")
                 if k in found), None)


def _statuses_documented(op: str, status: int) -> bool:
    keys = _responses(op)
    return "default" in keys or any(k == str(status) or k.upper() == f"{status // 100}XX" for k in keys)


def _media_type_parts(value: str) -> tuple[str, str] | None:
    kind, slash, subtype = media_type(value).partition("/")
    return (kind, subtype) if slash else None


def _header_value(schema: dict[str, Any], value: str) -> Any:
    """A header's text as the value its schema types (an integer from digits), else the text itself."""
    types = schema.get("type") or []
    types = [types] if isinstance(types, str) else types
    if "integer" in types and value.isascii() and "_" not in value and value == value.strip():
        try:
            return int(value)
        except ValueError:
            return value
    return value


def documented(op: str, response) -> list[Documented]:
    """How an answer departs from what the document says of the operation: a server error, a status it does not
    list, a content type it does not give for that status (any JSON type stands for a documented JSON one: RFC 6839),
    a required header missing or a header whose value does not match its schema."""
    from jsonschema import Draft202012Validator
    status = response.status_code
    out: list[Documented] = []
    if status >= 500:
        out.append(Documented("Server error", f"Received: {status}"))
    if not _statuses_documented(op, status):
        out.append(Documented("Undocumented HTTP status code",
                              f"Received: {status} Documented: {', '.join(_responses(op))}"))
    definition = _response_for(op, status) or {}
    types = list(definition.get("content") or {})
    received = response.headers.get_list("content-type")
    if types and not received:
        out.append(Documented("Missing Content-Type header", f"Documented: {', '.join(types)}"))
    elif types:
        got = _media_type_parts(received[0])
        if got is None:
            out.append(Documented("Malformed media type", f"Received: {received[0]}"))
        elif not any(_media_type_parts(t) in (got, (got[0], "*"), ("*", "*")) for t in types) and not (
                is_json_media_type(received[0]) and any(is_json_media_type(t) for t in types)):
            out.append(Documented("Undocumented Content-Type", f"Received: {received[0]} Documented: {', '.join(types)}"))
    missing = []
    for name, header in (definition.get("headers") or {}).items():
        header = _resolved(header)
        values = response.headers.get_list(name)
        if not values:
            if header.get("required"):
                missing.append(name)
            continue
        schema = _resolved(header.get("schema") or {})
        for error in Draft202012Validator(schema).iter_errors(_header_value(schema, values[0])):
            out.append(Documented("Response header does not conform to the schema",
                                  f"{name}: {values[0]!r}: {error.message}", name))
    out += [Documented("Missing required headers", f"The response has no {name} header", name) for name in missing]
    return out


def documented_requirements(deviation: Documented, p: Probe, status: int) -> list[str]:
    """The requirement a departure from the document breaks. A refusal in an undocumented content type breaks the
    rule of the refusal body only: the refusal itself (the defect's requirement, the credential's) held. A header
    the spec names breaks that header's rule."""
    if deviation.header is not None:
        rid = {"www-authenticate": "AUTH-MCP-008", "x-ratelimit-remaining": "GEN-RATE-002",
               "retry-after": "MCP-ERR-003" if p.op == "mcp" else "GEN-RATE-003"}.get(deviation.header.lower())
        if rid:
            return [rid]
    elif "Content-Type" in deviation.title or "media type" in deviation.title:
        if 400 <= status < 500:
            return REFUSAL_BODY[p.op]
        if p.op == "metadata" and status == 200:
            return ["META-COMPAT-001"]   # the spec says only "JSON object"; application/json is RFC 9728's (a SHOULD)
    return status_requirement(p, p.stream_selected, status)


# -- judging the recorded cases --------------------------------------------------------------------
@dataclass
class Verdict:
    record: dict[str, Any]                 # the case's redacted transcript (conformance/scenarios/fuzz.py)
    findings: list[dict[str, Any]]         # {"requirements", "check", "message"}
    exercised: list[str]                   # the requirements this answer was judged on
    exchange: Any = None                   # the recorded exchange a failure names
    open_reasons: list[str] = field(default_factory=list)   # why the case was not judged (its answer is open)


def judge(sent: Sent) -> Verdict:
    """Judge one recorded answer against the document and the custom checks. A crash of ours is a SuiteFault."""
    p = sent.probe
    stream = p.stream_selected
    if not p.judged:                       # the spec leaves its right answer open: counted, never judged
        return Verdict(sent.record, [], [], sent.exchange, p.open_reasons)
    if sent.response is None:              # no answer: the server's fault or the network's
        finding = {"requirements": status_requirement(p, stream), "check": "transport",
                   "message": f"no answer: {sent.error}"}
        return Verdict(sent.record, [finding], status_requirement(p, stream), sent.exchange)
    judging = _Judging(p)
    response = sent.response
    _current.judging = judging
    try:
        findings = [{"requirements": documented_requirements(d, p, response.status_code), "check": d.title,
                     "message": " ".join(f"{d.title}: {d.message}".split())[:400]} for d in documented(p.op, response)]
        for check in CUSTOM_CHECKS:
            try:
                check(None, response, p.case)
            except Finding as finding:
                findings.append({"requirements": finding.requirements, "check": check.__name__,
                                 "message": str(finding)})
    except Exception as exc:                                       # noqa: BLE001 - a check crashed: ours
        raise SuiteFault(f"judging a generated {p.op} case crashed: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    finally:
        _current.judging = None
    status = sent.response.status_code
    exercised = _shape_requirements(p, status)
    if status != RATE_LIMITED:             # a 429 answers the rate limit, not the case
        exercised |= set(status_requirement(p, stream))
    for name in judging.applied:
        exercised |= {"META-STATE-003"} if p.op == "metadata" and name == "error-body" else set(MAPS[name].values())
    for f in findings:
        exercised |= set(f["requirements"])
    return Verdict(sent.record, findings, sorted(exercised), sent.exchange)


def _shape_requirements(p: Probe, status: int) -> set[str]:
    """Requirements the custom checks judged on this answer besides the schema fields."""
    out: set[str] = set()
    if p.op == "agui" and 400 <= status < 500:
        out.add("AGUI-ERR-005")
    if p.op == "mcp" and p.kind == "no-auth" and status != RATE_LIMITED:
        out |= {"AUTH-MCP-003", "AUTH-MCP-008", "AUTH-MCP-009"}
    if p.op == "metadata" and p.kind != "positive" and status != 404:
        out.add("META-STATE-003")
    return out


# Every check of an operation reads the same verdicts: each recording is judged once (a few kept, by identity).
_JUDGED: dict[int, tuple[list[Sent], list[Verdict] | SuiteFault]] = {}
_JUDGED_KEPT = 8
_judged_lock = threading.Lock()


def verdicts(rec) -> tuple[dict[str, Any], list[Verdict]]:
    """The scenario's summary and the verdict on each case it sent."""
    result, sent = rec.facts.get("fuzz"), rec.facts.get("fuzz_sent")
    if not isinstance(result, dict) or not isinstance(sent, list):
        raise NotAssessed(f"scenario {rec.scenario} left no schemathesis result")
    with _judged_lock:
        kept = _JUDGED.get(id(sent))
        if kept is None or kept[0] is not sent:
            try:
                judged: list[Verdict] | SuiteFault = [judge(s) for s in sent]
            except SuiteFault as fault:
                judged = fault
            except Exception as exc:                               # noqa: BLE001 - our judging code crashed
                judged = SuiteFault(f"judging the generated {result.get('operation')} cases crashed: "
                                    f"{type(exc).__name__}: {exc}")
            while len(_JUDGED) >= _JUDGED_KEPT:
                _JUDGED.pop(next(iter(_JUDGED)))
            kept = _JUDGED[id(sent)] = (sent, judged)
    if isinstance(kept[1], SuiteFault):
        raise SuiteFault(str(kept[1]))
    return result, kept[1]


# -- the checks ----------------------------------------------------------------------------------
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


def summary(result: dict[str, Any], verdicts_: list[Verdict] = ()) -> str:
    skipped = f", {result['skipped']} not sent (the run budget, or the rate limit held them too long)" if result.get("skipped") else ""
    unjudged = sum(1 for v in verdicts_ if v.open_reasons)
    open_ = f", {unjudged} not judged (the spec leaves their answer open)" if unjudged else ""
    return (f"schemathesis {result['operation']}: {result['requests']} requests, {result['runs']} agent runs, "
            f"statuses {result.get('statuses', {})}{skipped}{open_}")


def broke(rid: str, judged: list[Verdict], operation: str) -> Deviation | None:
    """One Deviation naming the exchange of every case whose answer broke `rid`, in the order they were sent; its
    message starts with the first one's step label and shows up to MAX_SHOWN of them in full."""
    broken = [(v, [f for f in v.findings if rid in f["requirements"]]) for v in judged]
    broken = [(v, fs) for v, fs in broken if fs]
    if not broken:
        return None
    label = lambda v: v.record.get("label") or v.record["kind"]
    shown = [f"{label(v)}: {_show(v.record, fs)}" for v, fs in broken[:MAX_SHOWN]]
    more = f"\n  … and {len(broken) - MAX_SHOWN} more" if len(broken) > MAX_SHOWN else ""
    return Deviation(f"{label(broken[0][0])}: {len(broken)} of {len(judged)} generated {operation} requests broke {rid}:\n  "
                     + "\n  ".join(shown) + more, [v.exchange for v, _ in broken])


def _fuzz_check(operation: str, rid: str):
    def run(rec) -> str:
        result, judged_cases = verdicts(rec)
        judged = [v for v in judged_cases if rid in v.exercised]
        if not judged:
            raise NotAssessed(f"no generated {operation} request exercised {rid} ({summary(result, judged_cases)})")
        deviation = broke(rid, judged, operation)
        if deviation is not None:
            raise deviation
        return f"{len(judged)} generated requests kept {rid}; {summary(result, judged_cases)}"

    run.__doc__ = (f"Sends schemathesis-generated {operation} requests (positive, negative, no credential) whose "
                   f"right answer is unambiguous; none of the answers breaks {rid}.")
    run.__name__ = run.__qualname__ = f"{operation}_{rid.lower().replace('-', '_')}"
    return run


# One supplementary check per (operation, requirement), in order, without repeats.
rule(lambda case: _fuzz_check(*case),
     over=[(op, rid) for op, rids in REQUIREMENTS.items() for rid in dict.fromkeys(rids)],
     requirements=lambda case: case[1], scenarios=lambda case: [f"fuzz.{case[0]}"], supplementary=True)
