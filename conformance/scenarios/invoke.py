"""Invoke scenarios (`POST /v1/agents/{agentId}/invoke`): each talks to the server once and leaves a Recording.

| scenario | what it sends | requests / agent runs |
|---|---|---|
| `invoke.runs` | every mappable agent scenario (plain, streamed, tool call, step, both failures) once as JSON and once as a stream (selected by `stream: true` or by `Accept` alone, in turn) | 12 / 12 |
| `invoke.selection` | the plain reply under each combination of `stream` and `Accept`, without `sessionId` | 6 / 6 |
| `invoke.timing` | `say early`, `sleep 2`, `say late` as JSON and as a stream | 2 / 2 |
| `invoke.sessions` | `count` on a fresh key twice, on a second fresh key, and without a key then on the key returned | 5 / 5 |
| `invoke.key_lengths` | the plain reply with session keys of 1 and 256 characters | 2 / 2 |
| `invoke.params` | `echo params` with unknown fields of every JSON type; twice again in other forms, without `messages` | 3 / 3 |
| `invoke.messages` | `echo messages` with a `messages` list | 1 / 1 |
| `invoke.big_body` | an echo-mode prompt of about 0.5 MB | 1 / 1 |
| `invoke.refusals` | ten requests that must be refused, then `count` on the keys four of them carried | 14 / 4 |
| `invoke.extra_data` | 2 KB and 8 KB in the extra data field (`--extra-data-field`), then `count` | 3 / 2 |
| `invoke.cleartext` | the plain reply with a decoy credential over `http://` to the same host and port, then over https | 2 / 0 |
| `invoke.chain` | `count` without a key, then on the key returned streamed and with `messages` | 3 / 3 |
| `invoke.together` | three 1 s `count` runs at once (two on one key), then `count` on that key | 4 / 4 |
| `invoke.slow_run` | a 6 s run as JSON and streamed at once, then `count` on the JSON run's key | 3 / 3 |
| `invoke.silences` | four streamed runs at once, each silent 15.5 s at another position (`conformance.vocab.silences`) | 4 / 4 |

Requests a refusal must answer carry a fresh `sessionId` where they can, and a later
`count` on that key proves that the refusal started no run (`facts["no_run"]`).
"""
from __future__ import annotations

import asyncio
import dataclasses
import string
from typing import Any
from urllib.parse import urlsplit

from conformance.engine import PREFLIGHT_CONVERSATION, Context, plain_call
from conformance.outcomes import NotAssessed
from conformance.vocab import sequences, silences
from conformance.vocab.readers import request_json
from conformance.vocab.sending import one_letter
from conformance.vocab.protocols import SSE, canonical, extra_data_sample, invoke_body
from conformance.vocab.steps import invoke as steps
from conformance.vocab.steps import sequences as seq_steps
from conformance.vocab.steps import silences as silence_steps
from conformance.registry import scenario
from conformance.vocab import forms, inputs, requests as rq
from conformance.vocab.constants import INVOKE_INTERPRETED as INTERPRETED, RUNS
from conformance.wire.exchange import Exchange, Limits
from conformance.wire.redact import suite_made

# The agent scenarios every invoke run covers, in the order the recording keeps them.

ACCEPT_JSON = {"Accept": "application/json"}
ACCEPT_SSE = {"Accept": SSE}
NO_ACCEPT = {"Accept": None}          # removes the client's default `Accept: */*`

TIMING_PROMPT = "say early\nsleep 2\nsay late"
TIMING_SLEEP_S = 2.0

# Unknown top-level fields of every JSON type; their names avoid anything a service could interpret.
PASS_PARAMS: dict[str, Any] = {
    "confString": "text",
    "confEmptyString": "",
    "confInteger": 42,
    "confNegative": -7,
    "confFloat": 2.5,
    "confTrue": True,
    "confFalse": False,
    "confNull": None,
    "confObject": {"nested": {"deep": [1, "two", {"three": 3}]}, "empty": {}},
    "confArray": [1, "a", None, True, [], {"k": "v"}],
    "confUnicode": "h\u00e9llo \u2713 \U0001f600 \u2028 line\nbreak \"quoted\" \\ back",
    "conf\u00dcnicodeKey \u2713": "unicode key",
}

BIG_BODY_BYTES = 500_000       # well inside 1 MB (however MB is counted)
HUGE_BODY_BYTES = rq.BODY_OVER_LIMIT    # well outside
EXTRA_INSIDE_BYTES = 2_000     # well inside 4 KB
EXTRA_OUTSIDE_BYTES = 8_000    # well outside
MULTIBYTE_INSIDE_REPEAT = 50    # 150 characters beyond ASCII: about 450 UTF-8 bytes, 1200 as ASCII-escaped JSON
MULTIBYTE_OUTSIDE_CHARS = 2_662  # three-byte characters: with the filler, 8000 UTF-8 bytes in 2676 characters
DECOY_PREFIX = "conformance-decoy-"   # the cleartext probe's credential: made here, so it is no secret
CLEARTEXT_LIMITS = Limits(connect=5.0, headers=5.0, idle=5.0, total=10.0, max_body=1 << 20)


# -- helpers ------------------------------------------------------------------------------
def stream_limits(ctx: Context) -> Limits | None:
    """Shorter idle for streams of the conformance agent: its prompts here are never silent for
    more than 2 s, so a server that keeps a finished stream open costs 10 s, not 30."""
    if not ctx.target.profile.is_conformance_agent:
        return None
    base = ctx.session.limits
    return dataclasses.replace(base, idle=min(base.idle, 10.0))


def sized_value(size: int, structured: bool, text: str = "") -> Any:
    """A JSON value whose compact JSON is about `size` UTF-8 bytes: `text`, then ASCII filler (the rest ASCII but
    one ✓, so any serialisation stays close; `text` says where characters and bytes part). Structured: an object of
    every JSON type; otherwise a string alone (the extra data is any JSON value: a limit written for objects alone
    lets a string of any size through)."""
    if not structured:
        return text + "y" * max(0, size - 2 - len(text.encode()))
    value: dict[str, Any] = {"note": "conformance \u2713 extra data", "list": [1, 2.5, True, False, None, "x"],
                             "nested": {"a": {"b": ["c", {"d": -1}]}}, "filler": ""}
    base = len(canonical(value).encode())
    value["filler"] = text + "y" * max(0, size - base - len(text.encode()))
    return value


async def run_then_count(ctx: Context, refusal, label: str, key: str) -> None:
    """Send a request that must be refused, then `count` on the key it carried (the proof that no run started)."""
    await refusal
    proof = ctx.recording.facts.get("count_prompt")
    if proof is None:
        return
    after = steps.AFTER.of(label)
    await ctx.post(ctx.agent_path("invoke"), invoke_body(proof, key), headers=ACCEPT_JSON, label=after)
    ctx.recording.facts["no_run"][label] = {"count_label": after, "session": key}


def count_prompt(ctx: Context) -> str | None:
    """The session-affinity prompt, or None (noted) when the profile maps none."""
    try:
        return ctx.prompt("session_affinity")
    except NotAssessed as exc:
        ctx.note(no_run_reason=str(exc))
        return None


def sort_by(ctx: Context, order: list[str]) -> None:
    rank = {label: i for i, label in enumerate(order)}
    ctx.recording.exchanges.sort(key=lambda e: (rank.get(e.label, len(rank)), e.label))


# -- scenarios ------------------------------------------------------------------------------
@scenario("invoke.runs", protocol="invoke", prompts=RUNS, steps=steps.INVOKE_RUNS)
async def runs(ctx: Context) -> None:
    """Each agent scenario of RUNS once non-streaming (`json-<name>`) and once streaming (`sse-<name>`)."""
    path = ctx.agent_path("invoke")
    expected: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    sends = []
    # a stream is selected by `stream: true` or by `Accept` alone (INV-SEL-001/002): the runs take each in turn
    by_accept = forms.offset(ctx.target.seed, ctx.scenario.name, 2)
    for n, name in enumerate(RUNS):
        try:
            prompt = ctx.prompt(name)
        except NotAssessed as exc:
            skipped[name] = str(exc)
            continue
        expected[name] = ctx.agent_scenario(name)
        sends.append(ctx.post(path, invoke_body(prompt, inputs.keyed(ctx, name, steps.RUN_JSON.of(name))),
                              headers=ACCEPT_JSON, label=steps.RUN_JSON.of(name)))
        streamed = {} if (n + by_accept) % 2 else {"stream": True}
        sends.append(ctx.post(path, invoke_body(prompt, ctx.unique(name), **streamed), headers=ACCEPT_SSE,
                              label=steps.RUN_SSE.of(name), limits=stream_limits(ctx)))
    if not expected:
        raise NotAssessed("the profile maps none of the agent scenarios " + ", ".join(RUNS))
    ctx.note(scenarios=expected, skipped=skipped, path=path)
    await asyncio.gather(*sends)
    sort_by(ctx, [kind.of(name) for name in RUNS for kind in (steps.RUN_JSON, steps.RUN_SSE)])


# label -> (body fields besides the prompt, headers, what the spec makes of it)
SELECTION = {
    steps.STREAM_TRUE_NO_ACCEPT: ({"stream": True}, NO_ACCEPT, "sse"),
    steps.ACCEPT_SSE_NO_STREAM: ({}, ACCEPT_SSE, "sse"),
    steps.NO_STREAM_NO_ACCEPT: ({}, NO_ACCEPT, "json"),
    steps.NO_STREAM_ACCEPT_JSON: ({}, ACCEPT_JSON, "json"),
    steps.STREAM_FALSE_NO_ACCEPT: ({"stream": False}, NO_ACCEPT, "json"),
    steps.STREAM_FALSE_ACCEPT_SSE: ({"stream": False}, ACCEPT_SSE, "open"),
}


@scenario("invoke.selection", protocol="invoke", prompts=("plain_reply",), steps=steps.INVOKE_SELECTION)
async def selection(ctx: Context) -> None:
    """The plain reply under each combination of `stream` and `Accept`, without a `sessionId` (no `stream` and
    `Accept: application/json` is the preflight's plain call of invoke, read from it)."""
    prompt = ctx.prompt("plain_reply")
    path = ctx.agent_path("invoke")
    ctx.note(reply=ctx.agent_scenario("plain_reply").get("reply"))
    sends = []
    for label, (fields, headers, form) in SELECTION.items():
        body = {"prompt": prompt, **fields}
        plain = ctx.preflight(plain_call("invoke"))
        if plain is not None and not fields and headers == ACCEPT_JSON and request_json(plain) == body \
                and plain.request_headers.get("accept") == ACCEPT_JSON["Accept"]:
            ctx.keep(plain, label)
            continue
        sends.append(ctx.post(path, body, headers=headers, label=label, form={"stream-writing": "absent"},
                              limits=stream_limits(ctx) if form != "json" else None))
    await asyncio.gather(*sends)
    sort_by(ctx, list(SELECTION))


@scenario("invoke.timing", protocol="invoke", timing=True, steps=steps.INVOKE_TIMING)
async def timing(ctx: Context) -> None:
    """`say early`, `sleep 2`, `say late` as JSON (`json`) and as a stream (`sse`)."""
    ctx.conformance_agent("a known pause needs the `sleep` directive")
    path = ctx.agent_path("invoke")
    ctx.note(prompt=TIMING_PROMPT, sleep_s=TIMING_SLEEP_S, first="early", reply="earlylate")
    await asyncio.gather(
        ctx.post(path, invoke_body(TIMING_PROMPT, ctx.unique("timing")), headers=ACCEPT_JSON,
                 label=steps.TIMED_JSON),
        ctx.post(path, invoke_body(TIMING_PROMPT, ctx.unique("timing"), stream=True), headers=ACCEPT_SSE,
                 label=steps.TIMED_SSE))
    sort_by(ctx, list(steps.INVOKE_TIMING))


@scenario("invoke.sessions", protocol="invoke", prompts=("session_affinity",), steps=steps.INVOKE_SESSIONS)
async def sessions(ctx: Context) -> None:
    """`count` on a fresh key K twice (the same body both times), then on a fresh key K2; `count` without a key, then
    on the key returned."""
    prompt = ctx.prompt("session_affinity")
    path = ctx.agent_path("invoke")
    key = inputs.keyed(ctx, "same", steps.COUNT_1, steps.COUNT_2)
    other = case_variant(ctx, key, steps.COUNT_OTHER)
    ctx.note(key=key, other=other)

    async def same_key() -> None:
        await ctx.post(path, invoke_body(prompt, key), headers=ACCEPT_JSON, label=steps.COUNT_1)
        # the same body again, byte for byte (a client's retry): a second run, not the first one's answer
        await ctx.post(path, invoke_body(prompt, key), headers=ACCEPT_JSON, label=steps.COUNT_2, like=steps.COUNT_1)
        await ctx.post(path, invoke_body(prompt, other), headers=ACCEPT_JSON, label=steps.COUNT_OTHER)

    async def generated_key() -> None:
        first = await ctx.post(path, invoke_body(prompt), headers=ACCEPT_JSON, label=steps.GENERATED_1)
        returned = _session_of(first)
        ctx.note(generated=returned)
        if returned is not None:
            await ctx.post(path, invoke_body(prompt, returned), headers=ACCEPT_JSON, label=steps.GENERATED_2)

    await asyncio.gather(same_key(), generated_key())
    sort_by(ctx, list(steps.INVOKE_SESSIONS))


def case_variant(ctx: Context, key: str, step: str) -> str:
    """A fresh key that differs from `key` only in letter case (input class session-key:case-variant), else a
    fresh key."""
    inputs.carry(ctx, step, "session-key:case-variant")
    return key.upper() if inputs.is_sent("session-key:case-variant") and key.upper() != key else ctx.unique("other")


def _session_of(ex: Exchange) -> str | None:
    try:
        body = ex.json()
    except AssertionError:
        return None
    sid = body.get("sessionId") if isinstance(body, dict) else None
    return sid if isinstance(sid, str) and 1 <= len(sid) <= 256 else None


@scenario("invoke.key_lengths", protocol="invoke", prompts=("plain_reply",), steps=steps.INVOKE_KEY_LENGTHS)
async def key_lengths(ctx: Context) -> None:
    """The plain reply with a `sessionId` of 1 character (`key-1`) and of 256 characters (`key-256`)."""
    prompt = ctx.prompt("plain_reply")
    path = ctx.agent_path("invoke")
    keys = {steps.KEY_1: one_letter(ctx, string.ascii_lowercase),
            steps.KEY_256: inputs.padded(ctx, "len256", 256, "session-key:256-multibyte", steps.KEY_256, "x")}
    ctx.note(keys=keys)
    await asyncio.gather(*(ctx.post(path, invoke_body(prompt, k), headers=ACCEPT_JSON, label=label)
                           for label, k in keys.items()))
    sort_by(ctx, list(keys))


@scenario("invoke.params", protocol="invoke", prompts=("params_passthrough",), steps=steps.INVOKE_PARAMS)
async def params(ctx: Context) -> None:
    """`echo params` with unknown fields of every JSON type, plus `sessionId`, `stream: false`, `messages: []` and a
    small value in the extra data field (when its name is known); then the same again in other forms (`forms.AGAIN`)."""
    prompt = ctx.prompt("params_passthrough")
    extra = {k: v for k, v in {**PASS_PARAMS, **inputs.extra_fields(ctx, steps.PARAMS, INTERPRETED)}.items()
             if k != ctx.target.extra_data_field}
    body = {**extra, **extra_data_sample(ctx.target),
            **invoke_body(prompt, ctx.unique("params"), stream=False, messages=[])}
    ctx.note(params=extra, interpreted=[k for k in INTERPRETED if k in body])
    await ctx.post(ctx.agent_path("invoke"), body, headers=ACCEPT_JSON, label=steps.PARAMS)
    # again without `messages` (whose items' shape the spec leaves open: the rules over every exchange read no
    # request that carries it), so those rules judge each copy
    again = {k: v for k, v in body.items() if k != "messages"}
    for n in range(1, forms.AGAIN + 1):
        await ctx.post(ctx.agent_path("invoke"), {**again, "sessionId": ctx.unique("params")}, headers=ACCEPT_JSON,
                       label=steps.PARAMS_AGAIN.of(n))


@scenario("invoke.messages", protocol="invoke", prompts=("messages_passthrough",), steps=steps.INVOKE_MESSAGES)
async def messages(ctx: Context) -> None:
    """`echo messages` with a `messages` list of `{role, content}` objects: the preflight's conversation call, read
    from it (whether the service takes the suite's items decides if the run's invokes carry a conversation)."""
    kept = ctx.preflight(PREFLIGHT_CONVERSATION)
    inputs.carry(ctx, steps.MESSAGES, "messages:transformable")
    if kept is not None:
        ctx.note(messages=request_json(kept).get("messages"))
        ctx.keep(kept, steps.MESSAGES)
        return
    sent = inputs.pass_messages(ctx.target)
    ctx.note(messages=sent)
    await ctx.post(ctx.agent_path("invoke"), invoke_body(ctx.prompt("messages_passthrough"), ctx.unique("messages"),
                                                         messages=sent), headers=ACCEPT_JSON, label=steps.MESSAGES)


@scenario("invoke.big_body", protocol="invoke", steps=steps.INVOKE_BIG_BODY)
async def big_body(ctx: Context) -> None:
    """An echo-mode prompt making the body about 0.5 MB (well inside 1 MB)."""
    ctx.conformance_agent("the size probe relies on echo mode (the reply is the prompt)")
    head = "conformance echo of a large prompt "
    prompt = head + ("0123456789abcdef" * (BIG_BODY_BYTES // 16))[: BIG_BODY_BYTES - len(head) - 100]
    ctx.note(prompt_length=len(prompt))
    await ctx.post(ctx.agent_path("invoke"), invoke_body(prompt, ctx.unique("big")), headers=ACCEPT_JSON,
                   label=steps.HALF_MB)


@scenario("invoke.refusals", protocol="invoke", prompts=("plain_reply", "session_affinity"),
          steps=steps.INVOKE_REFUSALS)
async def refusals(ctx: Context) -> None:
    """Ten requests that must be refused before any run; then `count` on the fresh keys four of them carried."""
    prompt = ctx.prompt("plain_reply")
    path = ctx.agent_path("invoke")
    missing_agent = f"agt_conformance_missing_{ctx.made('agent', 16)}"
    keys = {label: ctx.unique(label) for label in steps.REFUSALS_WITH_KEY}
    padding = "x" * HUGE_BODY_BYTES
    sends = {
        steps.STREAM_NO_AGENT: ctx.post(ctx.agent_path("invoke", missing_agent), invoke_body(prompt, stream=True),
                                        headers=ACCEPT_SSE, label=steps.STREAM_NO_AGENT),
        steps.PROMPT_NUMBER: ctx.post(path, {"prompt": 42, "sessionId": keys[steps.PROMPT_NUMBER]},
                                      headers=ACCEPT_JSON, label=steps.PROMPT_NUMBER),
        steps.STREAM_STRING: ctx.post(path, invoke_body(prompt, keys[steps.STREAM_STRING], stream="yes"),
                                      headers=ACCEPT_JSON, label=steps.STREAM_STRING),
        steps.PROMPT_MISSING: ctx.post(path, {"sessionId": keys[steps.PROMPT_MISSING]}, headers=ACCEPT_JSON,
                                       label=steps.PROMPT_MISSING),
        steps.NOT_JSON: ctx.post(path, content=b'{"prompt": "say conformance", ', label=steps.NOT_JSON,
                                 headers={**ACCEPT_JSON, "Content-Type": "application/json"}),
        steps.JSON_ARRAY: ctx.post(path, [invoke_body(prompt)], headers=ACCEPT_JSON, label=steps.JSON_ARRAY),
        steps.HUGE_BODY: ctx.post(path, invoke_body(prompt, keys[steps.HUGE_BODY], conformancePadding=padding),
                              headers=ACCEPT_JSON, label=steps.HUGE_BODY),
        steps.KEY_257: ctx.post(path, invoke_body(prompt, inputs.padded(ctx, "len257", 257, "session-key:257-multibyte",
                                                                         steps.KEY_257, "x")),
                                headers=ACCEPT_JSON, label=steps.KEY_257),
        steps.KEY_EMPTY: ctx.post(path, invoke_body(prompt, ""), headers=ACCEPT_JSON, label=steps.KEY_EMPTY),
        steps.NO_CREDENTIAL: ctx.post(path, invoke_body(prompt), headers=ACCEPT_JSON, credential=None,
                                      label=steps.NO_CREDENTIAL),
    }
    for label in [label for label in sends if not ctx.sends(label)]:
        sends.pop(label).close()     # not sent over this HTTP version (the body over 1 MB over HTTP/2): never started
    ctx.note(refusals=list(sends), missing_agent=missing_agent, no_run={}, count_prompt=count_prompt(ctx))
    await asyncio.gather(*(run_then_count(ctx, coro, label, keys[label]) if label in keys else coro
                           for label, coro in sends.items()))
    sort_by(ctx, list(sends) + [steps.AFTER.of(label) for label in keys])


@scenario("invoke.extra_data", protocol="invoke", needs=("extra_data_field",),
          prompts=("params_passthrough", "plain_reply", "session_affinity"), steps=steps.INVOKE_EXTRA_DATA)
async def extra_data(ctx: Context) -> None:
    """About 2 KB in the extra data field with `echo params` (`extra-2kb`); about 8 KB (`extra-8kb`), then `count`.
    Without a params_passthrough prompt only the refusal is sent (`no_echo` says why)."""
    field = ctx.need("extra_data_field")
    plain = ctx.prompt("plain_reply")
    path = ctx.agent_path("invoke")
    inside = sized_value(EXTRA_INSIDE_BYTES, structured=True,
                         text=inputs.value(ctx.target, "extra-data:multibyte-inside", "") * MULTIBYTE_INSIDE_REPEAT)
    outside = sized_value(EXTRA_OUTSIDE_BYTES, structured=False,
                          text=inputs.value(ctx.target, "extra-data:multibyte-outside", "") * MULTIBYTE_OUTSIDE_CHARS)
    inputs.carry(ctx, steps.EXTRA_2KB, "extra-data:multibyte-inside")
    inputs.carry(ctx, steps.EXTRA_8KB, "extra-data:multibyte-outside")
    key = ctx.unique(steps.EXTRA_8KB)
    ctx.note(field=field, inside=inside, refusals=[steps.EXTRA_8KB], no_run={}, count_prompt=count_prompt(ctx))
    sends = [run_then_count(ctx, ctx.post(path, invoke_body(plain, key, **{field: outside}), headers=ACCEPT_JSON,
                                          label=steps.EXTRA_8KB), steps.EXTRA_8KB, key)]
    try:
        echo = ctx.prompt("params_passthrough")
    except NotAssessed as exc:   # the 2 KB probe reads params back; the refusal needs no agent reply
        ctx.note(no_echo=str(exc))
    else:
        sends.append(ctx.post(path, invoke_body(echo, ctx.unique(steps.EXTRA_2KB), **{field: inside}),
                              headers=ACCEPT_JSON, label=steps.EXTRA_2KB))
    await asyncio.gather(*sends)
    sort_by(ctx, list(steps.INVOKE_EXTRA_DATA))


@scenario("invoke.cleartext", protocol="invoke", prompts=("plain_reply",), deadline=40, steps=steps.INVOKE_CLEARTEXT)
async def cleartext(ctx: Context) -> None:
    """The plain reply over `http://` to the base URL's host and port, then the same request over the base URL: both
    carry a decoy credential made by the suite, never a secret, so the probe is safe on any network."""
    base = urlsplit(ctx.target.base_url)
    host = base.hostname or ""
    port = base.port or (443 if base.scheme == "https" else 80)
    netloc = f"[{host}]" if ":" in host else host
    url = f"http://{netloc}:{port}{ctx.agent_path('invoke')}"
    decoy = suite_made(DECOY_PREFIX + ctx.made("decoy"))
    key = ctx.unique(steps.CLEARTEXT)
    ctx.note(url=url, session=key, sent=f"the plain reply with the bearer token {decoy}, a decoy the suite made "
                                        "(not the API key)")
    body = invoke_body(ctx.prompt("plain_reply"), key)
    decoy_header = {**ACCEPT_JSON, "Authorization": f"Bearer {decoy}"}
    await ctx.post(url, body, headers=decoy_header, credential=None, label=steps.CLEARTEXT,
                   limits=CLEARTEXT_LIMITS, retry_429=False)
    await ctx.post(ctx.agent_path("invoke"), body, headers=decoy_header, credential=None,
                   label=steps.DECOY_OVER_HTTPS)


# -- sequences: a chain, an overlap and long runs (conformance.vocab.sequences) --------------------------------
@scenario("invoke.chain", protocol="invoke", steps=(seq_steps.CHAIN,))
async def chain(ctx: Context) -> None:
    """`count` without `sessionId`, stream or Accept; then on the key returned with `stream: true`, and with
    `messages`: 1, 2, 3."""
    await sequences.play_all(ctx, seq_steps.CHAIN)


@scenario("invoke.together", protocol="invoke", timing=True, steps=(seq_steps.OVERLAP,))
async def together(ctx: Context) -> None:
    """Two `count` runs of 1 s on one fresh key and one on another, sent at the same time; then `count` on the
    first key again (3)."""
    await sequences.play_all(ctx, seq_steps.OVERLAP)


@scenario("invoke.slow_run", protocol="invoke", slow=True, deadline=40, steps=(seq_steps.LONG,))
async def slow_run(ctx: Context) -> None:
    """`say early`, `sleep 15`, `say late` as JSON on key W and streamed on key V at once; then `count` on W (2)."""
    await sequences.play_all(ctx, seq_steps.LONG)


# -- silences at every position of a run (conformance.vocab.silences) ---------------------------------------------
@scenario("invoke.silences", protocol="invoke", slow=True, deadline=50, steps=(silence_steps.SILENT,))
async def silent_runs(ctx: Context) -> None:
    """Four streamed runs at once, each silent for 15.5 s: before the first output, after text, after a tool call,
    after a step; each then says its last piece."""
    ctx.conformance_agent("the silences are scripted with `sleep`")

    async def send(silence: silences.Silence) -> None:
        await ctx.post(ctx.agent_path("invoke"), invoke_body(silence.prompt, ctx.unique("silent"), stream=True),
                       label=silence.label, headers=ACCEPT_SSE, limits=silences.limits(ctx, silence.seconds))
        silences.carry(ctx, silence.label, silence)
    await asyncio.gather(*(send(s) for s in silences.of(ctx.scenario.name)))
