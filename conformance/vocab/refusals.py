"""Refusals of the credential and addressing steps (shared by the access, MCP and metadata checks): a step
refused with a 4xx (or the given status) and the error body of its protocol.

A refusal that cannot be judged because the exchange broke a more basic rule raises that rule as a precondition
(`outcomes.precondition`): the valid credential itself refused (AUTH-KEY-001, AUTH-MCP-001 on MCP), a refusal whose
status is not a 4xx (GEN-ERR-001, MCP-ERR-001), a body that is not its protocol's error body (`readers.error_body_rule`),
an error body that breaks the field rule a reading needs (GEN-ERR-002…005). What is left is the step's own rule."""
from __future__ import annotations

from typing import Any, Iterable
from urllib.parse import urlsplit

from conformance.engine import Recording
from conformance.outcomes import Observation, judge_all, on, precondition
from conformance.vocab import same_integer
from conformance.vocab.readers import error_body as refusal_error, error_code, error_of, got, is_4xx, rpc_error, step
from conformance.vocab.steps import access as steps
from conformance.vocab.traffic import ERROR_BODY, operation_of, violations
from conformance.vocab.constants import MAX_KEY
from conformance.exchange_rules import ExchangeRule
from conformance.vocab import requests as rq
from conformance.wire.exchange import Exchange


STEP_SENT = {   # the steps of the access scenarios (the MCP and metadata refusals reuse the addressing labels)
    steps.NO_CREDENTIAL: "no Authorization header", steps.EMPTY_BEARER: "the bare scheme `Bearer` and no credential",
    steps.BASIC_SCHEME: "the API key under the `Basic` scheme", steps.UNKNOWN_KEY: "an unknown `<svc>_live_…` key",
    steps.UNKNOWN_TOKEN: "an unknown `<svc>_oat_…` token", steps.REVOKED_KEY: "the revoked key (--revoked-key)",
    steps.EXPIRED_TOKEN: "the expired token (--expired-token)",
    steps.OTHER_AGENT_TOKEN: "the access token, addressed to --other-agent-id",
    steps.QUERY_KEY: "no header, the API key as `access_token` query parameter",
    steps.QUERY_TOKEN: "no header, the access token as `access_token` query parameter",
    steps.BODY_KEY: "no header, the API key as an `access_token` member of the JSON body and in an `access_token` "
                    "cookie",
    steps.MALFORMED_AGENT: "a valid API key to an agentId without the `agt_` prefix",
    steps.UNKNOWN_AGENT: "a valid API key to a well-formed agentId that does not exist",
    steps.UNDEPLOYED_AGENT: "a valid API key to the undeployed agent (--undeployed-agent-id)",
}

# The requirement that a valid credential is accepted, by the credential a request carried and its protocol, and
# the step of a recording that carries it on its own (the plain call). Whether invoke and AG-UI accept an access
# token is not shown (AUTH-OPEN-001): no rule to break there.
CREDENTIAL_ACCEPTED = {("api_key", "invoke"): "AUTH-KEY-001", ("api_key", "agui"): "AUTH-KEY-001",
                       ("api_key", "mcp"): "AUTH-KEY-001", ("access_token", "mcp"): "AUTH-MCP-001"}
ACCEPTED_STEP = {"api_key": steps.ACCEPTED, "access_token": steps.ACCEPTED_TOKEN}
_ERROR_BODY_ORDER = list(dict.fromkeys(ERROR_BODY.values()))   # GEN-ERR-001 (the body) before its fields


def step_sent(label: str, rec: Any = None) -> str:
    """What a credential or addressing step sent, in words (for messages); how an unknown credential was made, when
    it is a near miss of the real one (`sending.unknown_credential`: reports mask it)."""
    made = ((rec.facts.get("unknown_credentials") or {}) if rec is not None else {}).get(label)
    return STEP_SENT.get(label, label) + (f" ({made})" if made else "")


def credential_refusal(ex: Exchange) -> bool:
    """The answer refuses the request's credential: MCP's 401 (credential missing, unknown, revoked or expired),
    invoke/AG-UI's 401 or `error.code` `unauthenticated` ("a valid API key is missing")."""
    if operation_of(ex.url) == "mcp":
        return ex.status == 401
    return ex.status == 401 or (is_4xx(ex) and (error_of(ex) or {}).get("code") == "unauthenticated")


def valid_credential_refused(ex: Exchange, what: str, rec: Recording | None = None) -> None:
    """Raises the acceptance requirement of the valid credential the request carried (AUTH-KEY-001 for the API key,
    AUTH-MCP-001 for the access token on its agent) when the answer refused that credential: whatever else the step
    judges (the agent addressed, the status of its refusal) cannot be read on a call whose credential was turned
    away. When `rec` holds the plain call with the same credential, that call decides: refused too, it is the same
    deviation (both are named); accepted, this refusal is the step's own. Without one, a call carrying the API key
    refused as unauthenticated broke AUTH-KEY-001 itself; an access token off its agent breaks nothing of it."""
    credential = ex.credential or ""
    root = CREDENTIAL_ACCEPTED.get((credential, operation_of(ex.url) or ""))
    if not root or not credential_refusal(ex):
        return
    plain = next((e for e in rec.exchanges if e.label == ACCEPTED_STEP[credential] and e is not ex), None) \
        if rec is not None else None
    if plain is not None and plain.status is not None and 200 <= plain.status < 300:
        return
    if plain is None and credential != "api_key":
        return
    also = f"; so was the plain call with it ({plain.label}: {got(plain)})" if plain is not None else ""
    raise precondition(root, (ex, plain), f"{what}; the valid {credential.replace('_', ' ')} itself was refused: "
                                          f"{got(ex)}{also}")


def refusal_status_class(ex: Exchange, what: str) -> None:
    """Raises the protocol's refusal rule (GEN-ERR-001 for invoke/AG-UI, MCP-ERR-001) when the step was refused
    with a status that is not a 4xx: a 5xx or 3xx, or a 2xx carrying the error body (a JSON-RPC error under 200):
    the specific status a step expects cannot be judged on a refusal that already lost its 4xx class. A 2xx that
    is no error body was accepted: that is the step's own failure."""
    if ex.status is None or is_4xx(ex):
        return
    root = {"invoke": "GEN-ERR-001", "agui": "GEN-ERR-001", "mcp": "MCP-ERR-001"}.get(operation_of(ex.url) or "")
    if not root:
        return
    if 200 <= ex.status < 300:
        if ex.stream is None and error_of(ex) is not None:
            raise precondition(root, ex, f"{what}; a refusal under HTTP {ex.status} lost its 4xx status: {got(ex)}")
        return
    raise precondition(root, ex, f"{what}; a refusal must have a 4xx status, got {got(ex)}")


def not_refused_as(ex: Exchange, what: str, expected: str, rec: Recording | None = None) -> AssertionError:
    """The step was not refused as expected: a more basic rule it broke (raised), or its own failure (returned)."""
    valid_credential_refused(ex, what, rec)
    refusal_status_class(ex, what)
    return AssertionError(f"{what}; expected {expected}, got {got(ex)}")


def error_body_fields(ex: Exchange, what: str) -> dict[str, Any]:
    """The error object of an invoke/AG-UI refusal whose body is the whole error body of GEN-ERR-001…005; the
    first of those rules the body breaks is raised as a precondition (GEN-ERR-001 before the fields)."""
    err = refusal_error(ex, what)
    found = violations("error-body", ex.json(), ex.label)
    if found:
        root = min((v.requirement for v in found), key=_ERROR_BODY_ORDER.index)
        raise precondition(root, ex, f"{what}; the error body breaks {root}: "
                                     + "; ".join(v.text for v in found if v.requirement == root))
    return err


def refused_4xx(rec: Recording, label: str, *, status: int | None = None, code: str | None = None,
                error_body: bool = False) -> Exchange:
    """Invoke/AG-UI: the step was refused before any run with a 4xx (or `status`), optionally `error.code` = code,
    optionally with the whole error body (GEN-ERR-001…005)."""
    ex = step(rec, label)
    what = f"{rec.scenario} sent {step_sent(label, rec)}"
    with on(ex):
        if not ((ex.status == status) if status else is_4xx(ex)):
            raise not_refused_as(ex, what, f"{status or 'a 4xx'} refusal", rec)
        if code is not None:
            actual = error_code(ex, what)
            if actual != code:
                valid_credential_refused(ex, what, rec)
                raise AssertionError(f"{what}; expected error.code {code!r}, got {actual!r}: {got(ex)}")
        if error_body:
            error_body_fields(ex, what)
    return ex


def mcp_refused(rec: Recording, label: str, status: int | None, code: int | None = None) -> dict[str, Any]:
    """MCP: the step answered `status` (None: any 4xx) with a JSON-RPC error body, optionally `error.code` = code."""
    ex = step(rec, label)
    what = f"{rec.scenario} sent {step_sent(label, rec)}"
    with on(ex):
        if not (ex.status == status if status else is_4xx(ex)):
            raise not_refused_as(ex, what, f"HTTP {status or '4xx'} with a JSON-RPC error", rec)
        body = rpc_error(ex, what)
        if code is not None:
            actual = body["error"]["code"]
            assert same_integer(actual, code), f"{what}; expected error.code {code}, got {actual}: {got(ex)}"
    return body


def each(labels: Iterable[str], rec: Recording, fn) -> str:
    """Apply fn to every step that ran, on its exchange (`outcomes.judge_all`: one Deviation naming every step that
    broke the rule); NotAssessed (with the reasons) if none ran."""
    return judge_all(labels, fn, exchange=lambda label: step(rec, label), nothing="no step ran") or ""



# -- one exchange, whatever sent it (the exchange rules: conformance.exchange_rules) ------------------------------
LISTED_CODES = ("invalid_request", "unauthenticated", "not_found", "validation_failed")
#: statuses by which HTTP says the request itself is at fault, in its form or content (RFC 9110 §15.5: Bad Request,
#: Not Acceptable, Content Too Large, URI Too Long, Unsupported Media Type, Unprocessable Content; RFC 6585 §5):
#: a valid request refused with one is not served, whatever its code says. 411 is not among them: HTTP lets a
#: server require a Content-Length
REQUEST_AT_FAULT = (400, 406, 413, 414, 415, 422, 431)


def unlisted_refusal(ex: Exchange, code: Any, listed: Iterable[Any]) -> bool:
    """A refusal of a valid request that the spec cannot judge: a code it does not list (its list is not
    complete) under a status that does not say the request is at fault, such as a conflict or a policy."""
    return ex.status not in REQUEST_AT_FAULT and code not in listed


def refused_as(ex: Exchange, code: str | None = None, *, status: int | None = None, details: bool = False) -> None:
    """Invoke/AG-UI: the request was refused with a 4xx (or `status`) and the error body, `error.code` = `code`
    when given, `details` an object when asked. A refusal that lost its 4xx, or whose body breaks GEN-ERR-001…005,
    broke that rule first (a precondition); an answer that was no refusal is this rule's own failure."""
    what = f"{ex.method} {operation_of(ex.url) or ex.url}"
    with on(ex):
        if ex.status is None or 200 <= ex.status < 300:
            raise AssertionError(f"expected a refusal (a 4xx with the error body), got {got(ex)}")
        refusal_status_class(ex, what)
        if status is not None and ex.status != status:
            raise AssertionError(f"expected HTTP {status}, got {got(ex)}")
        err = error_body_fields(ex, what)
        if code is not None and err.get("code") != code:
            raise AssertionError(f"expected error.code {code!r}, got {err.get('code')!r}: {got(ex)}")
        if details and not isinstance(err.get("details"), dict):
            raise precondition("GEN-ERR-005", ex, f"`validation_failed` without `details` as an object: {got(ex)}")


def served(ex: Exchange) -> None:
    """Invoke/AG-UI: a request the spec says must run was answered 200. A refusal whose code the spec does not
    list is seen, not judged: the spec's list of codes is not complete (`Observation`)."""
    if ex.status is not None and 400 <= ex.status < 500:
        code = (error_of(ex) or {}).get("code")
        if unlisted_refusal(ex, code, LISTED_CODES):
            raise Observation(f"refused {ex.status} with `error.code` {code!r}, which the spec does not list "
                              f"(a request that must run is judged no further)")
    with on(ex):
        assert ex.status == 200, f"a valid request must be run and answered 200, got {got(ex)}"


# -- the refusals invoke and AG-UI give alike, as exchange rules -------------------------------------------------
def refused_with(code: str | None, *, details: bool = False, status: int | None = None):
    """An exchange rule's judge: `refused_as` with these."""
    return lambda ex, target: refused_as(ex, code, details=details, status=status)


def _credential_is(*kinds: str):
    return lambda ex, target: rq.credential(ex) in kinds and rq.only("credential")(ex, target)


def _addressed_to(*where: str):
    return lambda ex, target: rq.addressed(ex, target) in where and rq.only("agent")(ex, target)


def _token_elsewhere(ex: Exchange, target: Any) -> bool:
    return rq.credential(ex) == "access-token" and rq.addressed(ex, target) == "other" \
        and rq.only("credential", "agent")(ex, target)


def _key_outside(field: str):
    return lambda ex, target: rq.only("session-key")(ex, target) and rq.key_length(rq.fields(ex).get(field)) == "outside"


def _key_at_bound(field: str):
    """A request the spec says must run whose key is 1 or 256 characters long (inside 1 to 256 by every count)."""
    def applies(ex: Exchange, target: Any) -> bool:
        key = rq.fields(ex).get(field)
        return isinstance(key, str) and len(key) in (1, MAX_KEY) and rq.key_length(key) == "inside" \
            and rq.only()(ex, target)
    return applies


def _key_kept(field: str):
    def judge(ex: Exchange, target: Any) -> None:
        """a key inside the bounds was not refused."""
        with on(ex):
            assert not is_4xx(ex), f"a {len(rq.fields(ex)[field])}-character {field} lies inside 1 to 256 and must " \
                                   f"be accepted, got {got(ex)}"
    return judge


def _challenged(ex: Exchange, target: Any) -> None:
    assert ex.header("www-authenticate"), f"a 401 has no WWW-Authenticate header (RFC 9110 §11.6.1): {got(ex)}"


def _carries_valid(kind: str):
    """The request carried the valid credential `kind` (the API key; the access token on its own agent)."""
    return lambda ex, target: rq.credential(ex) == kind and (kind == "api-key" or rq.addressed(ex, target) == "agent")


def _credential_kept(ex: Exchange, target: Any) -> None:
    """the valid credential was not refused (401, or `unauthenticated`)."""
    assert not credential_refusal(ex), f"the valid credential was refused: {got(ex)}"


def _at_its_path(ex: Exchange, target: Any) -> bool:
    """A request the spec says must run or be answered (`requests.problems`: none), sent to exactly
    `{base}/v1/agents/{agentId}/{operation}`, the agentId written as it is: the spec leaves nothing for such a call
    to answer 404 or 405 for (404 is an agent that is not there, or a token bound to another agent). An MCP request
    carrying an `Mcp-Session-Id` is the stateless rule's (MCP-SESS-005): MCP's transport answers 404 to a session
    it does not know."""
    op = operation_of(ex.url or "")
    if op == "mcp" and rq.header(ex, "mcp-session-id") is not None:
        return False
    base = urlsplit(getattr(target, "base_url", "") or "").path.rstrip("/")
    agents = {getattr(target, "agent_id", None), getattr(target, "other_agent_id", None)} - {None}
    return (rq.only()(ex, target) or rq.runs_elsewhere(ex, target)) and \
        any(urlsplit(ex.url or "").path == f"{base}/v1/agents/{agent}/{op}" for agent in agents)


def _served_at_path(ex: Exchange, target: Any) -> None:
    """the call was not answered 404 or 405 (the operation not served at its path)."""
    with on(ex):
        assert ex.status not in (404, 405), \
            f"a call with a valid credential to a deployed agent at {urlsplit(ex.url).path} was answered as if " \
            f"the operation were not served there: {got(ex)}"


def credential_rules() -> list[ExchangeRule]:
    """Every call at its operation's path with a valid credential is served there (GEN-BASE-003), and every request
    carrying the API key (the access token on MCP, on its agent) is not refused for it, whatever it asks: the first
    rules of every exchange they apply to, so nothing else is read on a call turned away for them."""
    return [ExchangeRule("GEN-BASE-003", "served_at_its_path", ("invoke", "agui", "mcp"), _at_its_path,
                         _served_at_path, basic=True, first=True,
                         doc="a call with a valid credential at its operation's exact path is never answered 404 "
                             "or 405."),
            ExchangeRule("AUTH-KEY-001", "api_key_not_refused", ("invoke", "agui", "mcp"), _carries_valid("api-key"),
                         _credential_kept, basic=True, first=True,
                         doc="a call carrying the API key is never refused for it."),
            ExchangeRule("AUTH-MCP-001", "access_token_not_refused", ("mcp",), _carries_valid("access-token"),
                         _credential_kept, basic=True, first=True,
                         doc="an MCP call carrying the access token on its agent is never refused for it.")]


def shared_refusal_rules(op: str) -> list[ExchangeRule]:
    """The rules every invoke or AG-UI request refused for its credential, its agent, its key or its size reads (and
    one accepted with a key at either bound),
    whatever form it came in (`op`: invoke | agui): their requirements as the catalog splits them by protocol."""
    of = {"invoke": {"no-credential": "AUTH-KEY-002", "undeployed": "GEN-AGENT-002", "key": "INV-SESS-006",
                     "size": "INV-LIM-002", "field": "sessionId",
                     "bound": "INV-SESS-005"},
          "agui": {"no-credential": "AUTH-KEY-003", "undeployed": "GEN-AGENT-003", "key": "AGUI-SESS-004",
                   "size": "AGUI-LIM-002", "field": "threadId",
                   "bound": "AGUI-SESS-003"}}[op]
    ops = (op,)
    return [
        ExchangeRule(of["no-credential"], f"{op}_no_credential_refused", ops, _credential_is("none"),
                     refused_with("unauthenticated"), doc="no Authorization: refused `unauthenticated`, in any form."),
        ExchangeRule("AUTH-KEY-004", f"{op}_unknown_key_refused", ops, _credential_is("unknown"),
                     refused_with("unauthenticated"), doc="an unknown key: refused `unauthenticated`, in any form."),
        ExchangeRule("AUTH-KEY-005", f"{op}_revoked_key_refused", ops, _credential_is("revoked"),
                     refused_with("unauthenticated"), doc="the revoked key: refused `unauthenticated`, in any form."),
        ExchangeRule("AUTH-KEY-006", f"{op}_other_scheme_refused", ops, _credential_is("other-scheme", "empty"),
                     refused_with("unauthenticated"),
                     doc="another scheme or an empty bearer value: refused `unauthenticated`, in any form."),
        ExchangeRule("AUTH-BIND-001", f"{op}_token_bound_to_its_agent", ops, _token_elsewhere, refused_with(None),
                     doc="an access token sent to another agent is refused."),
        ExchangeRule("GEN-AGENT-001", f"{op}_malformed_agent_refused", ops, _addressed_to("malformed"),
                     refused_with(None), doc="an agentId without `agt_` is refused with the error body."),
        ExchangeRule(of["undeployed"], f"{op}_undeployed_agent_404", ops, _addressed_to("undeployed"),
                     refused_with(None, status=404), doc="the undeployed agent answers 404 with the error body."),
        ExchangeRule("GEN-AGENT-005", f"{op}_unknown_agent_not_found", ops, _addressed_to("unknown"),
                     refused_with("not_found"), doc="an agent that does not exist is refused `not_found`."),
        ExchangeRule("GEN-AGENT-006", f"{op}_unknown_agent_404", ops, _addressed_to("unknown"),
                     refused_with("not_found", status=404), doc="... with HTTP 404."),
        ExchangeRule(of["key"], f"{op}_key_outside_refused", ops, _key_outside(of["field"]),
                     refused_with("validation_failed"),
                     doc=f"a {of['field']} of 0 or over 256 characters is refused `validation_failed`."),
        ExchangeRule(of["bound"], f"{op}_key_at_bound_accepted", ops, _key_at_bound(of["field"]),
                     _key_kept(of["field"]),
                     basic=True, first=True, doc=f"a {of['field']} of 1 or of 256 characters is not refused, in any "
                                                 f"form (read first: a run turned away for its key shows nothing else)."),
        ExchangeRule("AUTH-KEY-007", f"{op}_401_challenges", ops, lambda ex, target: ex.status == 401, _challenged,
                     doc="every 401 carries a WWW-Authenticate header (RFC 9110 §11.6.1), whatever was refused."),
        ExchangeRule(of["size"], f"{op}_body_over_limit_refused", ops, rq.only("body-size"), refused_with(None),
                     doc="a body well over 1 MB is refused, however it travels (Content-Length or chunked)."),
    ]
