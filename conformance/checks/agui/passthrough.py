"""agui checks: pass-through."""
from __future__ import annotations

from typing import Any

from conformance.outcomes import NotAssessed, on
from conformance.registry import check
from conformance.vocab import agent_readings
from conformance.vocab.constants import AGUI_INTERPRETED as INTERPRETED
from conformance.vocab.text import truncate
from conformance.vocab.values import differs
from conformance.vocab.steps import agui as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.checks.agui._common import Run, judge_reply, judge_every, one_run, one_run_of


def echoed_params(text: str, exchange: Any = None) -> dict[str, Any]:
    """The `params` the agent echoed (`echo params`) as its whole reply (no JSON: the agent's, `agent_readings`)."""
    got = agent_readings.echoed(text, "echo params", exchange)
    assert isinstance(got, dict), f"`echo params` replied {truncate(got, 160, quoted=True)}, not a JSON object"
    return got


def params_hold(sent: dict[str, Any], exchange: Any = None):
    """A judge of the echoed reply: every field sent that the service does not interpret is in `params`, unchanged."""
    def judge(text: str) -> None:
        got = echoed_params(text, exchange)
        passed = {name: value for name, value in sent.items() if name not in INTERPRETED}
        changed = [name for name, _, _ in agent_readings.fields_changed("echo params", passed, got, exchange)]
        if not changed:
            return
        first = changed[0] if changed[0] and changed[0].isprintable() and changed[0].strip() == changed[0] else \
            truncate(changed[0], 40, quoted=True)
        raise AssertionError(f"sent {first}"
                             + (f" and {len(changed) - 1} more field(s), the agent's params hold them changed: "
                                if len(changed) > 1 else ", the agent's params hold it changed: ")
                             + differs({name: passed[name] for name in changed}, got, "params", only_sent=True,
                                       whole=passed))
    return judge


def reach_params(r: Run, sent: dict[str, Any]) -> None:
    with on(r.ex):
        judge_reply(r, params_hold(sent, r.ex))


@check("AGUI-PASS-001", scenarios=["agui.params"])
def forwarded_fields_reach_params(rec):
    """Sends tools, state, context and forwardedProps with `echo params`; each reaches the agent unchanged."""
    reach_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["forwarded"])


@check("AGUI-PASS-001", scenarios=["agui.params_falsy"])
def falsy_forwarded_fields_reach_params(rec):
    """Sends `tools: []`, `context: []`, `forwardedProps: {}` and `state: null` with `echo params` (input classes
    params:falsy and params:null); each reaches the agent unchanged."""
    reach_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["forwarded"])


@check("AGUI-PASS-002", scenarios=["agui.params_falsy"])
def falsy_unknown_fields_reach_params(rec):
    """Sends unknown fields of value 0, [], {}, a field named "" and names and values with `"`, `\\`, U+2028 and
    U+2029 with `echo params` (input classes params:falsy and params:json-escapes); each reaches the agent."""
    reach_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["unknown"])


@check("AGUI-PASS-002", scenarios=["agui.params"])
def unknown_fields_reach_params(rec):
    """Sends unknown top-level fields of every JSON type with `echo params`; each reaches the agent unchanged."""
    reach_params(one_run(rec, steps.ECHO_PARAMS), rec.facts["unknown"])


@check("AGUI-PASS-002", scenarios=["generated.params"])
def generated_fields_reach_params(rec):
    """Sends generated extra fields (any JSON values, unicode names) with `echo params`; each reaches the agent."""
    sent = rec.facts.get("params") or []
    if not sent:
        raise NotAssessed("the generated-params scenario generated no fields")
    return judge_every([(one_run_of(rec, generated_steps.AGUI.of(i), ""), extra) for i, extra in enumerate(sent)],
                      lambda item: judge_reply(item[0], params_hold(item[1], item[0].ex)), exchange=lambda item: item[0].ex)


def interpreted_withheld(r: Run) -> None:
    """none of the fields the service interprets is in the agent's params."""
    def withheld(text: str) -> None:
        got = echoed_params(text, r.ex)
        leaked = [name for name in INTERPRETED if name in got]
        assert not leaked, f"the agent's params hold interpreted field(s) {leaked}: {truncate(got, 300, quoted=True)}"
    with on(r.ex):
        judge_reply(r, withheld)


@check("AGUI-PASS-003", scenarios=["agui.params"])
def interpreted_fields_withheld(rec):
    """Sends threadId, runId and messages with `echo params`; none of the interpreted fields is in params."""
    interpreted_withheld(one_run(rec, steps.ECHO_PARAMS))
