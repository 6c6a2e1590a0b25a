"""invoke checks: INV-SESS: sessions."""
from __future__ import annotations

import json

from typing import Callable

from conformance.engine import Recording
from conformance.outcomes import NotAssessed
from conformance.registry import Step, check, rule
from conformance.vocab.readers import request_json as sent
from conformance.vocab.steps import invoke as steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.checks.invoke._common import count_is, is_json_answer, judge_each, refused, result_of


@check("INV-SESS-001", scenarios=["invoke.selection", "invoke.sessions"])
def generated_session_ids(rec: Recording, sessions: Recording) -> None:
    """Sends invokes without `sessionId`; each result has a generated `sessionId` of 1 to 256 characters, no two equal."""
    seen: dict[str, str] = {}
    candidates = [ex for ex in rec.exchanges if ex.status == 200 and is_json_answer(ex)] \
        + sessions.labelled(steps.GENERATED_1)
    for ex in candidates:
        sid = result_of(ex).get("sessionId")
        assert isinstance(sid, str) and 1 <= len(sid) <= 256, \
            f"{ex.label}: sent without `sessionId`, the result must carry a generated one of 1 to 256 characters; " \
            f"got {truncate(json.dumps(sid), 200, count=True)}"
        assert sid not in seen, f"{ex.label} and {seen.get(sid)}, both sent without `sessionId`, got the same {sid!r}"
        seen[sid] = ex.label
    if len(seen) < 2:
        raise NotAssessed(f"fewer than two JSON results without `sessionId` to compare ({len(seen)})")


@check("INV-SESS-002", scenarios=["invoke.sessions"])
def same_key_same_instance(rec: Recording) -> None:
    """Sends `count` twice with one fresh `sessionId`; the replies are 1 then 2."""
    count_is(rec.get(steps.COUNT_1), 1, "the first run on a fresh key")
    count_is(rec.get(steps.COUNT_2), 2, "the second run on the same key reaches the same instance")


@check("GEN-SESS-002", scenarios=["invoke.sessions"])
def other_key_new_instance(rec: Recording) -> None:
    """Sends `count` on a fresh key after two runs on another key; the reply is 1 (a different key, a new instance)."""
    count_is(rec.get(steps.COUNT_OTHER), 1, "a fresh key after two runs on another key")


@check("INV-SESS-004", scenarios=["invoke.sessions"])
def generated_key_reaches_instance(rec: Recording) -> None:
    """Sends `count` without `sessionId`, then `count` with the `sessionId` returned; the replies are 1 then 2."""
    count_is(rec.get(steps.GENERATED_1), 1, "the first run on a generated key")
    assert rec.facts.get("generated"), f"{steps.GENERATED_1}: the result carried no usable `sessionId` to send again"
    count_is(rec.get(steps.GENERATED_2), 2, f"the returned key {rec.facts['generated']!r} reaches the same instance")


def session_echoed(ex: Exchange) -> None:
    key = (sent(ex) or {}).get("sessionId")
    got = result_of(ex).get("sessionId")
    assert got == key, f"{ex.label}: sent sessionId {truncate(str(key), 60, count=True)!r}, the result carries {truncate(str(got), 60, count=True)!r}"


def session_echo(scenario: str, family: Step | None) -> Callable[[Recording], None]:
    def fn(rec: Recording) -> None:
        results = rec.labelled(family) if family is not None else rec.exchanges
        exchanges = [ex for ex in results if isinstance((sent(ex) or {}).get("sessionId"), str)]
        if not exchanges:
            raise NotAssessed(f"scenario {scenario} sent no `sessionId` without streaming")
        judge_each(exchanges, session_echoed)

    return fn


# scenario: the step family of its JSON results (None: every exchange is one)
SESSION_ECHOES = {"invoke.runs": steps.RUN_JSON, "invoke.sessions": None}
rule(lambda scn: session_echo(scn, SESSION_ECHOES[scn]), over=SESSION_ECHOES, requirements="INV-SESS-003",
     scenarios=lambda scn: [scn], name=lambda scn: f"session_id_echoed__{scn.split('.')[-1]}",
     doc="Sends invokes with a `sessionId` without streaming; each result's `sessionId` equals the one sent.")


@check("INV-SESS-005", scenarios=["invoke.key_lengths"])
def key_lengths_accepted(rec: Recording) -> None:
    """Sends the plain reply with a `sessionId` of 1 and of 256 characters; both complete (200, `completed`)."""
    def rule(ex: Exchange) -> None:
        key = (sent(ex) or {}).get("sessionId", "")
        body = result_of(ex)
        assert body.get("status") == "completed", \
            f"{ex.label}: a {len(key)}-character sessionId must be accepted; status {body.get('status')!r}"

    judge_each([rec.get(steps.KEY_1), rec.get(steps.KEY_256)], rule)


@check("INV-SESS-006", scenarios=["invoke.refusals"])
def key_lengths_refused(rec: Recording) -> None:
    """Sends `sessionId` of 257 characters and empty; both are refused with a 4xx and `validation_failed`."""
    judge_each([rec.get(steps.KEY_257), rec.get(steps.KEY_EMPTY)], lambda ex: refused(ex, "validation_failed"))
