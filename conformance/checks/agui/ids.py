"""agui checks: ids."""
from __future__ import annotations

from typing import Any, Callable

from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.checks.agui._common import STREAMS, _key, fail_all, need_items, streams


def _echo_check(event_type: str, field: str, sent_key: str) -> Callable[..., None]:
    def judge(*recs):
        checked = streams(*recs, keep=lambda w: w.get(sent_key) is not None)
        problems = []
        for r in checked:
            got = r.first(event_type).get(field)
            if got != r.want[sent_key]:
                problems.append(f"{r.where}: sent {field} {truncate(r.want[sent_key], 60, quoted=True)}, {event_type}.{field} is "
                                f"{truncate(got, 60, quoted=True)}")
        fail_all(problems)
    return judge


check("AGUI-ID-001", scenarios=["agui.plain", "agui.key_lengths", "agui.session"], name="thread_id_echoed_on_start",
      doc="Sends threadId (also 1 and 256 characters long); RUN_STARTED.threadId equals it.")(_echo_check("RUN_STARTED", "threadId", "thread"))
check("AGUI-ID-002", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_start",
      doc="Sends runId; RUN_STARTED.runId equals it.")(_echo_check("RUN_STARTED", "runId", "run"))
check("AGUI-ID-003", scenarios=["agui.plain", "agui.upstream_input"], name="run_id_echoed_on_finish",
      doc="Sends runId; RUN_FINISHED.runId equals it.")(_echo_check("RUN_FINISHED", "runId", "run"))


@check("AGUI-ID-004", scenarios=STREAMS)
def finish_thread_matches_start(*recs):
    """Runs every stream scenario; RUN_FINISHED.threadId equals RUN_STARTED.threadId of the same stream."""
    problems = []
    found = streams(*recs)
    need_items([e for r in found for e in r.of_type("RUN_FINISHED")], "RUN_FINISHED event")
    for r in found:
        for fin in r.of_type("RUN_FINISHED"):
            start = r.first("RUN_STARTED").get("threadId")
            if fin.get("threadId") != start:
                problems.append(f"{r.where}: RUN_STARTED.threadId {truncate(start, 60, quoted=True)} but RUN_FINISHED.threadId "
                                f"{truncate(fin.get('threadId'), 60, quoted=True)}")
    fail_all(problems)


def _generated(value: Any, limit: int | None = None) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{truncate(value, 60, quoted=True)} is not a non-empty string"
    if limit is not None and len(value) > limit:
        return f"{truncate(value, 60, quoted=True)} is {len(value)} characters long (at most {limit})"
    return None


@check("AGUI-ID-005", scenarios=["agui.plain", "agui.session"])
def generated_thread_ids(plain, session):
    """Runs without threadId; RUN_STARTED.threadId is generated (1 to 256 characters). That two generated keys differ
    is not stated; a fresh key starting a new instance is judged at SHOULD (GEN-SESS-002)."""
    found = streams(plain, session, keep=lambda w: w.get("thread") is None)
    fail_all([f"{r.where}: sent no threadId; RUN_STARTED.threadId {why}"
              for r in found
              if (why := _generated(r.first("RUN_STARTED").get("threadId"), 256))])


@check("AGUI-ID-006", scenarios=["agui.plain", "agui.session"])
def generated_run_id(plain, session):
    """Runs without runId; RUN_STARTED.runId is a non-empty string and RUN_FINISHED.runId equals it."""
    problems = []
    for r in streams(plain, session, keep=lambda w: w.get("run") is None):
        rid = r.first("RUN_STARTED").get("runId")
        why = _generated(rid)
        if why:
            problems.append(f"{r.where}: sent no runId; RUN_STARTED.runId {why}")
        elif r.first("RUN_FINISHED").get("runId") != rid:
            problems.append(f"{r.where}: RUN_STARTED.runId {truncate(rid, 60, quoted=True)} but RUN_FINISHED.runId "
                            f"{truncate(r.first('RUN_FINISHED').get('runId'), 60, quoted=True)}")
    fail_all(problems)


@check("AGUI-ID-007", scenarios=STREAMS)
def message_start_role_assistant(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_START has a `messageId` and `role` = `assistant`."""
    starts = need_items([(r, e) for r in streams(*recs) for e in r.of_type("TEXT_MESSAGE_START")],
                        "TEXT_MESSAGE_START event")
    problems = [f"{r.where}: TEXT_MESSAGE_START without messageId or with role other than 'assistant': {truncate(e, 160, quoted=True)}"
                for r, e in starts if "messageId" not in e or e.get("role") != "assistant"]
    fail_all(problems)


@check("AGUI-ID-008", scenarios=STREAMS)
def content_belongs_to_started_message(*recs):
    """Runs every stream scenario; every TEXT_MESSAGE_CONTENT has a string delta and a messageId a START announced."""
    problems = []
    found = streams(*recs)
    need_items([e for r in found for e in r.of_type("TEXT_MESSAGE_CONTENT")], "TEXT_MESSAGE_CONTENT event")
    for r in found:
        started: set[str] = set()
        for e in r.events:
            if e.get("type") == "TEXT_MESSAGE_START":
                started.add(_key(e.get("messageId")))
            elif e.get("type") == "TEXT_MESSAGE_CONTENT":
                if not isinstance(e.get("delta"), str):
                    problems.append(f"{r.where}: TEXT_MESSAGE_CONTENT delta is not a string: {truncate(e, 160, quoted=True)}")
                if "messageId" not in e or _key(e.get("messageId")) not in started:
                    problems.append(f"{r.where}: TEXT_MESSAGE_CONTENT for messageId {truncate(e.get('messageId'), 60, quoted=True)}, "
                                    f"which no earlier TEXT_MESSAGE_START announced")
    fail_all(problems)
