"""agui checks: framing."""
from __future__ import annotations

import json

from conformance.registry import check
from conformance.vocab.text import truncate
from conformance.wire.exchange import Exchange
from conformance.vocab.steps import agui as steps
from conformance.checks.agui._common import STREAMS, fail_all, streams


@check("AGUI-FRAME-001", scenarios=["agui.plain"])
def answers_event_stream(plain):
    """Sends the plain prompt with `Accept: text/event-stream` and with no Accept header; both answer 200 text/event-stream."""
    problems = []
    for label in (steps.IDS, steps.BARE):
        ex = plain.get(label)
        if ex.status != 200 or ex.content_type != "text/event-stream":
            problems.append(f"[{label}] {ex.method} {ex.url} (Accept {_sent_header(ex, 'accept')!r}): "
                            f"expected 200 text/event-stream, got status {ex.status}, Content-Type "
                            f"{ex.header('content-type')!r}" + (f" ({ex.error})" if ex.error else ""))
    fail_all(problems)


@check("AGUI-FRAME-002", scenarios=STREAMS)
def frames_are_unnamed(*recs):
    """Runs every stream scenario; no frame carries a non-empty `event:` name (the spec's frames are unnamed `data:`)."""
    problems = [f"{r.where}: frame {f.index} is named {f.event!r}: {truncate(f.data, 160, quoted=True)}"
                for r in streams(*recs, need="frames") for f in r.frames if f.event]
    fail_all(problems, "AG-UI frames must be unnamed `data:` frames:")


@check("AGUI-FRAME-003", scenarios=STREAMS)
def frames_are_json_events(*recs):
    """Runs every stream scenario; every frame's data is one JSON object with a non-empty string `type`."""
    problems = []
    for r in streams(*recs, need="frames"):
        for f in r.frames:
            try:
                value = f.json()
            except AssertionError as exc:
                problems.append(f"{r.where}: {exc}")
                continue
            if not isinstance(value, dict) or not isinstance(value.get("type"), str) or not value["type"]:
                problems.append(f"{r.where}: frame {f.index} is not a JSON object with a non-empty string "
                                f"`type`: {truncate(f.data, 160, quoted=True)}")
    fail_all(problems, "every AG-UI frame must hold one JSON event with a `type`:")


def _extra_after_json(data: str) -> str | None:
    try:
        _, end = json.JSONDecoder().raw_decode(data.lstrip())
    except ValueError:
        return "its data is not one complete JSON value (an event split across frames?)"
    rest = data.lstrip()[end:].strip()
    return f"more follows the first JSON value: {truncate(rest, 80, quoted=True)}" if rest else None


@check("AGUI-FRAME-004", scenarios=STREAMS)
def one_event_per_frame(*recs):
    """Runs every stream scenario; each frame is blank-line terminated and holds exactly one whole JSON value."""
    problems = []
    for r in streams(*recs, need="frames"):
        if r.ex.stream.end == "eof_mid_block":
            problems.append(f"{r.where}: the stream ended inside a frame that no blank line closed: "
                            f"{truncate(r.ex.stream.pending.decode('utf-8', 'replace'), 160, quoted=True)}")
        for f in r.frames:
            why = _extra_after_json(f.data)
            if why:
                problems.append(f"{r.where}: frame {f.index}: {why}: {truncate(f.data, 160, quoted=True)}")
    fail_all(problems, "one JSON AG-UI event per frame:")


def _sent_header(ex: Exchange, name: str) -> str:
    return next((v for k, v in ex.request_headers.items() if k.lower() == name), "(none)")
