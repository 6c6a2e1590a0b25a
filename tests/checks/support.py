"""Helpers shared by the tests of each check module."""
from __future__ import annotations

from conformance import registry


def checks_in(*modules: str, generated: bool | None = None) -> list[str]:
    """Ids of the checks in conformance/checks/<module>.py; `generated` keeps (True) or drops (False) those
    over the shared generated scenarios."""
    return [c.id for c in registry.load_all().values() if c.module.rsplit(".", 1)[-1] in modules
            and (generated is None or any(s.startswith("generated.") for s in c.scenarios) == generated)]


def rows(report: dict, ids=None) -> dict[str, dict]:
    """The report's requirement rows by id (only `ids` when given)."""
    return {r["id"]: r for r in report["requirements"] if ids is None or r["id"] in ids}


def agui_reply(label: str, text: str, url: str = "https://server.test/v1/agents/agt_canned/agui"):
    """A canned AG-UI run that ends normally with `text` as its whole reply (one content delta)."""
    from conformance import canned
    frames = canned.sse_frames({"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                               {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
                               {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": text},
                               {"type": "TEXT_MESSAGE_END", "messageId": "m"},
                               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": text,
                                "outcome": {"type": "success"}})
    return canned.exchange(200, {"content-type": "text/event-stream"}, sse=frames, label=label, url=url)
