"""The rules over every exchange, each proven both ways on canned exchanges: a correct answer holds the rule, an
answer broken in exactly that way fails it, whatever scenario sent it and whatever form the request took; an
exchange that broke a basic rule is read no further (the rest blocked by it); a request with a problem the rule is
not about is not read by it."""
from __future__ import annotations

import json

import pytest

from conformance import canned, exchange_rules, registry
from conformance.vocab.protocols import MCP_ACCEPT

registry.load_all()
T = canned.DEFAULT_TARGET
INVOKE = "https://server.test/v1/agents/agt_canned/invoke"
AGUI = "https://server.test/v1/agents/agt_canned/agui"
MCP = "https://server.test/v1/agents/agt_canned/mcp"
KEY = {"Authorization": f"Bearer {T.api_key}", "Content-Type": "application/json"}
JSON = {"content-type": "application/json"}
ERROR = {"error": {"code": "validation_failed", "message": "no", "requestId": "req_1", "details": {}}}


def result(session: str = "k1", **extra) -> dict:
    return {"status": "completed", "result": "conformance", "events": [], "sessionId": session,
            "agentId": "agt_canned", "versionNumber": 1, "requestId": "req_1", "durationMs": 3, **extra}


def judged(ex, rid: str) -> str:
    ex.credential = "api_key" if T.api_key in str(ex.request_headers) else ex.credential   # as the engine sets it
    got = exchange_rules.outcomes(ex, T).get(rid)
    return got.status if got else "not read"


def invoke(status, body, *, request=None, headers=None, sse=None, content_type="application/json"):
    return canned.exchange(status, {"content-type": content_type}, body=body, sse=sse, url=INVOKE,
                           request_headers=headers or KEY, request_body=request or {"prompt": "say conformance",
                                                                                   "sessionId": "k1"})


@pytest.mark.parametrize("headers", [KEY, {"AUTHORIZATION": f"bearer {T.api_key}",
                                           "content-type": "Application/JSON; charset=utf-8"}])
def test_a_valid_invoke_must_be_answered_with_its_result_in_any_form(headers):
    assert judged(invoke(200, result(), headers=headers), "INV-RES-001") == "passed"
    assert judged(invoke(500, b"oops", headers=headers, content_type="text/plain"), "INV-RES-001") == "failed"
    assert judged(invoke(400, ERROR, headers=headers), "INV-RES-001") == "failed"     # a listed code: wrong
    other = {"error": {"code": "busy", "message": "no", "requestId": "req_1"}}
    assert judged(invoke(409, other, headers=headers), "INV-RES-001") == "info"      # a code the spec does not list
    # ... under a status by which HTTP says the request is at fault: a valid request is not
    assert judged(invoke(415, {"error": {"code": "unsupported_media_type", "message": "no", "requestId": "req_1"}},
                         headers=headers), "INV-RES-001") == "failed"


def test_the_key_sent_is_the_key_named():
    assert judged(invoke(200, result("k1")), "INV-SESS-003") == "passed"
    assert judged(invoke(200, result("K1")), "INV-SESS-003") == "failed"
    assert judged(invoke(200, result("k1"), request={"prompt": "p"}), "INV-SESS-003") == "not read"


def test_stream_true_must_stream_and_a_json_answer_blocks_what_reads_the_stream():
    frames = canned.sse_frames({"v": 1, "type": "text", "delta": "hi"}, event="text") + \
        canned.sse_frames({"v": 1, "type": "done"}, event="done")
    stream = invoke(200, b"", sse=frames, content_type="text/event-stream",
                    request={"prompt": "say hi", "stream": True})
    assert judged(stream, "INV-SEL-001") == "passed" and judged(stream, "INV-TERM-001") == "passed"
    plain = invoke(200, result(), request={"prompt": "say hi", "stream": True})
    assert judged(plain, "INV-SEL-001") == "failed"
    two = invoke(200, b"", sse=frames + canned.sse_frames({"v": 1, "type": "done"}, event="done", start=1),
                 content_type="text/event-stream", request={"prompt": "say hi", "stream": True})
    assert judged(two, "INV-TERM-001") == "failed"


def test_text_said_before_a_pause_arrives_before_the_stream_ends_on_every_stream():
    """INV-STREAM-009 on every streamed run whose prompt says text and then sleeps 2 s or more (invoke.timing's, the
    long runs', a silence after text): the text that came before the pause arrives well before the end."""
    def stream(prompt: str, early_at: float) -> str:
        frames = canned.sse_frames({"v": 1, "type": "text", "delta": "early"}, event="text", start=early_at) + \
            canned.sse_frames({"v": 1, "type": "text", "delta": "late"}, {"v": 1, "type": "done"}, event="text",
                              start=15.2)
        frames[-1] = (frames[-1][0], frames[-1][1].replace(b"event: text", b"event: done"))
        return judged(invoke(200, b"", sse=frames, content_type="text/event-stream",
                             request={"prompt": prompt, "stream": True, "sessionId": "k1"}), "INV-STREAM-009")
    assert stream("say early\nsleep 15\nsay late", 0.1) == "passed"
    assert stream("say early\nsleep 15\nsay late", 15.0) == "failed"       # held back to the end
    assert stream("say early\nsleep 1\nsay late", 15.0) == "not read"      # a pause too short to tell
    assert stream("sleep 15\nsay early\nsay late", 15.0) == "not read"     # nothing said before it
    assert stream("count\nsleep 15\nsay late", 15.0) == "not read"         # what comes first is not fixed text
    # steps and tool calls add no text: the run's events before the reply leave it fixed text said before a pause
    assert stream('step plan\ntool lookup {"q":"x"}\nsay early\nsleep 2\nstep plan', 15.0) == "failed"


@pytest.mark.parametrize("request_headers, rid", [
    ({"Content-Type": "application/json"}, "AUTH-KEY-002"),
    ({"Authorization": "Bearer ais_live_unknownunknown", "Content-Type": "application/json"}, "AUTH-KEY-004"),
    ({"Authorization": "Basic eDp5", "Content-Type": "application/json"}, "AUTH-KEY-006"),
])
@pytest.mark.parametrize("stream", [False, True])
def test_a_refused_credential_is_refused_in_any_mode(request_headers, rid, stream):
    body = {"prompt": "p", **({"stream": True} if stream else {})}
    refused = {"error": {"code": "unauthenticated", "message": "no", "requestId": "req_1"}}
    assert judged(invoke(401, refused, request=body, headers=request_headers), rid) == "passed"
    assert judged(invoke(200, result(), request=body, headers=request_headers), rid) == "failed"


def test_a_refusal_is_a_4xx_with_the_error_body_and_what_reads_it_is_blocked_otherwise():
    bad = invoke(400, b"<html>no</html>", request={"prompt": 42}, content_type="text/html")
    assert judged(bad, "GEN-ERR-001") == "failed"
    assert judged(bad, "INV-ERR-002") == "blocked"


def test_a_key_over_256_characters_is_refused_and_one_inside_by_every_count_is_not_read_as_outside():
    long = {"prompt": "p", "sessionId": "k" * 257}
    assert judged(invoke(400, ERROR, request=long), "INV-SESS-006") == "passed"
    assert judged(invoke(200, result("k" * 257), request=long), "INV-SESS-006") == "failed"
    astral = {"prompt": "p", "sessionId": "😀" * 200}    # 200 code points, 400 UTF-16 units: left open
    assert judged(invoke(400, ERROR, request=astral), "INV-SESS-006") == "not read"
    assert judged(invoke(400, ERROR, request=astral), "INV-RES-001") == "not read"


@pytest.mark.parametrize("probe, status", [("k-" + "\u0958" * 254, 400),     # 256 code points, 510 after NFKC
                                           ("k-" + "e\u0301" * 128, 200)])     # 258 code points, 130 after NFKC
def test_a_length_answered_as_that_of_the_key_the_service_changed_is_the_change_s_deviation(probe, status):
    """A service that changed a key it gave back (NFKC, named by the echo's failure) and judged a key's length on
    the changed key: the length probe it answered wrong is blocked by the echo's rule, the one deviation."""
    sent = "conf-\u00b2\uff76"
    echoed = invoke(200, result("conf-2\u30ab"), request={"prompt": "say conformance", "sessionId": sent})
    assert judged(echoed, "INV-SESS-003") == "failed"
    answered = invoke(status, ERROR if status == 400 else result(probe), request={"prompt": "p", "sessionId": probe})
    rid = "INV-SESS-005" if status == 400 else "INV-SESS-006"
    assert judged(answered, rid) == "failed"
    run = [canned.recording("s", [echoed, answered])]
    root = exchange_rules.key_broken([answered], run)
    assert root is not None and root[0] == "INV-SESS-003" and root[1] is echoed and "once changed" in root[3]
    untouched = invoke(200, result(sent), request={"prompt": "say conformance", "sessionId": sent})
    assert exchange_rules.key_broken([answered], [canned.recording("s", [untouched, answered])]) is None


def agui(events, request=None):
    return canned.exchange(200, {"content-type": "text/event-stream"}, sse=canned.sse_frames(*events), url=AGUI,
                           request_headers=KEY, request_body=request or {
                               "threadId": "t1", "runId": "r1", "messages": [{"id": "1", "role": "user",
                                                                              "content": "say hi"}]})


def replied(said: str, result: str) -> list[dict]:
    """An AG-UI run that streamed `said` and finished with outcome `success` and `result`."""
    return [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": said},
            {"type": "TEXT_MESSAGE_END", "messageId": "m"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "result": result,
             "outcome": {"type": "success"}}]


def test_agui_ids_sent_are_echoed_and_the_run_starts_first():
    good = [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
            {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "result": "", "outcome": {"type": "success"}}]
    assert judged(agui(good), "AGUI-ID-001") == "passed" and judged(agui(good), "AGUI-ORDER-001") == "passed"
    renamed = [dict(good[0], threadId="T1"), good[1]]
    assert judged(agui(renamed), "AGUI-ID-001") == "failed"
    assert judged(agui(good[::-1]), "AGUI-ORDER-001") == "failed"


def mcp(status, body, *, method="tools/list", headers=None, request=None):
    req = request or {"jsonrpc": "2.0", "id": 7, "method": method, "params": {}}
    hdrs = headers if headers is not None else {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28",
                                                "Mcp-Method": method}
    return canned.exchange(status, JSON, body=body, url=MCP, request_headers=hdrs, request_body=req)


def test_every_mcp_response_keeps_the_id_and_its_type():
    assert judged(mcp(200, {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}), "MCP-METH-005") == "passed"
    assert judged(mcp(200, {"jsonrpc": "2.0", "id": "7", "result": {"tools": []}}), "MCP-METH-005") == "failed"


def test_a_refusals_error_keeps_the_id_or_names_null_and_mcp_err_001_leaves_the_id_to_it():
    error = {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"], "requested": "1999"}}
    sent = {"jsonrpc": "2.0", "id": 4294967298, "method": "tools/list", "params": {}}
    unsupported = {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "1999-01-01", "Mcp-Method": "tools/list"}

    def refused(rid, request=sent):     # a version the service does not speak: refused 400 -32022, as it must be
        return mcp(400, {"jsonrpc": "2.0", "id": rid, "error": error}, request=request, headers=unsupported)
    assert judged(refused(4294967298), "MCP-METH-005") == "passed"
    assert judged(refused(None), "MCP-METH-005") == "passed"       # JSON-RPC 2.0 §5: an id it could not read
    assert judged(refused(2), "MCP-METH-005") == "failed"          # held in 32 bits
    assert judged(refused("4294967298"), "MCP-METH-005") == "failed"
    huge = {**sent, "id": 2**60}                                    # beyond what every reader reads alike
    assert judged(refused(2**60 + 1, huge), "MCP-METH-005") == "not read"


def tool_call(token: int) -> tuple[dict, dict]:
    """(body, headers) of a 2026-07-28 tools/call of `say hi` on key k1 with progress token `token`."""
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "ask_conformance_agent", "arguments": {"prompt": "say hi", "session_id": "k1"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": token}}}
    return call, {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                  "Mcp-Name": "ask_conformance_agent"}


def test_every_progress_stream_of_a_prompt_that_says_its_reply_ends_with_the_complete_result():
    call, headers = tool_call(9)
    note = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 9, "progress": 1, "message": "working"}}

    def streamed(**result):
        response = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "hi"}],
                                                          "isError": False, "structuredContent": {"sessionId": "k1"},
                                                          **result}}
        return canned.exchange(200, {"content-type": "text/event-stream"}, url=MCP, request_headers=headers,
                               request_body=call, sse=canned.sse_frames(note, response))
    assert judged(streamed(resultType="complete"), "MCP-PROG-008") == "passed"
    assert judged(streamed(), "MCP-PROG-008") == "failed"


@pytest.mark.parametrize("method", ["tools/list", "server/discover"])
def test_no_credential_is_a_401_with_its_challenge_on_every_method(method):
    hdrs = {"Content-Type": "application/json", "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method}
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}}
    challenge = 'Bearer resource_metadata="https://server.test/.well-known/oauth-protected-resource/v1/agents/' \
                'agt_canned/mcp", scope="agent:invoke"'
    ok = canned.exchange(401, {**JSON, "www-authenticate": challenge}, body=body, url=MCP, request_headers=hdrs,
                         request_body={"jsonrpc": "2.0", "id": 1, "method": method})
    assert judged(ok, "AUTH-MCP-003") == "passed" and judged(ok, "AUTH-MCP-008") == "passed"
    served = mcp(200, {"jsonrpc": "2.0", "id": 1, "result": {}}, method=method, headers=hdrs,
                 request={"jsonrpc": "2.0", "id": 1, "method": method})
    assert judged(served, "AUTH-MCP-003") == "failed"
    bare = canned.exchange(401, JSON, body=body, url=MCP, request_headers=hdrs,
                           request_body={"jsonrpc": "2.0", "id": 1, "method": method})
    assert judged(bare, "AUTH-MCP-008") == "failed"


def test_a_method_header_that_differs_from_the_body_only_in_case_is_refused():
    hdrs = {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "Tools/List"}
    refused = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32022, "message": "no",
                                                     "data": {"supported": ["2026-07-28"], "requested": "x"}}}
    assert judged(mcp(400, refused, headers=hdrs), "MCP-HDR-002") == "passed"
    assert judged(mcp(200, {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}, headers=hdrs),
                  "MCP-HDR-002") == "failed"


@pytest.mark.parametrize("http, code, status", [(400, -32022, "failed"), (400, -32020, "failed"), (409, -32005, "failed"),
                                                (409, -32009, "failed"), (409, -32099, "info"), (415, -32099, "failed")])
def test_a_valid_request_refused_for_a_condition_it_lacks_is_not_served(http, code, status):
    """Each code the spec's MCP refusals list names a condition (a header mismatch, a content type or version not
    supported, ...), as does upstream's -32020 for the one the spec gives -32022, and so does a status by which HTTP
    says the request is at fault: a valid request refused so lacks it. A code no one lists (a server's own, -32000
    to -32099) under another status (a conflict, a policy) is only seen."""
    refused = {"jsonrpc": "2.0", "id": 7, "error": {"code": code, "message": "no"}}
    assert judged(mcp(http, refused), "MCP-SESS-005") == status
    assert judged(mcp(200, {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}), "MCP-SESS-005") == "passed"


def test_a_scenarios_own_failure_on_an_exchange_blocks_the_rules_over_every_exchange_there():
    ex = invoke(200, result("K1"))
    ex.credential = "api_key"
    check = registry.CHECKS["every.inv_sess_003"]
    rec = canned.recording("invoke.sessions", [ex])
    with exchange_rules.claiming({id(ex): "INV-SESS-002"}):
        with pytest.raises(AssertionError) as got:
            check.fn([rec])
    assert "already failed" in str(got.value)
    with pytest.raises(AssertionError, match="sent sessionId"):
        check.fn([rec])


def test_a_valid_call_at_its_path_is_served_there_and_nothing_else_is_read_on_a_404():
    not_found = {"error": {"code": "not_found", "message": "no", "requestId": "req_1"}}
    assert judged(invoke(200, result()), "GEN-BASE-003") == "passed"
    gone = invoke(404, not_found)
    assert judged(gone, "GEN-BASE-003") == "failed" and judged(gone, "INV-RES-001") == "blocked"
    assert exchange_rules.broke_first(gone, T) == "GEN-BASE-003"
    # a 404 is the spec's answer to an agent that is not there, and to a credential that is not valid
    elsewhere = canned.exchange(404, JSON, body=not_found, url=INVOKE.replace("agt_canned", "agt_nobodys"),
                                request_headers=KEY, request_body={"prompt": "p"})
    assert judged(elsewhere, "GEN-BASE-003") == "not read"
    unknown = invoke(404, not_found, headers={**KEY, "Authorization": "Bearer ais_live_unknownunknown"})
    assert judged(unknown, "GEN-BASE-003") == "not read" and judged(unknown, "AUTH-KEY-004") == "failed"


def test_a_refusal_of_a_streamed_request_not_sent_as_json_is_the_stream_refusal_rules():
    refused = {"error": {"code": "validation_failed", "message": "no", "requestId": "req_1", "details": {}}}
    body = {"prompt": 3, "stream": True}
    plain = invoke(400, refused, request=body, content_type="text/plain; charset=utf-8")
    assert judged(plain, "INV-ERR-001") == "failed" and judged(plain, "GEN-ERR-001") == "blocked"
    as_json = invoke(400, refused, request=body)
    assert judged(as_json, "INV-ERR-001") == "passed" and judged(as_json, "GEN-ERR-001") == "passed"
    unstreamed = invoke(400, refused, request={"prompt": 3}, content_type="text/plain")
    assert judged(unstreamed, "GEN-ERR-001") == "failed" and judged(unstreamed, "INV-ERR-001") == "not read"


# -- the reply a prompt says, wherever the run came from -----------------------------------------------------------
@pytest.mark.parametrize("prompt, reply, other", [
    ("say conformance", "conformance", "conformance\n"),
    ("step plan\ntool lookup {\"q\":\"x\"}\nchunks 3 a b\ncount", "a b12", "a b12 "),
    ("hello there", "hello there", "Hello there"),
])
def test_a_run_whose_prompt_says_its_reply_answers_it_on_every_protocol(prompt, reply, other):
    messages = [{"role": "user", "content": "say earlier"}]
    for got, want in ((reply, "passed"), (other, "failed")):
        request = {"prompt": prompt, "sessionId": "k1", "messages": messages}
        assert judged(invoke(200, result(result=got), request=request), "INV-RES-003") == want
        run = agui(replied(got, got), {"threadId": "t1", "runId": "r1", "messages": [{"id": "1", "role": "user",
                                                                                      "content": prompt}]})
        assert judged(run, "AGUI-ORDER-006") == want
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "ask_conformance_agent", "arguments": {"prompt": prompt, "session_id": "k1"},
                           "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
        answer = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": got}],
                                                        "structuredContent": {"sessionId": "k1"},
                                                        "resultType": "complete", "isError": False}}
        headers = {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                   "Mcp-Name": "ask_conformance_agent"}
        assert judged(mcp(200, answer, headers=headers, request=call), "MCP-TOOL-002") == want


@pytest.mark.parametrize("prompt", ["ask x", "fail boom", "echo params", "say a\nask b"])
def test_a_prompt_whose_reply_depends_on_more_than_itself_is_not_read(prompt):
    ex = invoke(200, result(result="anything"), request={"prompt": prompt})
    judged(ex, "INV-RES-003")
    assert not [r for r in exchange_rules.rules_of("INV-RES-003") if r.applies(ex, T) and r.name == "result_is_reply"]


def test_a_failed_run_is_not_read_for_its_whole_reply():
    failed = result(status="failed", result="", error={"code": "agent_error", "message": "boom"})
    ex = invoke(200, failed)
    judged(ex, "INV-RES-003")
    rule = next(r for r in exchange_rules.rules_of("INV-RES-003") if r.name == "result_is_reply")
    assert exchange_rules._judged(rule, ex, T).status == "not_assessed"


def test_every_result_names_its_agent_and_lasts_no_longer_than_its_exchange():
    assert judged(invoke(200, result()), "INV-RES-010") == "passed"
    assert judged(invoke(200, result(agentId="agt_other")), "INV-RES-010") == "failed"
    quick = invoke(200, result(durationMs=3))
    quick.t_end = 0.05
    assert judged(quick, "INV-RES-013") == "passed"
    slow = invoke(200, result(durationMs=3_000_000))
    slow.t_end = 0.05
    assert judged(slow, "INV-RES-013") == "failed"
    slept = invoke(200, result(durationMs=3), request={"prompt": "sleep 2\nsay x"})
    slept.t_end = 2.1
    assert judged(slept, "INV-RES-013") == "failed"     # the run slept 2 s: at least 1000 ms


def test_no_two_calls_that_left_their_key_out_are_given_the_same_one():
    from conformance.outcomes import Deviation
    differ = registry.CHECKS["generated_keys.generated_invoke_keys_differ"].fn

    def call(key, label, started=0.0):
        ex = invoke(200, result(key), request={"prompt": "say conformance"})
        ex.label, ex.started_at = label, started
        return ex
    apart = [canned.recording("a", [call("g1", "one", 1.0)]), canned.recording("b", [call("g2", "two", 2.0)])]
    assert "each given a key of their own" in differ(apart)
    shared = call("g1", "three", 3.0)
    with pytest.raises(Deviation, match="three and one both left `sessionId` out"):
        differ([*apart, canned.recording("c", [shared])])
    again = apart[0].exchanges[0]        # one exchange a second scenario reads as its own step is one call
    assert "each given" in differ([*apart, canned.recording("d", [again])])


def test_a_refusal_given_word_for_word_to_a_request_that_must_be_answered_is_that_one_deviation():
    """An unknown key answered with the very refusal a valid invoke got: the server turned the request's form away
    before it read the key, so AUTH-KEY-004 is blocked by the rule the valid request broke (INV-RES-001); a refusal
    of its own is its failure, and the valid request keeps its own."""
    from conformance.outcomes import Blocked
    refused = {"error": {**ERROR["error"], "message": "charset not supported"}}
    valid = invoke(400, refused)
    valid.credential = "api_key"
    unknown_key = {**KEY, "Authorization": "Bearer ais_live_unknownunknown"}
    probe = invoke(400, refused, headers=unknown_key)
    own = invoke(400, {**refused, "error": {**refused["error"], "message": "bad key"}}, headers=unknown_key)
    recs = [canned.recording("invoke.forms", [valid]), canned.recording("access.invoke", [probe])]
    with pytest.raises(Blocked) as got:
        registry.CHECKS["every.auth_key_004"].fn(recs)
    assert got.value.root == "INV-RES-001" and "a request that must be answered" in str(got.value)
    for check, runs in (("every.auth_key_004", [recs[0], canned.recording("access.invoke", [own])]),
                        ("every.inv_res_001", recs)):
        with pytest.raises(AssertionError) as got:
            registry.CHECKS[check].fn(runs)
        assert not isinstance(got.value, Blocked), (check, got.value)
    assert exchange_rules.refused_alike([probe], recs)[0] == "INV-RES-001"
    assert exchange_rules.refused_alike([valid], recs) is None       # a request with no problem: its own failure


def test_stream_false_with_the_event_stream_accepted_answered_as_json_is_a_non_streaming_answer():
    """INV-SEL-005 leaves the form open; a JSON answer is non-streaming all the same: 200 with one JSON object."""
    either = {**KEY, "Accept": "text/event-stream"}
    request = {"prompt": "say conformance", "stream": False}
    assert judged(invoke(200, result(), request=request, headers=either), "INV-RES-001") == "passed"
    assert judged(invoke(201, result(), request=request, headers=either), "INV-RES-001") == "failed"
    frames = canned.sse_frames({"v": 1, "type": "done"}, event="done")
    streamed = invoke(200, b"", sse=frames, content_type="text/event-stream", request=request, headers=either)
    assert judged(streamed, "INV-RES-001") == "not read"


def test_every_refusal_answered_under_200_is_mcp_err_001s_and_one_kind_alone_is_its_own_rules():
    """No credential answered 200 with the JSON-RPC error: AUTH-MCP-003's failure while that is the only refusal so
    answered; once a version refusal is answered so too, the service answers every refusal under 200, and
    AUTH-MCP-003 is blocked by MCP-ERR-001, which fails."""
    from conformance.outcomes import Blocked
    hdrs = {"Content-Type": "application/json", "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list"}
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no"}}
    no_key = mcp(200, error, headers=hdrs, request={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert judged(no_key, "AUTH-MCP-003") == "failed"
    alone = [canned.recording("access.mcp", [no_key])]
    with pytest.raises(AssertionError) as got:
        registry.CHECKS["every.auth_mcp_003"].fn(alone)
    assert not isinstance(got.value, Blocked)
    version = mcp(200, {**error, "error": {"code": -32022, "message": "no", "data": {}}},
                  headers={**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "1999-01-01", "Mcp-Method": "tools/list"})
    assert judged(version, "MCP-ERR-001") == "failed"
    both = [*alone, canned.recording("mcp.refusals", [version])]
    with pytest.raises(Blocked) as got:
        registry.CHECKS["every.auth_mcp_003"].fn(both)
    assert got.value.root == "MCP-ERR-001", got.value
    with pytest.raises(AssertionError, match="under HTTP 200"):
        registry.CHECKS["every.mcp_err_001"].fn(both)


def test_every_agui_run_reports_its_reply_as_result_and_a_resumed_one_at_least_what_it_streamed():
    def run(result, said, *, resume=False):
        asked = {"resume": {"answer": "Ada"}} if resume else \
            {"messages": [{"id": "1", "role": "user", "content": "say conformance"}]}
        return judged(agui(replied(said, result), {"threadId": "t1", "runId": "r1", **asked}), "AGUI-PROMPT-003")

    assert run("conformance", "conformance") == "passed"
    assert run("", "conformance") == "failed"
    assert run("Conformance", "Conformance") == "blocked"      # the reply itself went wrong: AGUI-ORDER-006's
    # a resumed run's reply is not in its request: its result holds what it streamed, and may hold what came before
    assert run('answer: "Ada"thanks', 'answer: "Ada"thanks', resume=True) == "passed"
    assert run('What is your name? answer: "Ada"thanks', 'answer: "Ada"thanks', resume=True) == "passed"
    assert run("", 'answer: "Ada"thanks', resume=True) == "failed"


def test_a_stream_the_official_client_closed_at_its_response_is_read_up_to_it():
    from conformance.wire.sdk import CLOSED_BY_CLIENT
    call, headers = tool_call(3)
    response = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False,
                                                      "structuredContent": {"sessionId": "k1"},
                                                      "resultType": "complete"}}

    def closed_after(*messages):
        ex = canned.exchange(200, {"content-type": "text/event-stream"}, sse=canned.sse_frames(*messages), url=MCP,
                             request_headers=headers, request_body=call)
        ex.stream.end = CLOSED_BY_CLIENT
        return ex

    def progress(token):
        return {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "message": "working"}}

    assert exchange_rules.judgeable(closed_after(progress(3), response))
    assert judged(closed_after(progress(3), response), "MCP-PROG-005") == "passed"
    assert judged(closed_after(progress("3"), response), "MCP-PROG-005") == "failed"
    assert judged(closed_after(progress(3), response), "MCP-PROG-003") == "passed"   # its end is not seen, not wrong
    assert not exchange_rules.judgeable(closed_after(progress(3)))     # closed before its response: not whole


def test_a_run_with_a_history_that_replied_to_another_message_is_prompt_001s_and_any_other_wrong_reply_order_006s():
    history = {"threadId": "t1", "runId": "r1", "messages": [
        {"id": "0", "role": "user", "content": "say earlier-turn"}, {"id": "a", "role": "assistant",
                                                                     "content": "assistant-turn"},
        {"id": "1", "role": "user", "content": "say hi"}]}
    right, earlier, garbled = (agui(replied(said, said), history) for said in ("hi", "earlier-turn", "hI"))
    assert judged(right, "AGUI-PROMPT-001") == judged(right, "AGUI-ORDER-006") == "passed"
    assert (judged(earlier, "AGUI-PROMPT-001"), judged(earlier, "AGUI-ORDER-006")) == ("failed", "blocked")
    assert (judged(garbled, "AGUI-PROMPT-001"), judged(garbled, "AGUI-ORDER-006")) == ("blocked", "failed")


def test_an_echo_that_replied_to_another_message_of_its_history_is_prompt_001s_not_each_readings():
    """An `echo params` run answered with the reply of an earlier message (the list reached the agent reversed)
    shows the run did not reply to its prompt: the pass-through rules reading the echo are blocked by AGUI-PROMPT-001
    (whose rule reads the runs whose prompt says their reply). An echo holds the history's texts (JSON): never read
    so."""
    history = {"threadId": "t1", "runId": "r1", "messages": [
        {"id": "0", "role": "user", "content": "say earlier-turn"}, {"id": "a", "role": "assistant",
                                                                     "content": "earlier-turn"},
        {"id": "1", "role": "user", "content": "echo params"}]}
    earlier = agui(replied("earlier-turn", "earlier-turn"), history)
    assert judged(earlier, "AGUI-PASS-002") == "blocked"
    assert exchange_rules.outcomes(earlier, T)["AGUI-PASS-002"].root == "AGUI-PROMPT-001"
    echo = json.dumps({"threadId": "t1", "runId": "r1", "messages": history["messages"]}, separators=(",", ":"))
    assert judged(agui(replied(echo, echo), history), "AGUI-PASS-002") == "passed"


def test_every_call_without_a_token_is_answered_in_one_of_mcps_two_forms_and_a_stream_not_ending_with_its_response_is_prog_003s():
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "ask_conformance_agent", "arguments": {"prompt": "say hi", "session_id": "k1"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
    headers = {**KEY, "Accept": MCP_ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
               "Mcp-Name": "ask_conformance_agent"}
    response = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "hi"}], "isError": False,
                                                      "structuredContent": {"sessionId": "k1"},
                                                      "resultType": "complete"}}

    def answered(content_type, request=call, **kw):
        return canned.exchange(200, {"content-type": content_type}, url=MCP, request_headers=headers,
                               request_body=request, **kw)

    assert judged(answered("application/json", body=response), "MCP-PROG-011") == "passed"
    assert judged(answered("text/event-stream", sse=canned.sse_frames(response)), "MCP-PROG-011") == "passed"
    assert judged(answered("text/plain", body=response), "MCP-PROG-011") == "failed"
    # a call with a token is MCP-PROG-001's: it must stream; its response must be the last frame, and what else
    # reads the call's result is blocked by that, not failed again
    token = {**call, "params": {**call["params"], "_meta": {**call["params"]["_meta"], "progressToken": 9}}}
    note = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 9, "progress": 1, "message": "working"}}
    assert judged(answered("text/event-stream", token, sse=canned.sse_frames(note, response)), "MCP-PROG-011") \
        == "not read"
    late = answered("text/event-stream", token, sse=canned.sse_frames(response, note))
    assert judged(late, "MCP-PROG-003") == "failed" and judged(late, "MCP-VER-001") == "blocked"


@pytest.mark.parametrize("dim, value, operation, rule", [
    ("auth-scheme-case", "bearer", "agui", "AUTH-KEY-001"), ("auth-scheme-case", "BEARER", "mcp", "AUTH-KEY-001"),
    ("content-type-form", "Application/JSON", "mcp", "MCP-SESS-005"),
    ("content-type-form", "application/json; charset=utf-8", "invoke", "INV-RES-001"),
    ("accept-form", "case", "invoke", None),        # an Accept's class is the Accept's the scenario wrote: not read
    ("json-writing", "members-reversed", "mcp", None),      # its class names a rule of every reading: none alone
    ("user-agent", "sdk", "invoke", None)])                 # no input class: the basic rule of its protocol
def test_a_valid_form_turned_away_is_the_deviation_of_the_rule_its_input_class_names(dim, value, operation, rule):
    assert exchange_rules.form_rule(dim, value, operation) == rule


@pytest.mark.parametrize("method", ["tools/list", "server/discover"])
def test_a_describing_method_refused_for_its_credential_is_never_method_not_found(method):
    """A refusal for the credential answered -32601 (method not found) shows the method missing: MCP-METH-001's
    deviation, read first, so the credential's rules are blocked by it; a refusal of its own passes, and a request
    whose method is its problem (an `Mcp-Method` of another method) is not read by it."""
    unknown = {**KEY, "Authorization": "Bearer ais_live_unknownunknown", "Accept": MCP_ACCEPT,
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    not_found = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    missing = mcp(404, not_found, method=method, headers=unknown)
    assert judged(missing, "MCP-METH-001") == "failed" and judged(missing, "AUTH-MCP-005") == "blocked"
    refused = mcp(401, {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "unknown credential"}},
                  method=method, headers=unknown)
    assert judged(refused, "MCP-METH-001") == "passed"
    other = {**unknown, "Mcp-Method": "tools/call"}
    assert judged(mcp(404, not_found, method=method, headers=other), "MCP-METH-001") == "not read"


REFUSED, SERVED = (400, "-32600", "'no'"), None


def row(refused: bool, **traits: str) -> tuple[dict[str, str], tuple | None, int]:
    return traits, REFUSED if refused else SERVED, 400 if refused else 200


def split_of(rows, **carried):
    return exchange_rules._refusing_form(carried, exchange_rules._Refusals({}, {}, {}, {"mcp": rows}), "mcp", REFUSED)


def test_valid_requests_turned_away_are_told_apart_by_what_they_carried_alone_or_among_others():
    """A refusal of valid requests is one deviation when what they carried tells them from the served ones: a value
    of one trait; or a value of one trait among the requests carrying a value of another (every request without
    a session header refused, but the handshake, which carries none, served: among the requests naming a method in
    a header, those of another method); or, refused for two things at once (a body not starting with `jsonrpc`),
    each refused request by one of them. Never on one request alone, nor where nothing was served."""
    header = "header mcp-method"
    handshake = [row(False, **{header: "present", "mcp-method": "initialize"}) for _ in range(2)]
    sdk = [row(False, **{"mcp-method": "tools/call"}) for _ in range(2)]       # no such header: served
    refused = [row(True, **{header: "present", "mcp-method": m}) for m in ("tools/call", "tools/call", "tools/list",
                                                                         "tools/list")]
    rows = handshake + sdk + refused
    assert split_of(rows, **{header: "present", "mcp-method": "tools/list"}) == \
        ((header, "present"), "mcp-method", "tools/list")
    writing = [row(True, **{"json-writing": "spaced", "first member": "jsonrpc"}) for _ in range(2)] + \
        [row(True, **{"json-writing": "compact", "first member": "id"}) for _ in range(2)] + \
        [row(False, **{"json-writing": "compact", "first member": "jsonrpc"}) for _ in range(3)]
    assert split_of(writing, **{"json-writing": "compact", "first member": "id"})[1:] == ("first member", "id")
    assert split_of(writing, **{"json-writing": "spaced", "first member": "jsonrpc"})[1:] == ("json-writing", "spaced")
    assert split_of(refused[:1] + handshake, **{header: "present", "mcp-method": "tools/call"}) is None
    assert split_of(refused, **{header: "present", "mcp-method": "tools/call"}) is None
