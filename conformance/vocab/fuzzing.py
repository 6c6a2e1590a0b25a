"""What the schemathesis scenarios (conformance/scenarios/fuzz.py) and their checks (conformance/checks/fuzz.py)
share: the operation table, how every part of a generated body reads against the spec, a generated case as sent
(`Probe`) and as answered (`Sent`).

A generated case is judged only where its right answer is unambiguous:

- a *negative* at MUST breaks exactly one rule the spec states (`Issue.requirement`: prompt missing or not a
  string, `stream` not a boolean, a session key of 0 or more than 256 characters, a body that is not a JSON
  object, AG-UI without a user message or resume) and every other part of it, nested fields included, is valid
  by the spec's own words;
- a *positive* has no such part at all;
- anything else is *open*: a rule the spec states without a requirement of its own (a `sessionId` that is not a
  string, a message `id` that is a number), or an input whose handling the spec and JSON/HTTP leave open. The
  scenario repairs what it draws so that it sends none of them (`scenarios/fuzz.py`); a case still open is not
  judged (`Probe.judged`).

What reads as open, and the sentence that leaves it so:

======================================  ============================================================================
part                                    why its right answer is open
======================================  ============================================================================
``null`` for an optional field          "`stream` | boolean | no … When absent, the Accept header decides": a null
(`stream`, `sessionId`, `messages`,     may be read as absent or refused (`validation_failed`); neither is stated
`threadId`, `runId`, `resume`)
``prompt: null``                        read as absent (INV-ERR-004, code not stated) or as not a string
                                        (INV-ERR-002, `validation_failed`): refused either way, code open
an empty string where no length is      "`prompt` | string", "`runId` | string", "AG-UI messages carry `id`
given (`prompt`, `runId`, a message     (string) … `content` (string)": no length, so "" may be refused
`id` or `content`)
a non-ASCII session key near a bound    "Session key length | 1 to 256 characters": code points, UTF-16 units and
                                        user-perceived characters count it differently
invoke `messages` items                 "Shape of the items of the `messages` field of invoke: not shown."
an AG-UI message role other than        "`role` (string, for example `user`)": AG-UI's other roles carry fields of
`user`/`assistant`, or fields besides   their own (`toolCallId`, …); a message is shown with `id`, `role`,
`id`, `role`, `content`; repeated ids   `content` only
AG-UI `tools`/`context` other than      the spec says "any", AG-UI's `RunAgentInput` types them as lists of tools
``[]``, `parentRunId`                   and context entries; `parentRunId` is AG-UI's, not shown
`resume` without a paused run           "Answers every interrupt a paused run ended with": no paused run, not shown
an extra invoke field over 4000 bytes   it may be the extra data field, "at most 4 KB as JSON" (1000 or 1024 B)
an integer beyond ±(2^53−1)             RFC 8259 §6/§9: readers may limit the range and precision of numbers
a string holding U+0000 or a lone       RFC 8259 §9 (limits on character contents) and §8.2 (unpaired surrogates:
surrogate                               "behavior … unpredictable")
raw bytes some reader takes as an       RFC 8259 §8.1: a byte order mark "MAY" be ignored; lenient readers replace
object or array (BOM, invalid UTF-8,    invalid UTF-8, accept NaN, let a repeated name win (§4: "names SHOULD be
NaN, repeated names)                    unique")
a JSON array to MCP                     a JSON-RPC 2.0 batch; the spec shows one request per body
======================================  ============================================================================

A stated rule with no requirement of its own (a `sessionId` that is not a string, `messages` that is not an array,
a message without `id`, a `runId` that is not a string) is another broken rule: it makes a case open too.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import httpx

from conformance import schemas
from conformance.vocab.protocols import SSE
from conformance.vocab.values import media_type

OPENAPI = schemas.resource("openapi.yaml")

# per operation and depth 1: (positive cases, negative cases, cases that may start a run); what is drawn for a seed
PLAN = {
    "invoke": (3, 20, 4),
    "agui": (2, 14, 3),
    "mcp": (2, 8, 2),
    "metadata": (4, 0, 0),
}
# per operation and depth 1: the negative cases sent, out of those drawn (metadata: the other agents' ids), at most
# a quarter of them judged on one stated rule; every rule the draws break is still sent twice, at a fraction of the
# requests (a hosted server's rate limit pays for each)
SENT_NEGATIVES = {"invoke": 8, "agui": 8, "mcp": 5, "metadata": 2}
OPERATIONS = {"invoke": ("POST", "/v1/agents/{agentId}/invoke"), "agui": ("POST", "/v1/agents/{agentId}/agui"),
              "mcp": ("POST", "/v1/agents/{agentId}/mcp"),
              "metadata": ("GET", "/.well-known/oauth-protected-resource/v1/agents/{agentId}/mcp")}

VALIDATION_FAILED = "validation_failed"
INVALID_REQUEST = "invalid_request"
MAX_SESSION_KEY = 256
SAFE_INTEGER = 2**53 - 1               # RFC 8259 §6: beyond it, readers may differ
EXTRA_DATA_BYTES = 4000                # "at most 4 KB as JSON", however KB is counted
INVOKE_FIELDS = ("prompt", "sessionId", "stream", "messages")
AGUI_FIELDS = ("threadId", "runId", "messages", "resume")
AGUI_TYPED = ("tools", "context")      # "any" in the spec, typed lists in AG-UI's RunAgentInput
AGUI_ONLY = ("parentRunId",)           # AG-UI's own field, not shown in the spec
MESSAGE_FIELDS = ("id", "role", "content")
SHOWN_ROLES = ("user", "assistant")


# -- JSON as every reader reads it ------------------------------------------------------------------
class _NotStrictJSON(ValueError):
    pass


def _no_repeated_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [k for k, _ in pairs]
    if len(set(names)) != len(names):
        raise _NotStrictJSON("a member name is repeated")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise _NotStrictJSON(f"{name} is not JSON")


def strict_json(raw: bytes) -> Any:
    """The value of a JSON text (RFC 8259: UTF-8, no byte order mark, no NaN/Infinity, unique member names);
    ValueError otherwise."""
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            raise _NotStrictJSON("a byte order mark")
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_repeated_names)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise _NotStrictJSON(str(exc)) from None


def json_text(raw: bytes) -> tuple[str, Any]:
    """How readers take raw bytes: ("json", value) for a JSON text; ("not-json", None) when no reader makes a
    JSON object or array of them; ("open", why) when a lenient reader would (a byte order mark it may ignore,
    invalid UTF-8 it replaces, NaN, a repeated member name)."""
    try:
        return "json", strict_json(raw)
    except ValueError:
        pass
    try:
        lenient = json.loads(raw.decode("utf-8", "replace").removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return "not-json", None
    if isinstance(lenient, (dict, list)):
        return "open", "not a JSON text, but a lenient reader takes it as one (byte order mark, invalid UTF-8, " \
                       "NaN or a repeated member name)"
    return "not-json", None


# a surrogate code point in a decoded string (Python keeps a lone `\ud800` escape as one): searched in C, as a request
# body's strings run to megabytes
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unreadable_value(value: Any) -> str | None:
    """What in a JSON value readers may take differently (RFC 8259 §6, §8.2, §9), or None."""
    for v in walk(value):
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > SAFE_INTEGER:
            return "holds an integer beyond ±(2^53−1), which readers may round or refuse (RFC 8259 §6)"
        if isinstance(v, str):
            if "\x00" in v:
                return "holds U+0000, which readers may refuse (RFC 8259 §9)"
            if LONE_SURROGATE.search(v):
                return "holds a lone surrogate, read unpredictably (RFC 8259 §8.2)"
    return None


def walk(value: Any) -> Iterator[Any]:
    """Every value of a JSON document, object member names included, depth first."""
    yield value
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk(v)


def clean_json(value: Any) -> Any:
    """The value with what readers may take differently taken out: integers brought within ±(2^53−1), U+0000 and
    lone surrogates dropped from strings (names too). Types are kept."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return max(-SAFE_INTEGER, min(SAFE_INTEGER, value))
    if isinstance(value, str):
        return "".join(c for c in value if c != "\x00" and not 0xD800 <= ord(c) <= 0xDFFF)
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        return {clean_json(k): clean_json(v) for k, v in value.items()}
    return value


def canonical_size(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
               .encode("utf-8", "surrogatepass"))


# -- every part of a body, read against the spec -----------------------------------------------------
@dataclass(frozen=True)
class Issue:
    """One part of a body that is not plainly valid: a stated rule it breaks (`requirement`, and the `code` the
    spec gives its refusal), or another broken rule or an open reading (`requirement` None)."""
    field: str                      # "prompt", "messages[0].id", "" for the body
    text: str
    requirement: str | None = None
    code: str | None = None

    @property
    def defect(self) -> "Defect":
        return (self.requirement or "", self.code, self.text)

    def __str__(self) -> str:
        return self.text


def _optional(body: dict, name: str) -> Issue | None:
    if name in body and body[name] is None:
        return Issue(name, f"`{name}` is null: read as absent or refused, the spec does not say")
    return None


def _session_key(body: dict, name: str, requirement: str) -> list[Issue]:
    if name not in body:
        return []
    key = body[name]
    if key is None:
        return [_optional(body, name)]
    if not isinstance(key, str):
        return [Issue(name, f"`{name}` is not a string (a stated type with no requirement of its own)")]
    units = len(key.encode("utf-16-le", "surrogatepass")) // 2
    if not key:
        return [Issue(name, f"`{name}` is empty", requirement, VALIDATION_FAILED)]
    if len(key) > MAX_SESSION_KEY and key.isascii():
        return [Issue(name, f"`{name}` has {len(key)} characters", requirement, VALIDATION_FAILED)]
    if len(key) > MAX_SESSION_KEY or units > MAX_SESSION_KEY:
        return [Issue(name, f"`{name}` is a non-ASCII key whose length (1 to 256 characters) depends on how "
                            f"characters are counted ({len(key)} code points, {units} UTF-16 units)")]
    return []


def _non_empty_string(body: dict, name: str, where: str | None = None) -> list[Issue]:
    """A field typed "string" with no length given: present, it must be a string; empty, its reading is open."""
    where = where or name
    if name not in body:
        return []
    value = body[name]
    if value is None:
        return [Issue(where, f"`{where}` is null: read as absent or refused, the spec does not say")]
    if not isinstance(value, str):
        return [Issue(where, f"`{where}` is not a string (a stated type with no requirement of its own)")]
    if not value:
        return [Issue(where, f"`{where}` is an empty string: no length is given, it may be refused")]
    return []


def _values(body: dict, fields: Any) -> list[Issue]:
    out = []
    for name in fields:
        why = unreadable_value(body[name]) if name in body else None
        if why:
            out.append(Issue(name, f"`{name}` {why}"))
    return out


def invoke_issues(body: Any) -> list[Issue]:
    """Every part of an invoke body that is not plainly valid."""
    if not isinstance(body, dict):
        return [Issue("", "the body is not a JSON object", "INV-ERR-005")]
    out: list[Issue] = []
    prompt = body.get("prompt")
    if "prompt" not in body:
        out.append(Issue("prompt", "no `prompt`", "INV-ERR-004"))
    elif prompt is None:
        out.append(Issue("prompt", "`prompt` is null: a missing prompt (code not stated) or one that is not a "
                                   "string (validation_failed); the code is open"))
    elif not isinstance(prompt, str):
        out.append(Issue("prompt", "`prompt` is not a string", "INV-ERR-002", VALIDATION_FAILED))
    elif not prompt:
        out.append(Issue("prompt", "`prompt` is an empty string: no length is given, it may be refused"))
    stream = body.get("stream")
    if "stream" in body and stream is None:
        out.append(_optional(body, "stream"))
    elif "stream" in body and not isinstance(stream, bool):
        out.append(Issue("stream", "`stream` is not a boolean", "INV-ERR-003", VALIDATION_FAILED))
    out += _session_key(body, "sessionId", "INV-SESS-006")
    if "messages" in body:
        msgs = body["messages"]
        if msgs is None:
            out.append(_optional(body, "messages"))
        elif not isinstance(msgs, list):
            out.append(Issue("messages", "`messages` is not an array (a stated type with no requirement of its own)"))
        elif msgs:
            out.append(Issue("messages", "the shape of invoke `messages` items is not shown"))
    for name, value in body.items():
        if name not in INVOKE_FIELDS and canonical_size(value) > EXTRA_DATA_BYTES:
            out.append(Issue(name, f"`{name}` is over 4000 bytes as JSON: it may be the extra data field "
                                   f"(at most 4 KB)"))
    return out + _values(body, body.keys())


def _has_user_message(msgs: Any) -> bool:
    return isinstance(msgs, list) and any(isinstance(m, dict) and m.get("role") == "user" for m in msgs)


def _message_issues(i: int, m: Any) -> list[Issue]:
    at = f"messages[{i}]"
    if not isinstance(m, dict):
        return [Issue(at, f"`{at}` is not a message object (a stated shape with no requirement of its own)")]
    out = []
    for name in MESSAGE_FIELDS:
        if name not in m:
            out.append(Issue(f"{at}.{name}", f"`{at}` has no `{name}` (a message carries `id`, `role`, `content`)"))
    out += _non_empty_string(m, "id", f"{at}.id") + _non_empty_string(m, "content", f"{at}.content")
    role = m.get("role")
    if "role" in m and not isinstance(role, str):
        out.append(Issue(f"{at}.role", f"`{at}.role` is not a string (a stated type with no requirement of its own)"))
    elif isinstance(role, str) and role not in SHOWN_ROLES:
        out.append(Issue(f"{at}.role", f"`{at}.role` is {role!r}: roles other than user and assistant carry fields "
                                       f"the spec does not show"))
    extra = [k for k in m if k not in MESSAGE_FIELDS]
    if extra:
        out.append(Issue(at, f"`{at}` has fields the spec does not show ({', '.join(map(repr, extra[:3]))})"))
    return out


def agui_issues(body: Any) -> list[Issue]:
    """Every part of an AG-UI body that is not plainly valid."""
    if not isinstance(body, dict):
        return [Issue("", "the body is not a JSON object (no user message, no resume)", "AGUI-ERR-001")]
    out: list[Issue] = []
    msgs = body.get("messages")
    if "resume" not in body and not _has_user_message(msgs):
        if "messages" not in body:
            out.append(Issue("messages", "neither `messages` nor `resume`", "AGUI-ERR-001", INVALID_REQUEST))
        elif msgs == []:
            out.append(Issue("messages", "`messages` is empty and no `resume`", "AGUI-ERR-002", INVALID_REQUEST))
        elif isinstance(msgs, list) and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in msgs):
            out.append(Issue("messages", "no message has role `user` and no `resume`", "AGUI-ERR-003",
                             INVALID_REQUEST))
    if "messages" in body:
        if msgs is None:
            out.append(_optional(body, "messages"))
        elif not isinstance(msgs, list):
            out.append(Issue("messages", "`messages` is not an array (a stated type with no requirement of its own)"))
        else:
            for i, m in enumerate(msgs):
                out += _message_issues(i, m)
            ids = [m.get("id") for m in msgs if isinstance(m, dict) and isinstance(m.get("id"), str)]
            if len(set(ids)) != len(ids):
                out.append(Issue("messages", "two messages share an `id`: not shown"))
    if "resume" in body:
        out.append(_optional(body, "resume") or
                   Issue("resume", "`resume` answers no paused run: what the service does then is not shown"))
    out += _session_key(body, "threadId", "AGUI-SESS-004")
    out += _non_empty_string(body, "runId")
    for name in AGUI_TYPED:
        if name in body and body[name] != []:
            out.append(Issue(name, f"`{name}` is \"any\" in the spec but a typed list in AG-UI's RunAgentInput"))
    for name in AGUI_ONLY:
        if name in body:
            out.append(Issue(name, f"`{name}` is AG-UI's own field, not shown in the spec"))
    return out + _values(body, body.keys())


def mcp_issues(body: Any) -> list[Issue]:
    """MCP states no refusal of a body's content here: only what makes any answer's reading open."""
    if isinstance(body, list):
        return [Issue("", "a JSON array is a JSON-RPC 2.0 batch; the spec shows one request per body")]
    return []


ISSUES: dict[str, Callable[[Any], list[Issue]]] = {"invoke": invoke_issues, "agui": agui_issues, "mcp": mcp_issues}
NOT_JSON = {"invoke": Issue("", "the body is not valid JSON", "INV-ERR-005"),
            "agui": Issue("", "the body is not valid JSON (no user message, no resume)", "AGUI-ERR-001")}


def issues_of(op: str, body: Any) -> list[Issue]:
    """Every part of a body (raw bytes or a JSON value) that is not plainly valid for the operation."""
    if op not in ISSUES:
        return []
    if isinstance(body, (bytes, bytearray)):
        kind, value = json_text(bytes(body))
        if kind == "not-json":
            return [NOT_JSON[op]] if op in NOT_JSON else []
        if kind == "open":
            return [Issue("", value)]
        body = value
    return ISSUES[op](body)


# -- the defects a negative is judged on -------------------------------------------------------------
# (requirement, error code the refusal must carry or None, description)
Defect = tuple[str, str | None, str]


def _defects(found: list[Issue]) -> list[Defect]:
    return [i.defect for i in found if i.requirement]


def invoke_defects(body: Any) -> list[Defect]:
    return _defects(invoke_issues(body))


def agui_defects(body: Any) -> list[Defect]:
    return _defects(agui_issues(body))


def raw_defects(op: str, raw: bytes) -> list[Defect]:
    """The defects of a body sent as raw bytes: not JSON at all, or the JSON it holds."""
    return _defects(issues_of(op, raw))


def defects_of(op: str, body: Any) -> list[Defect]:
    """The stated rules a body breaks (none for MCP and metadata)."""
    return _defects(issues_of(op, body))


def other_broken_fields(op: str, body: Any, defects: list[Defect]) -> set[str]:
    """Every other part of the body that is not plainly valid (another broken rule, nested ones included, or an
    open reading), each saying why: a case with any is not judged."""
    stated = {d[0] for d in defects}
    return {i.text for i in issues_of(op, body) if not i.requirement or i.requirement not in stated}


def expected_code(defects: list[Defect], other_broken: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The `error.code` a refusal must carry: only when every defect states the same one and the body
    breaks no other rule. The spec sets no precedence between codes, so a body that breaks several
    rules may be refused with the code of any of them."""
    codes = {d[1] for d in defects}
    return codes.pop() if len(codes) == 1 and not other_broken else None


# -- a generated case, as sent and as answered ------------------------------------------------------
class _NoBody:
    def __repr__(self) -> str:
        return "NO_BODY"


NO_BODY: Any = _NoBody()               # a request without a body (a JSON `null` body is None)


@dataclass
class Request:
    """A generated request of one operation (`OPERATIONS`): what was drawn for it, the target's values put in.
    Plain data: sending, recording and judging it need neither schemathesis nor hypothesis."""
    op: str
    path_parameters: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    cookies: dict[str, Any] = field(default_factory=dict)
    body: Any = NO_BODY
    media_type: str | None = None

    @property
    def method(self) -> str:
        return OPERATIONS[self.op][0]

    @property
    def path(self) -> str:
        return OPERATIONS[self.op][1]

    @property
    def formatted_path(self) -> str:
        return self.path.format(**self.path_parameters)

    def wire(self, base_url: str) -> tuple[str, str, dict[str, str], dict[str, Any]]:
        """(method, URL, headers, body) as sent: the body as JSON (`json`), or raw bytes as drawn (`content`),
        under the media type drawn for it unless a drawn header names one."""
        headers = {k: str(v) for k, v in self.headers.items()}
        body: dict[str, Any] = {}
        if self.body is not NO_BODY:
            if self.media_type and not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = self.media_type
            body = {"content": bytes(self.body)} if isinstance(self.body, (bytes, bytearray)) else {"json": self.body}
        url = httpx.URL(base_url.rstrip("/") + self.formatted_path, params=self.query or None)
        return self.method, str(url), headers, body

    @classmethod
    def drawn(cls, op: str, case: dict[str, Any]) -> "Request":
        """A request from a draw as `conformance.generate.cases` hands it out."""
        return cls(op, dict(case.get("path_parameters") or {}), dict(case.get("headers") or {}),
                   dict(case.get("query") or {}), dict(case.get("cookies") or {}), case.get("body", NO_BODY),
                   case.get("media_type"))


@dataclass
class Probe:
    op: str
    kind: str                          # positive | negative | no-auth | other-agent
    case: Any                          # the request (`Request`)
    defects: list[Defect] = field(default_factory=list)
    body: Any = None                   # the body as sent (Python value; bytes for raw bodies)
    other_broken: set[str] = field(default_factory=set)  # other parts not plainly valid (`other_broken_fields`)
    label: str = ""                    # the step label it is recorded under (`fuzz-negative-3`)

    @property
    def judged(self) -> bool:
        """Its right answer is unambiguous: no stated defect (a positive) or exactly one, and nothing else."""
        return len(self.defects) <= 1 and not self.other_broken

    @property
    def open_reasons(self) -> list[str]:
        several = [f"breaks {len(self.defects)} stated rules ({', '.join(d[0] for d in self.defects)}) "
                   f"with no precedence between them"] if len(self.defects) > 1 else []
        return several + sorted(self.other_broken)

    @property
    def may_run(self) -> bool:
        if self.op in ("invoke", "agui"):
            return self.kind != "no-auth"
        return self.op == "mcp" and self.kind != "no-auth" and isinstance(self.body, dict) \
            and self.body.get("method") == "tools/call"

    @property
    def stream_selected(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True


def probe(op: str, kind: str, case: Any, body: Any) -> Probe:
    """A case and the body it sends, with how that body reads against the spec."""
    defects = defects_of(op, body)
    return Probe(op, kind, case, defects, body, other_broken=other_broken_fields(op, body, defects))


@dataclass
class Sent:
    """One generated case sent once: the probe, the answer (an httpx.Response, kept in memory for schemathesis'
    own checks) or why there was none, the redacted transcript the reports show (`record`), and the recorded
    exchange a failure names (`exchange`)."""
    probe: Probe
    response: Any = None
    error: str | None = None
    record: dict[str, Any] = field(default_factory=dict)
    exchange: Any = None


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
