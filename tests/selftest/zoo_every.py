"""Broken servers whose deviation shows on calls of one kind only, the way a handler written for one path goes wrong
(a conversation template, a timer in another unit, an id read from the wrong place): what the rules over every
exchange (`conformance.exchange_rules`) catch wherever that kind of call comes from, not only in the scenario that
reads the field for its own sake.
"""
from __future__ import annotations

from tests.selftest import asgi_tools as t
from tests.selftest.zoo import broken, registered

SENT_KEY = "conformance.zoo.every.sent-key"


def _note_sent_key(body, scope):
    if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
        scope[SENT_KEY] = True
    return None


def on_sent_keys(rewrite):
    """`rewrite(result)` on the JSON invoke results of calls that sent their own `sessionId`."""
    def wrap(app, facts):
        def change(obj, scope, status, headers):
            if scope.get(SENT_KEY) and isinstance(obj, dict) and "durationMs" in obj:
                rewrite(obj)
            return obj
        return t.rewrite_request_json(t.rewrite_json_response(app, change, where="invoke"), _note_sent_key,
                                      where="invoke")
    return wrap


def _microseconds(result: dict) -> None:
    if isinstance(result.get("durationMs"), int):
        result["durationMs"] = result["durationMs"] * 1000 + 1500


def _lower_agent(result: dict) -> None:
    if isinstance(result.get("agentId"), str):
        result["agentId"] = result["agentId"].lower()


registered("INV-RES-013", "INV-RES-013-duration-in-microseconds-on-sent-keys",
           "An invoke result of a call that sent its own `sessionId` gives `durationMs` in microseconds.",
           on_sent_keys(_microseconds))
registered("INV-RES-010", "INV-RES-010-agent-id-lower-cased-on-sent-keys",
           "An invoke result of a call that sent its own `sessionId` names the agent lower-cased.",
           on_sent_keys(_lower_agent))


@broken("INV-RES-003", name="INV-RES-003-result-ends-with-a-newline-when-messages-are-sent")
def newline_with_messages(app, facts):
    """A JSON invoke result whose request carried `messages` has a newline added to `result` (a template that joins
    the conversation's turns): right on every call without a conversation."""
    CARRIED = "conformance.zoo.every.messages"

    def note(body, scope):
        if isinstance(body, dict) and body.get("messages"):
            scope[CARRIED] = True
        return None

    def add(obj, scope, status, headers):
        if scope.get(CARRIED) and isinstance(obj, dict) and isinstance(obj.get("result"), str):
            obj["result"] += "\n"
        return obj
    return t.rewrite_request_json(t.rewrite_json_response(app, add, where="invoke"), note, where="invoke")
