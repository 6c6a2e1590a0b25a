"""invoke checks: INV-PASS: pass-through."""
from __future__ import annotations

import json

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import check
from conformance.vocab.constants import INVOKE_INTERPRETED as INTERPRETED
from conformance.vocab.readers import error_of, is_4xx
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.values import same_json
from conformance.checks.invoke._common import MAX_LISTED, echoed, judge_each, what


def params_hold(ex: Exchange, expected: dict[str, Any]) -> None:
    params = echoed(ex)
    assert isinstance(params, dict), f"{ex.label}: the echoed params are not an object: {truncate(json.dumps(params), 200, count=True)}"
    bad = [f"{k!r}: sent {truncate(json.dumps(v, ensure_ascii=False), 80, count=True)}, agent saw "
           f"{truncate(json.dumps(params[k], ensure_ascii=False), 80, count=True) if k in params else '(missing)'}"
           for k, v in expected.items() if k not in params or not same_json(params[k], v)]
    assert not bad, f"{ex.label}: fields did not reach `params` unchanged: " + "; ".join(bad[:MAX_LISTED])


@check("INV-PASS-001", scenarios=["invoke.params"])
def unknown_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with unknown fields of every JSON type and unicode; each reaches `params` unchanged."""
    params_hold(rec.get(steps.PARAMS), rec.facts["params"])


@check("INV-PASS-001", scenarios=["generated.params"])
def generated_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with generated extra fields (any JSON values, unicode names); each reaches `params` unchanged."""
    sent_params = rec.facts.get("params") or []
    items = [(ex, sent_params[i]) for i, ex in generated_steps.INVOKE.members(rec.labelled(generated_steps.INVOKE)) if i < len(sent_params)]
    if not items:
        raise NotAssessed("generated.params recorded no invoke exchange")
    judge_each(items, lambda item: params_hold(*item))


@check("INV-PASS-002", scenarios=["invoke.params"])
def interpreted_fields_withheld(rec: Recording) -> None:
    """Sends `echo params` with `prompt`, `sessionId`, `stream` and `messages`; none of them appears in `params`."""
    ex = rec.get(steps.PARAMS)
    params = echoed(ex)
    assert isinstance(params, dict), f"{ex.label}: the echoed params are not an object"
    leaked = [k for k in INTERPRETED if k in params]
    assert not leaked, f"{ex.label}: fields the service interprets reached `params`: {leaked}"


@check("INV-PASS-003", scenarios=["invoke.extra_data"])
def extra_data_reaches_params(rec: Recording) -> None:
    """Sends about 2 KB of structured JSON in the extra data field with `echo params`; it reaches `params` unchanged."""
    params_hold(rec.get(steps.EXTRA_2KB), {rec.facts["field"]: rec.facts["inside"]})


@check("INV-PASS-004", scenarios=["invoke.messages"])
def messages_reach_agent(rec: Recording) -> None:
    """Sends `echo messages` with a `messages` list of `{role, content}`; the agent echoes the list exactly.

    The items' shape is not shown, so a refusal with the error body is not assessed (never passed);
    a 4xx without the error body contradicts "A refusal before the run starts answers with an HTTP status
    and the error body" and fails."""
    ex = rec.get(steps.MESSAGES)
    if is_4xx(ex):
        err = error_of(ex)
        assert err is not None, \
            f"{ex.label}: `messages` was answered with a 4xx that is not the error body {{error: {{…}}}}: {what(ex)}"
        raise NotAssessed(f"the `messages` items {{role, content}} were refused ({ex.status}, {err.get('code')!r}); "
                          f"the items' shape is not shown, so whether the list reaches the agent was not judged")
    got = echoed(ex)
    assert same_json(got, rec.facts["messages"]), \
        f"{ex.label}: sent messages {json.dumps(rec.facts['messages'], ensure_ascii=False)}, the agent saw " \
        f"{truncate(json.dumps(got, ensure_ascii=False), 200, count=True)}"
