"""agui checks: order."""
from __future__ import annotations


from typing import Any

from conformance.registry import check
from conformance.vocab.readers import frame_json
from conformance.vocab.text import truncate
from conformance.wire.sse import SSEEvent
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import (STREAMS, TERMINAL, _round_trips, fail_all, need_runs, runs,
                                             streams, text_diff)


@check("AGUI-ORDER-001", scenarios=STREAMS)
def run_started_first(*recs):
    """Runs every stream scenario; the first event is RUN_STARTED and it occurs once."""
    problems = []
    for r in streams(*recs):
        types = [e.get("type") for e in r.events]
        if not types or types[0] != "RUN_STARTED" or types.count("RUN_STARTED") != 1:
            problems.append(f"{r.where}: expected RUN_STARTED first and once, got {r.types()}")
    fail_all(problems)


@check("AGUI-ORDER-002", scenarios=STREAMS)
def one_terminal_event(*recs):
    """Runs every stream scenario (success, failure, interrupt); exactly one RUN_FINISHED or RUN_ERROR in total."""
    problems = [f"{r.where}: expected exactly one RUN_FINISHED or RUN_ERROR, got {len(r.of_type(*TERMINAL))}: {r.types()}"
                for r in streams(*recs) if len(r.of_type(*TERMINAL)) != 1]
    fail_all(problems)


@check("AGUI-ORDER-003", scenarios=STREAMS)
def terminal_event_is_last(*recs):
    """Runs every stream scenario; RUN_FINISHED/RUN_ERROR is the last frame and the body ends after it (comments aside)."""
    problems = []
    for r in streams(*recs):
        frames = r.frames
        last_terminal = max((i for i, f in enumerate(frames) if _type_of(f) in TERMINAL), default=None)
        if last_terminal is None:
            problems.append(f"{r.where}: no RUN_FINISHED or RUN_ERROR: {r.types()}")
        elif last_terminal != len(frames) - 1:
            after = ", ".join(truncate(f.data, 60, quoted=True) for f in frames[last_terminal + 1:][:3])
            problems.append(f"{r.where}: {len(frames) - 1 - last_terminal} frame(s) after the terminal event: {after}")
        elif r.ex.stream.end != "eof" or r.ex.error:
            problems.append(f"{r.where}: the body did not end after the terminal event "
                            f"(stream end {r.ex.stream.end!r}{', ' + r.ex.error if r.ex.error else ''})")
    fail_all(problems)


def _type_of(frame: SSEEvent) -> Any:
    _, value = frame_json(frame)
    return value.get("type") if isinstance(value, dict) else None


@check("AGUI-ORDER-004", scenarios=["agui.plain", "agui.streamed", "agui.tool", "agui.step"])
def normal_run_finishes(*recs):
    """Runs prompts that end normally (plain, chunks, tool, step); each ends with RUN_FINISHED, not RUN_ERROR."""
    problems = [f"{r.where}: a normal run ended with {r.terminal().get('type')}: {truncate(r.terminal(), 160, quoted=True)}"
                for r in streams(*recs, kinds=["success"]) if r.terminal().get("type") != "RUN_FINISHED"]
    fail_all(problems)


def _is_text_or_run(type_: Any) -> bool:
    return isinstance(type_, str) and type_.startswith(("RUN_", "TEXT_MESSAGE_"))


@check("AGUI-ORDER-005", scenarios=["agui.tool", "agui.step"])
def tool_and_step_events_between(*recs):
    """Runs the tool-call and step prompts; some event other than RUN_*/TEXT_MESSAGE_* lies between start and end."""
    seen, problems = {}, []
    for r in need_runs(runs(*recs), "the tool-call or step prompt"):
        types = [e.get("type") for e in r.events]
        inner = types[1:-1] if len(types) >= 2 else []
        others = [t for t in inner if not _is_text_or_run(t)]
        if types[:1] != ["RUN_STARTED"] or not types or types[-1] not in TERMINAL or not others:
            problems.append(f"{r.where}: expected a tool or step event between RUN_STARTED and the terminal event, "
                            f"got {r.types()}")
        seen[r.label] = sorted({str(t) for t in others})
    fail_all(problems)
    return "types seen (not judged, AGUI-OPEN-002): " + "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items())


@check("AGUI-ORDER-006", scenarios=["agui.plain", "agui.streamed"])
def deltas_join_to_reply(*recs):
    """Runs the plain and chunked prompts; the TEXT_MESSAGE_CONTENT deltas joined in order equal the reply."""
    checked = need_runs(runs(*recs, keep=lambda w: w.get("reply") is not None, lenient=True, own=[steps.STREAMED]),
                        "a prompt with a known reply")
    problems = [f"{r.where}: deltas joined are {truncate(r.text(), 160, quoted=True)}, expected {truncate(r.want['reply'], 160, quoted=True)}"
                for r in checked if r.text() != r.want["reply"]]
    fail_all(problems)


@check("AGUI-ORDER-006", scenarios=["generated.round_trip"])
def round_trip_deltas(rec):
    """Sends generated texts (newlines, CR, quotes, emoji, U+2028, long lines) as `say-json`; deltas join to each exactly."""
    fail_all([f"{r.where}: the deltas differ from the generated text: {text_diff(r.text(), text)}"
              for r, text in _round_trips(rec) if r.text() != text])
