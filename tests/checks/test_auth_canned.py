"""The authentication and agent-addressing checks on canned recordings: every failure names the exchange that
broke the rule (and starts with its step label), and an exchange that broke a more basic rule blocks the other
requirements' checks by that rule (Blocked) while the rule's own check fails on it (a plain Deviation).

`judge` runs a check the way the engine does: inside `outcomes.judging(<its requirements>)`."""
from __future__ import annotations

from typing import Any

import pytest

from conformance import canned, registry
from conformance.outcomes import Blocked, Deviation, NotAssessed, judging
from conformance.vocab.refusals import mcp_refused, refused_4xx
from conformance.vocab.steps import access as steps

BASE = canned.DEFAULT_TARGET.base_url
AGENT = canned.DEFAULT_TARGET.agent_id
JSON = {"content-type": "application/json"}
VALID_KEY = {steps.ACCEPTED, steps.MALFORMED_AGENT, steps.UNKNOWN_AGENT, steps.UNDEPLOYED_AGENT}


def judge(check_id: str, rec) -> tuple[str, Any]:
    """("passed", note) / ("blocked", the Blocked) / ("failed", the Deviation) / ("not_assessed", reason)."""
    check = registry.load_all()[check_id]
    try:
        with judging(check.requirements):
            return "passed", check.fn(rec)
    except NotAssessed as exc:
        return "not_assessed", str(exc)
    except Blocked as exc:
        return "blocked", exc
    except Deviation as exc:
        return "failed", exc


def error(code: str | None = "unauthenticated", request_id: str = "req_1", **extra: Any) -> dict[str, Any]:
    err = {"message": "no", "requestId": request_id, **extra}
    if code is not None:
        err["code"] = code
    return {"error": err}


def answer(label: str, status: int = 401, body: Any = None, headers: dict[str, str] | None = None,
           protocol: str = "invoke", agent: str = AGENT, sse: list | None = None):
    ex = canned.exchange(status, JSON if headers is None else headers,
                         body=error() if body is None and sse is None else (body or b""), sse=sse, label=label,
                         url=f"{BASE}/v1/agents/{agent}/{protocol}")
    ex.credential = "api_key" if label in VALID_KEY else ("access_token" if label == steps.OTHER_AGENT_TOKEN else None)
    return ex


def access(protocol: str = "invoke", **answers) -> Any:
    """An access.<protocol> recording: every step answered as the reference server does, except `answers`
    (step label with `-` as `_` -> exchange)."""
    normal = {steps.ACCEPTED: answer(steps.ACCEPTED, 200, {"result": "conformance"}, protocol=protocol),
              steps.MALFORMED_AGENT: answer(steps.MALFORMED_AGENT, 404, error("not_found"), protocol=protocol),
              steps.UNKNOWN_AGENT: answer(steps.UNKNOWN_AGENT, 404, error("not_found"), protocol=protocol),
              steps.UNDEPLOYED_AGENT: answer(steps.UNDEPLOYED_AGENT, 404, error("not_found"), protocol=protocol),
              steps.OTHER_AGENT_TOKEN: answer(steps.OTHER_AGENT_TOKEN, 404, error("not_found"), protocol=protocol)}
    for label in steps.INVOKE_AGUI_CREDENTIALS:
        normal[label] = answer(label, protocol=protocol)
    normal.update({label.replace("_", "-"): ex for label, ex in answers.items()})
    return canned.recording(f"access.{protocol}", [normal[label] for label in steps.ACCESS_INVOKE],
                            facts={"protocol": protocol, "reply": "conformance"})


def test_the_reference_answers_pass():
    rec = access()
    for check_id in ("auth.invoke_without_credential", "auth.unknown_agent_not_found_invoke",
                     "auth.invoke_undeployed_agent", "auth.refusals_error_body_invoke", "auth.api_key_accepted_invoke",
                     "auth.other_scheme_refused_invoke", "auth.unknown_agent_404_invoke"):
        assert judge(check_id, rec)[0] == "passed", (check_id, judge(check_id, rec))


# -- a failure names its exchange ----------------------------------------------------------------------------
def test_a_wrong_code_names_the_step_and_starts_with_its_label():
    rec = access(no_credential=answer(steps.NO_CREDENTIAL, 401, error("forbidden")))
    status, exc = judge("auth.invoke_without_credential", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL),)
    assert str(exc).startswith(f"{steps.NO_CREDENTIAL}: ") and "'forbidden'" in str(exc)


def test_a_call_that_ran_is_the_requirements_own_failure():
    rec = access(no_credential=answer(steps.NO_CREDENTIAL, 200, {"result": "conformance"}))
    status, exc = judge("auth.invoke_without_credential", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (rec.get(steps.NO_CREDENTIAL),)


def test_every_failing_step_is_named():
    rec = access(basic_scheme=answer(steps.BASIC_SCHEME, 200, {"result": "x"}),
                 empty_bearer=answer(steps.EMPTY_BEARER, 200, {"result": "x"}))
    status, exc = judge("auth.other_scheme_refused_invoke", rec)
    assert status == "failed"
    assert exc.exchanges == (rec.get(steps.BASIC_SCHEME), rec.get(steps.EMPTY_BEARER))
    assert str(exc).startswith(f"{steps.BASIC_SCHEME}: ") and f"{steps.EMPTY_BEARER}: " in str(exc)


def test_the_key_form_names_the_call_that_carried_it():
    rec = access()
    rec.target = canned.DEFAULT_TARGET.__class__(**{**canned.DEFAULT_TARGET.__dict__, "api_key": "key-123"})
    status, exc = judge("auth.api_key_form", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.ACCEPTED),)
    assert "key-123" not in str(exc)


# -- preconditions: blocked for the others, a failure for the root's own check --------------------------------
def test_a_refusal_that_is_not_json_blocks_by_gen_err_001_and_fails_it():
    plain = answer(steps.NO_CREDENTIAL, 401, b"no", headers={"content-type": "text/plain"})
    rec = access(no_credential=plain)
    status, exc = judge("auth.invoke_without_credential", rec)
    assert status == "blocked" and exc.root == "GEN-ERR-001" and exc.exchanges == (plain,)
    status, exc = judge("auth.refusals_error_body_invoke", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (plain,)


def test_the_error_body_sent_as_text_plain_still_gives_its_code_but_fails_gen_err_001():
    texty = answer(steps.NO_CREDENTIAL, 401, error(), headers={"content-type": "text/plain"})
    rec = access(no_credential=texty)
    assert judge("auth.invoke_without_credential", rec)[0] == "passed"
    status, exc = judge("auth.refusals_error_body_invoke", rec)
    assert status == "failed" and exc.exchanges == (texty,) and "not sent as JSON" in str(exc)


def test_a_refusal_with_a_5xx_is_gen_err_001s():
    rec = access(no_credential=answer(steps.NO_CREDENTIAL, 500), undeployed_agent=answer(steps.UNDEPLOYED_AGENT, 500,
                                                                                        error("not_found")))
    for check_id in ("auth.invoke_without_credential", "auth.invoke_undeployed_agent"):
        status, exc = judge(check_id, rec)
        assert status == "blocked" and exc.root == "GEN-ERR-001", (check_id, exc)
    status, exc = judge("auth.refusals_error_body_invoke", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL), rec.get(steps.UNDEPLOYED_AGENT))


def test_a_missing_code_blocks_by_gen_err_002():
    rec = access(no_credential=answer(steps.NO_CREDENTIAL, 401, error(code=None)))
    status, exc = judge("auth.invoke_without_credential", rec)
    assert status == "blocked" and exc.root == "GEN-ERR-002"
    with judging({"GEN-ERR-002"}):      # GEN-ERR-002's own check reading the same code fails on it
        with pytest.raises(Deviation) as raised:
            refused_4xx(rec, steps.NO_CREDENTIAL, code="unauthenticated")
    assert not isinstance(raised.value, Blocked) and raised.value.exchanges == (rec.get(steps.NO_CREDENTIAL),)


def test_the_whole_error_body_blocks_by_the_field_rule_it_breaks():
    rec = access(undeployed_agent=answer(steps.UNDEPLOYED_AGENT, 404, error("not_found", request_id="zoo")))
    status, exc = judge("auth.invoke_undeployed_agent", rec)
    assert status == "blocked" and exc.root == "GEN-ERR-004" and "requestId" in str(exc)


def test_the_valid_key_refused_blocks_addressing_by_auth_key_001():
    refused = answer(steps.UNKNOWN_AGENT, 401, error("unauthenticated"))
    rec = access(accepted=answer(steps.ACCEPTED, 401), unknown_agent=refused,
                 undeployed_agent=answer(steps.UNDEPLOYED_AGENT, 401))
    for check_id in ("auth.unknown_agent_not_found_invoke", "auth.invoke_undeployed_agent",
                     "auth.unknown_agent_404_invoke"):
        status, exc = judge(check_id, rec)
        assert status == "blocked" and exc.root == "AUTH-KEY-001", (check_id, exc)
    status, exc = judge("auth.api_key_accepted_invoke", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.ACCEPTED),)
    with judging({"AUTH-KEY-001"}):
        with pytest.raises(Deviation) as raised:
            refused_4xx(rec, steps.UNKNOWN_AGENT, code="not_found")
    assert not isinstance(raised.value, Blocked) and raised.value.exchanges == (refused, rec.get(steps.ACCEPTED))


def test_an_unknown_agent_refused_as_unauthenticated_while_the_key_works_is_gen_agent_005s():
    rec = access(unknown_agent=answer(steps.UNKNOWN_AGENT, 401, error("unauthenticated")))
    status, exc = judge("auth.unknown_agent_not_found_invoke", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (rec.get(steps.UNKNOWN_AGENT),)


def test_another_code_for_an_unknown_agent_is_gen_agent_005s_and_blocks_006():
    rec = access(unknown_agent=answer(steps.UNKNOWN_AGENT, 400, error("agent_not_found")))
    status, exc = judge("auth.unknown_agent_not_found_invoke", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.UNKNOWN_AGENT),)
    status, exc = judge("auth.unknown_agent_404_invoke", rec)
    assert status == "blocked" and exc.root == "GEN-AGENT-005"


def test_a_not_found_refusal_with_another_4xx_fails_gen_agent_006_only():
    rec = access(unknown_agent=answer(steps.UNKNOWN_AGENT, 400, error("not_found")))
    assert judge("auth.unknown_agent_not_found_invoke", rec)[0] == "passed"
    status, exc = judge("auth.unknown_agent_404_invoke", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.UNKNOWN_AGENT),)


def test_an_agui_refusal_sent_as_a_stream_is_agui_err_005s():
    frames = canned.sse_frames({"type": "RUN_ERROR", "message": "no", "code": "unauthenticated"})
    rec = access("agui", **{label.replace("-", "_"): answer(label, 401, headers={"content-type": "text/event-stream"},
                                                            protocol="agui", sse=frames)
                            for label in steps.INVOKE_AGUI_CREDENTIALS})
    status, exc = judge("auth.agui_without_credential", rec)
    assert status == "blocked" and exc.root == "AGUI-ERR-005" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL),)
    # the JSON refusals pass, the streams are blocked: never passed on what remains
    status, exc = judge("auth.refusals_error_body_agui", rec)
    assert status == "blocked" and exc.root == "AGUI-ERR-005"


# -- MCP ---------------------------------------------------------------------------------------------------
def rpc_error(code: int = -32600, id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}}


CHALLENGE = {"content-type": "application/json", "www-authenticate": f'Bearer resource_metadata="{BASE}/.well-known/'
             f'oauth-protected-resource/v1/agents/{AGENT}/mcp", scope="agent:invoke"'}


def mcp(**answers):
    def ex(label, status=401, body=None, headers=None):
        return answer(label, status, rpc_error() if body is None else body, CHALLENGE if headers is None else headers,
                      protocol="mcp")
    normal = {label: ex(label) for label in (*steps.MCP_CREDENTIALS, steps.QUERY_KEY, steps.QUERY_TOKEN,
                                             steps.BODY_KEY)}
    normal[steps.ACCEPTED_TOKEN] = ex(steps.ACCEPTED_TOKEN, 200, {"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": "conformance"}]}}, JSON)
    for label in (steps.OTHER_AGENT_TOKEN, steps.MALFORMED_AGENT, steps.UNDEPLOYED_AGENT):
        normal[label] = ex(label, 404, headers=JSON)
    for label, spec in answers.items():
        normal[label.replace("_", "-")] = ex(label.replace("_", "-"), *spec)
    return canned.recording("access.mcp", [normal[label] for label in steps.ACCESS_MCP], facts={"reply": "conformance"})


def test_mcp_reference_answers_pass():
    rec = mcp()
    for check_id in ("auth.mcp_no_credential", "auth.mcp_401_code", "auth.mcp_401_challenge",
                     "auth.access_token_other_agent", "auth.mcp_credential_outside_header",
                     "auth.malformed_agent_id_mcp", "auth.mcp_undeployed_agent", "auth.access_token_accepted"):
        assert judge(check_id, rec)[0] == "passed", (check_id, judge(check_id, rec))


def test_a_401_with_a_body_that_is_no_json_rpc_error_is_mcp_err_001s():
    denied = (401, b"denied", {**CHALLENGE, "content-type": "text/plain"})
    rec = mcp(no_credential=denied)
    assert judge("auth.mcp_no_credential", rec)[0] == "passed"        # the 401 is all AUTH-MCP-003 states
    status, exc = judge("auth.mcp_401_code", rec)       # the other 401s pass; this one blocks, never a pass on the rest
    assert status == "blocked" and exc.root == "MCP-ERR-001" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL),)
    rec = mcp(**{label.replace("-", "_"): denied for label in (*steps.MCP_CREDENTIALS, steps.QUERY_KEY,
                                                                steps.QUERY_TOKEN, steps.BODY_KEY)})
    status, exc = judge("auth.mcp_401_code", rec)
    assert status == "blocked" and exc.root == "MCP-ERR-001" and exc.exchanges[0] == rec.get(steps.NO_CREDENTIAL)
    with judging({"MCP-ERR-001"}):
        with pytest.raises(Deviation) as raised:
            mcp_refused(rec, steps.NO_CREDENTIAL, 401)
    assert not isinstance(raised.value, Blocked)


def test_the_401_code_names_every_401_with_another_code():
    rec = mcp(no_credential=(401, rpc_error(-32001)), empty_bearer=(401, rpc_error(-32001)))
    status, exc = judge("auth.mcp_401_code", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL), rec.get(steps.EMPTY_BEARER))


def test_a_401_without_a_challenge_is_named():
    rec = mcp(unknown_key=(401, None, JSON))
    status, exc = judge("auth.mcp_401_challenge", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.UNKNOWN_KEY),)
    assert str(exc).startswith(f"{steps.UNKNOWN_KEY}: ")


def test_a_credential_outside_the_header_refused_with_403_is_auth_mcp_003s():
    rec = mcp(no_credential=(403,), query_key=(403,), query_token=(403,), body_key=(403,))
    status, exc = judge("auth.mcp_credential_outside_header", rec)
    assert status == "blocked" and exc.root == "AUTH-MCP-003"
    status, exc = judge("auth.mcp_no_credential", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.NO_CREDENTIAL),)


def test_a_credential_outside_the_header_accepted_fails_auth_mcp_010():
    accepted = (200, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, JSON)
    rec = mcp(query_key=accepted)
    status, exc = judge("auth.mcp_credential_outside_header", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.QUERY_KEY),)


def test_the_access_token_refused_everywhere_is_auth_mcp_001s():
    rec = mcp(accepted_token=(401,), other_agent_token=(401,))
    status, exc = judge("auth.access_token_other_agent", rec)
    assert status == "blocked" and exc.root == "AUTH-MCP-001"
    assert exc.exchanges == (rec.get(steps.OTHER_AGENT_TOKEN), rec.get(steps.ACCEPTED_TOKEN))
    status, exc = judge("auth.access_token_accepted", rec)
    assert status == "failed" and exc.exchanges == (rec.get(steps.ACCEPTED_TOKEN),)


def test_the_access_token_refused_only_on_another_agent_is_auth_mcp_002s():
    rec = mcp(other_agent_token=(401,))
    status, exc = judge("auth.access_token_other_agent", rec)
    assert status == "failed" and not isinstance(exc, Blocked) and exc.exchanges == (rec.get(steps.OTHER_AGENT_TOKEN),)


def test_an_mcp_refusal_with_a_5xx_is_mcp_err_001s():
    rec = mcp(undeployed_agent=(500, rpc_error(-32603), JSON))
    status, exc = judge("auth.mcp_undeployed_agent", rec)
    assert status == "blocked" and exc.root == "MCP-ERR-001"
