"""Schemathesis against the target: generated requests per operation, each sent once and recorded.

Per operation of `schemas/openapi.yaml`, positive and negative cases are drawn deterministically from the run's seed
(`conformance.generate.cases`: drawn once per seed and kept, with placeholders for the agent and the credential,
which the target's replace here) and made into cases whose right answer is unambiguous (`Plan`): a
positive has every part valid by the spec's own words (echo-mode prompts, unique session keys, AG-UI messages as the
spec shows them, no field whose handling is open); a negative breaks exactly one rule the spec states, everything
else repaired (the rule least covered so far when a draw breaks several); a draw breaking no stated rule, or whose
bytes readers take differently, is not sent. Invoke and AG-UI cases carry only the headers the spec names. Each case
is sent with a bounded timeout in a worker thread under its own step label (`fuzz-negative-3`) and recorded: per
case the probe (kind, the defect it is judged on, the body as sent), the answer and its exchange. The checks
(conformance/checks/fuzz.py) judge the recorded cases: against the document as schemathesis' own checks read it, and
by the suite's custom checks, every finding tagged with the requirement it breaks and naming the exchange.

Positive MCP cases are well-formed `tools/call` requests of the agent's tool (from --agent-slug, else
tools/list): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `_meta` agree with the body, so they run the
agent and their results are judged. Every case is sent once and its answer is the evidence: nothing is replayed
or shrunk against the server; a crash while generating is a SuiteFault (an error of the suite), never a finding.

Cost: cases that could start a run are bounded per operation (PLAN's third column x depth); positive cases go
first, and a server that accepts negative data stops being fed once the budget is spent. Prompts are prefixed so
the conformance agent echoes them (no generated `sleep` or `fail`), session keys are replaced by unique ones.

Facts left for the checks: `fuzz` (the counts and the redacted transcript of every case, as reports show them)
and `fuzz_sent` (the same cases as `Sent`: probe, answer and exchange objects, in memory only).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import datetime
import functools
import json
import threading
import time
from typing import Any, Callable

import httpx

from conformance import generate
from conformance.outcomes import SuiteFault
from conformance.engine import PREFLIGHT_METADATA
from conformance.registry import scenario
from conformance.wire.exchange import decoded_headers
from conformance.vocab.fuzzing import (AGUI_FIELDS, AGUI_ONLY, AGUI_TYPED, INVOKE_FIELDS, PLAN, SAFE_INTEGER,
                                       SENT_NEGATIVES, Issue, Probe, Request, Sent, canonical_size, clean_json,
                                       content_type, issues_of, json_text, probe, started_run)
from conformance.vocab.protocols import MCP_VERSION, META_CAPS, META_VERSION, SSE
from conformance.vocab.sending import listed_tool
from conformance.vocab.steps import fuzz as steps
from conformance.vocab.text import truncate
from conformance.wire.exchange import ACTIVITY
from conformance.wire.redact import Redactor

PROMPT_PREFIX = "fuzz "            # not a directive word: the conformance agent echoes the prompt
REQUEST_TIMEOUT = 10.0             # seconds per generated request (echo runs are short)
TIME_BUDGET = 45.0                 # seconds of sending per operation, waits for the rate limit not counted; later
                                   # cases are skipped
MAX_EXCERPT = 300                  # characters of a body in the one-line summaries
MAX_TRANSCRIPT = 64 * 1024         # characters of a request or response body kept as evidence

# -- building cases (drawn from the run's seed) ------------------------------------------------------
DRAWS_PER_NEGATIVE = 4   # negatives drawn per one kept: a draw with no stated defect to judge is not sent
SHARE_PER_RULE = 0.25    # at most this share of an operation's negatives judge the same stated rule
EXTRA_BYTES = 1500       # extra fields kept well inside the 4 KB extra data bound, whichever field carries it
# What the generator sees in place of the target's agent and credential: draws are kept on disk (draw_cache), so
# nothing of the target may reach them; the target's values replace these after loading.
PLACEHOLDER_AGENT = "agt_placeholder"
PLACEHOLDER_AUTH = "Bearer placeholder"


class Plan:
    """Turns what schemathesis draws into cases whose right answer is unambiguous (conformance.vocab.fuzzing):
    a positive with every part valid by the spec's words, a negative breaking exactly one stated rule with every
    other part repaired, and the headers the spec names (no stray headers, an `Accept` that agrees with `stream`)."""

    def __init__(self, target, unique: Callable[[str], str], tool: str | None = None):
        self.target = target
        self.unique = unique
        self.agent = target.agent_id
        self.tool = tool                      # the MCP tool name (None: the server would not say)
        self.auth = {"Authorization": f"Bearer {target.api_key}"}

    def drawn_with(self, op: str) -> dict[str, str]:
        """The fixed headers as the generator sees them: the credential a placeholder."""
        return {k: PLACEHOLDER_AUTH if k == "Authorization" else v for k, v in self.fixed_headers(op).items()}

    def fixed_headers(self, op: str, body: Any = None) -> dict[str, str]:
        if op == "metadata":
            return {}
        if op == "mcp":
            method = body.get("method") if isinstance(body, dict) and isinstance(body.get("method"), str) else None
            h = {"MCP-Protocol-Version": MCP_VERSION, "Accept": "application/json, text/event-stream",
                 "Mcp-Method": method if method and _header_safe(method) else "tools/call"}
            params = body.get("params") if isinstance(body, dict) else None
            name = params.get("name") if isinstance(params, dict) else None
            if method == "tools/call" and isinstance(name, str) and _header_safe(name):
                h["Mcp-Name"] = name
            return {**self.auth, **h}
        return {**self.auth}

    def headers(self, op: str, kind: str, body: Any, drawn: dict[str, Any] | None) -> dict[str, str]:
        """The headers a case is sent with. MCP: those its body implies (a negative keeps what was drawn
        besides). Invoke and AG-UI: the credential and an `Accept` the spec names: drawn ones it does not name
        are dropped (a server may answer 406 or ignore them, RFC 9110 §12.5.1), and so is one that disagrees
        with `stream` (`stream: false` with `Accept: text/event-stream` may answer either form, INV-SEL-005)."""
        drawn = dict(drawn or {})
        if op == "mcp":
            return {**({} if kind == "positive" else drawn), **self.fixed_headers(op, body)}
        headers = self.fixed_headers(op, body)
        accept = drawn.get("Accept")
        stream = body.get("stream") if isinstance(body, dict) else None
        named = (SSE,) if op == "agui" else ("application/json", SSE)
        if accept in named and not (stream is True and accept != SSE or stream is False and accept == SSE):
            headers["Accept"] = accept
        return headers

    def mcp_call(self, generated: Any) -> dict[str, Any]:
        """A positive MCP case: a well-formed `tools/call` of the agent's tool (headers and `_meta` agreeing),
        its prompt and id taken from the generated body, so it runs the agent and its result is judged."""
        body = generated if isinstance(generated, dict) else {}
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        text = next((v for v in (args.get("prompt"), body.get("method")) if isinstance(v, str)), "")
        rid = body.get("id")        # an integer every reader reads alike (RFC 8259 §6), echoed by value
        safe = type(rid) is int and abs(rid) <= SAFE_INTEGER
        call = {"jsonrpc": "2.0", "id": rid if safe else len(repr(body)) % 1000 + 1}
        meta = {META_VERSION: MCP_VERSION, META_CAPS: {}}
        if self.tool is None:                 # no tool to call: a request that describes it instead
            return {**call, "method": "tools/list", "params": {"_meta": meta}}
        return {**call, "method": "tools/call", "params": {
            "name": self.tool, "arguments": {"prompt": PROMPT_PREFIX + clean_json(text),
                                             "session_id": self.unique("fz")},
            "_meta": meta}}

    def negative(self, op: str, body: Any, tally: dict[str, int]) -> tuple[Any, str | None] | None:
        """A drawn negative and the stated rule it is judged on: made to break exactly that one (the one least
        covered so far), every other part repaired. None when it breaks no stated rule, or when readers differ on
        its bytes. MCP states no such rule: its negatives are only cleaned of values readers take differently."""
        if op == "mcp":
            return (body if isinstance(body, (bytes, bytearray)) else clean_json(body)), None
        if isinstance(body, (bytes, bytearray)):
            kind, value = json_text(bytes(body))
            if kind == "open":
                return None
            if kind == "not-json":
                found = issues_of(op, bytes(body))
                return (bytes(body), found[0].requirement) if len(found) == 1 and found[0].requirement else None
            body = value
        body = clean_json(body)
        stated = [i for i in issues_of(op, body) if i.requirement]
        if not stated:
            return None
        keep = min(stated, key=lambda i: tally.get(i.requirement or "", 0))
        return self.repair(op, body, keep), keep.requirement

    def repair(self, op: str, body: Any, keep: Issue | None = None) -> Any:
        """The body with every part valid by the spec's words except `keep` (None: a positive)."""
        if not isinstance(body, dict):
            return body
        body = clean_json(body)
        return self._invoke(body, keep) if op == "invoke" else self._agui(body, keep)

    def _invoke(self, body: dict, keep: Issue | None) -> dict:
        rule = keep.requirement if keep else None
        out = self._extras(body, INVOKE_FIELDS)
        prompt = body.get("prompt")
        if rule == "INV-ERR-002":
            out["prompt"] = prompt
        elif rule != "INV-ERR-004":
            out["prompt"] = PROMPT_PREFIX + (prompt if isinstance(prompt, str) else "")
        stream = body.get("stream")
        if rule == "INV-ERR-003" or isinstance(stream, bool):
            out["stream"] = stream
        out.update(self._key(body, "sessionId", rule == "INV-SESS-006"))
        return out                             # `messages` never: the items' shape is not shown

    def _agui(self, body: dict, keep: Issue | None) -> dict:
        rule = keep.requirement if keep else None
        out = self._extras(body, AGUI_FIELDS + AGUI_TYPED + AGUI_ONLY)    # no resume: no paused run to answer
        out.update(self._key(body, "threadId", rule == "AGUI-SESS-004"))
        if isinstance(body.get("runId"), str) and body["runId"]:
            out["runId"] = self.unique("fr")
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)] \
            if isinstance(body.get("messages"), list) else []
        if rule == "AGUI-ERR-002":
            out["messages"] = []
        elif rule != "AGUI-ERR-001":
            only_assistant = rule == "AGUI-ERR-003"
            out["messages"] = [self._message(i, m, only_assistant) for i, m in enumerate(msgs)]
            if only_assistant and not out["messages"]:
                out["messages"] = [self._message(0, {}, True)]
            if not only_assistant and not any(m["role"] == "user" for m in out["messages"]):
                out["messages"].append(self._message(len(out["messages"]), {"role": "user"}, False))
        return out

    @staticmethod
    def _message(i: int, m: dict, only_assistant: bool) -> dict[str, str]:
        """A message as the spec shows one: `id` (unique), `role` user or assistant, `content` (non-empty)."""
        role = "user" if m.get("role") == "user" and not only_assistant else "assistant"
        content = m.get("content") if isinstance(m.get("content"), str) and m.get("content") else "fz"
        return {"id": f"fz-{i}", "role": role, "content": PROMPT_PREFIX + content if role == "user" else content}

    def _key(self, body: dict, name: str, broken: bool) -> dict[str, str]:
        """A session key: the broken one kept (ASCII, so every way of counting its characters agrees), a valid one
        replaced by a unique key, anything else left out."""
        key = body.get(name)
        if broken:
            return {name: "".join(c if c.isascii() and c.isprintable() else "k" for c in key)}
        return {name: self.unique("fz")} if isinstance(key, str) and key else {}

    @staticmethod
    def _extras(body: dict, interpreted: tuple[str, ...]) -> dict[str, Any]:
        """Fields the service does not interpret ("any"), well inside the 4 KB extra data bound."""
        return {k: v for k, v in body.items() if k not in interpreted and canonical_size(v) <= EXTRA_BYTES}

    def other_agent(self, drawn: dict[str, Any] | None) -> str:
        """A well-formed id of an agent that never existed: `agt_` and the drawn id's ASCII letters, digits, `-` and
        `_` (an empty identifier, invalid UTF-8 or a `/` in the path are readings a server may refuse otherwise)."""
        raw = str((drawn or {}).get("agentId") or "")[4:]
        opaque = "".join(c for c in raw if c.isascii() and (c.isalnum() or c in "-_"))[:40] or "none"
        other = f"agt_{opaque}"
        return other if other != self.agent else f"{other}x"

    def minimal(self, op: str) -> Any:
        """A plainly valid body, for the case sent without a credential when nothing positive was drawn."""
        if op == "mcp":
            return self.mcp_call({})
        return self.repair(op, {} if op == "agui" else {"prompt": ""})


def _header_safe(value: str) -> bool:
    return value.isascii() and value.isprintable() and value == value.strip()


def drawn(name: str, mode: str, n: int, seed: int, plan: Plan, agent: bool = True) -> list[Request]:
    """n requests of the operation drawn for the seed (kept on disk, conformance.generate), the target's agent put in
    place of the placeholder; `agent` False: the path parameters are drawn too."""
    cases = generate.cases(name, mode, n, seed, {"agentId": PLACEHOLDER_AGENT} if agent else None,
                           plan.drawn_with(name))
    requests = [Request.drawn(name, c) for c in cases]
    for r in requests:
        r.path_parameters = {k: plan.agent if v == PLACEHOLDER_AGENT else v for k, v in r.path_parameters.items()}
    return requests


def build_probes(name: str, plan: Plan, depth: int, seed: int) -> list[Probe]:
    """The cases of one operation, deterministic for the seed: positives, negatives (each breaking one stated
    rule), then the first positive without a credential. Every case is one whose right answer is unambiguous;
    repeats are dropped."""
    n_pos, n_drawn, _ = (x * depth for x in PLAN[name])
    n_neg = SENT_NEGATIVES[name] * depth
    if name == "metadata":
        probes = [Probe(name, "positive", c) for c in drawn(name, "positive", 1, seed, plan)]
        for c in drawn(name, "positive", n_pos, seed, plan, agent=False)[:n_neg]:
            c.path_parameters = {**c.path_parameters, "agentId": plan.other_agent(c.path_parameters)}
            probes.append(Probe(name, "other-agent", c))
        return _labelled(probes)
    path = {"agentId": plan.agent}
    kept = _Kept()
    for case in drawn(name, "positive", n_pos, seed, plan):
        body = plan.mcp_call(case.body) if name == "mcp" else plan.repair(name, case.body)
        kept.add(_case(name, "positive", case, body, plan))
    tally: dict[str, int] = {}             # negatives kept per stated rule
    per_rule = max(1, int(n_neg * SHARE_PER_RULE))
    for case in drawn(name, "negative", n_drawn * DRAWS_PER_NEGATIVE, seed, plan):
        if kept.count("negative") >= n_neg:
            break
        made = plan.negative(name, case.body, tally)
        if made is None or made[1] and tally.get(made[1], 0) >= per_rule:
            continue
        body, rule = made
        if kept.add(_case(name, "negative", case, body, plan)) and rule:
            tally[rule] = tally.get(rule, 0) + 1
    first = next((p.body for p in kept.probes if p.kind == "positive"), None)
    body = first if first is not None else plan.minimal(name)
    headers = {k: v for k, v in plan.headers(name, "positive", body, None).items() if k != "Authorization"}
    bare = Request(name, dict(path), headers, body=body, media_type="application/json")
    kept.add(probe(name, "no-auth", bare, body))
    return _labelled(kept.probes)


class _Kept:
    """The cases kept so far: judged ones only, each once (hypothesis repeats small examples such as b'\\x00',
    and repairs make draws alike)."""

    def __init__(self) -> None:
        self.probes: list[Probe] = []
        self.seen: set[tuple] = set()

    def add(self, p: Probe) -> bool:
        key = (p.kind, repr(p.body), repr(sorted((p.case.headers or {}).items())), repr(p.case.path_parameters))
        if not p.judged or key in self.seen:
            return False
        self.seen.add(key)
        self.probes.append(p)
        return True

    def count(self, kind: str) -> int:
        return sum(p.kind == kind for p in self.probes)


def _case(name: str, kind: str, case: Request, body: Any, plan: Plan) -> Probe:
    case.body = body
    case.headers = plan.headers(name, kind, body, case.headers)
    return probe(name, kind, case, body)


def _labelled(probes: list[Probe]) -> list[Probe]:
    """Each case its own step label (`fuzz-negative-3`): the one a failure names and its evidence shows."""
    counts: dict[str, int] = {}
    for p in probes:
        counts[p.kind] = counts.get(p.kind, 0) + 1
        p.label = steps.CASE.of(f"{p.kind}-{counts[p.kind]}")
    return probes


# -- sending and recording ---------------------------------------------------------------------
def redact(text: str, secrets: tuple[str, ...]) -> str:
    """The run's secrets masked as everywhere else (`wire.redact`: their URL-encoded and JSON-escaped forms too)."""
    return _redactor(tuple(secrets)).redact(text)


@functools.lru_cache(maxsize=8)
def _redactor(secrets: tuple[str, ...]) -> Redactor:
    return Redactor(secrets)


def transcript_body(text: str) -> str:
    """The whole body as evidence (cut only past MAX_TRANSCRIPT characters, saying how long it was)."""
    return truncate(text, MAX_TRANSCRIPT, count=True)


def _redacted_request(p: Probe, secrets: tuple[str, ...]) -> dict[str, Any]:
    headers = {k: redact(str(v), secrets) for k, v in (p.case.headers or {}).items() if k.lower() != "authorization"}
    headers["Authorization"] = "(none)" if p.kind == "no-auth" else "Bearer ***"
    body = p.body
    if isinstance(body, (bytes, bytearray)):
        shown = repr(bytes(body))
    else:
        shown = json.dumps(body, ensure_ascii=False) if body is not None else ""
    return {"method": p.case.method.upper(), "path": p.case.formatted_path, "headers": headers,
            "body": transcript_body(redact(shown, secrets))}


def _redacted_response(response, secrets: tuple[str, ...]) -> dict[str, Any]:
    """Status, every header and the whole body of the answer (the first and only observation)."""
    headers = [(k, redact(v, secrets)) for k, v in response.headers.multi_items()]
    return {"status": response.status_code, "headers": headers,
            "body": transcript_body(redact(response.content.decode("utf-8", "replace"), secrets))}


def run_operation(name: str, target, unique: Callable[[str], str], send: Callable[[Any], Any],
                  tool: str | None = None) -> tuple[dict[str, Any], list[Sent]]:
    """Blocking: draw and send the generated cases of one operation (runs in a worker thread), and return the
    summary with every case's redacted transcript, and the same cases as `Sent` for the checks.

    Each case is sent exactly once; its answer is the evidence (nothing is replayed or shrunk against
    the server). A crash of generation is a SuiteFault, never a finding.
    """
    try:
        plan = Plan(target, unique, tool)
        probes = build_probes(name, plan, max(1, target.depth), target.seed)
    except SuiteFault:
        raise
    except Exception as exc:                                     # noqa: BLE001 - schemathesis or hypothesis
        raise SuiteFault(f"generating {name} cases failed (seed {target.seed}): {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    probes.sort(key=lambda p: p.kind != "positive")          # positives first: they own the run budget
    run_cap = PLAN[name][2] * max(1, target.depth)
    out = {"operation": name, "requests": 0, "runs": 0, "skipped": 0, "statuses": {}, "cases": [],
           "generated": len(probes), "seed": target.seed}
    sent: list[Sent] = []
    t0 = time.monotonic()
    waited = 0.0                        # seconds held back by the server's rate limit: the server's pace, not time
    accepted_refusal = False
    for p in probes:
        # A case the spec says is refused is sent until one is wrongly accepted (then the server has
        # shown the failure, and each further one would cost a run); any other case that could start a
        # run needs the budget.
        over = out["runs"] >= run_cap and (not p.defects or accepted_refusal)
        if p.may_run and over or time.monotonic() - t0 - waited > TIME_BUDGET:
            out["skipped"] += 1
            continue
        one = _send_and_record(p, target, send, out)
        if one is None:                 # the run's deadline came first: unsent, not the server's fault
            out["skipped"] += 1
            continue
        if one.exchange is not None:
            waited += one.exchange.waited_pace + sum(one.exchange.waited_429)
        accepted_refusal |= bool(p.defects and one.record.get("run"))
        out["cases"].append(one.record)
        sent.append(one)
    return out, sent


def _send_and_record(p: Probe, target, send, out: dict[str, Any]) -> Sent | None:
    """The case sent once and its answer recorded; None when the suite gave up waiting for its own client."""
    record: dict[str, Any] = {"kind": p.kind, "label": p.label, "request": _redacted_request(p, target.secrets),
                              "defects": [d[2] for d in p.defects]}
    try:
        response = send(p)
    except concurrent.futures.TimeoutError:
        return None
    except Exception as exc:                                # the server's fault or the network's
        out["requests"] += 1
        first_line = (str(exc).splitlines() or [""])[0][:200]
        record.update(status=None, error=f"{type(exc).__name__}: {first_line}")
        return Sent(p, None, record["error"], record, getattr(exc, "exchange", None))
    out["requests"] += 1
    status = response.status_code
    out["statuses"][str(status)] = out["statuses"].get(str(status), 0) + 1
    ran = started_run(p, response)
    out["runs"] += int(ran)
    record.update(status=status, content_type=content_type(response), run=ran,
                  answer=redact(response.content[:MAX_EXCERPT].decode("utf-8", "replace"), target.secrets),
                  response=_redacted_response(response, target.secrets))
    return Sent(p, response, None, record, (getattr(response, "extensions", None) or {}).get(EXCHANGE))


class NoAnswer(ConnectionError):
    """The server gave no answer to a case; the recorded exchange says why."""

    def __init__(self, exchange):
        super().__init__(exchange.error or "no answer")
        self.exchange = exchange


EXCHANGE = "conformance.exchange"     # the recorded Exchange, in the extensions of the httpx.Response handed over
REPORT_WAIT = 10.0                    # after the run's deadline, how long a worker waits for the client to give up

def sender(ctx, loop: asyncio.AbstractEventLoop) -> Callable[[Probe], httpx.Response]:
    """Sends a generated case through the run's bounded client (deadlines, byte cap, circuit breaker, cost
    counted, the rate limit waited out like every request's), from the worker thread, and hands the checks an
    httpx.Response to judge. A case that is the preflight's very request (the metadata document without a
    credential) is read from the preflight."""
    activity = ACTIVITY.get()      # the scenario's: its deadline does not count the waits for the rate limit

    async def sending(method: str, url: str, label: str, headers: dict[str, Any], body: dict[str, Any]):
        ACTIVITY.set(activity)
        known = ctx.preflight(PREFLIGHT_METADATA) if method == "GET" and not headers and not body else None
        if known is not None and known.url == url:
            return ctx.keep(known, label)
        return await ctx.send(method, url, label=label, credential=None, headers=headers, shaped=False,
                              limits=dataclasses.replace(ctx.client.limits, total=REQUEST_TIMEOUT), **body)

    def send(p: Probe) -> httpx.Response:
        method, url, headers, body = p.case.wire(ctx.target.base_url)
        future = asyncio.run_coroutine_threadsafe(
            sending(method, url, p.label or steps.CASE.of(p.kind), headers, body), loop)
        while True:   # the client bounds the exchange and the wait for the rate limit (the run's deadline)
            try:
                ex = future.result(REQUEST_TIMEOUT)
                break
            except concurrent.futures.TimeoutError:
                if time.monotonic() > ctx.session.run_deadline + REPORT_WAIT:
                    future.cancel()
                    raise
        if ex.status is None:
            raise NoAnswer(ex)
        request = httpx.Request(ex.method, ex.url, headers=headers, content=ex.request_body or b"")
        response = httpx.Response(ex.status, headers=decoded_headers(ex.headers), content=ex.body, request=request,
                                  extensions={EXCHANGE: ex})
        response.elapsed = datetime.timedelta(seconds=ex.t_end or 0.0)
        return response

    return send


async def in_daemon_thread(fn, *args):
    """Like asyncio.to_thread, but a worker still busy when the run ends cannot hold the process open."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def work() -> None:
        try:
            result = fn(*args)
        except BaseException as exc:                     # handed to the awaiting scenario
            loop.call_soon_threadsafe(lambda error=exc: done.done() or done.set_exception(error))
        else:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(result))

    # in this task's context, as asyncio.to_thread: the draws there are counted as the suite's work for the scenario
    threading.Thread(target=contextvars.copy_context().run, args=(work,), name="fuzz-worker", daemon=True).start()
    return await done


def _fuzz_scenario(name: str):
    protocol = name

    async def fuzz(ctx):
        if name != "metadata":
            ctx.need("api_key")
        ctx.need("agent_id")
        if name in ("invoke", "agui"):
            ctx.conformance_agent("generated prompts rely on the conformance agent's echo mode")
        tool = None
        if name == "mcp":
            tool = await listed_tool(ctx)
            ctx.note(tool=tool)
        result, sent = await in_daemon_thread(run_operation, name, ctx.target, ctx.unique,
                                              sender(ctx, asyncio.get_running_loop()), tool)
        ctx.note(fuzz=result, fuzz_sent=sent,
                 summary=f"schemathesis {name}: {result['requests']} requests, "
                         f"{result['runs']} agent runs, statuses {result['statuses']}"
                         + (f", {result['skipped']} skipped (budget or rate limit)" if result["skipped"] else ""))

    fuzz.__doc__ = f"Schemathesis-generated {name} requests (positive, negative, no credential), sent once each."
    fuzz.__name__ = f"fuzz_{name}"
    return scenario(f"fuzz.{name}", protocol=protocol, deadline=TIME_BUDGET + 30,
                    steps=steps.FUZZ, late=True)(fuzz)


for _name in PLAN:
    _fuzz_scenario(_name)
