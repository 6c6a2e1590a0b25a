"""Hand-written examples from the spec: valid ones pass, invalid ones fail naming the broken constraint.

Valid examples live in ``examples/valid/<schema>/*.json``; files named ``open-*.json`` are instances
the spec leaves open (unknown fields, unknown event types, optional fields absent...) and protect
against over-strict schemas. Invalid examples are inline below, one per constraint, each with the
JSON path and the JSON Schema keyword the error must name.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conformance import schemas

EXAMPLES = Path(__file__).parent / "examples" / "valid"
VALID = sorted(EXAMPLES.glob("*/*.json"))


def load(schema: str, name: str):
    return json.loads((EXAMPLES / schema / f"{name}.json").read_text(encoding="utf-8"))


def test_every_schema_has_examples():
    assert {p.name for p in EXAMPLES.iterdir() if p.is_dir()} == set(schemas.names())


@pytest.mark.parametrize("path", VALID, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_valid_example_passes(path):
    assert schemas.errors(path.parent.name, json.loads(path.read_text(encoding="utf-8"))) == []


def with_(base, **changes):
    out = copy.deepcopy(base)
    out.update(changes)
    return out


def without(base, *keys):
    out = copy.deepcopy(base)
    for k in keys:
        out.pop(k)
    return out


def at(base, dotted: str, value=...):
    """Copy of base with the value at a dotted path replaced (or removed when value is omitted)."""
    out = copy.deepcopy(base)
    *parents, last = dotted.split(".")
    node = out
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if value is ...:
        del node[int(last) if isinstance(node, list) else last]
    else:
        node[int(last) if isinstance(node, list) else last] = value
    return out


IR = load("invoke-result", "completed")
IE_TEXT = load("invoke-event", "text")
EB = load("error-body", "validation_failed")
AR = load("agui-request", "full")
AE_FIN = load("agui-event", "run_finished_success")
MR = load("mcp-request", "tools_call")
MP = load("mcp-tools-call-params", "prompt")
MTR = load("mcp-tools-call-result", "complete")
MPN = load("mcp-progress-notification", "string-token")
ME = load("mcp-error", "id-null")
M22 = load("mcp-error-32022", "unsupported-version")
PRM = load("protected-resource-metadata", "minimal")
S257 = "s" * 257

# (schema, instance, JSON path of the error, keyword, text the message must contain)
INVALID = {
    # invoke-request
    "invoke-request/missing-prompt": ("invoke-request", {"sessionId": "s"}, "$", "required", "'prompt'"),
    "invoke-request/prompt-not-string": ("invoke-request", {"prompt": 1}, "$.prompt", "type", "'string'"),
    "invoke-request/sessionId-257": ("invoke-request", {"prompt": "p", "sessionId": S257}, "$.sessionId", "maxLength", "too long"),
    "invoke-request/sessionId-empty": ("invoke-request", {"prompt": "p", "sessionId": ""}, "$.sessionId", "minLength", "should be non-empty"),
    "invoke-request/stream-not-boolean": ("invoke-request", {"prompt": "p", "stream": "true"}, "$.stream", "type", "'boolean'"),
    "invoke-request/messages-not-array": ("invoke-request", {"prompt": "p", "messages": {}}, "$.messages", "type", "'array'"),
    # invoke-event
    "invoke-event/v-2": ("invoke-event", with_(IE_TEXT, v=2), "$.v", "const", "1 was expected"),
    "invoke-event/v-string": ("invoke-event", with_(IE_TEXT, v="1"), "$.v", "type", "'integer'"),
    "invoke-event/missing-v": ("invoke-event", without(IE_TEXT, "v"), "$", "required", "'v'"),
    "invoke-event/missing-type": ("invoke-event", {"v": 1}, "$", "required", "'type'"),
    "invoke-event/type-not-string": ("invoke-event", {"v": 1, "type": 3}, "$.type", "type", "'string'"),
    "invoke-event/text-without-delta": ("invoke-event", {"v": 1, "type": "text"}, "$", "required", "'delta'"),
    "invoke-event/text-delta-not-string": ("invoke-event", {"v": 1, "type": "text", "delta": 5}, "$.delta", "type", "'string'"),
    "invoke-event/tool_call_start-without-name": ("invoke-event", {"v": 1, "type": "tool_call_start"}, "$", "required", "'name'"),
    "invoke-event/tool_call_start-name-not-string": ("invoke-event", {"v": 1, "type": "tool_call_start", "name": None}, "$.name", "type", "'string'"),
    "invoke-event/error-without-message": ("invoke-event", {"v": 1, "type": "error"}, "$", "required", "'message'"),
    "invoke-event/unknown-type-without-v": ("invoke-event", {"type": "tool_result"}, "$", "required", "'v'"),
    # invoke-result
    "invoke-result/missing-status": ("invoke-result", without(IR, "status"), "$", "required", "'status'"),
    "invoke-result/status-unknown": ("invoke-result", with_(IR, status="ok"), "$.status", "enum", "'completed'"),
    "invoke-result/failed-without-error": ("invoke-result", with_(IR, status="failed"), "$", "required", "'error'"),
    "invoke-result/error-without-code": ("invoke-result", with_(IR, status="failed", error={"message": "m"}), "$.error", "required", "'code'"),
    "invoke-result/error-message-not-string": ("invoke-result", with_(IR, status="failed", error={"code": "c", "message": 1}), "$.error.message", "type", "'string'"),
    "invoke-result/missing-result": ("invoke-result", without(IR, "result"), "$", "required", "'result'"),
    "invoke-result/missing-events": ("invoke-result", without(IR, "events"), "$", "required", "'events'"),
    "invoke-result/event-v-2": ("invoke-result", at(IR, "events.1.v", 2), "$.events[1].v", "const", "(schema invoke-event)"),
    "invoke-result/event-missing-name": ("invoke-result", at(IR, "events.0.name"), "$.events[0]", "required", "'name'"),
    "invoke-result/text-event-in-events": ("invoke-result", with_(IR, events=[IE_TEXT]), "$.events[0]", "not", "Text is not in this array"),
    "invoke-result/sessionId-257": ("invoke-result", with_(IR, sessionId=S257), "$.sessionId", "maxLength", "too long"),
    "invoke-result/agentId-without-prefix": ("invoke-result", with_(IR, agentId="01HZX"), "$.agentId", "pattern", "^agt_"),
    "invoke-result/versionNumber-string": ("invoke-result", with_(IR, versionNumber="7"), "$.versionNumber", "type", "'integer'"),
    "invoke-result/durationMs-fraction": ("invoke-result", with_(IR, durationMs=1.5), "$.durationMs", "type", "'integer'"),
    "invoke-result/requestId-missing": ("invoke-result", without(IR, "requestId"), "$", "required", "'requestId'"),
    # error-body
    "error-body/missing-error": ("error-body", {"code": "x"}, "$", "required", "'error'"),
    "error-body/requestId-without-prefix": ("error-body", at(EB, "error.requestId", "abc123"), "$.error.requestId", "pattern", "^req_"),
    "error-body/requestId-prefix-only": ("error-body", at(EB, "error.requestId", "req_"), "$.error.requestId", "pattern", "^req_"),
    "error-body/missing-requestId": ("error-body", at(EB, "error.requestId"), "$.error", "required", "'requestId'"),
    "error-body/missing-message": ("error-body", at(EB, "error.message"), "$.error", "required", "'message'"),
    "error-body/code-not-string": ("error-body", at(EB, "error.code", 422), "$.error.code", "type", "'string'"),
    "error-body/validation_failed-without-details": ("error-body", at(EB, "error.details"), "$.error", "required", "'details'"),
    "error-body/details-not-object": ("error-body", at(EB, "error.details", ["x"]), "$.error.details", "type", "'object'"),
    # agui-request
    "agui-request/neither-messages-nor-resume": ("agui-request", {"threadId": "t"}, "$", "anyOf", "'resume' is a required property"),
    "agui-request/no-user-message": ("agui-request", {"messages": [{"id": "a", "role": "assistant", "content": "x"}]}, "$", "anyOf", "contains"),
    "agui-request/empty-messages": ("agui-request", {"messages": []}, "$", "anyOf", "contains"),
    "agui-request/threadId-257": ("agui-request", with_(AR, threadId=S257), "$.threadId", "maxLength", "too long"),
    "agui-request/threadId-empty": ("agui-request", with_(AR, threadId=""), "$.threadId", "minLength", "non-empty"),
    "agui-request/runId-not-string": ("agui-request", with_(AR, runId=1), "$.runId", "type", "'string'"),
    "agui-request/message-missing-id": ("agui-request", at(AR, "messages.0.id"), "$.messages[0]", "required", "'id'"),
    "agui-request/message-content-not-string": ("agui-request", at(AR, "messages.0.content", [{"type": "text"}]), "$.messages[0].content", "type", "'string'"),
    "agui-request/messages-not-array": ("agui-request", {"messages": {"id": "1"}, "resume": {}}, "$.messages", "type", "'array'"),
    "agui-request/resume-string": ("agui-request", {"resume": "yes"}, "$.resume", "type", "'array'"),
    # agui-event
    "agui-event/missing-type": ("agui-event", {"threadId": "t"}, "$", "required", "'type'"),
    "agui-event/type-not-string": ("agui-event", {"type": 1}, "$.type", "type", "'string'"),
    "agui-event/run_started-without-runId": ("agui-event", {"type": "RUN_STARTED", "threadId": "t"}, "$", "required", "'runId'"),
    "agui-event/run_started-threadId-257": ("agui-event", {"type": "RUN_STARTED", "threadId": S257, "runId": "r"}, "$.threadId", "maxLength", "too long"),
    "agui-event/text_message_start-role-user": ("agui-event", {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"}, "$.role", "const", "'assistant'"),
    "agui-event/text_message_start-without-role": ("agui-event", {"type": "TEXT_MESSAGE_START", "messageId": "m"}, "$", "required", "'role'"),
    "agui-event/text_message_content-without-delta": ("agui-event", {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}, "$", "required", "'delta'"),
    "agui-event/text_message_content-delta-not-string": ("agui-event", {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 1}, "$.delta", "type", "'string'"),
    "agui-event/text_message_end-without-messageId": ("agui-event", {"type": "TEXT_MESSAGE_END"}, "$", "required", "'messageId'"),
    "agui-event/run_finished-outcome-unknown": ("agui-event", at(AE_FIN, "outcome.type", "done"), "$.outcome.type", "enum", "'interrupt'"),
    "agui-event/run_finished-without-outcome": ("agui-event", without(AE_FIN, "outcome"), "$", "required", "'outcome'"),
    "agui-event/run_finished-outcome-without-type": ("agui-event", with_(AE_FIN, outcome={}), "$.outcome", "required", "'type'"),
    "agui-event/run_finished-without-result": ("agui-event", without(AE_FIN, "result"), "$", "required", "'result'"),
    "agui-event/run_finished-result-not-string": ("agui-event", with_(AE_FIN, result={"a": 1}), "$.result", "type", "'string'"),
    "agui-event/run_finished-without-threadId": ("agui-event", without(AE_FIN, "threadId"), "$", "required", "'threadId'"),
    "agui-event/run_error-without-message": ("agui-event", {"type": "RUN_ERROR", "code": "x"}, "$", "required", "'message'"),
    # mcp-request
    "mcp-request/jsonrpc-1.0": ("mcp-request", with_(MR, jsonrpc="1.0"), "$.jsonrpc", "const", "'2.0'"),
    "mcp-request/missing-jsonrpc": ("mcp-request", without(MR, "jsonrpc"), "$", "required", "'jsonrpc'"),
    "mcp-request/missing-method": ("mcp-request", without(MR, "method"), "$", "required", "'method'"),
    "mcp-request/id-float": ("mcp-request", with_(MR, id=1.5), "$.id", "type", "'integer'"),
    "mcp-request/id-null": ("mcp-request", with_(MR, id=None), "$.id", "type", "'string'"),
    "mcp-request/params-array": ("mcp-request", with_(MR, params=[1]), "$.params", "type", "'object'"),
    # mcp-tools-call-params
    "mcp-tools-call-params/missing-name": ("mcp-tools-call-params", without(MP, "name"), "$", "required", "'name'"),
    "mcp-tools-call-params/missing-_meta": ("mcp-tools-call-params", without(MP, "_meta"), "$", "required", "'_meta'"),
    "mcp-tools-call-params/_meta-without-version": ("mcp-tools-call-params",
        {**MP, "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}, "$['_meta']", "required", "protocolVersion"),
    "mcp-tools-call-params/clientCapabilities-string": ("mcp-tools-call-params",
        {**MP, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": "all"}},
        "$['_meta']['io.modelcontextprotocol/clientCapabilities']", "type", "'object'"),
    "mcp-tools-call-params/prompt-not-string": ("mcp-tools-call-params", at(MP, "arguments.prompt", ["x"]), "$.arguments.prompt", "type", "'string'"),
    "mcp-tools-call-params/session_id-257": ("mcp-tools-call-params", at(MP, "arguments.session_id", S257), "$.arguments.session_id", "maxLength", "too long"),
    "mcp-tools-call-params/arguments-not-object": ("mcp-tools-call-params", with_(MP, arguments="Weather?"), "$.arguments", "type", "'object'"),
    # mcp-tools-call-result
    "mcp-tools-call-result/missing-result": ("mcp-tools-call-result", without(MTR, "result"), "$", "required", "'result'"),
    "mcp-tools-call-result/missing-id": ("mcp-tools-call-result", without(MTR, "id"), "$", "required", "'id'"),
    "mcp-tools-call-result/content-empty": ("mcp-tools-call-result", at(MTR, "result.content", []), "$.result.content", "minItems", "should be non-empty"),
    "mcp-tools-call-result/content-two-blocks": ("mcp-tools-call-result", at(MTR, "result.content", [{"type": "text", "text": "a"}] * 2), "$.result.content", "maxItems", "too long"),
    "mcp-tools-call-result/content-not-text": ("mcp-tools-call-result", at(MTR, "result.content", [{"type": "image", "text": "a"}]), "$.result.content[0].type", "const", "'text'"),
    "mcp-tools-call-result/text-missing": ("mcp-tools-call-result", at(MTR, "result.content", [{"type": "text"}]), "$.result.content[0]", "required", "'text'"),
    "mcp-tools-call-result/missing-sessionId": ("mcp-tools-call-result", at(MTR, "result.structuredContent", {}), "$.result.structuredContent", "required", "'sessionId'"),
    "mcp-tools-call-result/sessionId-not-string": ("mcp-tools-call-result", at(MTR, "result.structuredContent.sessionId", 5), "$.result.structuredContent.sessionId", "type", "'string'"),
    "mcp-tools-call-result/missing-resultType": ("mcp-tools-call-result", at(MTR, "result.resultType"), "$.result", "required", "'resultType'"),
    "mcp-tools-call-result/isError-string": ("mcp-tools-call-result", at(MTR, "result.isError", "true"), "$.result.isError", "type", "'boolean'"),
    # mcp-progress-notification
    "mcp-progress-notification/wrong-method": ("mcp-progress-notification", with_(MPN, method="notifications/message"), "$.method", "const", "'notifications/progress'"),
    "mcp-progress-notification/progress-string": ("mcp-progress-notification", at(MPN, "params.progress", "50%"), "$.params.progress", "type", "'number'"),
    "mcp-progress-notification/missing-message": ("mcp-progress-notification", at(MPN, "params.message"), "$.params", "required", "'message'"),
    "mcp-progress-notification/missing-progressToken": ("mcp-progress-notification", at(MPN, "params.progressToken"), "$.params", "required", "'progressToken'"),
    "mcp-progress-notification/missing-params": ("mcp-progress-notification", without(MPN, "params"), "$", "required", "'params'"),
    # mcp-error
    "mcp-error/missing-id": ("mcp-error", without(ME, "id"), "$", "required", "'id'"),
    "mcp-error/id-float": ("mcp-error", with_(ME, id=2.5), "$.id", "type", "'null'"),
    "mcp-error/code-string": ("mcp-error", at(ME, "error.code", "-32600"), "$.error.code", "type", "'integer'"),
    "mcp-error/missing-message": ("mcp-error", at(ME, "error.message"), "$.error", "required", "'message'"),
    "mcp-error/jsonrpc-number": ("mcp-error", with_(ME, jsonrpc=2.0), "$.jsonrpc", "type", "'string'"),
    # mcp-error-32022
    "mcp-error-32022/without-data": ("mcp-error-32022", at(M22, "error.data"), "$.error", "required", "'data'"),
    "mcp-error-32022/without-supported": ("mcp-error-32022", at(M22, "error.data.supported"), "$.error.data", "required", "'supported'"),
    "mcp-error-32022/supported-lacks-2026-07-28": ("mcp-error-32022", at(M22, "error.data.supported", ["2025-11-25"]), "$.error.data.supported", "contains", "does not contain"),
    "mcp-error-32022/supported-non-string": ("mcp-error-32022", at(M22, "error.data.supported", ["2026-07-28", 2025]), "$.error.data.supported[1]", "type", "'string'"),
    "mcp-error-32022/without-requested": ("mcp-error-32022", at(M22, "error.data.requested"), "$.error.data", "required", "'requested'"),
    "mcp-error-32022/wrong-code": ("mcp-error-32022", at(M22, "error.code", -32600), "$.error.code", "const", "-32022"),
    "mcp-error-32022/base-error-message-missing": ("mcp-error-32022", at(M22, "error.message"), "$.error", "required", "(schema mcp-error)"),
    # mcp-response
    "mcp-response/neither-result-nor-error": ("mcp-response", {"jsonrpc": "2.0", "id": 1}, "$", "anyOf", "'result' is a required property"),
    "mcp-response/error-code-string": ("mcp-response", {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "$.error.code", "type", "'integer'"),
    # protected-resource-metadata
    "protected-resource-metadata/missing-resource": ("protected-resource-metadata", without(PRM, "resource"), "$", "required", "'resource'"),
    "protected-resource-metadata/resource-wrong-path": ("protected-resource-metadata", with_(PRM, resource="https://api.example.invalid/v1/agents/agt_1"), "$.resource", "pattern", "/mcp$"),
    "protected-resource-metadata/two-authorization-servers": ("protected-resource-metadata", with_(PRM, authorization_servers=["https://a", "https://b"]), "$.authorization_servers", "maxItems", "too long"),
    "protected-resource-metadata/no-authorization-server": ("protected-resource-metadata", with_(PRM, authorization_servers=[]), "$.authorization_servers", "minItems", "non-empty"),
    "protected-resource-metadata/authorization-server-not-string": ("protected-resource-metadata", with_(PRM, authorization_servers=[{"url": "x"}]), "$.authorization_servers[0]", "type", "'string'"),
    "protected-resource-metadata/scopes-lack-agent-invoke": ("protected-resource-metadata", with_(PRM, scopes_supported=["openid"]), "$.scopes_supported", "contains", "does not contain"),
    "protected-resource-metadata/bearer-lacks-header": ("protected-resource-metadata", with_(PRM, bearer_methods_supported=[]), "$.bearer_methods_supported", "contains", "does not contain"),
    "protected-resource-metadata/bearer-body": ("protected-resource-metadata", with_(PRM, bearer_methods_supported=["header", "body"]), "$.bearer_methods_supported[1]", "const", "'header' was expected"),
    "protected-resource-metadata/missing-scopes": ("protected-resource-metadata", without(PRM, "scopes_supported"), "$", "required", "'scopes_supported'"),
}


@pytest.mark.parametrize("case", sorted(INVALID), ids=str)
def test_invalid_example_fails_naming_the_constraint(case):
    name, instance, path, keyword, needle = INVALID[case]
    found = schemas.errors(name, instance)
    assert found, f"{case}: expected a schema error, instance passed"
    matching = [e for e in found if e.startswith(f"{path}: ") and f"[{keyword}]" in e and needle in e]
    assert matching, f"{case}: no error at {path} naming [{keyword}] and {needle!r}; got:\n" + "\n".join(found)
    with pytest.raises(AssertionError, match=r"does not match schema"):
        schemas.check(name, instance, case)


def test_each_invalid_case_breaks_a_valid_instance_of_its_schema():
    """Sanity: every schema has at least one invalid case."""
    assert {v[0] for v in INVALID.values()} == set(schemas.names())


# What a value may be replaced with: every JSON type, the edges of each (an integer beyond 64 bits, a lone surrogate,
# which jsonschema-rs cannot read), and strings that patterns anchor on (a trailing newline: Python's `$` matches
# before it, Rust's does not).
REPLACEMENTS = [None, True, False, 0, 1, -1, 1.0, 1.5, 2**70, -2**70, 1e308, "", "x", "\ud800", "é", "req_",
                "req_\n", "agt_x\n", "/v1/agents/agt_x/mcp\n", [], [1], {}, {"a": 1}, "RUN_STARTED", "2.0", 2]


def mutations(value, path=()):
    """`value` with each of its members (to a depth, the first few items of a list) left out or replaced."""
    yield value
    if isinstance(value, dict):
        yield {**value, "zzExtra": 1}
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
            for inner in mutations(value[key], path + (key,)):
                yield {**value, key: inner}
            for new in REPLACEMENTS:
                yield {**value, key: new}
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            yield value[:i] + value[i + 1:]
            for inner in mutations(item, path + (i,)):
                yield value[:i] + [inner] + value[i + 1:]


@pytest.mark.parametrize("path", VALID, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_fast_reading_never_calls_valid_what_jsonschema_does_not(path):
    """`schemas.surely_valid` (jsonschema-rs) is taken only when it says valid: over every example and every way of
    breaking it, it says so only where jsonschema does; it never finds more valid than jsonschema."""
    name = path.parent.name
    checked = 0
    for instance in mutations(json.loads(path.read_text(encoding="utf-8"))):
        if schemas.surely_valid(name, instance):
            assert schemas.validator(name).is_valid(instance), (name, instance)
        checked += 1
    assert checked > 10 and schemas._fast(name) is not None
