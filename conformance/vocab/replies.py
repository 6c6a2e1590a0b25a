"""The reply a run of the conformance agent gives, read from its prompt alone (docs/agent.md): echo mode replies the
prompt; `say`, `say-json`, `chunks` and `chunks-json` add their text; `tool`, `step` and `sleep` add none; `count`
adds a whole number in decimal. A prompt whose reply depends on more than the prompt (`ask`, `fail`, `echo`, a line
that is no directive) has no reply read here. So the rules of how a reply travels (a JSON result's `result`, the
deltas of a stream, an MCP text block) judge every run whose prompt says its reply, whatever else the request
carried, not only the scenario that sent it for its reply.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from conformance.agent.script import parse
from conformance.vocab import requests as rq
from conformance.vocab.text import truncate
from conformance.vocab.values import differs
from conformance.wire.exchange import Exchange

COUNT = "[0-9]+"
SURROGATE = re.compile("[\ud800-\udfff]")   # an unpaired surrogate: what a JSON parser makes of it is open (RFC 8259 §8.2)
KNOWN = ("say", "chunks", "tool", "step", "sleep", "count")


@dataclass(frozen=True)
class Reply:
    """The reply a prompt makes the agent give: how it reads (a count shown as `<count>`), and for a reply with a
    count in it, its pattern (any other reply is `shown` exactly)."""
    shown: str
    pattern: re.Pattern[str] | None = None

    def judge(self, got: Any, where: str) -> None:
        """`where` (a JSON result's `result`, the deltas joined, ...) holds the reply; AssertionError if not."""
        if self.pattern is None:
            assert got == self.shown, f"{where} is not the agent's reply: {differs(self.shown, got)}"
        else:
            assert isinstance(got, str) and self.pattern.fullmatch(got), \
                f"{where} is {truncate(got, 160, quoted=True)}, not the agent's reply " \
                f"{truncate(self.shown, 160, quoted=True)}"


def reply_of(prompt: Any) -> Reply | None:
    """The reply the prompt makes the conformance agent give; None when the prompt alone does not say it."""
    if not isinstance(prompt, str) or not prompt.isascii() and SURROGATE.search(prompt):
        return None
    script = parse(prompt)
    if script.error is not None:
        return None
    if script.echo is not None:
        return Reply(script.echo)
    if any(d.word not in KNOWN for d in script.directives):
        return None
    parts = [(COUNT, "<count>") if d.word == "count" else (re.escape(d.arg), d.arg) if d.word in ("say", "chunks")
             else ("", "") for d in script.directives]
    shown = "".join(text for _, text in parts)
    counted = any(p == COUNT for p, _ in parts)
    return Reply(shown, re.compile("".join(p for p, _ in parts), re.S) if counted else None)


def scripted_reply(prompt: Any) -> Reply | None:
    """The reply of a prompt of the conformance agent's directives (not echo mode: a custom agent's prompt reads as
    one), when the prompt alone says it."""
    if not isinstance(prompt, str) or parse(prompt).echo is not None:
        return None
    return reply_of(prompt)


def replied_to_another(ex: Exchange, text: str) -> bool:
    """An AG-UI run whose text is the reply of a user message of its history other than the last (a prompt of
    directives), or an assistant's message of it, or holds one of them of some length: the run replied to another
    message than its prompt (AGUI-PROMPT-001's deviation)."""
    messages = [m for m in rq.fields(ex).get("messages") or [] if isinstance(m, dict)]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    shown = [reply.shown for i in users[:-1] if (reply := scripted_reply(messages[i].get("content"))) is not None]
    shown += [reply.shown for m in messages if m.get("role") in ("system", "developer")
              and (reply := scripted_reply(m.get("content"))) is not None]
    shown += [m.get("content") for m in messages if m.get("role") == "assistant"]
    return any(isinstance(s, str) and s and (s == text or len(s) >= 8 and s in text) for s in shown)


def echoes_params(prompt: Any) -> bool:
    """The prompt's reply is the params the agent got (`echo params` alone): what reaches them is read by the
    pass-through rules, each field by its own, so fields added to the request do not disturb their reading."""
    if not isinstance(prompt, str):
        return False
    script = parse(prompt)
    return script.error is None and [(d.word, d.arg) for d in script.directives] == [("echo", "params")]


def echoes(prompt: Any) -> bool:
    """The conformance agent's prompt says `echo params` or `echo messages`: its reply is JSON of what it got."""
    return isinstance(prompt, str) and any(d.word == "echo" for d in parse(prompt).directives)


def reads_messages(prompt: str) -> bool:
    """The conformance agent's prompt says `echo messages`: its reply is the conversation the agent got."""
    return "messages" in prompt and any(
        (d.word, d.arg) == ("echo", "messages") for d in parse(prompt).directives)


def events_made(prompt: Any) -> int:
    """How many tool calls and steps the conformance agent's prompt makes (`tool`, `step` directives)."""
    script = parse(prompt) if isinstance(prompt, str) else None
    return sum(d.word in ("tool", "step") for d in script.directives) if script is not None else 0


def tool_lines(prompt: Any) -> list[tuple[int, str]]:
    """(line index, tool name) of each `tool NAME ARGS` line of the conformance agent's prompt, in order."""
    if not isinstance(prompt, str):
        return []
    out = []
    for i, line in enumerate(prompt.split("\n")):
        directives = parse(line).directives
        if [d.word for d in directives] == ["tool"]:
            out.append((i, directives[0].arg[0]))
    return out


def slept(prompt: Any) -> float:
    """The seconds the prompt's `sleep` lines make the agent send nothing (0 for a prompt of no script)."""
    script = parse(prompt) if isinstance(prompt, str) else None
    return sum(d.arg for d in script.directives if d.word == "sleep") if script and script.error is None else 0.0


def said_before_a_pause(prompt: Any, at_least: float) -> tuple[str, float] | None:
    """(the text, the seconds) of a prompt that says fixed text (`say` lines, and steps and tool calls, which add
    none), then sleeps at least `at_least` seconds: the text is produced that long before the run goes on. None for
    any other prompt."""
    script = parse(prompt) if isinstance(prompt, str) else None
    if script is None or script.error is not None or script.echo is not None:
        return None
    said = ""
    for d in script.directives:
        if d.word == "sleep" and d.arg >= at_least and said:
            return said, d.arg
        if d.word not in ("say", "step", "tool"):
            return None
        said += d.arg if d.word == "say" else ""
    return None


def prompt_of(ex: Exchange) -> Any:
    """The prompt of a request that starts a run (None for a resume, a retry of a paused call or another method):
    invoke `prompt`, the text of AG-UI's last user message, MCP `arguments.prompt` of a `tools/call`."""
    return prompt_in(rq.op(ex), rq.fields(ex))


def prompt_in(operation: str | None, sent: Any) -> Any:
    """`prompt_of` a request body (the JSON-RPC request, for MCP) of `operation`."""
    if not isinstance(sent, dict):
        return None
    if operation == "invoke":
        return sent.get("prompt")
    if operation == "agui":
        users = [m for m in sent.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
        return users[-1].get("content") if users and sent.get("resume") is None else None
    if operation == "mcp" and sent.get("method") == "tools/call":
        params = sent.get("params") if isinstance(sent.get("params"), dict) else {}
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        resumed = "resume" in args or params.get("requestState") is not None
        return None if resumed else args.get("prompt")
    return None


def known(ex: Exchange, target: Any) -> Reply | None:
    """The reply of the run this request starts, when the agent is the conformance agent."""
    if not by_the_conformance_agent(target):
        return None
    return ex.remembered("reply", lambda: reply_of(prompt_of(ex)))


def pauses_without_failing(prompt: Any) -> bool:
    """A prompt of the conformance agent's directives that asks a question (`ask`) and says no failure: its run
    pauses, and has not failed."""
    script = parse(prompt) if isinstance(prompt, str) else None
    words = {d.word for d in script.directives} if script is not None else set()
    return script is not None and script.error is None and script.echo is None and "ask" in words \
        and "fail" not in words


def fails_before_output(ex: Exchange, target: Any) -> bool:
    """The run this request starts is one of the conformance agent that fails before it says anything (`fail` before
    any `say`, `chunks` or `count`): a streamed one must answer 200 and end with an `error` frame (INV-TERM-005)."""
    if not by_the_conformance_agent(target):
        return False
    def read() -> bool:
        prompt = prompt_of(ex)
        script = parse(prompt) if isinstance(prompt, str) else None
        if script is None or script.error is not None or script.echo is not None:
            return False
        first = next((d.word for d in script.directives if d.word in ("say", "chunks", "count", "fail")), None)
        return first == "fail"
    return ex.remembered("fails before output", read)


def by_the_conformance_agent(target: Any) -> bool:
    """The target's agent is the conformance agent (its profile says no other)."""
    return getattr(getattr(target, "profile", None), "agent", "conformance") == "conformance"


def calls_tool_or_step(ex: Exchange, target: Any) -> bool:
    """The run this request starts is one of the conformance agent whose prompt says its reply and calls a tool or
    takes a step (`tool`, `step`): its stream must show that between its start and its end."""
    if known(ex, target) is None:
        return False
    script = parse(prompt_of(ex))
    return any(d.word in ("tool", "step") for d in script.directives)

