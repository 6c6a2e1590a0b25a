"""MCP checks: the official `mcp` client, judged on its recorded traffic.

Each run of the client is read again from the recording with the SDK's own parsers and models
(`vocab.official_client.answers`), so the verdict follows from the recording alone. A requirement owns some
operations of a run (`vocab.official_client.OWNERS`) and needs those before them. The first answer the client could not use among them
decides: on an operation of its own, the requirement is broken there, that exchange its evidence and curl; on an
earlier one, it is blocked by the requirement owning that operation (a listed tool the client rejects, by
MCP-CLIENT-002, which judges the tool). When the client gave up on an answer it could read (its own time-out, say),
the exchange after which it gave up is named, with its reason in one line. A reply the client could read but that
is not the agent's (a wrong text, no form) breaks the spec's own MUST on it, which is the root (`expect`).
"""
from __future__ import annotations

from typing import Any

from conformance.engine import Recording
from conformance.outcomes import NotAssessed, precondition
from conformance.registry import check
from conformance.vocab import official_client as official
from conformance.vocab.official_client import LEGACY, MODERN, OPERATIONS, OWNERS, TOOL_SHAPE, Answer
from conformance.vocab.text import truncate
from conformance.checks.mcp._common import is_resumed_reply, resumed_reply

RUN_NAMES = {MODERN: "(mode auto, 2026-07-28)", LEGACY: "(2025-11-25 handshake)"}


def client_answers(rec: Recording, run: str, requirement: str) -> dict[str, list[Answer]]:
    """The answers of `run` the requirement reads (its operations and those before them), by operation, once the
    client could use every one of them; else the Deviation or Blocked of the first it could not use."""
    run_facts = (rec.facts.get("runs") or {}).get(run)
    if run_facts is None:
        raise NotAssessed(f"the official mcp client did not run {RUN_NAMES[run]}")
    owners = OWNERS[run]
    last = max(OPERATIONS.index(op) for op, rid in owners.items() if rid == requirement)
    needed = OPERATIONS[:last + 1]
    got: dict[str, list[Answer]] = {}
    for answer in official.answers(rec, run):
        if answer.operation not in needed:
            continue
        if answer.problem:
            root = TOOL_SHAPE if answer.path.startswith("result.tools[") else owners[answer.operation]
            raise precondition(root, answer.exchange, f"the official client {RUN_NAMES[run]} could not use its "
                                                      f"{answer.method} answer: {answer.problem}")
        got.setdefault(answer.operation, []).append(answer)
    gave_up = run_facts.get("error")
    if gave_up and run_facts.get("step") in needed:
        step = run_facts["step"]
        at = (got.get(step) or [a for answers in got.values() for a in answers] or [None])[-1]
        message = f"the official client {RUN_NAMES[run]} gave up at `{step}`: {gave_up}"
        if at is None:
            raise AssertionError(message)
        raise precondition(owners[step], at.exchange, f"{message} (after this exchange)")
    return got


def answer_of(got: dict[str, list[Answer]], operation: str, what: str) -> Answer:
    """The last answer of an operation (a retry's, when the client retried)."""
    if not got.get(operation):
        raise NotAssessed(f"the official client did not send {what}")
    return got[operation][-1]


def expect(ok: bool, root: str, answer: Answer, message: str) -> None:
    """What the client got breaks `root`, the spec's MUST the suite also judges on its own requests: blocked by it
    when it failed in the run (one deviation, one failure), else this requirement's failure."""
    if not ok:
        raise precondition(root, answer.exchange, message)


def client_plain(rec: Recording, run: str, requirement: str) -> str:
    got = client_answers(rec, run, requirement)
    listing = answer_of(got, "list", "tools/list")
    tools = listing.result.get("tools") or []
    expect(len(tools) == 1, "MCP-METH-002", listing, f"the official client listed {len(tools)} tools, expected one: "
                                                     f"{truncate([t.get('name') for t in tools])}")
    plain = answer_of(got, "plain", "the call with the plain-reply prompt")
    expected = rec.facts.get("expected")
    if expected is not None:
        expect(plain.text == expected, "MCP-TOOL-002", plain,
               f"the official client got {truncate(plain.text, quoted=True)}, expected {expected!r}")
    expect(not plain.result.get("isError"), "MCP-TOOL-005", plain, "the official client got a result with isError "
                                                                    "true for a run that ends normally")
    methods = dict.fromkeys(a.method for answers in got.values() for a in answers)
    progress = (rec.facts.get("runs") or {}).get(run, {}).get("progress")
    return f"{', '.join(methods)} answered as the client's models need at {plain.version}" + \
        (f"; {progress} progress notification(s) reached its callback" if run == MODERN else "")


@check("MCP-CLIENT-001", scenarios=["mcp.official_client"])
def official_client_legacy(rec: Recording):
    """The official `mcp` client on the 2025-11-25 handshake initializes, lists one tool and gets the plain reply;
    read again from its recorded traffic with the SDK's own models."""
    return client_plain(rec, LEGACY, "MCP-CLIENT-001")


@check("MCP-CLIENT-003", scenarios=["mcp.official_client"])
def official_client_modern(rec: Recording):
    """The official `mcp` client in its default mode (server/discover, then 2026-07-28) lists one tool and gets the
    plain reply (with a progress callback); read again from its recorded traffic with the SDK's own models."""
    return client_plain(rec, MODERN, "MCP-CLIENT-003")


@check("MCP-CLIENT-004", scenarios=["mcp.official_client"])
def official_client_elicits(rec: Recording):
    """The official client (2026-07-28, elicitation callback) answers the form for the question prompt and gets
    `answer: <content>thanks` on its retry."""
    got = client_answers(rec, MODERN, "MCP-CLIENT-004")
    last = answer_of(got, "question", "the call with the question prompt")
    elicited: list[dict[str, Any]] = (rec.facts.get("runs") or {}).get(MODERN, {}).get("elicited") or []
    expect(len(elicited) == 1, "MCP-PAUSE-003", last,
           f"the official client's elicitation callback ran {len(elicited)} times, expected once (the call was "
           f"answered {truncate(last.text, quoted=True)})")
    expected = resumed_reply(rec, elicited[0]["content"])
    expect(is_resumed_reply(rec, last.text or "", elicited[0]["content"], last.exchange), "MCP-PAUSE-004", last,
           f"after the form, the official client got {truncate(last.text, quoted=True)}, expected {expected!r}")


@check("MCP-CLIENT-005", scenarios=["mcp.official_client"])
def official_client_resumes(rec: Recording):
    """The official client (2025-11-25, no elicitation) gets the question as text, then answers it with the `resume`
    argument and gets `answer: {"name":"Ada"}thanks`."""
    got = client_answers(rec, LEGACY, "MCP-CLIENT-005")
    asked = answer_of(got, "question", "the call with the question prompt")
    question = rec.facts.get("question")
    if question is not None:
        expect(question in (asked.text or ""), "MCP-PAUSE-001", asked, f"the official client got "
               f"{truncate(asked.text, quoted=True)}, expected the question {question!r} as text")
    resumed = answer_of(got, "resume", "the call with `resume`")
    expected = resumed_reply(rec, rec.facts.get("resume_value"))
    expect(is_resumed_reply(rec, resumed.text or "", rec.facts.get("resume_value"), resumed.exchange), "MCP-PAUSE-002",
           resumed,
           f"after resume the official client got {truncate(resumed.text, quoted=True)}, expected {expected!r}")
