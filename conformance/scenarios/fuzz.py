"""Schemathesis against the target: generated requests per operation, judged by the spec.

`schemas/openapi.yaml` is loaded once; per operation, positive and negative cases
are drawn deterministically (the run's seed), sent with a bounded timeout in a
worker thread, and every answer runs schemathesis' own checks (no 5xx, a status
and content type the document allows, response headers) and the suite's custom
checks (registered with `@schemathesis.check`): refusals have the error body with
a `req_` request id, bodies and frames match the shared schemas, negative data the
spec names is refused, a missing `Authorization` is refused.

Every finding is tagged with the catalog requirement it breaks: a negative case is
"must refuse" only for the defects a requirement states (prompt missing or not a
string, `stream` not boolean, a session key of 0 or more than 256 characters, a body
that is not a JSON object, AG-UI without a user message or resume); other schema
violations (a message without `id`, a non-array `messages`) are sent but only the
answer's shape is judged.

Positive MCP cases are well-formed `tools/call` requests of the agent's tool (from
--agent-slug, else tools/list): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
`_meta` agree with the body, so they run the agent and their results are judged.
Every case is sent once and its answer is the evidence: nothing is replayed or
shrunk against the server; a crash while generating or judging is a SuiteFault
(an error of the suite), never a finding. Error bodies count as JSON under
`application/json` or any `+json` type (RFC 6839). A negative that breaks several
rules may be refused with the code of any of them (the spec sets no precedence).

Cost: cases that could start a run are bounded per operation (PLAN's third column x depth);
positive cases go first, and a server that accepts negative data stops being fed
once the budget is spent. Prompts are prefixed so the conformance agent echoes them
(no generated `sleep` or `fail`), session keys are replaced by unique ones.
"""
from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from conformance import generate, schemas
from conformance.outcomes import SuiteFault
from conformance.vocab.protocols import MCP_VERSION, META_CAPS, META_VERSION, SSE
from conformance.registry import scenario
from conformance.vocab.sending import listed_tool
from conformance.vocab.traffic import MAPS, body_violations
from conformance.vocab import is_json_integer, is_json_media_type
from conformance.wire.sse import parse_sse

OPENAPI = schemas.resource("openapi.yaml")
PROMPT_PREFIX = "fuzz "            # not a directive word: the conformance agent echoes the prompt
REQUEST_TIMEOUT = 10.0             # seconds per generated request (echo runs are short)
TIME_BUDGET = 45.0                 # seconds of sending per operation; later cases are skipped
MAX_EXCERPT = 300                  # characters of a body in the one-line summaries
MAX_TRANSCRIPT = 64 * 1024         # characters of a request or response body kept as evidence
MAX_CASES_KEPT = 200

# per operation and depth 1: (positive cases, negative cases, cases that may start a run)
PLAN = {
    "invoke": (3, 20, 4),
    "agui": (2, 14, 3),
    "mcp": (2, 8, 2),
    "metadata": (4, 0, 0),
}
OPERATIONS = {"invoke": ("POST", "/v1/agents/{agentId}/invoke"), "agui": ("POST", "/v1/agents/{agentId}/agui"),
              "mcp": ("POST", "/v1/agents/{agentId}/mcp"),
              "metadata": ("GET", "/.well-known/oauth-protected-resource/v1/agents/{agentId}/mcp")}

# -- which negative data the spec says is refused ------------------------------------------------
# (requirement, error code the refusal must carry or None, description)
Defect = tuple[str, str | None, str]


def invoke_defects(body: Any) -> list[Defect]:
    if not isinstance(body, dict):
        return [("INV-ERR-005", None, "the body is not a JSON object")]
    out: list[Defect] = []
    if "prompt" not in body:
        out.append(("INV-ERR-004", None, "no `prompt`"))
    elif not isinstance(body["prompt"], str):
        out.append(("INV-ERR-002", "validation_failed", "`prompt` is not a string"))
    if "stream" in body and not isinstance(body["stream"], bool):
        out.append(("INV-ERR-003", "validation_failed", "`stream` is not a boolean"))
    sid = body.get("sessionId")
    if isinstance(sid, str) and not 1 <= len(sid) <= 256:
        out.append(("INV-SESS-006", "validation_failed", f"`sessionId` has {len(sid)} characters"))
    return out


def agui_defects(body: Any) -> list[Defect]:
    if not isinstance(body, dict):
        return [("AGUI-ERR-001", None, "the body is not a JSON object (no user message, no resume)")]
    out: list[Defect] = []
    msgs = body.get("messages")
    has_user = isinstance(msgs, list) and any(isinstance(m, dict) and m.get("role") == "user" for m in msgs)
    if "resume" not in body and not has_user:
        if "messages" not in body:
            out.append(("AGUI-ERR-001", "invalid_request", "neither `messages` nor `resume`"))
        elif msgs == []:
            out.append(("AGUI-ERR-002", "invalid_request", "`messages` is empty and no `resume`"))
        elif isinstance(msgs, list) and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in msgs):
            out.append(("AGUI-ERR-003", "invalid_request", "no message has role `user` and no `resume`"))
    tid = body.get("threadId")
    if isinstance(tid, str) and not 1 <= len(tid) <= 256:
        out.append(("AGUI-SESS-004", "validation_failed", f"`threadId` has {len(tid)} characters"))
    return out


DEFECTS: dict[str, Callable[[Any], list[Defect]]] = {"invoke": invoke_defects, "agui": agui_defects}


def expected_code(defects: list[Defect], other_broken: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The `error.code` a refusal must carry: only when every defect states the same one and the body
    breaks no other rule. The spec sets no precedence between codes, so a body that breaks several
    rules may be refused with the code of any of them."""
    codes = {d[1] for d in defects}
    return codes.pop() if len(codes) == 1 and not other_broken else None


REQUEST_SCHEMAS = {"invoke": "invoke-request", "agui": "agui-request"}
# The top-level field each stated defect is about (a violation of another field is another rule).
DEFECT_FIELDS = {"INV-ERR-002": "prompt", "INV-ERR-003": "stream", "INV-ERR-004": "prompt",
                 "INV-SESS-006": "sessionId", "AGUI-ERR-001": "messages", "AGUI-ERR-002": "messages",
                 "AGUI-ERR-003": "messages", "AGUI-SESS-004": "threadId"}


def other_broken_fields(op: str, body: Any, defects: list[Defect]) -> set[str]:
    """Top-level fields whose request-schema violation is not one of the stated defects."""
    if op not in REQUEST_SCHEMAS or not isinstance(body, dict):
        return set()
    fields = set()
    for err in schemas.validator(REQUEST_SCHEMAS[op]).iter_errors(body):
        path = list(err.absolute_path)
        if path:
            fields.add(str(path[0]))
        elif err.validator == "required" and isinstance(err.message, str) and err.message.startswith("'"):
            fields.add(err.message.split("'")[1])
        else:
            fields.add("messages" if op == "agui" else "")     # agui's anyOf: the user-message/resume rule
    return fields - {DEFECT_FIELDS.get(d[0]) for d in defects}


# -- what a case is, and how its answer is judged -------------------------------------------------
@dataclass
class Probe:
    op: str
    kind: str                          # positive | negative | no-auth | other-agent
    case: Any                          # the schemathesis Case
    defects: list[Defect] = field(default_factory=list)
    body: Any = None                   # the body as sent (Python value; bytes for raw bodies)
    applied: list[str] = field(default_factory=list)    # schemas the answer was validated against
    other_broken: set[str] = field(default_factory=set)  # fields breaking rules besides the defects

    @property
    def may_run(self) -> bool:
        if self.op in ("invoke", "agui"):
            return self.kind != "no-auth"
        return self.op == "mcp" and self.kind != "no-auth" and isinstance(self.body, dict) \
            and self.body.get("method") == "tools/call"


def status_requirement(p: Probe, stream_selected: bool) -> list[str]:
    """The requirement an unexpected status (5xx, undeclared) or content type of this case breaks."""
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


def _json_body(response) -> Any:
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


def _ctype(response) -> str:
    """The media type of a schemathesis Response (its headers: lowercase keys, list values)."""
    value = response.headers.get("content-type") or [""]
    return (value[0] if isinstance(value, list) else value).split(";")[0].strip().lower()


# The probe a custom check judges is set per call: schemathesis calls checks with (ctx, response, case).
_current = threading.local()


def _probe() -> Probe:
    return _current.probe


def refusal_is_4xx(ctx, response, case) -> None:
    """Negative data the spec names, or a missing credential, is refused with a 4xx (no run)."""
    p = _probe()
    if p.kind == "no-auth" or p.defects:
        if not 400 <= response.status_code < 500:
            why = "no `Authorization` header" if p.kind == "no-auth" else "; ".join(d[2] for d in p.defects)
            raise Finding(status_requirement(p, False),
                          f"expected a 4xx refusal ({why}), got {response.status_code}")


def refusal_carries_code(ctx, response, case) -> None:
    """A refusal whose defects all state one `error.code` carries that code."""
    p = _probe()
    if p.op not in ("invoke", "agui") or not 400 <= response.status_code < 500:
        return
    want = "unauthenticated" if p.kind == "no-auth" else expected_code(p.defects, p.other_broken)
    doc = _json_body(response)
    got = doc.get("error", {}).get("code") if isinstance(doc, dict) and isinstance(doc.get("error"), dict) else None
    if want and isinstance(got, str) and got != want:
        raise Finding(status_requirement(p, False), f"expected error.code {want!r}, got {got!r}")


def refusal_is_json_error(ctx, response, case) -> None:
    """A refusal of invoke/AG-UI is a JSON error body, not an event stream (MCP: a JSON-RPC error)."""
    p = _probe()
    if not 400 <= response.status_code < 500 or response.status_code == 404 and p.op == "metadata":
        return
    ct = _ctype(response)
    if not is_json_media_type(ct):       # application/json or any +json type (RFC 6839)
        rid = {"invoke": ["GEN-ERR-001"], "agui": ["AGUI-ERR-005"], "mcp": ["MCP-ERR-001"],
               "metadata": ["META-STATE-003"]}[p.op]
        raise Finding(rid, f"a {response.status_code} refusal came as {ct or 'no content type'!r}, "
                           f"not a JSON (application/json or +json) error body")


def mcp_unauthenticated(ctx, response, case) -> None:
    """MCP without a credential answers 401 with JSON-RPC error -32600 (AUTH-MCP-003/009)."""
    p = _probe()
    if p.op != "mcp" or p.kind != "no-auth":
        return
    if response.status_code != 401:
        raise Finding(["AUTH-MCP-003"], f"expected 401 without a credential, got {response.status_code}")
    doc = _json_body(response)
    code = doc.get("error", {}).get("code") if isinstance(doc, dict) and isinstance(doc.get("error"), dict) else None
    if code != -32600:
        raise Finding(["AUTH-MCP-009"], f"expected JSON-RPC error.code -32600 on the 401, got {code!r}")


def mcp_response_id(ctx, response, case) -> None:
    """A JSON-RPC response carries the request's id (an error may carry null)."""
    p = _probe()
    if p.op != "mcp" or not is_json_media_type(_ctype(response)) or not isinstance(p.body, dict):
        return
    doc = _json_body(response)
    if not isinstance(doc, dict) or "id" not in doc:
        return                                  # shape is the schema check's business
    sent = p.body.get("id")
    sent_ok = "id" in p.body and type(sent) in (str, int)
    if "result" in doc and sent_ok and not _same_id(doc["id"], sent):
        raise Finding(["MCP-METH-005"], f"response id {doc['id']!r} is not the request's id {sent!r}")
    if "error" in doc and sent_ok and doc["id"] is not None and not _same_id(doc["id"], sent):
        raise Finding(["MCP-ERR-001"], f"error id {doc['id']!r} is neither the request's id {sent!r} nor null")


def _same_id(got: Any, sent: Any) -> bool:
    """A JSON-RPC id echoed: a string as the same string, an integer by value (1.0 is 1, "1" is not)."""
    if isinstance(sent, str):
        return got == sent
    return is_json_integer(got) and got == sent


def bodies_match_schemas(ctx, response, case) -> None:
    """Every body and stream frame matches its shared JSON Schema (field-mapped to requirements)."""
    p = _probe()
    ct = _ctype(response)
    frames = None
    if ct == SSE:
        frames = [(e.event, e.data) for e in parse_sse(response.content).events if e.dispatched]
    found = body_violations(p.op, response.status_code, ct, response.content, frames,
                            p.body if isinstance(p.body, dict) else None, "answer", p.applied)
    if found:
        raise Finding(sorted({v.requirement for v in found}), "; ".join(v.text for v in found[:3]))


def content_type_documented(ctx, response, case) -> None:
    """schemathesis' content-type check, reading a documented `application/json` as any JSON media type:
    `application/problem+json` carries the same JSON (RFC 6839), so it is no undocumented content type."""
    from schemathesis.openapi.checks import UndefinedContentType
    from schemathesis.specs.openapi.checks import content_type_conformance
    try:
        content_type_conformance(ctx, response, case)
    except UndefinedContentType as failure:
        documented = getattr(failure, "defined_content_types", None) or []
        if not (is_json_media_type(_ctype(response)) and any(is_json_media_type(d) for d in documented)):
            raise


CUSTOM_CHECKS = [refusal_is_4xx, refusal_carries_code, refusal_is_json_error, mcp_unauthenticated,
                 mcp_response_id, bodies_match_schemas]


_load_lock = threading.Lock()   # the four fuzz scenarios start together, each in its own thread


def _schemathesis():
    with _load_lock:   # functools.cache alone lets concurrent first calls import schemathesis twice at once
        return _load_schemathesis()


@functools.cache
def _load_schemathesis():
    """Import schemathesis, register the custom checks once, load the document once."""
    import schemathesis
    from schemathesis import checks as st_checks
    from schemathesis.specs.openapi import checks as oa_checks

    for fn in [*CUSTOM_CHECKS, content_type_documented]:
        schemathesis.check(fn)
    schema = schemathesis.openapi.from_path(str(OPENAPI))
    builtin = [st_checks.not_a_server_error, oa_checks.status_code_conformance,
               content_type_documented, oa_checks.response_headers_conformance]
    ops = {}
    for res in schema.get_all_operations():
        op = res.ok()
        for name, (method, path) in OPERATIONS.items():
            if op.method.upper() == method and op.path == path:
                ops[name] = op
    return schemathesis, schema, builtin, ops


_generation_lock = generate.GENERATION_LOCK   # hypothesis draws one thing at a time, process-wide


def builtin_requirements(failure, p: Probe, stream_selected: bool) -> list[str]:
    """Map a schemathesis built-in failure to the requirement it breaks."""
    text = f"{getattr(failure, 'title', '')} {getattr(failure, 'message', '')}".lower()
    if "header" in text:
        if "www-authenticate" in text:
            return ["AUTH-MCP-008"]
        if "retry-after" in text:
            return ["MCP-ERR-003"] if p.op == "mcp" else ["GEN-RATE-003"]
        if "x-ratelimit-remaining" in text:
            return ["GEN-RATE-002"]
    return status_requirement(p, stream_selected)


# -- building cases ----------------------------------------------------------------------------
class Plan:
    def __init__(self, target, unique: Callable[[str], str], tool: str | None = None):
        self.target = target
        self.unique = unique
        self.agent = target.agent_id
        self.tool = tool                      # the MCP tool name (None: the server would not say)
        self.auth = {"Authorization": f"Bearer {target.api_key}"}

    def fixed_headers(self, op: str, body: Any = None) -> dict[str, str]:
        if op == "metadata":
            return {}
        if op == "mcp":
            method = body.get("method") if isinstance(body, dict) and isinstance(body.get("method"), str) else None
            h = {"MCP-Protocol-Version": MCP_VERSION, "Accept": "application/json, text/event-stream",
                 "Mcp-Method": method if method and _header_safe(method) else "tools/call"}
            params = body.get("params") if isinstance(body, dict) else None
            name = params.get("name") if isinstance(params, dict) else None
            if method == "tools/call" and isinstance(name, str) and _header_safe(name):
                h["Mcp-Name"] = name
            return {**self.auth, **h}
        return {**self.auth}

    def mcp_call(self, generated: Any) -> dict[str, Any]:
        """A positive MCP case: a well-formed `tools/call` of the agent's tool (headers and `_meta` agreeing),
        its prompt and id taken from the generated body, so it runs the agent and its result is judged."""
        body = generated if isinstance(generated, dict) else {}
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        text = next((v for v in (args.get("prompt"), body.get("method")) if isinstance(v, str)), "")
        rid = body.get("id")              # an integer id, so its echo is judged by value (1.0 is 1, "1" is not)
        call = {"jsonrpc": "2.0", "id": rid if type(rid) is int else len(repr(body)) % 1000 + 1}
        meta = {META_VERSION: MCP_VERSION, META_CAPS: {}}
        if self.tool is None:                 # no tool to call: a request that describes it instead
            return {**call, "method": "tools/list", "params": {"_meta": meta}}
        return {**call, "method": "tools/call", "params": {
            "name": self.tool, "arguments": {"prompt": PROMPT_PREFIX + text, "session_id": self.unique("fz")},
            "_meta": meta}}

    def sanitize(self, op: str, body: Any, positive: bool) -> Any:
        """Echo-mode prompts, unique session keys; positive bodies lose fields whose acceptance is open."""
        if op == "mcp" and positive:
            return self.mcp_call(body)
        if not isinstance(body, dict):
            return body
        body = dict(body)
        if op == "invoke":
            if isinstance(body.get("prompt"), str):
                body["prompt"] = PROMPT_PREFIX + body["prompt"]
            if isinstance(body.get("sessionId"), str) and 1 <= len(body["sessionId"]) <= 256:
                body["sessionId"] = self.unique("fz")
            if positive:
                body.pop("messages", None)            # item shape not shown: a refusal would be legitimate
                self._trim_extras(body, ("prompt", "sessionId", "stream"))
        elif op == "agui":
            msgs = body.get("messages")
            if isinstance(msgs, list):
                body["messages"] = [self._echo_message(m, positive) for m in msgs]
            if isinstance(body.get("threadId"), str) and 1 <= len(body["threadId"]) <= 256:
                body["threadId"] = self.unique("fz")
            if positive:
                body.pop("resume", None)              # no paused run to answer: behaviour not shown
                if not any(isinstance(m, dict) and m.get("role") == "user" for m in body.get("messages", [])):
                    body.setdefault("messages", []).append({"id": "fz-1", "role": "user", "content": PROMPT_PREFIX})
                self._trim_extras(body, ("threadId", "runId", "messages"))
        elif op == "mcp":
            params = body.get("params")
            args = params.get("arguments") if isinstance(params, dict) else None
            if isinstance(args, dict) and isinstance(args.get("prompt"), str):
                body["params"]["arguments"] = {**args, "prompt": PROMPT_PREFIX + args["prompt"]}
        return body

    @staticmethod
    def _echo_message(m: Any, positive: bool) -> Any:
        if not isinstance(m, dict):
            return m
        m = dict(m)
        if positive:
            m["role"] = "user" if m.get("role") == "user" else "assistant"
            for k in ("id", "content"):
                if not isinstance(m.get(k), str):
                    m[k] = "fz"
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m["content"] = PROMPT_PREFIX + m["content"]
        return m

    @staticmethod
    def _trim_extras(body: dict, keep: tuple[str, ...]) -> None:
        """Extra fields stay well inside the 4 KB extra-data bound whatever field the server uses for it."""
        for k in [k for k in body if k not in keep]:
            if len(generate.canonical_bytes(body[k])) > 1500:
                del body[k]


def _header_safe(value: str) -> bool:
    return value.isascii() and value.isprintable() and value == value.strip()


def draw(op_obj, mode, n: int, seed: int | None, path_params: dict | None, headers: dict) -> list:
    if n <= 0:
        return []
    from hypothesis.errors import Unsatisfiable
    with _generation_lock:
        strategy = op_obj.as_strategy(generation_mode=mode, path_parameters=path_params, headers=headers)
        try:
            return generate.examples(strategy, n, seed)
        except Unsatisfiable:
            return []


def build_probes(name: str, plan: Plan, depth: int, seed: int | None) -> list[Probe]:
    st, _schema, _builtin, ops = _schemathesis()
    from schemathesis import GenerationMode
    op = ops[name]
    n_pos, n_neg, _ = (x * depth for x in PLAN[name])
    probes: list[Probe] = []
    if name == "metadata":
        own = draw(op, GenerationMode.POSITIVE, 1, seed, {"agentId": plan.agent}, {})
        probes += [Probe(name, "positive", c) for c in own]
        probes += [Probe(name, "other-agent", c) for c in draw(op, GenerationMode.POSITIVE, n_pos, seed, None, {})]
        return probes
    fixed = plan.fixed_headers(name)
    path = {"agentId": plan.agent}
    for mode, kind, n in ((GenerationMode.POSITIVE, "positive", n_pos), (GenerationMode.NEGATIVE, "negative", n_neg)):
        for case in draw(op, mode, n, seed, path, fixed):
            probes.append(_probe_for(name, kind, case, plan))
    if probes:   # the first positive body again, without a credential
        first = next((p for p in probes if p.kind == "positive"), probes[0])
        headers = {k: v for k, v in plan.fixed_headers(name, first.body).items() if k != "Authorization"}
        bare = op.schema.make_case(operation=op, path_parameters=dict(path), headers=headers, body=first.body,
                                   media_type="application/json")
        probes.append(Probe(name, "no-auth", bare, [], first.body))
    return probes


def _probe_for(name: str, kind: str, case, plan: Plan) -> Probe:
    body = plan.sanitize(name, case.body, positive=kind == "positive")
    if body is not case.body:
        case.body = body
    if name == "mcp":     # a positive call carries exactly the headers the body implies (no stray Mcp-Name)
        generated = {} if kind == "positive" else (case.headers or {})
        case.headers = {**generated, **plan.fixed_headers(name, body)}
    defects = DEFECTS[name](body) if name in DEFECTS and not isinstance(body, (bytes, bytearray)) else []
    if name in DEFECTS and isinstance(body, (bytes, bytearray)):
        defects = _raw_defects(name, body)
    return Probe(name, kind, case, defects, body, other_broken=other_broken_fields(name, body, defects))


def _raw_defects(name: str, raw: bytes) -> list[Defect]:
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        rid = "INV-ERR-005" if name == "invoke" else "AGUI-ERR-001"
        return [(rid, None, "the body is not valid JSON")]
    return DEFECTS[name](doc)


# -- sending and judging -------------------------------------------------------------------------
def redact(text: str, secrets: tuple[str, ...]) -> str:
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


def transcript_body(text: str) -> str:
    """The whole body as evidence (cut only past MAX_TRANSCRIPT characters, saying how much was left)."""
    return text if len(text) <= MAX_TRANSCRIPT else text[:MAX_TRANSCRIPT] + f"… ({len(text) - MAX_TRANSCRIPT:,} more)"


def _redacted_request(p: Probe, secrets: tuple[str, ...]) -> dict[str, Any]:
    headers = {k: redact(str(v), secrets) for k, v in (p.case.headers or {}).items() if k.lower() != "authorization"}
    headers["Authorization"] = "(none)" if p.kind == "no-auth" else "Bearer ***"
    body = p.body
    if isinstance(body, (bytes, bytearray)):
        shown = repr(bytes(body))
    else:
        shown = json.dumps(body, ensure_ascii=False) if body is not None else ""
    return {"method": p.case.method.upper(), "path": p.case.formatted_path, "headers": headers,
            "body": transcript_body(redact(shown, secrets))}


def _redacted_response(response, secrets: tuple[str, ...]) -> dict[str, Any]:
    """Status, every header and the whole body of the answer (the first and only observation)."""
    headers = [(k, redact(v, secrets)) for k, v in response.headers.multi_items()]
    return {"status": response.status_code, "headers": headers,
            "body": transcript_body(redact(response.content.decode("utf-8", "replace"), secrets))}


def _distinct(probes: list[Probe]) -> list[Probe]:
    """Drop cases identical to an earlier one (hypothesis repeats small examples such as b'\\x00')."""
    seen, out = set(), []
    for p in probes:
        key = (p.kind, repr(p.body), repr(sorted((p.case.headers or {}).items())), repr(p.case.path_parameters))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _stream_selected(p: Probe) -> bool:
    return isinstance(p.body, dict) and p.body.get("stream") is True


def run_operation(name: str, target, unique: Callable[[str], str], send: Callable[[Any], Any],
                  tool: str | None = None) -> dict[str, Any]:
    """Blocking: draw, send and judge the generated cases of one operation (runs in a worker thread).

    Each case is sent exactly once; its answer is the evidence (nothing is replayed or shrunk against
    the server). A crash of generation or of the judging machinery is a SuiteFault, never a finding.
    """
    try:
        st, _schema, builtin, _ops = generate.guarded(_schemathesis)
        plan = Plan(target, unique, tool)
        probes = generate.guarded(build_probes, name, plan, max(1, target.depth), target.seed)
    except SuiteFault:
        raise
    except Exception as exc:                                     # noqa: BLE001 - schemathesis or hypothesis
        raise SuiteFault(f"generating {name} cases failed (seed {target.seed}): {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    probes = _distinct(probes)
    probes.sort(key=lambda p: p.kind != "positive")          # positives first: they own the run budget
    run_cap = PLAN[name][2] * max(1, target.depth)
    out = {"operation": name, "requests": 0, "runs": 0, "skipped": 0, "statuses": {}, "cases": [],
           "generated": len(probes), "seed": target.seed}
    t0 = time.monotonic()
    accepted_refusal = False
    for p in probes:
        # A case the spec says is refused is sent until one is wrongly accepted (then the server has
        # shown the failure, and each further one would cost a run); any other case that could start a
        # run needs the budget.
        over = out["runs"] >= run_cap and (not p.defects or accepted_refusal)
        if p.may_run and over or time.monotonic() - t0 > TIME_BUDGET:
            out["skipped"] += 1
            continue
        record = _send_and_judge(p, st, builtin, target, send, out)
        accepted_refusal |= bool(p.defects and record.get("run"))
        out["cases"].append(record)
    return out


def _send_and_judge(p: Probe, st, builtin, target, send, out: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": p.kind, "request": _redacted_request(p, target.secrets),
                              "defects": [d[2] for d in p.defects], "exercised": [], "findings": []}
    out["requests"] += 1
    try:
        response = send(p)
    except Exception as exc:                                # the server's fault or the network's
        record.update(status=None, error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        record["findings"].append({"requirements": status_requirement(p, _stream_selected(p)),
                                   "check": "transport", "message": f"no answer: {record['error']}"})
        record["exercised"] = status_requirement(p, _stream_selected(p))
        return record
    from schemathesis.core.failures import Failure, FailureGroup
    status = response.status_code
    out["statuses"][str(status)] = out["statuses"].get(str(status), 0) + 1
    ct = _ctype(response)
    ran = p.may_run and 200 <= status < 300 and _is_result(p, response)
    out["runs"] += int(ran)
    record.update(status=status, content_type=ct, run=ran,
                  answer=redact(response.content[:MAX_EXCERPT].decode("utf-8", "replace"), target.secrets),
                  response=_redacted_response(response, target.secrets))
    _current.probe = p
    try:
        p.case.validate_response(response, checks=builtin + CUSTOM_CHECKS)
    except (FailureGroup, Failure, AssertionError) as group:      # FailureGroup: one entry per failed check
        for failure in getattr(group, "exceptions", [group]):
            record["findings"].append(_finding(failure, p))
    except Exception as exc:                                       # noqa: BLE001 - a check crashed: ours
        raise SuiteFault(f"judging a generated {p.op} case crashed: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    finally:
        _current.probe = None
    exercised = set(status_requirement(p, _stream_selected(p))) | _shape_requirements(p, status)
    for name in p.applied:
        exercised |= {"META-STATE-003"} if p.op == "metadata" and name == "error-body" else set(MAPS[name].values())
    for f in record["findings"]:
        exercised |= set(f["requirements"])
    record["exercised"] = sorted(exercised)
    return record


def _is_result(p: Probe, response) -> bool:
    """An MCP answer ran the tool only if it is a result (a 200 JSON-RPC error started no run)."""
    if p.op != "mcp":
        return True
    return _ctype(response) == SSE or isinstance(_json_body(response), dict) and "result" in _json_body(response)


def _finding(failure, p: Probe) -> dict[str, Any]:
    exc = getattr(failure, "exception", None)
    if isinstance(exc, Finding):
        return {"requirements": exc.requirements, "check": getattr(failure, "title", "custom"), "message": str(exc)}
    msg = f"{getattr(failure, 'title', type(failure).__name__)}: {getattr(failure, 'message', str(failure))}"
    return {"requirements": builtin_requirements(failure, p, _stream_selected(p)),
            "check": getattr(failure, "title", type(failure).__name__), "message": " ".join(msg.split())[:400]}


def _shape_requirements(p: Probe, status: int) -> set[str]:
    """Requirements the custom checks judged on this answer besides the schema fields."""
    out: set[str] = set()
    if p.op == "agui" and 400 <= status < 500:
        out.add("AGUI-ERR-005")
    if p.op == "mcp" and p.kind == "no-auth":
        out |= {"AUTH-MCP-003", "AUTH-MCP-008", "AUTH-MCP-009"}
    if p.op == "metadata" and p.kind != "positive" and status != 404:
        out.add("META-STATE-003")
    return out


# Headers schemathesis adds for its own transport; ours sets its own (identity encoding: the bytes as sent).
_TRANSPORT_HEADERS = {"user-agent", "accept-encoding", "connection", "content-length"}


def sender(ctx, loop: asyncio.AbstractEventLoop) -> Callable[[Probe], httpx.Response]:
    """Sends a generated case through the run's bounded client (deadlines, byte cap, circuit breaker, cost
    counted), from the worker thread, and hands schemathesis an httpx.Response to validate."""
    def send(p: Probe) -> httpx.Response:
        kw = p.case.as_transport_kwargs(base_url=ctx.target.base_url)
        headers = {k: str(v) for k, v in (kw.get("headers") or {}).items() if k.lower() not in _TRANSPORT_HEADERS}
        url = str(httpx.URL(kw["url"], params=kw.get("params") or None))
        body = {"json": kw["json"]} if "json" in kw else {"content": _as_bytes(kw.get("data"))}
        coro = ctx.send(kw["method"], url, label=f"fuzz-{p.kind}", credential=None, headers=headers,
                        retry_429=False, limits=dataclasses.replace(ctx.client.limits, total=REQUEST_TIMEOUT), **body)
        ex = asyncio.run_coroutine_threadsafe(coro, loop).result(REQUEST_TIMEOUT + 15)
        if ex.status is None:
            raise ConnectionError(ex.error or "no answer")
        request = httpx.Request(ex.method, ex.url, headers=headers, content=ex.request_body or b"")
        response = httpx.Response(ex.status, headers=ex.headers.multi_items(), content=ex.body, request=request)
        response.elapsed = datetime.timedelta(seconds=ex.t_end or 0.0)
        return response

    return send


def _as_bytes(data: Any) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    return data.encode() if isinstance(data, str) else json.dumps(data).encode()


async def in_daemon_thread(fn, *args):
    """Like asyncio.to_thread, but a worker still busy when the run ends cannot hold the process open."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def work() -> None:
        try:
            result = fn(*args)
        except BaseException as exc:                     # handed to the awaiting scenario
            loop.call_soon_threadsafe(lambda error=exc: done.done() or done.set_exception(error))
        else:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(result))

    threading.Thread(target=work, name="fuzz-worker", daemon=True).start()
    return await done


def _fuzz_scenario(name: str):
    protocol = name

    async def fuzz(ctx):
        if name != "metadata":
            ctx.need("api_key")
        ctx.need("agent_id")
        if name in ("invoke", "agui"):
            ctx.conformance_agent("generated prompts rely on the conformance agent's echo mode")
        tool = None
        if name == "mcp":
            tool = await listed_tool(ctx)
            ctx.note(tool=tool)
        result = await in_daemon_thread(run_operation, name, ctx.target, ctx.unique,
                                        sender(ctx, asyncio.get_running_loop()), tool)
        ctx.note(fuzz=result, summary=f"schemathesis {name}: {result['requests']} requests, "
                                      f"{result['runs']} agent runs, statuses {result['statuses']}"
                                      + (f", {result['skipped']} skipped (budget)" if result["skipped"] else ""))

    fuzz.__doc__ = f"Schemathesis-generated {name} requests (positive, negative, no credential), judged per case."
    fuzz.__name__ = f"fuzz_{name}"
    return scenario(f"fuzz.{name}", protocol=protocol, deadline=TIME_BUDGET + 30)(fuzz)


for _name in PLAN:
    _fuzz_scenario(_name)
