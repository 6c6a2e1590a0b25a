"""Sign-in metadata (RFC 9728 protected resource metadata of the agent's MCP endpoint).

The document of a GET without a credential is read once per check (`document`): unless it is a 200 with a JSON
object, that GET broke META-DOC-001 and nothing in it can be read (a precondition). A field rule that another
field rule presupposes (one authorization server before naming --auth-url, the scope listed before it being the
only one, caching allowed for 30 s before exactly 30 s) is raised the same way."""
from __future__ import annotations

import email.utils
import json
from typing import Any
from urllib.parse import urlsplit

from conformance import schemas
from conformance.engine import Recording
from conformance.exchange_rules import ExchangeRule, register
from conformance.outcomes import Blocked, Deviation, NotAssessed, judge_all, on, precondition
from conformance.registry import check
from conformance.vocab import requests as rq
from conformance.vocab.steps import metadata as steps
from conformance.vocab.challenges import challenge_params, metadata_url, same_url, spelled, url_under
from conformance.vocab.constants import SCOPE
from conformance.vocab.readers import got, step
from conformance.vocab.traffic import violations
from conformance.vocab.values import is_json_media_type, same_json
from conformance.wire.exchange import Exchange

CACHE_SECONDS = 30
DOC = ["metadata.document"]


def mcp_url(target, agent_id: str | None = None) -> str:
    return f"{target.base_url.rstrip('/')}/v1/agents/{agent_id or target.agent_id}/mcp"


def without_credential(ex: Exchange) -> bool:
    return not any(name.lower() == "authorization" for name in ex.request_headers)


def document(ex: Exchange, what: str = "GET of the metadata without a credential") -> dict[str, Any]:
    """The metadata document a 200 carries. A GET without a credential answered otherwise broke META-DOC-001 (the
    document needs no credential and is a JSON object): a precondition of every reading of it. A GET with a
    credential answered otherwise is the reading check's own failure (META-DOC-009)."""
    def unreadable(message: str) -> Deviation:
        return precondition("META-DOC-001", ex, message) if without_credential(ex) else Deviation(message, ex)

    if ex.status != 200:
        raise unreadable(f"{what}: expected 200, got {got(ex)}")
    try:
        doc = ex.json()
    except AssertionError as exc:
        raise unreadable(f"{what}: {exc}") from None
    if not isinstance(doc, dict):
        raise unreadable(f"{what}: expected a JSON object, got {type(doc).__name__}: {got(ex)}")
    return doc


def string_list(value: Any, name: str) -> list[str]:
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), \
        f"`{name}` must be an array of strings, got {json.dumps(value)[:200]}"
    return value


@check("META-DOC-001", scenarios=DOC)
def no_credential_needed(rec: Recording):
    """GETs the metadata without Authorization; 200 with a JSON object."""
    document(rec.get(steps.DOC))


@check("META-DOC-002", scenarios=DOC)
def resource_is_mcp_url(rec: Recording):
    """`resource` names `{base_url}/v1/agents/<agent_id>/mcp` of the addressed agent (compared after RFC 3986
    normalization: scheme and host case, default port, percent-encoding case, dot segments)."""
    expected = mcp_url(rec.target)
    ex = rec.get(steps.DOC)
    doc = document(ex)
    with on(ex):
        value = member(doc, "resource")
        assert same_url(value, expected), \
            f"`resource` is {value!r}, expected {expected!r} (compared after RFC 3986 normalization)"
    return spelled(value, expected)


# -- the document's fields: one judge per rule, read on the scenario's GET and on every document served --------
def member(doc: dict[str, Any], name: str) -> Any:
    assert name in doc, f"the metadata has no `{name}` member: {json.dumps(doc)[:300]}"
    return doc[name]


def only_one_server(doc: dict[str, Any], target: Any, ex: Exchange) -> None:
    servers = string_list(member(doc, "authorization_servers"), "authorization_servers")
    assert len(servers) == 1, f"`authorization_servers` has {len(servers)} entries, expected exactly one: {servers}"


def server_is_auth_url(doc: dict[str, Any], target: Any, ex: Exchange):
    servers = member(doc, "authorization_servers")
    if not (isinstance(servers, list) and len(servers) == 1 and isinstance(servers[0], str)):
        raise precondition("META-DOC-003", ex, f"`authorization_servers` is {json.dumps(servers)[:200]}, not an "
                                               f"array of exactly one string")
    assert same_url(servers[0], target.auth_url), \
        f"`authorization_servers` is {servers}, expected [{target.auth_url!r}] (--auth-url; compared after " \
        f"RFC 3986 normalization)"
    return spelled(servers[0], target.auth_url)


def scope_in_list(doc: dict[str, Any], target: Any, ex: Exchange) -> None:
    scopes = string_list(member(doc, "scopes_supported"), "scopes_supported")
    assert SCOPE in scopes, f"`scopes_supported` is {scopes}, which lacks {SCOPE!r}"


def scope_alone(doc: dict[str, Any], target: Any, ex: Exchange) -> None:
    scopes = member(doc, "scopes_supported")
    if not (isinstance(scopes, list) and all(isinstance(v, str) for v in scopes) and SCOPE in scopes):
        raise precondition("META-DOC-005", ex, f"`scopes_supported` is {json.dumps(scopes)[:200]}, not an array of "
                                               f"strings listing {SCOPE!r}")
    assert same_json(scopes, [SCOPE]), f"`scopes_supported` is {json.dumps(scopes)[:200]}, expected [{SCOPE!r}]"


def header_method_alone(doc: dict[str, Any], target: Any, ex: Exchange) -> None:
    methods = member(doc, "bearer_methods_supported")
    assert same_json(methods, ["header"]), \
        f"`bearer_methods_supported` is {json.dumps(methods)[:200]}, expected [\"header\"]"


FIELD_RULES = {"META-DOC-003": only_one_server, "META-DOC-004": server_is_auth_url, "META-DOC-005": scope_in_list,
               "META-DOC-006": scope_alone, "META-DOC-007": header_method_alone}


def field_broken(doc: dict[str, Any], target: Any, ex: Exchange) -> str | None:
    """The first field rule the document breaks (the resource named, then each field in the spec's order)."""
    judges = {"META-DOC-002": lambda d, t, e: resource_names_mcp_url(e, t), **FIELD_RULES}
    for rid, judge in judges.items():
        if rid == "META-DOC-004" and not target.auth_url:
            continue
        try:
            judge(doc, target, ex)
        except AssertionError:
            return rid
    return None


def on_document(rec: Recording, judge):
    """A field judge read on the scenario's GET without a credential."""
    ex = rec.get(steps.DOC)
    doc = document(ex)
    with on(ex):
        return judge(doc, rec.target, ex)


@check("META-DOC-003", scenarios=DOC)
def one_authorization_server(rec: Recording):
    """`authorization_servers` is an array of exactly one string."""
    on_document(rec, only_one_server)


@check("META-DOC-004", scenarios=DOC)
def authorization_server_is_auth_url(rec: Recording):
    """The one `authorization_servers` entry names --auth-url (compared after RFC 3986 normalization, so
    `https://auth.example.com/` names `https://auth.example.com`). Without exactly one entry there is no
    "one entry" to compare: META-DOC-003 says so."""
    if not rec.target.auth_url:
        raise NotAssessed(f"needs {rec.target.option_for('auth_url')}, which was not given")
    return on_document(rec, server_is_auth_url)


@check("META-DOC-005", scenarios=DOC)
def scope_listed(rec: Recording):
    """`scopes_supported` is an array of strings containing `agent:invoke`."""
    on_document(rec, scope_in_list)


@check("META-DOC-006", scenarios=DOC)
def only_scope(rec: Recording):
    """`scopes_supported` is exactly `["agent:invoke"]`. One that does not list `agent:invoke` at all is
    META-DOC-005's."""
    on_document(rec, scope_alone)


@check("META-DOC-007", scenarios=DOC)
def header_only(rec: Recording):
    """`bearer_methods_supported` is exactly `["header"]`."""
    on_document(rec, header_method_alone)


def cache_directives(ex: Exchange) -> dict[str, str | None]:
    """Cache-Control directives (RFC 9111 §5.2): names lower-cased, values unquoted, None without `=`."""
    lines = ex.headers.get_list("cache-control") if ex.headers is not None else []
    out: dict[str, str | None] = {}
    for part in ",".join(lines).split(","):
        name, eq, value = part.strip().partition("=")
        if name:
            out[name.strip().lower()] = value.strip().strip('"') if eq else None
    return out


def _http_date(value: str | None):
    try:
        return email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None


def expires_lifetime(ex: Exchange) -> tuple[int | None, str]:
    """Expires − Date in seconds (RFC 9111 §4.2.1); an invalid Expires (such as "0") means already expired (§5.3)."""
    expires, date = ex.header("expires"), ex.header("date")
    e = _http_date(expires)
    if e is None:
        return 0, f"Expires {expires!r} (invalid, so already expired: RFC 9111 §5.3)"
    d = _http_date(date)
    if d is None:
        return None, f"Expires {expires!r} without a Date to measure it from"
    return round((e - d).total_seconds()), f"Expires − Date ({expires} − {date})"


def freshness(ex: Exchange) -> tuple[int | None, str]:
    """The freshness lifetime the response's HTTP caching headers give (RFC 9111 §4.2.1), and how it was found."""
    cc = cache_directives(ex)
    if "no-store" in cc:
        return 0, "Cache-Control no-store"
    if "no-cache" in cc and not cc["no-cache"]:    # no-cache="field" concerns those fields only
        return 0, "Cache-Control no-cache"
    for name in ("max-age", "s-maxage"):
        if name in cc:
            value = cc[name] or ""
            return (int(value) if value.isdigit() else None), f"Cache-Control {name}={value}"
    if ex.header("expires") is not None:
        return expires_lifetime(ex)
    return None, "no Cache-Control max-age/s-maxage and no Expires"


# Clock granularity of HTTP dates: Expires − Date may be one second off the lifetime the server meant.
DATE_SLACK = 1


def caching_forbidden(ex: Exchange) -> str | None:
    """What in the 200's caching headers forbids caching it for 30 s (RFC 9111), or None.

    no-store: no cache may store it (§5.2.2.5). no-cache without field names: no cache may use it without
    revalidating (§5.2.2.4). max-age below 30: stale sooner (§5.2.2.1). Without max-age, an Expires in the past or
    less than 30 s after Date (§5.3). `private` forbids only shared caches (§5.2.2.7): the client may still cache it,
    so it does not contradict "cached for 30 seconds"; nor does s-maxage, which binds only shared caches. `Vary: *`:
    a stored response never matches a later request (§4.1), so no cache can use it."""
    if any(v.strip() == "*" for line in (ex.headers.get_list("vary") if ex.headers is not None else [])
           for v in line.split(",")):
        return "Vary: * (a stored response never matches a later request, RFC 9111 §4.1: no cache can use it)"
    cc = cache_directives(ex)
    if "no-store" in cc:
        return "Cache-Control no-store (no cache may store the response)"
    if "no-cache" in cc and not cc["no-cache"]:
        return "Cache-Control no-cache (no cache may use the response without revalidating it)"
    if "max-age" in cc:
        value = cc["max-age"] or ""
        if not value.isdigit():
            return f"Cache-Control max-age={value!r} (not a number of seconds: treated as stale, RFC 9111 §4.2.1)"
        if int(value) < CACHE_SECONDS:
            return f"Cache-Control max-age={value} (stale after {value} s, before 30 s)"
        return None
    if ex.header("expires") is not None:
        lifetime, how = expires_lifetime(ex)
        if lifetime is not None and lifetime < CACHE_SECONDS - DATE_SLACK:
            return f"{how} gives {lifetime} s, less than 30 s"
    return None


@check("META-DOC-011", scenarios=DOC)
def caching_not_forbidden(rec: Recording):
    """The 200's caching headers allow caching it for 30 s: no `no-store`, no unqualified `no-cache`, no `max-age`
    below 30, no Expires in the past or less than 30 s after Date (RFC 9111). What allows more is META-DOC-008's."""
    ex = rec.get(steps.DOC)
    document(ex)
    blocker = caching_forbidden(ex)
    with on(ex):
        assert blocker is None, f"the metadata must be cacheable for 30 seconds; its headers say otherwise: " \
                                f"{blocker} (Cache-Control: {ex.header('cache-control')!r}, Expires: " \
                                f"{ex.header('expires')!r})"
    return freshness(ex)[1]


@check("META-DOC-008", scenarios=DOC)
def cached_30_seconds(rec: Recording):
    """The 200's HTTP caching headers give a 30 s lifetime: `max-age=30` (or `s-maxage=30`, or Expires − Date = 30 s).
    Headers that forbid caching it for 30 s at all are META-DOC-011's."""
    ex = rec.get(steps.DOC)
    document(ex)
    blocker = caching_forbidden(ex)
    if blocker is not None:
        raise precondition("META-DOC-011", ex, f"the metadata must be cacheable for 30 seconds; its headers say "
                                               f"otherwise: {blocker}")
    lifetime, how = freshness(ex)
    with on(ex):
        if lifetime is not None and how.startswith("Expires"):
            assert abs(lifetime - CACHE_SECONDS) <= DATE_SLACK, f"{how} gives {lifetime} s, expected {CACHE_SECONDS} s"
            return how
        assert lifetime == CACHE_SECONDS, f"the caching headers give no 30 s lifetime: {how}"
    return how


@check("META-DOC-009", scenarios=DOC)
def credential_ignored(rec: Recording):
    """GETs the metadata with no credential, the API key and an unknown bearer; 200 with the same document each time."""
    first = rec.get(steps.DOC)
    base = document(first)

    def same_document(item: tuple[str, str]) -> None:
        label, what = item
        ex = rec.get(label)
        other = document(ex, f"GET of the metadata {what}")
        if same_json(other, base):
            return
        for doc, where in ((base, first), (other, ex)):
            broken = field_broken(doc, rec.target, where)
            if broken:    # the documents differ in a field one of them broke: that rule names the deviation
                raise precondition(broken, (first, ex), f"GET of the metadata {what} gave another document, one of "
                                                        f"the two breaking {broken}: {json.dumps(other)[:300]}")
        raise AssertionError(f"GET of the metadata {what} gave another document: {json.dumps(other)[:300]}")
    return judge_all(((steps.DOC_KEY, "with the API key"), (steps.DOC_UNKNOWN_BEARER, "with an unknown bearer "
                                                                                       "credential")),
                     same_document, exchange=lambda item: rec.get(item[0]))


@check("META-DOC-010", scenarios=["metadata.challenge"])
def challenge_leads_to_document(rec: Recording):
    """Follows `resource_metadata` of an MCP 401; 200 with the document whose `resource` names that MCP URL (URLs
    compared after RFC 3986 normalization). What the flow reads is stated by other rules first: the 401 without a
    credential (AUTH-MCP-003), its challenge naming this agent's metadata URL (AUTH-MCP-008), and there the document
    without a credential (META-DOC-001) naming the MCP URL (META-DOC-002): a broken flow is blocked by the first of
    them its exchanges break."""
    ex = rec.get(steps.CHALLENGE)
    if ex.status != 401:
        raise precondition("AUTH-MCP-003", ex, f"tools/call without a credential: expected 401, got {got(ex)}")
    try:
        url = challenge_params(ex).get("resource_metadata")
    except AssertionError as exc:
        raise precondition("AUTH-MCP-008", ex, f"the 401 has no readable challenge of the scheme Bearer: {exc}") from None
    if not isinstance(url, str):
        raise precondition("AUTH-MCP-008", ex, "the 401's challenge (scheme Bearer) has no resource_metadata parameter")
    expected_url, base = metadata_url(rec.target), rec.target.base_url
    ours = same_url(url, expected_url)
    if not url_under(url, base):
        raise precondition("AUTH-MCP-008", ex, f"resource_metadata {url!r} is not under the base URL {base!r} (not "
                                               f"followed); this agent's metadata URL is {expected_url!r}")
    followed = rec.get(steps.FOLLOWED)
    expected = mcp_url(rec.target)
    try:
        doc = document(followed, f"GET {url}")
        with on(followed):
            assert same_url(doc.get("resource"), expected), \
                f"the document at resource_metadata has `resource` {doc.get('resource')!r}, expected {expected!r}"
    except Deviation as exc:
        if not ours:   # the challenge led elsewhere than this agent's metadata: AUTH-MCP-008's value explains it
            raise precondition("AUTH-MCP-008", (ex, followed), f"resource_metadata is {url!r}, not this agent's "
                                                               f"metadata URL {expected_url!r}; {exc.message}") from None
        if isinstance(exc, Blocked):   # this agent's metadata URL, answered without the document: META-DOC-001
            raise
        raise precondition("META-DOC-002", followed, exc.message) from None
    return spelled(url, expected_url) if ours else f"resource_metadata {url!r} differs from {expected_url!r} but " \
                                                      f"serves this agent's document"


def not_found(rec: Recording, label: str, what: str) -> None:
    """The GET without a credential answered 404. A 401 demands the credential the endpoint never needs: the GET
    broke META-DOC-001 first."""
    ex = step(rec, label)
    if ex.status == 401:
        raise precondition("META-DOC-001", ex, f"{what}: the metadata needs no credential, got {got(ex)}")
    with on(ex):
        assert ex.status == 404, f"{what}: expected 404, got {got(ex)}"


@check("META-STATE-001", scenarios=DOC)
def undeployed_agent_404(rec: Recording):
    """GETs the metadata of --undeployed-agent-id; 404."""
    not_found(rec, steps.UNDEPLOYED_AGENT, "metadata of the undeployed agent")


@check("META-STATE-002", scenarios=DOC)
def unknown_agent_404(rec: Recording):
    """GETs the metadata of a well-formed agent id that never existed; 404."""
    not_found(rec, steps.UNKNOWN_AGENT, "metadata of a nonexistent agt_ id")


def refusals(rec: Recording) -> list[Exchange]:
    """The answers of the metadata endpoint that refuse (4xx, 5xx) other than with 404."""
    return [ex for ex in rec.exchanges if ex.status is not None and ex.status >= 400 and ex.status != 404]


@check("META-STATE-003", scenarios=DOC)
def other_refusals_error_body(rec: Recording):
    """Every refusal of the metadata endpoint other than 404 (the POST the endpoint does not serve, any 4xx/5xx
    observed) has the error body {error: {code, message, requestId}}."""
    others = refusals(rec)
    if not others:
        raise NotAssessed("the metadata endpoint refused nothing with a status other than 404 "
                          "(a POST, which it does not serve, was answered " + _answer_of(rec, steps.POST) + ")")

    def has_error_body(ex: Exchange) -> None:
        what = f"the {ex.status} answer to {ex.method} of the metadata"
        try:
            body = ex.json()
        except AssertionError:
            raise AssertionError(f"{what} must use the error body {{error: {{code, message, requestId}}}}; "
                                 f"got {got(ex)}") from None
        schemas.check("error-body", body, what)
    note = judge_all(others, has_error_body)
    return f"{len(others)} refusal(s): " + ", ".join(f"{ex.label} {ex.status}" for ex in others) + \
        (f"; {note}" if note else "")


def _answer_of(rec: Recording, label: str) -> str:
    try:
        return f"HTTP {rec.get(label).status}"
    except NotAssessed:
        return "never: it was not sent"


@check("META-COMPAT-001", scenarios=DOC)
def content_type_json(rec: Recording):
    """The 200's Content-Type is `application/json` (RFC 9728 §3.2)."""
    ex = rec.get(steps.DOC)
    document(ex)
    with on(ex):
        served_as_json(ex, rec.target)


@check("META-COMPAT-002", scenarios=DOC)
def upstream_model_accepts(rec: Recording):
    """Every `authorization_servers` entry is an absolute https URL, and the official MCP client's
    ProtectedResourceMetadata model accepts the document. A document that breaks a field rule of the spec
    (META-DOC-001…007) is judged by that rule first."""
    ex = rec.get(steps.DOC)
    doc = document(ex)
    found = violations("protected-resource-metadata", doc, ex.label)
    if found:
        root = min(v.requirement for v in found)     # META-DOC-001 (the document) before its fields
        raise precondition(root, ex, "; ".join(v.text for v in found if v.requirement == root))
    from mcp.shared.auth import ProtectedResourceMetadata
    from pydantic import ValidationError
    with on(ex):
        https_urls(string_list(doc.get("authorization_servers"), "authorization_servers"))
        try:
            ProtectedResourceMetadata.model_validate(doc)
        except ValidationError as exc:
            raise AssertionError(f"mcp.shared.auth.ProtectedResourceMetadata rejects the document: {exc}"[:600]) from None


def https_urls(urls: list[str]) -> None:
    for url in urls:
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc, f"authorization server {url!r} is not an absolute https URL"


# -- every GET of the metadata, whatever sent it (conformance.exchange_rules) ---------------------------------
META_EVERY = ("metadata",)


def get_of(*where: str):
    return lambda ex, target: ex.method == "GET" and rq.addressed(ex, target) in where and ex.status != 429


def document_served(ex: Exchange, target: Any) -> None:
    assert ex.status == 200, f"the agent's metadata must be served (200), got {got(ex)}"
    assert isinstance(ex.json(), dict), f"the metadata is not a JSON object: {got(ex)}"


def document_or_refusal(ex: Exchange, target: Any) -> None:
    assert ex.status == 200 and isinstance(rq.json_or_none(ex.body), dict) or 400 <= ex.status < 500, \
        f"the agent's metadata must be served (200, a JSON object), or the credential refused (a 4xx: whether a " \
        f"credential is refused is META-DOC-009's), got {got(ex)}"


def no_credential_asked(ex: Exchange, target: Any) -> None:
    assert ex.status != 401, f"the metadata needs no credential, but a GET without one was refused: {got(ex)}"


def resource_names_mcp_url(ex: Exchange, target: Any) -> None:
    doc = ex.json()
    want = f"{target.base_url.rstrip('/')}/v1/agents/{rq.path_agent(ex)}/mcp"
    assert same_url(doc.get("resource"), want), f"resource is {doc.get('resource')!r}, expected {want!r}"


def document_answered(ex: Exchange, target: Any) -> bool:
    """A 200 document of the agent, or of another agent of the organization where it is served (its own)."""
    return get_of("agent", "other")(ex, target) and ex.status == 200 and is_json_media_type(ex.header("content-type")) \
        and isinstance(rq.json_or_none(ex.body), dict)


def cacheable_30s(ex: Exchange, target: Any) -> None:
    blocker = caching_forbidden(ex)
    assert blocker is None, f"the metadata must be cacheable for 30 seconds; its headers say otherwise: {blocker}"


def lifetime_30s(ex: Exchange, target: Any) -> None:
    if caching_forbidden(ex) is not None:
        raise precondition("META-DOC-011", ex, "the metadata must be cacheable for 30 seconds")
    lifetime, how = freshness(ex)
    if lifetime is not None and how.startswith("Expires"):
        assert abs(lifetime - CACHE_SECONDS) <= DATE_SLACK, f"{how} gives {lifetime} s, expected {CACHE_SECONDS} s"
        return
    assert lifetime == CACHE_SECONDS, f"the caching headers give no 30 s lifetime: {how}"


def servers_listed(ex: Exchange, target: Any) -> bool:
    """A document whose `authorization_servers` is an array of strings (its shape is META-DOC's to judge)."""
    servers = ex.json().get("authorization_servers") if document_answered(ex, target) else None
    return isinstance(servers, list) and all(isinstance(url, str) for url in servers)


def servers_https(ex: Exchange, target: Any) -> None:
    https_urls(ex.json()["authorization_servers"])


def json_object_answered(ex: Exchange, target: Any) -> bool:
    return get_of("agent", "other")(ex, target) and ex.status == 200 and isinstance(rq.json_or_none(ex.body), dict)


def served_as_json(ex: Exchange, target: Any) -> None:
    assert ex.content_type == "application/json", \
        f"Content-Type is {ex.header('content-type')!r}, expected application/json (RFC 9728 §3.2)"


def every_document(judge):
    """A field judge read on an exchange that served a document."""
    return lambda ex, target: judge(ex.json(), target, ex)


def answered_404(ex: Exchange, target: Any) -> None:
    assert ex.status == 404, f"expected 404, got {got(ex)}"


register(
    ExchangeRule("META-DOC-001", "document_served", META_EVERY,
                 lambda ex, target: get_of("agent", "other")(ex, target) and rq.credential(ex) == "none",
                 document_served, basic=True,
                 doc="a GET without credential answers 200 with a JSON object, for the agent and for the "
                     "organization's other deployed agent alike."),
    ExchangeRule("META-DOC-001", "document_or_refusal", META_EVERY,
                 lambda ex, target: get_of("agent", "other")(ex, target) and rq.credential(ex) != "none",
                 document_or_refusal, basic=True,
                 doc="a GET with a credential returns the metadata too, or refuses the credential (a SHOULD of its "
                     "own, META-DOC-009): never another answer (a 304 to a validator it never gave, a 5xx)."),
    ExchangeRule("META-DOC-001", "no_credential_asked", META_EVERY,
                 lambda ex, target: get_of("undeployed", "unknown", "malformed")(ex, target)
                 and rq.credential(ex) == "none", no_credential_asked, basic=True,
                 doc="a GET without credential for any other agent is not answered 401: the endpoint needs no "
                     "credential, whichever agent it names (whether that agent is there is the state rules')."),
    ExchangeRule("META-DOC-002", "resource_names_mcp_url", META_EVERY, document_answered, resource_names_mcp_url,
                 doc="`resource` names the agent's MCP URL."),
    ExchangeRule("META-DOC-003", "one_authorization_server", META_EVERY, document_answered,
                 every_document(only_one_server), doc="every 200 document names exactly one authorization server."),
    ExchangeRule("META-DOC-004", "authorization_server_is_auth_url", META_EVERY,
                 lambda ex, target: bool(target.auth_url) and document_answered(ex, target),
                 every_document(server_is_auth_url),
                 doc="every 200 document's authorization server is --auth-url (when given)."),
    ExchangeRule("META-DOC-005", "scope_listed", META_EVERY, document_answered, every_document(scope_in_list),
                 doc="every 200 document lists `agent:invoke`."),
    ExchangeRule("META-DOC-006", "only_scope", META_EVERY, document_answered,
                 every_document(scope_alone), doc="every 200 document lists `agent:invoke` alone."),
    ExchangeRule("META-DOC-007", "header_only", META_EVERY, document_answered, every_document(header_method_alone),
                 doc="every 200 document names the header as the only bearer method."),
    ExchangeRule("META-COMPAT-001", "served_as_json", META_EVERY, json_object_answered, served_as_json,
                 doc="every 200 document is served as `application/json`, whoever asked."),
    ExchangeRule("META-COMPAT-002", "authorization_servers_https", META_EVERY, servers_listed, servers_https,
                 doc="every 200 document's authorization servers are absolute https URLs, whoever asked."),
    ExchangeRule("META-DOC-011", "cacheable_for_30_seconds", META_EVERY, document_answered, cacheable_30s,
                 doc="every 200 document may be cached for 30 s."),
    ExchangeRule("META-DOC-008", "lifetime_of_30_seconds", META_EVERY, document_answered, lifetime_30s,
                 doc="every 200 document's caching headers give 30 s."),
    ExchangeRule("META-STATE-001", "undeployed_404", META_EVERY, get_of("undeployed"), answered_404,
                 doc="the undeployed agent's metadata answers 404."),
    ExchangeRule("META-STATE-002", "unknown_404", META_EVERY, get_of("unknown"), answered_404,
                 doc="a never-existing agent's metadata answers 404."),
)
