"""agui checks: ids."""
from __future__ import annotations

from typing import Any, Callable

from conformance.registry import check
from conformance.vocab import requests as rq
from conformance.vocab.text import truncate
from conformance.vocab.values import ABSENT, differs, same_json
from conformance.checks.agui._common import (STREAMS, Run, events_of, json_key, judge_every,
                                             streams)


def _echo_check(read: Callable[[Run], dict[str, Any]], event_type: str, field: str, sent_key: str) -> Callable[..., None]:
    def judge(*recs):
        def echoed(r: Run) -> None:
            sent, got = r.want[sent_key], read(r).get(field, ABSENT)
            assert same_json(got, sent), f"sent {field}, {event_type}.{field} is another: {differs(sent, got)}"
        return judge_every(streams(*recs, keep=lambda w: w.get(sent_key) is not None and _has(w, event_type)), echoed)
    return judge


def _has(want: dict[str, Any], event_type: str) -> bool:
    """Whether the run is expected to send `event_type` (a failing run sends RUN_ERROR, no RUN_FINISHED)."""
    return event_type != "RUN_FINISHED" or want.get("kind") != "error"


check("AGUI-ID-001", scenarios=["agui.plain", "agui.key_lengths"], name="thread_id_echoed_on_start",
      doc="Sends threadId (also 1 and 256 characters long); RUN_STARTED.threadId equals it.")(
    _echo_check(Run.started, "RUN_STARTED", "threadId", "thread"))
# The session-affinity runs (`count`) show the same rules again: extra evidence, so an agent of the team's own that
# maps no such prompt is judged on the plain runs.
check("AGUI-ID-001", scenarios=["agui.session"], name="thread_id_echoed_on_start_session", supplementary=True,
      doc="The session-affinity runs send threadId; RUN_STARTED.threadId equals it.")(
    _echo_check(Run.started, "RUN_STARTED", "threadId", "thread"))
check("AGUI-ID-002", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_start",
      doc="Sends runId; RUN_STARTED.runId equals it.")(_echo_check(Run.started, "RUN_STARTED", "runId", "run"))
check("AGUI-ID-003", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_finish",
      doc="Sends runId; RUN_FINISHED.runId equals it.")(_echo_check(Run.finished, "RUN_FINISHED", "runId", "run"))


@check("AGUI-ID-004", scenarios=STREAMS)
def finish_thread_matches_start(*recs):
    """Runs every stream scenario; RUN_FINISHED.threadId equals RUN_STARTED.threadId of the same stream."""
    def same_thread(r: Run) -> None:
        finishes = events_of(r, "RUN_FINISHED")
        start = r.started().get("threadId")
        differ = [fin.get("threadId", ABSENT) for fin in finishes if not same_json(fin.get("threadId"), start)]
        assert not differ, (f"RUN_FINISHED.threadId is not RUN_STARTED.threadId: "
                            f"{differs(start, differ[0])}")
    return judge_every(streams(*recs), same_thread, nothing="no RUN_FINISHED event in any stream")


def _generated(value: Any, limit: int | None = None) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{truncate(value, 60, quoted=True)} is not a non-empty string"
    if limit is not None and len(value) > limit:
        return f"{truncate(value, 60, quoted=True)} is {len(value)} characters long (at most {limit})"
    return None


def generated_thread_ids(*recs):
    """Runs without threadId; RUN_STARTED.threadId is generated (1 to 256 characters). That two generated keys differ
    is not stated; a fresh key starting a new instance is judged at SHOULD (GEN-SESS-002)."""
    def generated(r: Run) -> None:
        why = _generated(r.started().get("threadId"), 256)
        assert why is None, f"sent no threadId; RUN_STARTED.threadId {why}"
    return judge_every(streams(*recs, keep=lambda w: w.get("thread") is None), generated)


def generated_run_id(*recs):
    """Runs without runId; RUN_STARTED.runId is a non-empty string and RUN_FINISHED.runId equals it."""
    def generated(r: Run) -> None:
        rid = r.started().get("runId")
        why = _generated(rid)
        assert why is None, f"sent no runId; RUN_STARTED.runId {why}"
        if not _has(r.want, "RUN_FINISHED"):
            return
        finished = r.finished().get("runId", ABSENT)
        assert same_json(finished, rid), (f"RUN_FINISHED.runId is not RUN_STARTED.runId: "
                                          f"{differs(rid, finished)}")
    # the run's own runId on a run the scenario left without one (`forms.RUN_IDS`) asks for no generated one
    unsent = [r for r in streams(*recs, keep=lambda w: w.get("run") is None) if "runId" not in rq.fields(r.ex)]
    return judge_every(unsent, generated)


def _on_plain_and_session_runs(requirement: str, judge: Callable[..., str | None]) -> None:
    """`judge` over the plain runs, and over the session-affinity runs as extra evidence (see AGUI-ID-001)."""
    check(requirement, scenarios=["agui.plain"])(judge)

    def on_session_runs(rec):
        return judge(rec)
    check(requirement, scenarios=["agui.session"], name=f"{judge.__name__}_session", supplementary=True,
          doc=f"The session-affinity runs: {judge.__doc__}")(on_session_runs)


_on_plain_and_session_runs("AGUI-ID-005", generated_thread_ids)
_on_plain_and_session_runs("AGUI-ID-006", generated_run_id)


@check("AGUI-ID-007", scenarios=STREAMS)
def message_start_role_assistant(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_START has a `messageId` and `role` = `assistant`."""
    def assistant(r: Run) -> None:
        bad = [e for e in events_of(r, "TEXT_MESSAGE_START") if "messageId" not in e or e.get("role") != "assistant"]
        assert not bad, (f"TEXT_MESSAGE_START without messageId or with role other than 'assistant': "
                         f"{truncate(bad[0], 160, quoted=True)}")
    return judge_every(streams(*recs), assistant, nothing="no TEXT_MESSAGE_START event in any stream")


@check("AGUI-ID-008", scenarios=STREAMS)
def content_belongs_to_started_message(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_CONTENT has a string delta and a messageId a START announced."""
    def announced(r: Run) -> None:
        events_of(r, "TEXT_MESSAGE_CONTENT")
        started: set[str] = set()
        problems = []
        for e in r.events:
            if e["type"] == "TEXT_MESSAGE_START":
                started.add(json_key(e.get("messageId")))
            elif e["type"] == "TEXT_MESSAGE_CONTENT":
                if not isinstance(e.get("delta"), str):
                    problems.append(f"TEXT_MESSAGE_CONTENT delta is not a string: {truncate(e, 160, quoted=True)}")
                if "messageId" not in e or json_key(e.get("messageId")) not in started:
                    problems.append(f"TEXT_MESSAGE_CONTENT for messageId {truncate(e.get('messageId'), 60, quoted=True)}, "
                                    f"which no earlier TEXT_MESSAGE_START announced")
        assert not problems, "; ".join(problems[:8])
    return judge_every(streams(*recs), announced, nothing="no TEXT_MESSAGE_CONTENT event in any stream")
