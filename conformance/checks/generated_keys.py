"""Keys the service generates, over every exchange of a run: a call that leaves its session key out starts a
conversation of its own, so no two such calls of a protocol are given the same key, whichever scenario sent them and
whatever else they carried. (One call shows a key generated; only two show it was not a new one.)
"""
from __future__ import annotations

from typing import Any

from conformance.exchange_rules import operation
from conformance.outcomes import Deviation, NotAssessed
from conformance.registry import check
from conformance.vocab import requests as rq
from conformance.vocab.sequences import generated_key
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange, same_call

GENERATED = {"invoke": ("INV-SESS-001", "sessionId"), "agui": ("AGUI-SESS-001", "threadId"),
             "mcp": ("MCP-SESS-004", "session_id")}


def left_out(protocol: str, ex: Exchange) -> bool:
    """A call that starts a run without a session key (a resume, or an eliciting client's retry, continues one)."""
    sent = rq.fields(ex)
    if protocol == "invoke":
        return "sessionId" not in sent
    if protocol == "agui":
        return "threadId" not in sent and "resume" not in sent
    params = rq.rpc(ex).get("params")
    args = rq.tool_arguments(ex)
    return rq.rpc_method(ex) == "tools/call" and "session_id" not in args and "resume" not in args \
        and not (isinstance(params, dict) and "requestState" in params)


def distinct(protocol: str):
    requirement, field = GENERATED[protocol]

    def fn(recordings: list[Any]) -> str:
        first: dict[str, Exchange] = {}
        for rec in recordings:
            for ex in rec.exchanges:
                if operation(ex) != protocol or ex.status != 200 or not left_out(protocol, ex):
                    continue
                key = generated_key(protocol, ex)
                if key is None:
                    continue
                if key in first and not same_call(first[key], ex):
                    raise Deviation(f"{ex.label} and {first[key].label} both left `{field}` out and were both given "
                                    f"the key {truncate(key, 80, quoted=True)}: the service generated no new key for "
                                    f"the second, so two conversations share one session", (ex, first[key]))
                first[key] = ex
        if len(first) < 2:
            raise NotAssessed(f"fewer than two {protocol} calls of the run left `{field}` out and were given a key")
        return f"{len(first)} calls without `{field}` were each given a key of their own"

    fn.__name__ = f"generated_{protocol}_keys_differ"
    check(requirement, scenarios=[], every=(protocol,), supplementary=True,
          doc=f"Every {protocol} call of the run that left `{field}` out, whatever scenario sent it: no two were "
              f"given the same generated key.")(fn)


for _protocol in GENERATED:
    distinct(_protocol)
