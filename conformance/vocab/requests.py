"""What a request was, read from the recorded request alone: the operation, the agent its path addresses, the
credential it carried, the JSON it sent, whether it asked for a stream, and whether the spec makes it a request
that must be served. The exchange rules (`conformance.exchange_rules`) decide from these which of them speak of an
exchange, whoever sent it (a scenario of ours, or the client of a capture).

Every reading is conservative: where the spec leaves a request's handling open (an item shape of invoke `messages`,
a length that differs by unit, a body near a limit), the request is not one a rule may judge that way.
"""
from __future__ import annotations

import json
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

from conformance.vocab.constants import INVOKE_INTERPRETED, MAX_KEY
from conformance.vocab.protocols import MCP_LEGACY_VERSION, MCP_VERSION, META_VERSION, slug_tool_name
from conformance.vocab.traffic import operation_of
from conformance.vocab.values import json_or_none, media_type
from conformance.wire.exchange import Exchange
from conformance.wire.near_miss import PREFIX as NEAR_MISS
from conformance.wire.redact import MASK

NOT_JSON = object()
SUPPORTED_VERSIONS = (MCP_VERSION, MCP_LEGACY_VERSION)
MCP_METHODS = ("initialize", "server/discover", "tools/list", "tools/call")
BODY_INSIDE, BODY_OUTSIDE = 900_000, 1_100_000    # bytes: well inside and well outside "at most 1 MB"
# the bodies the scenarios send over it: a fifth over 1 MB however a megabyte is counted (1,048,576 bytes or a
# million), so a limit set anywhere above it is met, and a body that costs a run little to send and record
BODY_OVER_LIMIT = 1_250_000
EXTRA_INSIDE, EXTRA_OUTSIDE = 3_000, 6_000        # bytes of JSON: well inside and well outside "at most 4 KB"
# the credential a request carried, by kind
ACCEPTED_KEYS = ("api-key", "access-token")
REFUSED_KEYS = ("none", "empty", "other-scheme", "unknown", "revoked", "expired")


def op(ex: Exchange) -> str | None:
    return ex.remembered("operation", lambda: operation_of(ex.url or ""))


def header(ex: Exchange, name: str) -> str | None:
    """A request header as sent (names compared case-insensitively)."""
    sent = ex.remembered("request headers", lambda: {k.lower(): v for k, v in ex.request_headers.items()})
    return sent.get(name.lower())


def body(ex: Exchange) -> Any:
    """The request's JSON (None when there was no body, NOT_JSON when it was not JSON)."""
    def parse() -> Any:
        if not ex.request_body:
            return None
        try:
            return json.loads(ex.request_body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return NOT_JSON
    return ex.remembered("request json", parse)


def fields(ex: Exchange) -> dict[str, Any]:
    """The request's JSON object ({} when it is none)."""
    sent = body(ex)
    return sent if isinstance(sent, dict) else {}


def path_agent(ex: Exchange) -> str | None:
    """The agentId of the path (`/v1/agents/{agentId}/…`), as the server reads it (percent-decoded)."""
    parts = urlsplit(ex.url or "").path.split("/")
    try:
        return unquote(parts[parts.index("agents") + 1])
    except (ValueError, IndexError):
        return None


def addressed(ex: Exchange, target: Any) -> str:
    """Which agent the path addresses: `agent` (the target's), `other` (--other-agent-id), `undeployed`,
    `malformed` (no `agt_` prefix) or `unknown` (any other id of the right form: one no organization has, as the
    suite makes them, or one a capture shows)."""
    agent = path_agent(ex)
    if agent is None:
        return "unknown"
    if agent == getattr(target, "agent_id", None):
        return "agent"
    if agent == getattr(target, "other_agent_id", None):
        return "other"
    if agent == getattr(target, "undeployed_agent_id", None):
        return "undeployed"
    if agent in getattr(target, "served_agents", ()):     # a capture's: an agent some answer served exists
        return "other"
    return "unknown" if agent.startswith("agt_") else "malformed"


def credential(ex: Exchange) -> str:
    """The credential the request's Authorization header carried: `none`, `empty` (the scheme alone), `other-scheme`,
    `api-key`, `access-token`, `revoked`, `expired`, `unknown` (one the suite made up), or `other` (a secret the run
    does not know: a capture's, or a fact's the scenario did not name)."""
    value = header(ex, "authorization")
    if value is None:
        return "none"
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return "other-scheme"
    rest = rest.strip()
    if not rest:
        return "empty"
    fact = {"api_key": "api-key", "access_token": "access-token", "revoked_key": "revoked",
            "expired_token": "expired"}.get(ex.credential or "")
    if fact:
        return fact
    if (ex.credential or "").startswith(NEAR_MISS):    # one the suite made from a secret: unknown, though masked
        return "unknown"
    return "other" if MASK in rest or ex.credential else "unknown"


def valid_key(ex: Exchange) -> bool:
    """The API key, under the Bearer scheme in any case (RFC 9110 §11.1: the scheme is case-insensitive)."""
    return credential(ex) == "api-key"


def is_json_content(ex: Exchange) -> bool:
    """`Content-Type: application/json` in any legitimate form (case, parameters: RFC 9110 §8.3.1)."""
    return media_type(header(ex, "content-type")) == "application/json"


def accepts_stream_only(ex: Exchange) -> bool:
    """`Accept` is one media range, `text/event-stream` (any case, parameters, a weight above 0): it selects
    streaming (invoke rule 1). A list of ranges leaves the choice to the server (RFC 9110 §12.5.1)."""
    accept = header(ex, "accept")
    if accept is None or "," in accept:
        return False
    mt, _, params = accept.partition(";")
    if mt.strip().lower() != "text/event-stream":
        return False
    weight = next((p.split("=", 1)[1].strip() for p in params.split(";") if p.strip().lower().startswith("q=")), "1")
    try:
        return float(weight) > 0
    except ValueError:
        return False


def names_stream(ex: Exchange) -> bool:
    """`Accept` names `text/event-stream` anywhere."""
    return "text/event-stream" in (header(ex, "accept") or "").lower()


def key_length(value: Any) -> str:
    """How a session key's length reads against 'length 1 to 256': `inside` or `outside` by every count (code
    points and UTF-16 units alike), `open` when the counts disagree, `not-a-string`."""
    if not isinstance(value, str):
        return "not-a-string"
    points, units = len(value), len(value.encode("utf-16-le")) // 2
    if 1 <= points <= MAX_KEY and 1 <= units <= MAX_KEY:
        return "inside"
    if (points == 0) or (points > MAX_KEY and units > MAX_KEY):
        return "outside"
    return "open"


def size_class(n: int) -> str:
    """`inside` or `outside` 'at most 1 MB' by a wide margin, `near` otherwise."""
    return "inside" if n <= BODY_INSIDE else "outside" if n >= BODY_OUTSIDE else "near"


def body_size(ex: Exchange) -> str:
    return size_class(len(ex.request_body or b""))


def extra_size(ex: Exchange, target: Any) -> str | None:
    """The extra data field's value against 'at most 4 KB as JSON' (UTF-8 bytes of its compact JSON): `inside`,
    `outside`, `near`, or None when the request carries none (or its name is not known)."""
    name = getattr(target, "extra_data_field", None)
    sent = fields(ex)
    if not name:     # its name not known: any other field as large may be it, so such a request is not judged
        large = [k for k, v in sent.items() if k not in INVOKE_INTERPRETED and _json_size(v)[1] > EXTRA_INSIDE]
        return "near" if large else None
    if name not in sent:
        return None
    compact, escaped = _json_size(sent[name])
    if max(compact, escaped) <= EXTRA_INSIDE:
        return "inside"
    return "outside" if min(compact, escaped) >= EXTRA_OUTSIDE else "near"


def _json_size(value: Any) -> tuple[int, int]:
    """(UTF-8 bytes of the compact JSON, its length written with ASCII escapes)."""
    return (len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")),
            len(json.dumps(value, separators=(",", ":"))))


# -- invoke ---------------------------------------------------------------------------------------------------
# A request's problems are codes: `credential`, `agent`, `content-type`, `body-size`, `body` (not a JSON object),
# `prompt`, `session-key`, `stream`, `messages`, `extra-data`, `resume`, `user-message`, `message-shape`, `run-id`,
# `jsonrpc`, `method`, `accept`, `version`, `headers`, `tool`. A rule about one problem reads the requests that have
# that problem alone; the spec does not say which of two problems a server reports first.
def common_problems(ex: Exchange, target: Any, operation: str, accepted: tuple[str, ...] = ("api-key",)) -> list[str]:
    found = []
    # whether invoke and AG-UI take the access token is not shown (AUTH-OPEN-001): a refusal of it is open, but once
    # the service ran the request with it, it was taken, and the run is one like any
    taken = operation in ("invoke", "agui") and credential(ex) == "access-token" and ex.status is not None \
        and 200 <= ex.status < 300
    if credential(ex) not in accepted and not taken:
        found.append("credential")
    if addressed(ex, target) != "agent":
        found.append("agent")
    if not is_json_content(ex):
        found.append("content-type")
    if body_size(ex) != "inside":
        found.append("body-size")
    if not isinstance(body(ex), dict):
        found.append("body")
    return found


def invoke_problems(ex: Exchange, target: Any) -> list[str]:
    """What keeps this request from being an invoke the spec says must be run ([] when nothing does): the API key on
    the target's agent, a JSON object body well inside 1 MB with a string `prompt`, `sessionId` absent or a string of
    1 to 256 characters by every count, `stream` absent or a boolean, no `messages` unless the service ran it or the
    run added them (its items' shape is not shown: a refusal may be theirs; once answered 200 they were taken, and
    the run adds a conversation only once the service ran one, `forms.INVOKE_HISTORIES`), the extra data well
    inside 4 KB."""
    if ex.method != "POST" or op(ex) != "invoke":
        return ["operation"]
    found = common_problems(ex, target, "invoke")
    sent = fields(ex)
    found += invoke_field_problems(sent)
    if "messages" in sent and ex.status != 200 and (ex.form or {}).get("invoke-history") != "earlier":
        found.append("messages")
    if extra_size(ex, target) not in (None, "inside"):
        found.append("extra-data")
    return found


def invoke_field_problems(sent: dict[str, Any]) -> list[str]:
    """What of an invoke body's own fields keeps it from running (`invoke_problems`): `prompt` not a string,
    `sessionId` not 1 to 256 characters by every count, `stream` not a boolean."""
    found = []
    if "prompt" not in sent or not isinstance(sent.get("prompt"), str):
        found.append("prompt")
    if "sessionId" in sent and key_length(sent["sessionId"]) != "inside":
        found.append("session-key")
    if "stream" in sent and not isinstance(sent["stream"], bool):
        found.append("stream")
    return found


def invoke_mode(ex: Exchange) -> str:
    """How an invoke asked for its answer: `stream-field` (`stream: true`), `accept` (no `stream`, Accept is the
    event stream), `json` (`stream: false`, or no `stream` and an Accept that is not the event stream), `either`
    (`stream: false` with the event stream accepted: INV-SEL-005 leaves it open)."""
    sent = fields(ex)
    if sent.get("stream") is True:
        return "stream-field"
    if "stream" not in sent:
        if accepts_stream_only(ex):
            return "accept"
        return "either" if names_stream(ex) else "json"
    return "either" if names_stream(ex) else "json"


# -- AG-UI --------------------------------------------------------------------------------------------------
def has_user_message(sent: dict[str, Any]) -> bool:
    messages = sent.get("messages")
    return isinstance(messages, list) and any(isinstance(m, dict) and m.get("role") == "user"
                                              and isinstance(m.get("content"), str) for m in messages)


def agui_problems(ex: Exchange, target: Any) -> list[str]:
    """What keeps this request from being an AG-UI run the spec says must stream ([] when nothing does): the API key
    on the target's agent, a JSON object well inside 1 MB with a user message of string content and no `resume` (a
    resume is answered on its thread's state), `threadId` absent or 1 to 256 characters by every count, `runId`
    absent or a non-empty string (an empty one too once the service ran it: with no length given, a refusal of it is
    open, a run of it a run like any), every message an object of string `id`, `role` and `content`."""
    if ex.method != "POST" or op(ex) != "agui":
        return ["operation"]
    found = common_problems(ex, target, "agui")
    sent = fields(ex)
    if "resume" in sent:
        found.append("resume")
    if not has_user_message(sent):
        found.append("user-message")
    messages = sent.get("messages")
    if "messages" in sent and not (isinstance(messages, list) and all(
            isinstance(m, dict) and all(isinstance(m.get(k), str) for k in ("id", "role", "content"))
            for m in messages)):
        found.append("message-shape")
    if "threadId" in sent and key_length(sent["threadId"]) != "inside":
        found.append("session-key")
    if "runId" in sent and not (isinstance(sent["runId"], str) and (sent["runId"] or ex.status == 200)):
        found.append("run-id")
    return found


# -- which rule a request is for ----------------------------------------------------------------------------
NOT_JUDGED_STATUSES = (411, 429)    # a body without a length refused (RFC 9110 §15.5.12); a rate limit


def problems(ex: Exchange, target: Any) -> list[str]:
    """The request's problems by its operation (`invoke_problems`, `agui_problems`, `mcp_problems`)."""
    def read() -> list[str]:
        kind = op(ex)
        if kind == "invoke":
            return invoke_problems(ex, target)
        if kind == "agui":
            return agui_problems(ex, target)
        if kind == "mcp":
            return mcp_problems(ex, target)
        return ["operation"]
    return ex.remembered("request problems", read)


def only(*codes: str) -> Callable[[Exchange, Any], bool]:
    """A rule's `applies`: the request's problems are exactly these, and it was answered (not 411, not 429)."""
    return lambda ex, target: ex.status not in NOT_JUDGED_STATUSES and problems(ex, target) == list(codes)


def scenario_prompt(target: Any, name: str) -> str | None:
    """The prompt the target's profile gives for the agent scenario `name`, if any."""
    profile = getattr(target, "profile", None)
    return (profile.scenario(name) or {}).get("prompt") if profile is not None else None


def echo_params_prompt(target: Any) -> str | None:
    """The prompt the profile gives for the agent's `echo params` (its params back as the reply), if any."""
    return scenario_prompt(target, "params_passthrough")


def runs_elsewhere(ex: Exchange, target: Any) -> bool:
    """A request the spec says must run but that it addresses `--other-agent-id` with the API key: another deployed
    agent of the organisation, so it runs too. What that agent replies is its own (its contract is not known here);
    how the service answers (the status, the form the request asked for, its framing) is the service's."""
    return ex.status not in NOT_JUDGED_STATUSES and credential(ex) == "api-key" and \
        addressed(ex, target) == "other" and problems(ex, target) == ["agent"]


def is_refusal(ex: Exchange, target: Any) -> bool:
    """The answer is a refusal: a 4xx (not a rate limit, not a length required), or any other status but 2xx to a
    request that had a problem (it was provoked)."""
    if ex.status is None or ex.status in NOT_JUDGED_STATUSES or 200 <= ex.status < 300:
        return False
    return 400 <= ex.status < 500 or problems(ex, target) not in ([], ["operation"])


# -- MCP ----------------------------------------------------------------------------------------------------
def rpc(ex: Exchange) -> dict[str, Any]:
    """The JSON-RPC request object ({} when the body is none: not JSON, a batch, …)."""
    return fields(ex)


def rpc_method(ex: Exchange) -> str | None:
    method = rpc(ex).get("method")
    return method if isinstance(method, str) else None


def is_notification(ex: Exchange) -> bool:
    """A JSON-RPC 2.0 notification: a method and no id (answered 202 with no body once it is let in)."""
    sent = rpc(ex)
    return sent.get("jsonrpc") == "2.0" and isinstance(sent.get("method"), str) and "id" not in sent


def has_id(ex: Exchange) -> bool:
    """A JSON-RPC request (not a notification) whose id is a string or an integer, as the spec's id is."""
    sent = rpc(ex)
    rid = sent.get("id")
    return "id" in sent and (isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)))


def meta(ex: Exchange) -> dict[str, Any]:
    params = rpc(ex).get("params")
    got = params.get("_meta") if isinstance(params, dict) else None
    return got if isinstance(got, dict) else {}


def declared_version(ex: Exchange) -> str | None:
    """The protocol version the request declares: its MCP-Protocol-Version header (for initialize, its
    protocolVersion param when no header is sent)."""
    value = header(ex, "mcp-protocol-version")
    if value is not None:
        return value.strip()
    if rpc_method(ex) == "initialize":
        params = rpc(ex).get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        return version if isinstance(version, str) else None
    return None


def headers_match(ex: Exchange) -> str | None:
    """Why the MCP request's headers do not match its body (None when they do, or it is a legacy request):
    `Mcp-Method` other than the body's `method`, `Mcp-Name` other than `params.name`, `MCP-Protocol-Version` other
    than the `_meta` version. Header values are compared exactly, as sent, after the whitespace HTTP strips around
    a value (RFC 9110 §5.5)."""
    version = header(ex, "mcp-protocol-version")
    if version is None or version.strip() != MCP_VERSION:
        return None
    method = header(ex, "mcp-method")
    if method is not None and method.strip() != rpc_method(ex):
        return f"Mcp-Method {method!r}, body method {rpc_method(ex)!r}"
    name = header(ex, "mcp-name")
    params = rpc(ex).get("params")
    body_name = params.get("name") if isinstance(params, dict) else None
    if name is not None and rpc_method(ex) == "tools/call" and name.strip() != body_name:
        return f"Mcp-Name {name!r}, params.name {body_name!r}"
    declared = meta(ex).get(META_VERSION)     # on any method that declares one ("the version in the request's _meta")
    if declared is not None and declared != version.strip():
        return f"MCP-Protocol-Version {version!r}, _meta version {declared!r}"
    return None


def mcp_problems(ex: Exchange, target: Any) -> list[str]:
    """What keeps this request from being an MCP request the spec says must be answered with a result ([] when
    nothing does): an accepted credential on the target's agent, JSON, a JSON-RPC 2.0 request with an id and a
    supported method, Accept listing both types (the recommended pair); a 2026-07-28 request with
    `MCP-Protocol-Version`, `Mcp-Method` and the `_meta` version (on tools/call there must be one) equal to the
    body and `Mcp-Name` absent or equal; a 2025-11-25 one with its header and no `_meta` version, or `initialize`
    with no header and protocolVersion 2025-11-25; a tools/call of the agent's tool with a string prompt, no resume, and a session_id
    absent or of 1 to 256 characters."""
    if ex.method != "POST" or op(ex) != "mcp":
        return ["operation"]
    found = [p for p in common_problems(ex, target, "mcp", ACCEPTED_KEYS) if p != "body-size"]
    # (the access token is an accepted credential of MCP: "The MCP endpoint accepts both credentials")
    sent = rpc(ex)
    if sent.get("jsonrpc") != "2.0" or not has_id(ex):
        found.append("jsonrpc")
    method = rpc_method(ex)
    if method not in MCP_METHODS:
        found.append("method")
    accept = (header(ex, "accept") or "").lower()
    if "application/json" not in accept or "text/event-stream" not in accept:
        found.append("accept")
    version = header(ex, "mcp-protocol-version")
    if method == "initialize":
        params = sent.get("params")
        if version is not None or not isinstance(params, dict) or params.get("protocolVersion") != MCP_LEGACY_VERSION:
            found.append("version")
    elif version is None:
        found.append("version")
    elif version.strip() == MCP_LEGACY_VERSION:
        if META_VERSION in meta(ex):
            found.append("version")
    elif version.strip() != MCP_VERSION:
        found.append("version")
    elif header(ex, "mcp-method") is None or (method == "tools/call" and META_VERSION not in meta(ex)):
        found.append("headers")
    elif headers_match(ex):
        found.append("headers")
    if method == "tools/call":
        args = tool_arguments(ex)
        name = (sent.get("params") or {}).get("name") if isinstance(sent.get("params"), dict) else None
        slug = getattr(target, "agent_slug", None)
        if not isinstance(name, str) or not (name == slug_tool_name(slug) if slug else name.startswith("ask_")):
            found.append("tool")
        if "resume" in args:
            found.append("resume")
        if not isinstance(args.get("prompt"), str):
            found.append("prompt")
        if "session_id" in args and key_length(args["session_id"]) != "inside":
            found.append("session-key")
    return found


def tool_arguments(ex: Exchange) -> dict[str, Any]:
    params = rpc(ex).get("params")
    args = params.get("arguments") if isinstance(params, dict) else None
    return args if isinstance(args, dict) else {}


def session_key(ex: Exchange) -> Any:
    """The session key a request sent, as it sent it (invoke `sessionId`, AG-UI `threadId`, the MCP tool's
    `session_id`), or None."""
    operation = op(ex)
    if operation == "mcp":
        return tool_arguments(ex).get("session_id")
    return fields(ex).get({"invoke": "sessionId", "agui": "threadId"}.get(operation or "", ""))


def progress_token(ex: Exchange) -> Any:
    """The progress token of a tools/call (`_meta.progressToken`), or None."""
    return meta(ex).get("progressToken")


def sends_progress_token(ex: Exchange) -> bool:
    token = progress_token(ex)
    return isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool))
