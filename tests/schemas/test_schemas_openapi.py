"""schemas/openapi.yaml loads in schemathesis 4.32 and agrees with the JSON schemas.

Responses are built by hand (no server) and validated through schemathesis' own response checks:
JSON bodies, SSE streams (per-event `contentSchema`), and required headers (WWW-Authenticate on MCP
401, Retry-After on 429).
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import response_headers_conformance

from conformance import schemas

OPENAPI = schemas.resource("openapi.yaml")
EXAMPLES = Path(__file__).parent / "examples" / "valid"
BASE = "https://api.example.invalid"

INVOKE = "POST /v1/agents/{agentId}/invoke"
AGUI = "POST /v1/agents/{agentId}/agui"
MCP = "POST /v1/agents/{agentId}/mcp"
META = "GET /.well-known/oauth-protected-resource/v1/agents/{agentId}/mcp"


@pytest.fixture(scope="module")
def api():
    return schemathesis.openapi.from_path(str(OPENAPI))


@pytest.fixture(scope="module")
def ops(api):
    return {r.ok().label: r.ok() for r in api.get_all_operations()}


def example(schema: str, name: str):
    return json.loads((EXAMPLES / schema / f"{name}.json").read_text(encoding="utf-8"))


def response(op, status: int, body, *, ctype="application/json", headers=None) -> httpx.Response:
    url = BASE + op.path.replace("{agentId}", "agt_1")
    content = body if isinstance(body, str) else json.dumps(body)
    r = httpx.Response(status, content=content, headers={"content-type": ctype, **(headers or {})},
                       request=httpx.Request(op.method.upper(), url))
    r.elapsed = datetime.timedelta(0)
    return r


def sse(*frames: tuple[str | None, object] | str) -> str:
    out = []
    for f in frames:
        if isinstance(f, str):
            out.append(f + "\n\n")  # comment line such as ": ping"
            continue
        name, data = f
        out.append((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n")
    return "".join(out)


def test_loads_with_four_operations(ops):
    assert sorted(ops) == sorted([INVOKE, AGUI, MCP, META])


def test_document_shape():
    doc = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {**doc["components"]["securitySchemes"]["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert doc["security"] == [{"bearerAuth": []}]
    meta = doc["paths"]["/.well-known/oauth-protected-resource/v1/agents/{agentId}/mcp"]["get"]
    assert meta["security"] == []  # Authentication rule 6: no credential needed
    agent = doc["components"]["parameters"]["agentId"]
    assert agent["in"] == "path" and agent["required"] and agent["schema"]["pattern"] == "^agt_"
    # every relative file $ref points at an existing schema document
    refs = set(re.findall(r'\$ref: "\./([^"#]+)', OPENAPI.read_text(encoding="utf-8")))
    assert refs and all(schemas.resource(r).is_file() for r in refs)


# -- JSON bodies -------------------------------------------------------------------------------

@pytest.mark.parametrize("label, status, schema, name", [
    (INVOKE, 200, "invoke-result", "completed"),
    (INVOKE, 200, "invoke-result", "failed"),
    (INVOKE, 200, "invoke-result", "open-unknown-fields"),
    (INVOKE, 422, "error-body", "validation_failed"),
    (INVOKE, 404, "error-body", "not_found"),
    (AGUI, 400, "error-body", "invalid_request"),
    (MCP, 200, "mcp-tools-call-result", "complete"),
    (MCP, 200, "mcp-response", "result"),
    (MCP, 400, "mcp-error-32022", "unsupported-version"),
    (MCP, 401, "mcp-error", "id-null"),
    (META, 200, "protected-resource-metadata", "minimal"),
    (META, 200, "protected-resource-metadata", "open-rfc9728-extra-fields"),
])
def test_valid_json_responses_pass(ops, label, status, schema, name):
    ops[label].validate_response(response(ops[label], status, example(schema, name)))


@pytest.mark.parametrize("label, status, body", [
    (INVOKE, 200, {**example("invoke-result", "completed"), "events": [{"v": 2, "type": "x"}]}),
    (INVOKE, 200, {**example("invoke-result", "completed"), "status": "failed"}),
    (INVOKE, 422, {"error": {"code": "validation_failed", "message": "m", "requestId": "abc"}}),
    (AGUI, 400, {"error": {"code": "invalid_request", "message": "m"}}),
    (MCP, 200, {"jsonrpc": "2.0", "id": 1}),
    (MCP, 401, {"jsonrpc": "2.0", "id": None, "error": {"code": -32022, "message": "m"}}),  # 401 is -32600
    (MCP, 404, {"jsonrpc": "2.0", "id": 1, "error": {"code": "not_found", "message": "m"}}),
    (META, 200, {**example("protected-resource-metadata", "minimal"), "authorization_servers": ["a", "b"]}),
])
def test_invalid_json_responses_fail(ops, label, status, body):
    assert not ops[label].is_valid_response(response(ops[label], status, body))


def test_metadata_404_body_is_unconstrained(ops):
    assert ops[META].is_valid_response(response(ops[META], 404, "Not Found", ctype="text/plain"))


# -- SSE ---------------------------------------------------------------------------------------

def test_invoke_stream(ops):
    ok = sse(("text", {"v": 1, "type": "text", "delta": "Hel"}), ("tool_call_start", {"v": 1, "type": "tool_call_start", "name": "s"}),
             ("tool_result", {"v": 1, "type": "tool_result"}), ("done", {"v": 1, "type": "done"}))
    assert ops[INVOKE].is_valid_response(response(ops[INVOKE], 200, ok, ctype="text/event-stream"))
    failed = sse(("text", {"v": 1, "type": "text", "delta": "Hel"}), ("error", {"v": 1, "type": "error", "message": "boom"}))
    assert ops[INVOKE].is_valid_response(response(ops[INVOKE], 200, failed, ctype="text/event-stream; charset=utf-8"))
    for bad in (sse(("text", {"v": 1, "type": "text"})), sse(("done", {"v": 2, "type": "done"})),
                sse(("error", {"v": 1, "type": "error"})), "event: done\ndata: not json\n\n"):
        assert not ops[INVOKE].is_valid_response(response(ops[INVOKE], 200, bad, ctype="text/event-stream")), bad


def test_agui_stream(ops):
    ok = sse((None, example("agui-event", "run_started")), ": ping", (None, example("agui-event", "text_message_start")),
             (None, example("agui-event", "text_message_content")), (None, example("agui-event", "open-tool_call_start")),
             (None, example("agui-event", "text_message_end")), (None, example("agui-event", "run_finished_interrupt")))
    assert ops[AGUI].is_valid_response(response(ops[AGUI], 200, ok, ctype="text/event-stream"))
    for bad in (sse((None, {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": "", "outcome": {"type": "done"}})),
                sse((None, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"})),
                sse(("RUN_STARTED", example("agui-event", "run_started")))):  # AG-UI frames are unnamed
        assert not ops[AGUI].is_valid_response(response(ops[AGUI], 200, bad, ctype="text/event-stream")), bad


def test_mcp_stream(ops):
    ok = sse(("message", example("mcp-progress-notification", "string-token")), ("message", example("mcp-tools-call-result", "complete")))
    assert ops[MCP].is_valid_response(response(ops[MCP], 200, ok, ctype="text/event-stream"))
    bad = sse(("message", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": "x", "message": ""}}))
    assert not ops[MCP].is_valid_response(response(ops[MCP], 200, bad, ctype="text/event-stream"))
    assert not ops[MCP].is_valid_response(response(ops[MCP], 200, sse(("progress", example("mcp-progress-notification", "string-token"))), ctype="text/event-stream"))


# -- headers -----------------------------------------------------------------------------------

def _header_failures(op, status, body, headers):
    case = op.Case(path_parameters={"agentId": "agt_1"}, body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"} if op.label == MCP else {"prompt": "p"})
    try:
        case.validate_response(response(op, status, body, headers=headers), checks=[response_headers_conformance])
    except BaseException as exc:  # schemathesis raises a FailureGroup (BaseExceptionGroup)
        return [str(e).splitlines()[0] for e in getattr(exc, "exceptions", [exc])]
    return []


WWW = 'Bearer resource_metadata="https://api.example.invalid/.well-known/oauth-protected-resource/v1/agents/agt_1/mcp", scope="agent:invoke"'
MCP_401 = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Unauthorized"}}
RATE = {"error": {"code": "rate_limited", "message": "m", "requestId": "req_1"}}


def test_mcp_401_requires_www_authenticate(ops):
    assert _header_failures(ops[MCP], 401, MCP_401, {"www-authenticate": WWW}) == []
    assert _header_failures(ops[MCP], 401, MCP_401, {}) == ["Missing required response headers"]
    assert _header_failures(ops[MCP], 401, MCP_401, {"www-authenticate": 'Basic realm="x"'}) == \
        ["Response header does not conform to the schema"]
    # RFC 9110 lets parameter names' case, whitespace and order vary: the document asserts only the scheme and
    # leaves the parameters to the suite's parser (AUTH-MCP-008), so these equivalent forms must pass here.
    for same in ("bearer  " + WWW[7:].replace("resource_metadata", "Resource_Metadata"),
                 'BEARER scope="agent:invoke",' + WWW[6:].split(",")[0]):
        assert _header_failures(ops[MCP], 401, MCP_401, {"www-authenticate": same}) == [], same


@pytest.mark.parametrize("label, body", [(INVOKE, RATE), (AGUI, RATE), (MCP, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "slow"}})])
def test_429_requires_integer_retry_after(ops, label, body):
    assert _header_failures(ops[label], 429, body, {"retry-after": "3"}) == []
    assert _header_failures(ops[label], 429, body, {}) == ["Missing required response headers"]
    assert _header_failures(ops[label], 429, body, {"retry-after": "soon"}) == ["Response header does not conform to the schema"]


# -- generation --------------------------------------------------------------------------------

@pytest.mark.parametrize("label, schema", [(INVOKE, "invoke-request"), (AGUI, "agui-request"), (MCP, "mcp-request"), (META, None)])
def test_generated_cases_match_json_schemas(ops, label, schema):
    op = ops[label]
    seen = []

    @given(op.as_strategy())
    @settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def run(case):
        assert case.path_parameters["agentId"].startswith("agt_")
        if schema:
            schemas.check(schema, case.body, f"generated {label}")
        seen.append(case)

    run()
    assert seen
