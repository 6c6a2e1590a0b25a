"""The sign-in metadata checks on canned recordings: each failure names the exchange of the document (or of the
flow step) that broke the rule, and a document that broke a more basic rule blocks the others by it."""
from __future__ import annotations

from typing import Any

from conformance import canned
from conformance.outcomes import Blocked
from conformance.vocab.steps import metadata as steps
from tests.checks.test_auth_canned import judge

BASE = canned.DEFAULT_TARGET.base_url
AGENT = canned.DEFAULT_TARGET.agent_id
MCP_URL = f"{BASE}/v1/agents/{AGENT}/mcp"
META_URL = f"{BASE}/.well-known/oauth-protected-resource/v1/agents/{AGENT}/mcp"
JSON = {"content-type": "application/json"}
REFUSED = {"error": {"code": "unauthenticated", "message": "no", "requestId": "req_1"}}


def get(label: str, status: int = 200, body: Any = None, headers: dict[str, str] | None = None, url: str = META_URL,
        credential: bool = False, method: str = "GET"):
    doc = {"resource": MCP_URL, "authorization_servers": [canned.DEFAULT_TARGET.auth_url],
           "scopes_supported": ["agent:invoke"], "bearer_methods_supported": ["header"]}
    return canned.exchange(status, {**JSON, "cache-control": "public, max-age=30", **(headers or {})},
                           body=doc if body is None else body, label=label, method=method, url=url,
                           request_headers={"Authorization": "«redacted»"} if credential else {})


def document(**answers):
    """metadata.document as the reference server answers it, but for `answers` (label with `-` as `_`)."""
    normal = {steps.DOC: get(steps.DOC), steps.DOC_KEY: get(steps.DOC_KEY, credential=True),
              steps.DOC_UNKNOWN_BEARER: get(steps.DOC_UNKNOWN_BEARER, credential=True),
              steps.UNKNOWN_AGENT: get(steps.UNKNOWN_AGENT, 404, {"error": {"code": "not_found", "message": "no",
                                                                            "requestId": "req_2"}}),
              steps.MALFORMED_AGENT: get(steps.MALFORMED_AGENT, 404, {"error": {"code": "not_found", "message": "no",
                                                                                "requestId": "req_3"}}),
              steps.UNDEPLOYED_AGENT: get(steps.UNDEPLOYED_AGENT, 404, {"error": {"code": "not_found", "message": "no",
                                                                                  "requestId": "req_4"}}),
              steps.POST: get(steps.POST, 405, {"error": {"code": "method_not_allowed", "message": "GET only",
                                                          "requestId": "req_5"}}, method="POST")}
    normal.update({label.replace("_", "-"): ex for label, ex in answers.items()})
    # the probes sent again in other forms (`again-*`) are the rules' over every exchange, not these checks'
    return canned.recording("metadata.document", [normal[label] for label in steps.METADATA_DOCUMENT
                                                  if label != steps.AGAIN])


CHECKS = ("metadata.no_credential_needed", "metadata.resource_is_mcp_url", "metadata.one_authorization_server",
          "metadata.authorization_server_is_auth_url", "metadata.scope_listed", "metadata.only_scope",
          "metadata.header_only", "metadata.caching_not_forbidden", "metadata.cached_30_seconds",
          "metadata.credential_ignored", "metadata.undeployed_agent_404", "metadata.unknown_agent_404",
          "metadata.other_refusals_error_body", "metadata.content_type_json", "metadata.upstream_model_accepts")


def test_the_reference_document_passes():
    rec = document()
    for check_id in CHECKS:
        assert judge(check_id, rec)[0] == "passed", (check_id, judge(check_id, rec))


def test_a_document_behind_a_401_fails_meta_doc_001_once_and_blocks_the_rest():
    rec = document(doc=get(steps.DOC, 401, REFUSED), unknown_agent=get(steps.UNKNOWN_AGENT, 401, REFUSED),
                   undeployed_agent=get(steps.UNDEPLOYED_AGENT, 401, REFUSED))
    status, exc = judge("metadata.no_credential_needed", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (rec.get(steps.DOC),)
    assert str(exc).startswith(f"{steps.DOC}: ")
    for check_id in CHECKS[1:]:
        if check_id == "metadata.other_refusals_error_body":
            assert judge(check_id, rec)[0] == "passed"       # the 401s carry the error body
            continue
        status, exc = judge(check_id, rec)
        assert status == "blocked" and exc.root == "META-DOC-001", (check_id, status, exc)


def test_a_credentialed_get_refused_is_meta_doc_009s_own():
    rec = document(doc_unknown_bearer=get(steps.DOC_UNKNOWN_BEARER, 401, REFUSED, credential=True))
    status, exc = judge("metadata.credential_ignored", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (rec.get(steps.DOC_UNKNOWN_BEARER),)


def test_two_servers_fail_meta_doc_003_and_block_004():
    two = get(steps.DOC, body={"resource": MCP_URL, "authorization_servers": [canned.DEFAULT_TARGET.auth_url,
                                                                              "https://login.example.com"],
                               "scopes_supported": ["agent:invoke"], "bearer_methods_supported": ["header"]})
    rec = document(doc=two)
    status, exc = judge("metadata.one_authorization_server", rec)
    assert status == "failed" and exc.exchanges == (two,)
    status, exc = judge("metadata.authorization_server_is_auth_url", rec)
    assert status == "blocked" and exc.root == "META-DOC-003"
    status, exc = judge("metadata.upstream_model_accepts", rec)
    assert status == "blocked" and exc.root == "META-DOC-003"


def test_a_scope_list_without_agent_invoke_blocks_the_exact_list():
    rec = document(doc=get(steps.DOC, body={"resource": MCP_URL, "authorization_servers": ["https://auth.server.test"],
                                           "scopes_supported": ["agent"], "bearer_methods_supported": ["header"]}))
    assert judge("metadata.scope_listed", rec)[0] == "failed"
    status, exc = judge("metadata.only_scope", rec)
    assert status == "blocked" and exc.root == "META-DOC-005"


def test_caching_forbidden_fails_011_and_blocks_008():
    rec = document(doc=get(steps.DOC, headers={"cache-control": "no-store"}))
    status, exc = judge("metadata.caching_not_forbidden", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.DOC),)
    status, exc = judge("metadata.cached_30_seconds", rec)
    assert status == "blocked" and exc.root == "META-DOC-011"


def test_a_plain_text_refusal_names_its_exchange():
    post = get(steps.POST, 405, b"Method Not Allowed", {"content-type": "text/plain"}, method="POST")
    rec = document(post=post)
    status, exc = judge("metadata.other_refusals_error_body", rec)
    assert status == "failed" and exc.exchanges == (post,) and str(exc).startswith(f"{steps.POST}: ")


def test_a_served_undeployed_agent_is_meta_state_001s_own():
    rec = document(undeployed_agent=get(steps.UNDEPLOYED_AGENT))
    status, exc = judge("metadata.undeployed_agent_404", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.UNDEPLOYED_AGENT),)


# -- META-DOC-010: the flow from a 401 to the document ----------------------------------------------------------
def challenge(status: int = 401, url: str | None = META_URL):
    headers = dict(JSON)
    if url is not None:
        headers["www-authenticate"] = f'Bearer resource_metadata="{url}", scope="agent:invoke"'
    return canned.exchange(status, headers, body={"jsonrpc": "2.0", "id": "challenge",
                                                  "error": {"code": -32600, "message": "no"}},
                           label=steps.CHALLENGE, url=MCP_URL)


def flow(first, followed=None):
    return canned.recording("metadata.challenge", [first, *([followed] if followed is not None else [])])


def test_the_flow_passes():
    assert judge("metadata.challenge_leads_to_document", flow(challenge(), get(steps.FOLLOWED)))[0] == "passed"


def test_the_flow_is_blocked_by_the_first_rule_it_breaks():
    root_url = f"{BASE}/.well-known/oauth-protected-resource"
    wrong_resource = get(steps.FOLLOWED, body={"resource": MCP_URL + "/", "authorization_servers": ["https://a.test"],
                                               "scopes_supported": ["agent:invoke"],
                                               "bearer_methods_supported": ["header"]})
    cases = [(flow(challenge(403)), "AUTH-MCP-003"),
             (flow(challenge(url=None)), "AUTH-MCP-008"),
             (flow(challenge(url="https://elsewhere.test/meta")), "AUTH-MCP-008"),
             (flow(challenge(url=root_url), get(steps.FOLLOWED, 404, REFUSED, url=root_url)), "AUTH-MCP-008"),
             (flow(challenge(), get(steps.FOLLOWED, 401, REFUSED)), "META-DOC-001"),
             (flow(challenge(), wrong_resource), "META-DOC-002")]
    for rec, root in cases:
        status, exc = judge("metadata.challenge_leads_to_document", rec)
        assert status == "blocked" and exc.root == root, (root, status, exc)
        assert exc.exchanges[0] is rec.exchanges[0 if root.startswith("AUTH") else -1]


def test_another_url_serving_this_document_passes_the_flow():
    other = f"{BASE}/.well-known/oauth-protected-resource/v1/agents/{AGENT}/mcp/"
    status, note = judge("metadata.challenge_leads_to_document", flow(challenge(url=other),
                                                                       get(steps.FOLLOWED, url=other)))
    assert status == "passed" and "serves this agent's document" in note


def test_every_document_served_names_https_authorization_servers():
    """META-COMPAT-002 over every GET of the metadata, whatever sent it: a document some request got with an http://
    server fails it there; an array of another shape is META-DOC's to judge."""
    from conformance import exchange_rules
    import conformance.checks.metadata  # noqa: F401  (registers the rules over every exchange)

    def compat(authorization_servers: Any) -> str | None:
        body = {"resource": MCP_URL, "authorization_servers": authorization_servers,
                "scopes_supported": ["agent:invoke"], "bearer_methods_supported": ["header"]}
        got = exchange_rules.outcomes(get(steps.AGAIN, body=body), canned.DEFAULT_TARGET).get("META-COMPAT-002")
        return got and got.status
    assert compat([canned.DEFAULT_TARGET.auth_url]) == "passed"
    assert compat([canned.DEFAULT_TARGET.auth_url.replace("https://", "http://", 1)]) == "failed"
    assert compat("https://auth.example") is None


def test_every_document_served_is_judged_by_each_field_rule():
    """META-DOC-003…007 over every GET of the metadata, whatever sent it: a document one request got with a field
    out of place fails that field's rule there (an exact list's rule blocked where the list lacks the scope)."""
    from conformance import exchange_rules
    import conformance.checks.metadata  # noqa: F401  (registers the rules over every exchange)
    good = {"resource": MCP_URL, "authorization_servers": [canned.DEFAULT_TARGET.auth_url],
            "scopes_supported": ["agent:invoke"], "bearer_methods_supported": ["header"]}

    def statuses(**changed: Any) -> dict[str, str]:
        got = exchange_rules.outcomes(get(steps.AGAIN, body={**good, **changed}), canned.DEFAULT_TARGET)
        return {rid: got[rid].status for rid in ("META-DOC-003", "META-DOC-004", "META-DOC-005", "META-DOC-006",
                                                 "META-DOC-007") if rid in got}
    assert set(statuses().values()) == {"passed"}
    assert statuses(scopes_supported=["agent:invoke", "offline_access"])["META-DOC-006"] == "failed"
    assert statuses(scopes_supported=["agent"])["META-DOC-005"] == "failed"
    assert statuses(scopes_supported=["agent"])["META-DOC-006"] == "blocked"
    assert statuses(bearer_methods_supported=["header", "body"])["META-DOC-007"] == "failed"
    assert statuses(authorization_servers=["https://login.example.com"])["META-DOC-004"] == "failed"
    two = statuses(authorization_servers=[canned.DEFAULT_TARGET.auth_url, "https://login.example.com"])
    assert two["META-DOC-003"] == "failed" and two["META-DOC-004"] == "blocked"


def test_documents_that_differ_in_a_field_one_of_them_broke_are_that_fields_deviation():
    """A credentialed GET given a document that differs from the plain GET's only because one of them broke a
    field rule is that rule's one deviation: META-DOC-009 is blocked by it. Any other difference is META-DOC-009's."""
    body = {"resource": MCP_URL, "authorization_servers": [canned.DEFAULT_TARGET.auth_url],
            "scopes_supported": ["agent:invoke", "offline_access"], "bearer_methods_supported": ["header"]}
    rec = document(doc=get(steps.DOC, body=body))
    status, exc = judge("metadata.credential_ignored", rec)
    assert status == "blocked" and exc.root == "META-DOC-006"
    rec = document(doc_key=get(steps.DOC_KEY, body={**body, "scopes_supported": ["agent:invoke"],
                                                    "jwks_uri": "https://server.test/jwks"}, credential=True))
    assert judge("metadata.credential_ignored", rec)[0] == "failed"
