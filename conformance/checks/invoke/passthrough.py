"""invoke checks: INV-PASS: pass-through."""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on
from conformance.registry import check
from conformance.vocab import agent_readings
from conformance.vocab.constants import INVOKE_INTERPRETED as INTERPRETED
from conformance.vocab.readers import error_of, is_4xx
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.values import differs
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import accepted, echoed, inside_limit, judge_each, quoted, what


def echoed_params(ex: Exchange) -> dict[str, Any]:
    params = echoed(ex)
    with on(ex):
        assert isinstance(params, dict), f"the echoed params are not an object: {quoted(params)}"
    return params


def params_hold(ex: Exchange, expected: dict[str, Any]) -> None:
    params = echoed_params(ex)
    bad = [name for name, _, _ in agent_readings.fields_changed("echo params", expected, params, ex)]
    with on(ex):
        assert not bad, ("fields did not reach `params` unchanged: "
                         + differs({k: expected[k] for k in bad}, params, "params", only_sent=True, whole=expected))


@check("INV-PASS-001", scenarios=["invoke.params"])
def unknown_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with unknown fields of every JSON type and unicode; each reaches `params` unchanged."""
    ex = rec.get(steps.PARAMS)
    accepted(ex, "an invoke with unknown fields")
    params_hold(ex, rec.facts["params"])


@check("INV-PASS-001", scenarios=["generated.params"])
def generated_fields_reach_params(rec: Recording) -> None:
    """Sends `echo params` with generated extra fields (any JSON values, unicode names); each reaches `params` unchanged."""
    sent_params = rec.facts.get("params") or []
    items = [(ex, sent_params[i]) for i, ex in generated_steps.INVOKE.members(rec.labelled(generated_steps.INVOKE)) if i < len(sent_params)]
    if not items:
        raise NotAssessed("generated.params recorded no invoke exchange")

    def rule(item: tuple[Exchange, dict[str, Any]]) -> None:
        accepted(item[0], "an invoke with generated extra fields")
        params_hold(*item)

    judge_each(items, rule)


def interpreted_withheld(ex: Exchange) -> None:
    """none of the fields the service interprets is in the agent's `params`."""
    leaked = [k for k in INTERPRETED if k in echoed_params(ex)]
    with on(ex):
        assert not leaked, f"fields the service interprets reached `params`: {leaked}"


@check("INV-PASS-002", scenarios=["invoke.params"])
def interpreted_fields_withheld(rec: Recording) -> None:
    """Sends `echo params` with `prompt`, `sessionId`, `stream` and `messages`; none of them appears in `params`."""
    ex = rec.get(steps.PARAMS)
    accepted(ex, "an invoke with unknown fields", "INV-PASS-001")
    interpreted_withheld(ex)


@check("INV-PASS-003", scenarios=["invoke.extra_data"])
def extra_data_reaches_params(rec: Recording) -> None:
    """Sends about 2 KB of structured JSON in the extra data field with `echo params`; it reaches `params` unchanged."""
    ex = inside_limit(rec)
    accepted(ex, "about 2 KB of extra data (inside 4 KB)", "INV-LIM-003")
    params_hold(ex, {rec.facts["field"]: rec.facts["inside"]})


@check("INV-PASS-004", scenarios=["invoke.messages"])
def messages_reach_agent(rec: Recording) -> None:
    """Sends `echo messages` with a `messages` list of `{role, content}`; the agent echoes the list exactly.

    The items' shape is not shown, so a refusal with the error body is not assessed (never passed);
    a 4xx without the error body contradicts "A refusal before the run starts answers with an HTTP status
    and the error body" and fails."""
    ex = rec.get(steps.MESSAGES)
    if is_4xx(ex):
        err = error_of(ex)
        with on(ex):
            assert err is not None, f"`messages` was answered with a 4xx that is not the error body {{error: {{…}}}}: {what(ex)}"
        raise NotAssessed(f"the `messages` items {{role, content}} were refused ({ex.status}, {err.get('code')!r}); "
                          f"the items' shape is not shown, so whether the list reaches the agent was not judged")
    accepted(ex, "an invoke with a `messages` list")
    got = echoed(ex, "echo messages")
    with on(ex):
        assert not agent_readings.changed("echo messages", rec.facts["messages"], got, ex), \
            f"sent messages, the agent saw others: {differs(rec.facts['messages'], got, 'messages')}"
