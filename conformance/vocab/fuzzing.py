"""What the schemathesis scenarios (conformance/scenarios/fuzz.py) and their checks (conformance/checks/fuzz.py)
share: the operation table, which negative data the spec says is refused (the scenario spends its run budget by
it, the checks judge by it), a generated case as sent (`Probe`) and as answered (`Sent`).

A negative case is "must refuse" only for the defects a requirement states (prompt missing or not a string,
`stream` not boolean, a session key of 0 or more than 256 characters, a body that is not a JSON object, AG-UI
without a user message or resume); other schema violations (a message without `id`, a non-array `messages`)
are sent but only the answer's shape is judged.
"""
from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance import schemas
from conformance.vocab.protocols import SSE
from conformance.vocab.values import media_type

OPENAPI = schemas.resource("openapi.yaml")

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


def raw_defects(op: str, raw: bytes) -> list[Defect]:
    """The defects of a body sent as raw bytes: not JSON at all, or the JSON it holds."""
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        rid = "INV-ERR-005" if op == "invoke" else "AGUI-ERR-001"
        return [(rid, None, "the body is not valid JSON")]
    return DEFECTS[op](doc)


def defects_of(op: str, body: Any) -> list[Defect]:
    """What the spec says makes the server refuse this body (none for MCP and metadata)."""
    if op not in DEFECTS:
        return []
    return raw_defects(op, body) if isinstance(body, (bytes, bytearray)) else DEFECTS[op](body)


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


# -- a generated case, as sent and as answered ------------------------------------------------------
@dataclass
class Probe:
    op: str
    kind: str                          # positive | negative | no-auth | other-agent
    case: Any                          # the schemathesis Case
    defects: list[Defect] = field(default_factory=list)
    body: Any = None                   # the body as sent (Python value; bytes for raw bodies)
    other_broken: set[str] = field(default_factory=set)  # fields breaking rules besides the defects

    @property
    def may_run(self) -> bool:
        if self.op in ("invoke", "agui"):
            return self.kind != "no-auth"
        return self.op == "mcp" and self.kind != "no-auth" and isinstance(self.body, dict) \
            and self.body.get("method") == "tools/call"

    @property
    def stream_selected(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


@dataclass
class Sent:
    """One generated case sent once: the probe, the answer (an httpx.Response, kept in memory for schemathesis'
    own checks) or why there was none, and the redacted transcript the reports show (`record`)."""
    probe: Probe
    response: Any = None
    error: str | None = None
    record: dict[str, Any] = field(default_factory=dict)


def json_body(response) -> Any:
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


def content_type(response) -> str:
    """The media type of an answer (httpx, or schemathesis' Response: lowercase keys, list values)."""
    value = response.headers.get("content-type") or [""]
    return media_type(value[0] if isinstance(value, list) else value)


def started_run(p: Probe, response) -> bool:
    """The answer shows the case started an agent run: a 2xx to a case that may run, and for MCP a result (a 200
    JSON-RPC error started no run)."""
    if not (p.may_run and 200 <= response.status_code < 300):
        return False
    if p.op != "mcp" or content_type(response) == SSE:
        return True
    body = json_body(response)
    return isinstance(body, dict) and "result" in body


# -- the OpenAPI document, loaded once ------------------------------------------------------------
_load_lock = threading.Lock()   # the four fuzz scenarios start together, each in its own thread


def schemathesis_operations():
    """(the schemathesis module, the loaded schema, operation name -> its APIOperation)."""
    with _load_lock:   # functools.cache alone lets concurrent first calls import schemathesis twice at once
        return _load_operations()


@functools.cache
def _load_operations():
    import schemathesis

    schema = schemathesis.openapi.from_path(str(OPENAPI))
    ops = {}
    for res in schema.get_all_operations():
        op = res.ok()
        for name, (method, path) in OPERATIONS.items():
            if op.method.upper() == method and op.path == path:
                ops[name] = op
    return schemathesis, schema, ops
