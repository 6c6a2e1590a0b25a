"""The official-client checks (MCP-CLIENT-001, -003, -004, -005) on canned recordings of the client's traffic: each
finding names the exchange the client could not use, says why in one line, and the requirements after it are
blocked by the one that owns it."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from conformance import canned
from conformance.judging import CheckResult
from conformance.report import resolve_blocked
from conformance.vocab.steps import mcp as steps

from tests.checks.test_mcp_canned import MCP_URL, TOOL, outcomes, status

PLAIN, QUESTION = "say conformance", "ask What is your name?\nsay thanks"
TOOL_LISTED = {"name": TOOL, "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}}}
CACHE = {"resultType": "complete", "cacheScope": "private", "ttlMs": 30000}
FORM = {"resultType": "input_required", "requestState": "s1", "inputRequests": {"q": {
    "method": "elicitation/create", "params": {"mode": "form", "message": "What is your name?",
                                               "requestedSchema": {"type": "object", "properties": {
                                                   "answer": {"type": "string"}}}}}}}


def text(reply: str, **more: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": reply}], "isError": False, **more}


def traffic() -> dict[str, list[list[Any]]]:
    """run -> [method, params, result or None (a notification), stream?] of every request, as the reference
    server answers them."""
    modern = [["server/discover", {}, {"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": {}}, False],
              ["tools/list", {}, {"tools": [copy.deepcopy(TOOL_LISTED)], **CACHE}, False],
              ["tools/call", {"name": TOOL, "arguments": {"prompt": PLAIN}}, text("conformance", resultType="complete"),
               True],
              ["tools/call", {"name": TOOL, "arguments": {"prompt": QUESTION, "session_id": "s"}}, copy.deepcopy(FORM),
               False],
              ["tools/call", {"name": TOOL, "arguments": {"prompt": QUESTION, "session_id": "s"},
                              "inputResponses": {"q": {"action": "accept", "content": {"answer": "Ada"}}}},
               text('answer: {"answer":"Ada"}thanks', resultType="complete"), False]]
    legacy = [["initialize", {}, {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "serverInfo": {"name": "s", "version": "1"}}, False],
              ["notifications/initialized", None, None, False],
              ["tools/list", {}, {"tools": [copy.deepcopy(TOOL_LISTED)]}, False],
              ["tools/call", {"name": TOOL, "arguments": {"prompt": PLAIN}}, text("conformance"), False],
              ["tools/call", {"name": TOOL, "arguments": {"prompt": QUESTION, "session_id": "t"}},
               text("What is your name?"), False],
              ["tools/call", {"name": TOOL, "arguments": {"session_id": "t", "resume": {"name": "Ada"}}},
               text('answer: {"name":"Ada"}thanks'), False]]
    return {"2026-07-28": modern, "2025-11-25": legacy}


def client_rec(sent: dict[str, list[list[Any]]] | None = None, run_facts: dict[str, dict] | None = None):
    exchanges = []
    for run, requests in (sent or traffic()).items():
        family = steps.OFFICIAL_MODERN if run == "2026-07-28" else steps.OFFICIAL_LEGACY
        seen: dict[str, int] = {}
        for n, (method, params, result, streamed) in enumerate(requests, 1):
            seen[method] = seen.get(method, 0) + 1
            label = family.of(method if seen[method] == 1 else f"{method}-{seen[method]}")
            sent = {"jsonrpc": "2.0", "method": method, **({"id": n} if result is not None else {}),
                    **({"params": params} if params is not None else {})}
            if result is None:
                exchanges.append(canned.exchange(202, {}, label=label, url=MCP_URL, request_body=sent))
            elif streamed:
                progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": n, "progress": 1}}
                frames = canned.sse_frames(progress, {"jsonrpc": "2.0", "id": n, "result": result}, event="message")
                exchanges.append(canned.exchange(200, {"content-type": "text/event-stream"}, sse=frames, label=label,
                                                 url=MCP_URL, request_body=sent))
            else:
                exchanges.append(canned.exchange(200, {"content-type": "application/json"}, label=label, url=MCP_URL,
                                                 body={"jsonrpc": "2.0", "id": n, "result": result}, request_body=sent))
    runs_facts = {"2026-07-28": {"step": "done", "elicited": [{"message": "What is your name?",
                                                                "content": {"answer": "Ada"}}], "progress": 1},
                  "2025-11-25": {"step": "done", "elicited": [], "progress": 0}}
    for run, extra in (run_facts or {}).items():
        runs_facts[run].update(extra)
    return canned.recording("mcp.official_client", exchanges, facts={
        "expected": "conformance", "question": "What is your name?", "prompts": {"plain": PLAIN, "question": QUESTION},
        "resume_value": {"name": "Ada"}, "after_resume": None, "suffix": "thanks", "runs": runs_facts})


CLIENT = ("MCP-CLIENT-001", "MCP-CLIENT-003", "MCP-CLIENT-004", "MCP-CLIENT-005")


def verdicts(rec) -> dict[str, tuple[str, str]]:
    return {rid: outcomes(rid, rec)[0] for rid in CLIENT}


def test_the_reference_traffic_passes():
    assert {rid: s for rid, (s, _) in verdicts(client_rec()).items()} == dict.fromkeys(CLIENT, "passed")


def test_a_tools_list_without_the_upstream_cache_fields_is_003s_and_blocks_004():
    runs = traffic()
    for name in ("resultType", "ttlMs", "cacheScope"):
        del runs["2026-07-28"][1][2][name]
    got = verdicts(client_rec(runs))
    state, message = got["MCP-CLIENT-003"]
    assert state == "failed" and message.startswith("official-2026-07-28/tools/list: ")
    assert "could not use its tools/list answer: result.cacheScope: required, missing; also result.resultType, " \
           "result.ttlMs" in message and "\n" not in message and "pydantic" not in message
    assert got["MCP-CLIENT-004"][0] == "blocked" and got["MCP-CLIENT-004"][1].startswith("MCP-CLIENT-003: ")
    assert got["MCP-CLIENT-001"][0] == got["MCP-CLIENT-005"][0] == "passed"


def test_a_tool_the_client_rejects_is_002s_root_for_every_run():
    runs = traffic()
    for run in runs.values():
        next(r for r in run if r[0] == "tools/list")[2]["tools"][0]["inputSchema"]["type"] = "array"
    got = verdicts(client_rec(runs))
    for rid in CLIENT:
        state, message = got[rid]
        assert state == "blocked" and message.startswith("MCP-CLIENT-002: official-"), (rid, message)
        assert 'result.tools[0].inputSchema.type: expected "object", got "array"' in message


def test_a_discover_the_client_falls_back_from_is_003s():
    runs = traffic()
    del runs["2026-07-28"][0][2]["supportedVersions"]
    state, message = verdicts(client_rec(runs))["MCP-CLIENT-003"]
    assert state == "failed" and message.startswith("official-2026-07-28/server/discover: ")
    assert "result.supportedVersions: required, missing" in message and "falls back to the 2025-11-25" in message


def test_a_stream_frame_that_is_no_json_rpc_message_fails_the_call():
    rec = client_rec()
    plain = rec.get(steps.OFFICIAL_MODERN.of("tools/call"))
    plain.stream = canned.exchange(200, sse=[(0.0, b"event: message\ndata: {\"progress\": 1}\n\n")]).stream
    state, message = verdicts(rec)["MCP-CLIENT-003"]
    assert state == "failed" and "an event stream whose frame 1 is not a JSON-RPC message" in message


def test_giving_up_on_an_answer_it_could_read_names_the_exchange_after_which_it_did():
    rec = client_rec(run_facts={"2026-07-28": {"step": "question", "error": "TimeoutError: (no message)"}})
    got = verdicts(rec)
    assert got["MCP-CLIENT-003"][0] == "passed"
    state, message = got["MCP-CLIENT-004"]
    assert state == "failed" and message.startswith("official-2026-07-28/tools/call-3: ")
    assert "gave up at `question`: TimeoutError" in message


def test_a_reply_that_is_not_the_agents_is_blocked_by_the_specs_own_must():
    runs = traffic()
    runs["2025-11-25"][3][2] = text("something else")
    state, message = verdicts(client_rec(runs))["MCP-CLIENT-001"]
    assert state == "blocked" and message.startswith("MCP-TOOL-002: official-2025-11-25/tools/call: ")


@pytest.mark.parametrize("levels, stays", [(("SHOULD", "SHOULD"), True), (("MUST", "SHOULD"), False),
                                           (("SHOULD", "MUST"), True)])
def test_a_root_holds_what_is_no_stricter_than_itself(levels, stays):
    """A SHOULD blocked by a failed SHOULD stays blocked (one warning, linked); a MUST blocked by a failed SHOULD
    fails (a warning never hides a failure)."""
    rids = {"SHOULD": ("MCP-CLIENT-004", "MCP-CLIENT-003"), "MUST": ("MCP-TOOL-002", "MCP-METH-002")}
    blocked_rid, root_rid = rids[levels[0]][0], rids[levels[1]][1]
    results = [CheckResult("root", (root_rid,), "failed"),
               CheckResult("downstream", (blocked_rid,), "blocked", "blocked", blocked_by=root_rid)]
    assert (resolve_blocked(results)[1].status == "blocked") is stays
