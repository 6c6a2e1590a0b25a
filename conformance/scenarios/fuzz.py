"""Schemathesis against the target: generated requests per operation, each sent once and recorded.

`schemas/openapi.yaml` is loaded once (`conformance.vocab.fuzzing`); per operation, positive and negative cases
are drawn deterministically (the run's seed), cleaned (echo-mode prompts, unique session keys), sent with a
bounded timeout in a worker thread, and recorded: per case the probe (kind, the defects the spec says make it
refused, the body as sent) and the answer. The checks (conformance/checks/fuzz.py) judge the recorded cases:
schemathesis' own checks and the suite's custom ones, every finding tagged with the requirement it breaks.

Positive MCP cases are well-formed `tools/call` requests of the agent's tool (from --agent-slug, else
tools/list): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `_meta` agree with the body, so they run the
agent and their results are judged. Every case is sent once and its answer is the evidence: nothing is replayed
or shrunk against the server; a crash while generating is a SuiteFault (an error of the suite), never a finding.

Cost: cases that could start a run are bounded per operation (PLAN's third column x depth); positive cases go
first, and a server that accepts negative data stops being fed once the budget is spent. Prompts are prefixed so
the conformance agent echoes them (no generated `sleep` or `fail`), session keys are replaced by unique ones.

Facts left for the checks: `fuzz` (the counts and the redacted transcript of every case, as reports show them)
and `fuzz_sent` (the same cases as `Sent`: probe and answer objects, in memory only).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
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
from conformance.registry import scenario
from conformance.vocab.fuzzing import (PLAN, Probe, Sent, content_type, defects_of, other_broken_fields,
                                       schemathesis_operations, started_run)
from conformance.vocab.protocols import MCP_VERSION, META_CAPS, META_VERSION
from conformance.vocab.sending import listed_tool
from conformance.vocab.steps import fuzz as steps
from conformance.vocab.text import truncate
from conformance.wire.redact import Redactor

PROMPT_PREFIX = "fuzz "            # not a directive word: the conformance agent echoes the prompt
REQUEST_TIMEOUT = 10.0             # seconds per generated request (echo runs are short)
TIME_BUDGET = 45.0                 # seconds of sending per operation; later cases are skipped
MAX_EXCERPT = 300                  # characters of a body in the one-line summaries
MAX_TRANSCRIPT = 64 * 1024         # characters of a request or response body kept as evidence

_generation_lock = generate.GENERATION_LOCK   # hypothesis draws one thing at a time, process-wide


# -- building cases (drawn from the run's seed) ------------------------------------------------------
class Plan:
    def __init__(self, target, unique: Callable[[str], str], tool: str | None = None):
        self.target = target
        self.unique = unique
        self.agent = target.agent_id
        self.tool = tool                      # the MCP tool name (None: the server would not say)
        self.auth = {"Authorization": f"Bearer {target.api_key}"}

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

    def mcp_call(self, generated: Any) -> dict[str, Any]:
        """A positive MCP case: a well-formed `tools/call` of the agent's tool (headers and `_meta` agreeing),
        its prompt and id taken from the generated body, so it runs the agent and its result is judged."""
        body = generated if isinstance(generated, dict) else {}
        params = body.get("params") if isinstance(body.get("params"), dict) else {}
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        text = next((v for v in (args.get("prompt"), body.get("method")) if isinstance(v, str)), "")
        rid = body.get("id")              # an integer id, so its echo is judged by value (1.0 is 1, "1" is not)
        call = {"jsonrpc": "2.0", "id": rid if type(rid) is int else len(repr(body)) % 1000 + 1}
        meta = {META_VERSION: MCP_VERSION, META_CAPS: {}}
        if self.tool is None:                 # no tool to call: a request that describes it instead
            return {**call, "method": "tools/list", "params": {"_meta": meta}}
        return {**call, "method": "tools/call", "params": {
            "name": self.tool, "arguments": {"prompt": PROMPT_PREFIX + text, "session_id": self.unique("fz")},
            "_meta": meta}}

    def sanitize(self, op: str, body: Any, positive: bool) -> Any:
        """Echo-mode prompts, unique session keys; positive bodies lose fields whose acceptance is open."""
        if op == "mcp" and positive:
            return self.mcp_call(body)
        if not isinstance(body, dict):
            return body
        body = dict(body)
        if op == "invoke":
            if isinstance(body.get("prompt"), str):
                body["prompt"] = PROMPT_PREFIX + body["prompt"]
            if isinstance(body.get("sessionId"), str) and 1 <= len(body["sessionId"]) <= 256:
                body["sessionId"] = self.unique("fz")
            if positive:
                body.pop("messages", None)            # item shape not shown: a refusal would be legitimate
                self._trim_extras(body, ("prompt", "sessionId", "stream"))
        elif op == "agui":
            msgs = body.get("messages")
            if isinstance(msgs, list):
                body["messages"] = [self._echo_message(m, positive) for m in msgs]
            if isinstance(body.get("threadId"), str) and 1 <= len(body["threadId"]) <= 256:
                body["threadId"] = self.unique("fz")
            if positive:
                body.pop("resume", None)              # no paused run to answer: behaviour not shown
                if not any(isinstance(m, dict) and m.get("role") == "user" for m in body.get("messages", [])):
                    body.setdefault("messages", []).append({"id": "fz-1", "role": "user", "content": PROMPT_PREFIX})
                self._trim_extras(body, ("threadId", "runId", "messages"))
        elif op == "mcp":
            params = body.get("params")
            args = params.get("arguments") if isinstance(params, dict) else None
            if isinstance(args, dict) and isinstance(args.get("prompt"), str):
                body["params"]["arguments"] = {**args, "prompt": PROMPT_PREFIX + args["prompt"]}
        return body

    @staticmethod
    def _echo_message(m: Any, positive: bool) -> Any:
        if not isinstance(m, dict):
            return m
        m = dict(m)
        if positive:
            m["role"] = "user" if m.get("role") == "user" else "assistant"
            for k in ("id", "content"):
                if not isinstance(m.get(k), str):
                    m[k] = "fz"
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m["content"] = PROMPT_PREFIX + m["content"]
        return m

    @staticmethod
    def _trim_extras(body: dict, keep: tuple[str, ...]) -> None:
        """Extra fields stay well inside the 4 KB extra-data bound whatever field the server uses for it."""
        for k in [k for k in body if k not in keep]:
            if len(generate.canonical_bytes(body[k])) > 1500:
                del body[k]


def _header_safe(value: str) -> bool:
    return value.isascii() and value.isprintable() and value == value.strip()


def draw(op_obj, mode, n: int, seed: int | None, path_params: dict | None, headers: dict) -> list:
    if n <= 0:
        return []
    from hypothesis.errors import Unsatisfiable
    with _generation_lock:
        strategy = op_obj.as_strategy(generation_mode=mode, path_parameters=path_params, headers=headers)
        try:
            return generate.examples(strategy, n, seed)
        except Unsatisfiable:
            return []


def build_probes(name: str, plan: Plan, depth: int, seed: int | None) -> list[Probe]:
    _st, _schema, ops = schemathesis_operations()
    from schemathesis import GenerationMode
    op = ops[name]
    n_pos, n_neg, _ = (x * depth for x in PLAN[name])
    probes: list[Probe] = []
    if name == "metadata":
        own = draw(op, GenerationMode.POSITIVE, 1, seed, {"agentId": plan.agent}, {})
        probes += [Probe(name, "positive", c) for c in own]
        probes += [Probe(name, "other-agent", c) for c in draw(op, GenerationMode.POSITIVE, n_pos, seed, None, {})]
        return probes
    fixed = plan.fixed_headers(name)
    path = {"agentId": plan.agent}
    for mode, kind, n in ((GenerationMode.POSITIVE, "positive", n_pos), (GenerationMode.NEGATIVE, "negative", n_neg)):
        for case in draw(op, mode, n, seed, path, fixed):
            probes.append(_probe_for(name, kind, case, plan))
    if probes:   # the first positive body again, without a credential
        first = next((p for p in probes if p.kind == "positive"), probes[0])
        headers = {k: v for k, v in plan.fixed_headers(name, first.body).items() if k != "Authorization"}
        bare = op.schema.make_case(operation=op, path_parameters=dict(path), headers=headers, body=first.body,
                                   media_type="application/json")
        probes.append(Probe(name, "no-auth", bare, [], first.body))
    return probes


def _probe_for(name: str, kind: str, case, plan: Plan) -> Probe:
    body = plan.sanitize(name, case.body, positive=kind == "positive")
    if body is not case.body:
        case.body = body
    if name == "mcp":     # a positive call carries exactly the headers the body implies (no stray Mcp-Name)
        generated = {} if kind == "positive" else (case.headers or {})
        case.headers = {**generated, **plan.fixed_headers(name, body)}
    defects = defects_of(name, body)
    return Probe(name, kind, case, defects, body, other_broken=other_broken_fields(name, body, defects))


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


def _distinct(probes: list[Probe]) -> list[Probe]:
    """Drop cases identical to an earlier one (hypothesis repeats small examples such as b'\\x00')."""
    seen, out = set(), []
    for p in probes:
        key = (p.kind, repr(p.body), repr(sorted((p.case.headers or {}).items())), repr(p.case.path_parameters))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def run_operation(name: str, target, unique: Callable[[str], str], send: Callable[[Any], Any],
                  tool: str | None = None) -> tuple[dict[str, Any], list[Sent]]:
    """Blocking: draw and send the generated cases of one operation (runs in a worker thread), and return the
    summary with every case's redacted transcript, and the same cases as `Sent` for the checks.

    Each case is sent exactly once; its answer is the evidence (nothing is replayed or shrunk against
    the server). A crash of generation is a SuiteFault, never a finding.
    """
    try:
        generate.guarded(schemathesis_operations)
        plan = Plan(target, unique, tool)
        probes = generate.guarded(build_probes, name, plan, max(1, target.depth), target.seed)
    except SuiteFault:
        raise
    except Exception as exc:                                     # noqa: BLE001 - schemathesis or hypothesis
        raise SuiteFault(f"generating {name} cases failed (seed {target.seed}): {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
    probes = _distinct(probes)
    probes.sort(key=lambda p: p.kind != "positive")          # positives first: they own the run budget
    run_cap = PLAN[name][2] * max(1, target.depth)
    out = {"operation": name, "requests": 0, "runs": 0, "skipped": 0, "statuses": {}, "cases": [],
           "generated": len(probes), "seed": target.seed}
    sent: list[Sent] = []
    t0 = time.monotonic()
    accepted_refusal = False
    for p in probes:
        # A case the spec says is refused is sent until one is wrongly accepted (then the server has
        # shown the failure, and each further one would cost a run); any other case that could start a
        # run needs the budget.
        over = out["runs"] >= run_cap and (not p.defects or accepted_refusal)
        if p.may_run and over or time.monotonic() - t0 > TIME_BUDGET:
            out["skipped"] += 1
            continue
        one = _send_and_record(p, target, send, out)
        if one is None:                 # the suite's own wait ran out (rate limit): unsent, not the server's fault
            out["skipped"] += 1
            continue
        accepted_refusal |= bool(p.defects and one.record.get("run"))
        out["cases"].append(one.record)
        sent.append(one)
    return out, sent


def _send_and_record(p: Probe, target, send, out: dict[str, Any]) -> Sent | None:
    """The case sent once and its answer recorded; None when the suite gave up waiting for its own client."""
    record: dict[str, Any] = {"kind": p.kind, "request": _redacted_request(p, target.secrets),
                              "defects": [d[2] for d in p.defects]}
    try:
        response = send(p)
    except concurrent.futures.TimeoutError:
        return None
    except Exception as exc:                                # the server's fault or the network's
        out["requests"] += 1
        first_line = (str(exc).splitlines() or [""])[0][:200]
        record.update(status=None, error=f"{type(exc).__name__}: {first_line}")
        return Sent(p, None, record["error"], record)
    out["requests"] += 1
    status = response.status_code
    out["statuses"][str(status)] = out["statuses"].get(str(status), 0) + 1
    ran = started_run(p, response)
    out["runs"] += int(ran)
    record.update(status=status, content_type=content_type(response), run=ran,
                  answer=redact(response.content[:MAX_EXCERPT].decode("utf-8", "replace"), target.secrets),
                  response=_redacted_response(response, target.secrets))
    return Sent(p, response, None, record)


# Headers schemathesis adds for its own transport; ours sets its own (identity encoding: the bytes as sent).
_TRANSPORT_HEADERS = {"user-agent", "accept-encoding", "connection", "content-length"}


def sender(ctx, loop: asyncio.AbstractEventLoop) -> Callable[[Probe], httpx.Response]:
    """Sends a generated case through the run's bounded client (deadlines, byte cap, circuit breaker, cost
    counted), from the worker thread, and hands schemathesis an httpx.Response to validate."""
    def send(p: Probe) -> httpx.Response:
        kw = p.case.as_transport_kwargs(base_url=ctx.target.base_url)
        headers = {k: str(v) for k, v in (kw.get("headers") or {}).items() if k.lower() not in _TRANSPORT_HEADERS}
        url = str(httpx.URL(kw["url"], params=kw.get("params") or None))
        body = {"json": kw["json"]} if "json" in kw else {"content": _as_bytes(kw.get("data"))}
        coro = ctx.send(kw["method"], url, label=steps.CASE.of(p.kind), credential=None, headers=headers,
                        retry_429=False, limits=dataclasses.replace(ctx.client.limits, total=REQUEST_TIMEOUT), **body)
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            # the client bounds the exchange itself; this bounds the wait for a turn under a rate limit
            ex = future.result(REQUEST_TIMEOUT + 15)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise
        if ex.status is None:
            raise ConnectionError(ex.error or "no answer")
        request = httpx.Request(ex.method, ex.url, headers=headers, content=ex.request_body or b"")
        response = httpx.Response(ex.status, headers=ex.headers.multi_items(), content=ex.body, request=request)
        response.elapsed = datetime.timedelta(seconds=ex.t_end or 0.0)
        return response

    return send


def _as_bytes(data: Any) -> bytes | None:
    if data is None or isinstance(data, bytes):
        return data
    return data.encode() if isinstance(data, str) else json.dumps(data).encode()


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

    threading.Thread(target=work, name="fuzz-worker", daemon=True).start()
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
                    steps=steps.FUZZ)(fuzz)


for _name in PLAN:
    _fuzz_scenario(_name)
