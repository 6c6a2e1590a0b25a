"""invoke checks: INV-RES: the result body."""
from __future__ import annotations


from typing import Any, Iterable

from conformance.engine import Recording
from conformance.exchange_rules import operation
from conformance.vocab import is_json_integer, same_integer
from conformance.outcomes import Deviation, NotAssessed, on, precondition
from conformance.registry import check
from conformance.vocab.constants import COMPLETED_RUNS, FAILED_RUNS, RUNS
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import generated as generated_steps
from conformance.vocab.steps import inputs as input_steps
from conformance.vocab.text import truncate
from conformance.vocab.values import same_json
from conformance.wire.exchange import Exchange, same_call
from conformance.checks.invoke._common import (DURATION_FLOOR_MS, exact, expected_reply, generated,
                                               is_json_answer, judge_each, quoted, reply_of, result_of, run_status,
                                               runs_of, session_key_of, what)


def json_rule(*requirements: str, names: Iterable[str] = RUNS):
    """Registers `rule(name, ex, rec)` over the non-streaming results of `invoke.runs` for the agent scenarios `names`."""
    names = tuple(names)

    def register(judge):
        def fn(rec: Recording) -> str | None:
            return judge_each(runs_of(rec, steps.RUN_JSON, names), lambda item: judge(item[0], item[1], rec))

        check(*requirements, scenarios=["invoke.runs"], name=judge.__name__, doc=judge.__doc__)(fn)
        return judge

    return register


@json_rule("INV-RES-001")
def result_is_json_200(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every answer is 200, `application/json`, one JSON object, once the run is over."""
    result_of(ex)       # 200 with one JSON object (an event stream instead is the selection's deviation)
    assert is_json_answer(ex), f"expected 200 with Content-Type application/json, got {what(ex)}"


@check("INV-RES-001", scenarios=["invoke.input_forms"])
def result_is_json_200_content_type_forms(rec: Recording) -> str | None:
    """Sends the plain prompt without streaming with Content-Type `application/json; charset=utf-8` and
    `Application/JSON` (input classes content-type:parameter and :case); every answer is 200, `application/json`,
    one JSON object."""
    return judge_each(rec.labelled(input_steps.CONTENT_TYPE_FORMS), lambda ex: result_is_json_200("plain_reply", ex, rec))


def assert_status(ex: Exchange, want: str) -> None:
    got = run_status(ex)
    assert same_json(got, want), f"expected status {want!r}, got {quoted(got)}"


@json_rule("INV-RES-002", names=COMPLETED_RUNS)
def status_completed(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; `status` is `completed`."""
    assert_status(ex, "completed")


@json_rule("INV-RES-003", names=COMPLETED_RUNS)
def result_is_whole_reply(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; `result` equals the agent's whole reply."""
    expected = expected_reply(rec, name)
    got = reply_of(ex)
    assert got == expected, f"expected result {expected!r}, got {truncate(got, 200, count=True)!r}"


@json_rule("INV-RES-005")
def events_is_array(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `events` is an array, not empty for the tool call and the step."""
    events = result_of(ex).get("events")
    assert isinstance(events, list), f"`events` is not an array: {quoted(events)}"
    if name in ("tool_call", "step"):
        assert events, f"`events` is empty, but the run made a {name.replace('_', ' ')}"


def events_of(ex: Exchange) -> list[Any]:
    events = result_of(ex).get("events")
    return events if isinstance(events, list) else []


@json_rule("INV-RES-006")
def events_hold_no_text(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; no element of `events` has `type` `text`."""
    texts = [e for e in events_of(ex) if isinstance(e, dict) and same_json(e.get("type"), "text")]
    assert not texts, f"`events` holds text events (text belongs in `result`): {quoted(texts)}"


@json_rule("INV-RES-007")
def events_carry_v1(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every element of `events` is an object with `v` the integer 1."""
    bad = [e for e in events_of(ex) if not (isinstance(e, dict) and same_integer(e.get("v"), 1))]
    assert not bad, f"events without `v: 1`: {quoted(bad)}"


@json_rule("INV-RES-008")
def events_carry_type(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; every element of `events` has `type`, a string."""
    bad = [e for e in events_of(ex) if not (isinstance(e, dict) and isinstance(e.get("type"), str))]
    assert not bad, f"events without a string `type`: {quoted(bad)}"


@json_rule("INV-RES-009")
def session_id_is_key(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `sessionId` is a string of 1 to 256 characters."""
    session_key_of(ex)


@json_rule("INV-RES-010")
def agent_id_is_path(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `agentId` equals the agent of the request path."""
    got = result_of(ex).get("agentId")
    assert same_json(got, rec.target.agent_id), f"expected agentId {rec.target.agent_id!r}, got {quoted(got)}"


@json_rule("INV-RES-011")
def version_is_integer(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `versionNumber` is a JSON integer."""
    got = result_of(ex).get("versionNumber")
    assert is_json_integer(got), f"`versionNumber` is not an integer: {quoted(got)}"


@json_rule("INV-RES-013")
def duration_is_integer(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends each agent scenario without streaming; `durationMs` is a non-negative JSON integer."""
    got = result_of(ex).get("durationMs")
    assert is_json_integer(got) and got >= 0, f"`durationMs` is not a non-negative integer: {quoted(got)}"


@check("INV-RES-012", scenarios=["invoke.runs"])
def request_ids_differ(rec: Recording) -> str | None:
    """Sends each agent scenario without streaming; every `requestId` is a non-empty string, and no two are equal."""
    first: dict[str, Exchange] = {}

    def rule(item: tuple[str, Exchange]) -> None:
        ex = item[1]
        rid = result_of(ex).get("requestId")
        assert isinstance(rid, str) and rid, f"`requestId` is not a non-empty string: {quoted(rid)}"
        if rid in first:    # the repeat shows the deviation, the first holder of the id comes next
            raise Deviation(f"got the same requestId {rid!r} as {first[rid].label}", (ex, first[rid]))
        first[rid] = ex

    return judge_each(runs_of(rec, steps.RUN_JSON), rule)


def json_result(ex: Exchange) -> dict[str, Any] | None:
    """The JSON invoke result a 200 answer carries (a `status` among its members), or None."""
    if ex.status != 200 or ex.content_type == "text/event-stream":
        return None
    try:
        body = ex.json()
    except AssertionError:
        return None
    return body if isinstance(body, dict) and "status" in body else None


@check("INV-RES-012", scenarios=[], every=("invoke",), supplementary=True)
def request_ids_differ_across_the_run(recordings: list[Any]) -> str:
    """Every JSON invoke result of the run, whatever scenario sent it (calls on one session key, at once, after a
    pause): no two name the same `requestId`. Each names its own request."""
    first: dict[str, Exchange] = {}
    for rec in recordings:
        for ex in rec.exchanges:
            body = json_result(ex) if operation(ex) == "invoke" else None
            rid = body.get("requestId") if body is not None else None
            if not isinstance(rid, str) or not rid:
                continue
            if rid in first and not same_call(first[rid], ex):
                raise Deviation(f"{ex.label} got the same requestId {rid!r} as {first[rid].label}: two requests, "
                                f"one request identifier", (ex, first[rid]))
            first[rid] = ex
    if len(first) < 2:
        raise NotAssessed("fewer than two JSON invoke results of the run named a requestId")
    return f"{len(first)} JSON invoke results, each with a requestId of its own"


@check("INV-RES-013", scenarios=["invoke.timing"])
def duration_covers_sleep(rec: Recording) -> None:
    """Sends `say early`, `sleep 2`, `say late` without streaming; `durationMs` is an integer of at least 1500."""
    ex = rec.get(steps.TIMED_JSON)
    got = result_of(ex).get("durationMs")
    with on(ex):
        assert is_json_integer(got) and got >= DURATION_FLOOR_MS, \
            f"the run slept {rec.facts['sleep_s']:g} s, so `durationMs` must be an integer of at least " \
            f"{DURATION_FLOOR_MS}; got {quoted(got)}"


@json_rule("INV-RES-014", names=FAILED_RUNS)
def failed_run_is_200_failed(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends both failure prompts without streaming; each answers 200 with `status` `failed` (a failed run is no refusal)."""
    assert_status(ex, "failed")


@json_rule("INV-RES-015", names=FAILED_RUNS)
def failed_run_has_error(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends both failure prompts without streaming; `error` is an object with `code` a non-empty string and `message` a string."""
    body = result_of(ex)
    if not same_json(run_status(ex), "failed"):
        raise precondition("INV-RES-014", ex, f"the failed run reported status {quoted(body.get('status'))}, "
                                              f"not `failed`")
    err = body.get("error")
    assert isinstance(err, dict), f"a failed result must carry an `error` object, got {quoted(err)}"
    assert isinstance(err.get("code"), str) and err["code"], f"`error.code` is not a non-empty string: {quoted(err.get('code'))}"
    assert isinstance(err.get("message"), str), f"`error.message` is not a string: {quoted(err.get('message'))}"


@json_rule("INV-RES-016", names=FAILED_RUNS)
def failed_result_holds_sent_text(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends `say partial`+`fail boom` and `fail boom` without streaming; `result` is `partial` and `` respectively."""
    expected = expected_reply(rec, name)
    got = reply_of(ex)
    assert got == expected, f"a failed run's result is the text sent before the failure, " \
                            f"{expected!r}; got {truncate(got, 200, count=True)!r}"


def no_error_member(ex: Exchange) -> None:
    """a completed result has no `error` (or null)."""
    body = result_of(ex)
    assert body.get("error") is None, f"a completed result carries error {quoted(body['error'])}"


@json_rule("INV-RES-017", names=COMPLETED_RUNS)
def completed_has_no_error(name: str, ex: Exchange, rec: Recording) -> None:
    """Sends the runs that end normally without streaming; the result has no `error` (or null)."""
    no_error_member(ex)


@check("INV-RES-004", scenarios=["generated.round_trip"])
def generated_result_exact(rec: Recording) -> str | None:
    """Sends generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json` without streaming; `result` equals each exactly."""
    return judge_each(generated(rec, generated_steps.INVOKE_JSON), lambda item: exact(item[0], reply_of(item[0]), item[1]))
