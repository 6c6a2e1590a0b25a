"""The MCP, authentication and metadata checks on canned recordings: each tolerance rule proven both ways
(an equivalent form passes, a contradicting one fails) and "nothing to look at" is not assessed, never passed."""
from __future__ import annotations

import json
from typing import Any

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, NotAssessed, Observation, judging
from conformance.vocab.steps import access, generated, mcp as mcp_steps, metadata as meta_steps

BASE = canned.DEFAULT_TARGET.base_url
AGENT = canned.DEFAULT_TARGET.agent_id
MCP_URL = f"{BASE}/v1/agents/{AGENT}/mcp"
META_URL = f"{BASE}/.well-known/oauth-protected-resource/v1/agents/{AGENT}/mcp"
TOOL = "ask_conformance_agent"


def outcomes(rid: str, rec) -> list[tuple[str, str]]:
    """(status, message) of every check of `rid` over the recording's scenario, judged as the engine does: a check
    blocked by another requirement is `blocked`, by its own a failure."""
    out = []
    for c in registry.load_all().values():
        if rid not in c.requirements or rec.scenario not in c.scenarios:
            continue
        try:
            with judging(c.requirements):
                note = c.fn(rec)
            out.append(("passed", str(note or "")))
        except Blocked as exc:
            out.append(("blocked", f"{exc.root}: {exc}"))
        except AssertionError as exc:
            out.append(("failed", str(exc)))
        except NotAssessed as exc:
            out.append(("not_assessed", str(exc)))
        except Observation as exc:
            out.append(("info", str(exc)))
    assert out, f"no check of {rid} runs over {rec.scenario}"
    return out


def status(rid: str, rec) -> str:
    got = {s for s, _ in outcomes(rid, rec)}
    for worst in ("failed", "blocked", "not_assessed", "info"):
        if worst in got:
            return worst
    return "passed"


# -- URLs compared after RFC 3986 normalization ----------------------------------------------------------------
def metadata_doc(*, headers: dict[str, str | None] | None = None, label: str = meta_steps.DOC, **fields: Any):
    """The document as a 200; a header given as None is left out."""
    doc = {"resource": MCP_URL, "authorization_servers": [canned.DEFAULT_TARGET.auth_url],
           "scopes_supported": ["agent:invoke"], "bearer_methods_supported": ["header"], **fields}
    hdrs = {"content-type": "application/json", "cache-control": "public, max-age=30", **(headers or {})}
    return canned.exchange(200, {k: v for k, v in hdrs.items() if v is not None}, body=doc, label=label,
                           method="GET", url=META_URL)


def document_rec(*exchanges, **fields):
    return canned.recording("metadata.document", [metadata_doc(**fields), *exchanges])


@pytest.mark.parametrize("servers, expected", [
    (["https://auth.server.test/"], "passed"),              # empty path and "/" are one URL
    (["HTTPS://Auth.Server.Test:443"], "passed"),           # scheme/host case, default port
    (["https://auth.server.test"], "passed"),
    (["https://login.server.test/"], "failed"),             # another host
    (["https://auth.server.test/oauth"], "failed"),         # another path
    (["https://auth.server.test", "https://auth.server.test/"], "blocked"),  # two entries: META-DOC-003's failure
])
def test_authorization_server_compared_normalized(servers, expected):
    assert status("META-DOC-004", document_rec(authorization_servers=servers)) == expected


@pytest.mark.parametrize("resource, expected", [
    (MCP_URL, "passed"),
    (MCP_URL.replace("https://server.test", "HTTPS://SERVER.test:443"), "passed"),
    (MCP_URL + "/", "failed"),                                # another path
    (MCP_URL.replace("server.test", "other.test"), "failed"),
])
def test_resource_compared_normalized(resource, expected):
    assert status("META-DOC-002", document_rec(resource=resource)) == expected


def test_resource_dot_segments_and_percent_encoding_are_equivalent():
    """The metadata check itself (the shared schema also pins the path's spelling: schemas/, not this check)."""
    from conformance.checks.metadata import resource_is_mcp_url
    assert "RFC 3986" in resource_is_mcp_url(document_rec(resource=f"{BASE}/v1/agents/{AGENT}/./%6Dcp"))


def challenge_401(resource_metadata: str, label: str = access.NO_CREDENTIAL):
    value = f'Bearer resource_metadata="{resource_metadata}", scope="agent:invoke"'
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Unauthorized"}}
    return canned.exchange(401, {"content-type": "application/json", "www-authenticate": value}, body=body,
                           label=label, url=MCP_URL)


@pytest.mark.parametrize("url, expected", [
    (META_URL, "passed"),
    (META_URL.replace("https://server.test", "HTTPS://Server.Test:443"), "passed"),
    (META_URL.replace("server.test", "elsewhere.test"), "failed"),
])
def test_challenge_resource_metadata_compared_normalized(url, expected):
    rec = canned.recording("access.mcp", [challenge_401(url)])
    assert status("AUTH-MCP-008", rec) == expected


def test_challenge_followed_when_under_base_url_spelled_differently():
    url = META_URL.replace("https://server.test", "HTTPS://SERVER.TEST")
    rec = canned.recording("metadata.challenge", [challenge_401(url, meta_steps.CHALLENGE),
                                                  metadata_doc(label=meta_steps.FOLLOWED)])
    assert status("META-DOC-010", rec) == "passed"


# -- SSE blocks that dispatch no event are no frames -----------------------------------------------------------
TOKENS = {mcp_steps.STRING_TOKEN: "tok-1", mcp_steps.INTEGER_TOKEN: 0, mcp_steps.EMPTY_TOKEN: ""}
IDS = {mcp_steps.STRING_TOKEN: "prog-1", mcp_steps.INTEGER_TOKEN: 102, mcp_steps.EMPTY_TOKEN: 103}
REPLY = "hello, conformance"


def progress_exchange(label: str, *, lead: list[bytes] = (), progress=(0.5, 1.5, 2.5), notes: int | None = None,
                      event: str = "message"):
    token, rid = TOKENS[label], IDS[label]
    objs = [{"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": p, "message": f"piece {i}"}}
            for i, p in enumerate(progress[:notes] if notes is not None else progress)]
    objs.append({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": REPLY}],
                                                         "structuredContent": {"sessionId": "s"},
                                                         "isError": False, "resultType": "complete"}})
    chunks = [(0.0, b) for b in lead] + canned.sse_frames(*objs, event=event, eol=b"\r\n", start=0.01)
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": TOOL, "arguments": {"prompt": "chunks 5 hello, conformance"},
                       "_meta": {"progressToken": token}}}
    return canned.exchange(200, {"content-type": "text/event-stream"}, sse=chunks, label=label, url=MCP_URL,
                           request_body=body)


def progress_rec(**kw):
    return canned.recording("mcp.progress", [progress_exchange(label, **kw) for label in TOKENS],
                            facts={"tokens": TOKENS, "reply": REPLY})


STREAM_RIDS = [f"MCP-PROG-00{n}" for n in range(1, 10)] + ["MCP-PROG-010"]


@pytest.mark.parametrize("lead", [
    [b"retry: 3000\r\n\r\n"],                           # a standalone retry block (official SDK priming habit)
    [b"id: 0\r\n\r\n", b": hello\r\n\r\n"],             # an id-only block and a comment
    [b"event: message\r\nretry: 3000\r\n\r\n"],         # named, but no data: still dispatches nothing
], ids=["retry-only", "id-only-and-comment", "event-without-data"])
@pytest.mark.parametrize("rid", STREAM_RIDS)
def test_blocks_without_data_are_ignored(lead, rid):
    assert status(rid, progress_rec(lead=lead)) == "passed", outcomes(rid, progress_rec(lead=lead))


def test_float_progress_values_pass():
    for rid in ("MCP-PROG-006", "MCP-PROG-010"):
        assert status(rid, progress_rec(progress=(0.25, 0.5, 0.75))) == "passed"


def test_a_notification_of_another_kind_fails_only_mcp_prog_004():
    log = b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\r\n\r\n'
    rec = progress_rec(lead=[log])
    assert status("MCP-PROG-004", rec) == "failed"
    for rid in ("MCP-PROG-005", "MCP-PROG-006", "MCP-PROG-007"):     # the fields of progress notifications only
        assert status(rid, rec) == "passed", outcomes(rid, rec)


def test_a_frame_without_json_data_fails_only_the_framing_requirement():
    rec = progress_rec(lead=[b"event: message\r\ndata: \r\n\r\n"])   # dispatched, data empty
    assert status("MCP-PROG-002", rec) == "failed"
    for rid in ("MCP-PROG-003", "MCP-PROG-004", "MCP-PROG-005", "MCP-PROG-006", "MCP-PROG-007", "MCP-PROG-008"):
        assert status(rid, rec) == "passed", (rid, outcomes(rid, rec))


def test_wrong_event_name_still_fails():
    assert status("MCP-PROG-002", progress_rec(event="progress")) == "failed"


@pytest.mark.parametrize("rid", ["MCP-PROG-004", "MCP-PROG-005", "MCP-PROG-006", "MCP-PROG-007", "MCP-PROG-010"])
def test_stream_with_only_the_response_is_not_assessed(rid):
    assert status(rid, progress_rec(notes=0)) == "not_assessed"


def test_one_notification_gives_nothing_to_compare():
    assert status("MCP-PROG-010", progress_rec(notes=1)) == "not_assessed"


# -- metadata caching ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("headers, must, should", [
    ({"cache-control": "max-age=30"}, "passed", "passed"),
    ({"cache-control": "public, max-age=30"}, "passed", "passed"),
    ({"cache-control": "private, max-age=30"}, "passed", "passed"),   # the client's own cache may keep it
    ({"cache-control": "max-age=60"}, "passed", "failed"),
    ({"cache-control": "max-age=30, must-revalidate"}, "passed", "passed"),
    ({"cache-control": 'no-cache="set-cookie", max-age=30'}, "passed", "passed"),   # qualified: fields only
    ({"cache-control": None}, "passed", "failed"),                                   # silent: forbids nothing
    ({"cache-control": "no-store"}, "failed", "blocked"),
    ({"cache-control": "no-store, max-age=30"}, "failed", "blocked"),
    ({"cache-control": "no-cache"}, "failed", "blocked"),
    ({"cache-control": "max-age=5"}, "failed", "blocked"),
    ({"cache-control": "max-age=0"}, "failed", "blocked"),
    ({"cache-control": None, "expires": "0"}, "failed", "blocked"),                   # invalid Expires: expired
    ({"cache-control": None, "date": "Sun, 22 Nov 2026 10:00:00 GMT",
      "expires": "Sun, 22 Nov 2026 09:00:00 GMT"}, "failed", "blocked"),            # in the past
    ({"cache-control": None, "date": "Sun, 22 Nov 2026 10:00:00 GMT",
      "expires": "Sun, 22 Nov 2026 10:00:30 GMT"}, "passed", "passed"),
    ({"cache-control": "max-age=30", "expires": "0"}, "passed", "passed"),         # max-age overrides Expires
])
def test_cache_control_forms(headers, must, should):
    rec = canned.recording("metadata.document", [metadata_doc(headers=headers)])
    assert (status("META-DOC-011", rec), status("META-DOC-008", rec)) == (must, should), outcomes("META-DOC-011", rec)


# -- META-STATE-003: refusals other than 404 use the error body -------------------------------------------------
def post_answer(status_: int, content_type: str, body: Any):
    return canned.exchange(status_, {"content-type": content_type}, body=body, label=meta_steps.POST, method="POST",
                           url=META_URL, request_body={})


ERROR_BODY = {"error": {"code": "method_not_allowed", "message": "Use GET.", "requestId": "req_1"}}


@pytest.mark.parametrize("answer, expected", [
    (post_answer(405, "application/json", ERROR_BODY), "passed"),
    (post_answer(405, "text/plain", "Method Not Allowed"), "failed"),
    (post_answer(405, "application/json", {"detail": "Method Not Allowed"}), "failed"),
    (post_answer(200, "application/json", {"resource": MCP_URL}), "not_assessed"),   # served, not refused
    (post_answer(404, "application/json", ERROR_BODY), "not_assessed"),              # 404s are META-STATE-001/2's
])
def test_post_to_metadata(answer, expected):
    assert status("META-STATE-003", document_rec(answer)) == expected


# -- Mcp-Name: one deviation, one failure ---------------------------------------------------------------------
def rpc_exchange(label: str, rid: Any, method: str, status_: int, body: Any, *, name: str | None = TOOL):
    params = {"name": TOOL, "arguments": {"prompt": "say conformance"}} if method == "tools/call" else {}
    headers = {"Mcp-Method": method, **({"Mcp-Name": name} if name and method == "tools/call" else {})}
    return canned.exchange(status_, {"content-type": "application/json"}, body=body, label=label, url=MCP_URL,
                           request_headers=headers,
                           request_body={"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def tool_result(rid: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}],
                                                    "structuredContent": {"sessionId": "s"}, "isError": False,
                                                    "resultType": "complete"}}


def modern_rec(noname_status: int = 400):
    refused = {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "Mcp-Name is required."}}
    noname = rpc_exchange(mcp_steps.CALL_NONAME, 5, "tools/call", noname_status,
                          refused if noname_status != 200 else tool_result(5, "conformance"), name=None)
    return canned.recording("mcp.modern", [
        rpc_exchange(mcp_steps.DISCOVER, "disc-1", "server/discover", 200,
                     {"jsonrpc": "2.0", "id": "disc-1", "result": {"capabilities": {"tools": {}}}}),
        rpc_exchange(mcp_steps.LIST, 2, "tools/list", 200, {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": TOOL, "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}}}]}}),
        rpc_exchange(mcp_steps.CALL, "call-3", "tools/call", 200, tool_result("call-3", "conformance")),
        rpc_exchange(mcp_steps.CALL_TOOL, 4, "tools/call", 200, tool_result(4, "done")),
        noname,
    ], facts={"tool": TOOL, "replies": {mcp_steps.CALL: "conformance", mcp_steps.CALL_TOOL: "done",
                                        mcp_steps.CALL_NONAME: "conformance"}})


def test_mcp_name_required_fails_only_hdr_004():
    rec = modern_rec(400)
    assert status("MCP-HDR-004", rec) == "failed"
    for rid in ("MCP-TOOL-001", "MCP-TOOL-002", "MCP-TOOL-003", "MCP-TOOL-005", "MCP-METH-005", "MCP-VER-001",
                "MCP-SESS-005", "MCP-PROG-011"):
        assert status(rid, rec) == "passed", (rid, outcomes(rid, rec))


def test_mcp_name_optional_passes():
    assert status("MCP-HDR-004", modern_rec(200)) == "passed"


# -- elicitation ------------------------------------------------------------------------------------------------
FORM = {"method": "elicitation/create", "params": {"mode": "form", "message": "What is your name?", "requestedSchema": {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}


def elicit_rec(first: dict[str, Any], retry: dict[str, Any] | None = None, *, form: bool = True):
    exchanges = [rpc_exchange(mcp_steps.ASK, 1, "tools/call", 200, {"jsonrpc": "2.0", "id": 1, "result": first})]
    facts: dict[str, Any] = {"question": "What is your name?", "suffix": "thanks", "form": None}
    if retry is not None:
        exchanges.append(rpc_exchange(mcp_steps.RETRY, 2, "tools/call", 200,
                                      {"jsonrpc": "2.0", "id": 2, "result": retry}))
        facts.update(form={"q1": FORM} if form else None, answers={"q1": {"answer": "Ada"}})
    return canned.recording("mcp.pause_elicit", exchanges, facts=facts)


ASKED = {"resultType": "input_required", "inputRequests": {"q1": FORM}, "requestState": "st"}
CONTINUED = {"content": [{"type": "text", "text": 'answer: {"answer":"Ada"}thanks'}], "resultType": "complete"}


@pytest.mark.parametrize("first, expected", [
    (ASKED, "passed"),
    ({"resultType": "input_required"}, "failed"),                                        # no form at all
    ({"resultType": "input_required", "inputRequests": {}, "requestState": "st"}, "failed"),
    ({"resultType": "input_required", "inputRequests": {"q1": {"method": "elicitation/create", "params": {
        "mode": "url", "url": "https://x.test", "message": "go", "elicitationId": "e"}}}}, "failed"),   # not a form
    ({"content": [{"type": "text", "text": "What is your name?"}], "resultType": "complete"}, "failed"),
    ({"resultType": "pending", "ticket": "t"}, "not_assessed"),                          # unknown shape
])
def test_eliciting_client_must_be_asked_for_a_form(first, expected):
    assert status("MCP-PAUSE-003", elicit_rec(first)) == expected


@pytest.mark.parametrize("retry, expected", [
    (CONTINUED, "passed"),
    (ASKED, "failed"),                                                                   # asked again
    ({"content": [{"type": "text", "text": "thanks"}], "resultType": "complete"}, "failed"),   # restarted, answer lost
    ({"content": [{"type": "text", "text": "What is your name?"}], "resultType": "complete"}, "failed"),
])
def test_retry_must_continue_the_run(retry, expected):
    assert status("MCP-PAUSE-004", elicit_rec(ASKED, retry)) == expected


def test_retry_without_a_form_is_not_assessed():
    assert status("MCP-PAUSE-004", elicit_rec({"resultType": "input_required"})) == "not_assessed"


# -- nothing to look at ----------------------------------------------------------------------------------------
def test_ids_kept_with_nothing_recorded_is_not_assessed():
    assert status("MCP-METH-005", canned.recording("mcp.modern", [])) == "not_assessed"


@pytest.mark.parametrize("rid", ["MCP-CLIENT-001", "MCP-CLIENT-003", "MCP-CLIENT-004", "MCP-CLIENT-005"])
def test_official_client_with_no_run_is_not_assessed(rid):
    rec = canned.recording("mcp.official_client", [], facts={"runs": {}, "expected": "conformance",
                                                             "suffix": "thanks"})
    assert status(rid, rec) == "not_assessed"


def test_round_trip_tool_lookup_is_no_run():
    """A member of the round trip's `mcp-*` family that names no run index (a lookup) is not a run: no int() of its
    label, not assessed when alone."""
    lookup = rpc_exchange(generated.MCP.of("tools-list"), 1, "tools/list", 401, {"jsonrpc": "2.0", "id": 1,
                                                                   "error": {"code": -32600, "message": "no"}})
    rec = canned.recording("generated.round_trip", [lookup], facts={"texts": ["x"]})
    got = [o for o in outcomes("MCP-TOOL-002", rec)]
    assert got and all(s == "not_assessed" for s, _ in got), got
    assert not any("invalid literal" in m for _, m in got)


def test_metadata_refusals_need_a_refusal():
    assert status("META-STATE-003", document_rec()) == "not_assessed"


def test_canned_bodies_are_json():
    assert json.loads(metadata_doc().body)["resource"] == MCP_URL


def test_a_resume_is_served_by_the_resume_rule_on_either_handshake():
    """A call answering a paused run is served by continuing it: a refusal of it is the resume's deviation, whatever
    else reads the answer (the key's echo, a progress stream), not the serving rule's of any call."""
    from conformance.checks.mcp._common import served_by

    def call(params, version="2026-07-28"):
        return canned.exchange(400, {"content-type": "application/json"}, url="https://server.test/v1/agents/a/mcp",
                               request_headers={"MCP-Protocol-Version": version, "Mcp-Method": "tools/call",
                                                "Mcp-Name": "ask"},
                               request_body={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "ask", **params}})

    assert served_by(call({"arguments": {"prompt": "x", "resume": {"name": "Ada"}}})) == "MCP-PAUSE-002"
    assert served_by(call({"arguments": {"prompt": "x", "resume": False}})) == "MCP-PAUSE-002"
    assert served_by(call({"arguments": {"prompt": "x", "resume": {}}}, "2025-11-25")) == "MCP-PAUSE-002"
    assert served_by(call({"arguments": {"prompt": "x"}, "requestState": "s"})) == "MCP-PAUSE-004"
    assert served_by(call({"arguments": {"prompt": "x"}})) == "MCP-VER-001"
