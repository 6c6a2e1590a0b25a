"""The free dimensions of a request (`model.dimensions.FREE`), drawn for every request the run sends and read back
off every exchange: how the run varies what costs no request, and how a report says what each rule was judged on.

`draw(seed, scenario, n)` is the n-th request of a scenario's values: a deterministic function of the seed and the
scenario (the same seed sends the same forms), rotating so that a scenario's first few requests already carry every
value of every free dimension, and the run's requests cover the pairs. `apply` writes them into a request (headers
and body); `Transport` carries what only the client can do (name case, order, chunked framing). `read(ex)` reads
every dimension's value back off a recorded exchange (a capture's too): the coverage a report shows.

A form is applied only where the scenario left the value to the run: a header it set on purpose (a `Content-Type`
of another type, an `Accept` of its own, a scheme under test) keeps what the scenario wrote.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import math
import random
from typing import Any, Callable, Iterable

from conformance.agent.script import parse
from conformance.model.dimensions import DIMENSIONS, FREE, MODAL, OPEN_VALUES, REFUSED_VALUES
from conformance.model.values import STRING_KINDS, TRANSFORMABLE
from conformance.vocab import fuzzing, inputs, replies, requests as rq
from conformance.wire.http import Transport
from conformance.wire.redact import suite_made
from conformance.vocab.constants import AGUI_FORWARDED, INVOKE_INTERPRETED, MCP_DESCRIBING
from conformance.vocab.protocols import (agui_message, changes, compact_size, JSON_WRITINGS, MCP_ACCEPT, META_CAPS,
                                         META_VERSION, SSE, written)

SUITE_AGENT = "aisvc-conformance/0.1"
# an HTTP library's or tool's own, one per request by its name: what most clients leave as their library wrote it
SDK_AGENTS = ("python-httpx/0.28.1", "python-requests/2.32.3", "node", "curl/8.5.0", "Go-http-client/1.1")
USER_AGENTS = {"suite": SUITE_AGENT,
               "browser": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 "
                          "Safari/537.36",
               "sdk": SDK_AGENTS, "absent": None}
# the content codings a client takes (the client's own default, `identity`, is what the suite sends as built)
# (a browser's list adds brotli and zstd: an answer in either is decoded as gzip is, by httpx with `brotli` and
# `zstandard`)
ACCEPT_ENCODINGS = {"gzip": "gzip, deflate", "browser": "gzip, deflate, br, zstd", "absent": None}
# headers a client may add that the service does not read: one nobody registered, a proxy's, a browser's
# (a value of None: one made per request, as a proxy or a tracer gives: a server that adopts it tells requests apart)
EXTRA_HEADERS = {"unknown": {"X-Conformance-Trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                 "proxy": {"X-Forwarded-For": "203.0.113.7", "Via": "1.1 conformance-proxy", "X-Request-Id": None,
                           "traceparent": None},
                 "browser": {"Accept-Language": "ar-EG,ar;q=0.9,en;q=0.8", "Cache-Control": "no-cache",
                             "Referer": "https://app.example/chat", "Origin": "https://app.example",
                             "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site",
                             "Cookie": suite_made("theme=dark")},
                 # an MCP client's session id from an earlier server (a stateless service issues none, so it is not
                 # one of its sessions; MCP's SDKs, stateless, pass it by)
                 "stale-session": {"Mcp-Session-Id": None}}
# ...but not where the protocol reads it: MCP's transport has a server refuse an Origin it finds invalid (403)
NOT_SENT_ON = {"Origin": ("mcp",)}
# A metadata GET, now and then, with a validator of a copy the client holds from elsewhere (a cache, a CDN): an entity
# tag the server never gave matches nothing (RFC 9110 §13.1.2), so the GET is performed as if it were absent: 200 and
# the document, never 304
VALIDATORS = ("none", "stale-etag", "stale-etag")
# ...and, two of three, as a browser's reload sends it (RFC 9111 §5.2.1.4, §5.4: `no-cache` asks a cache to
# revalidate; the origin answers as to any GET): the document as it is served, cached for 30 s like any
RELOADS = ("no-cache", "none", "no-cache")
RELOAD = {"Cache-Control": "no-cache", "Pragma": "no-cache"}
# what an SDK's library writes beside its user agent (Node's fetch: undici's own; the others add nothing the run
# does not vary already)
SDK_HEADERS = {"node": {"Accept-Language": "*", "Sec-Fetch-Mode": "cors"}}
JSON_ACCEPT = "application/json"
ACCEPT_FORMS = {MCP_ACCEPT: {"reordered": "text/event-stream, application/json",
                             "case": "Application/JSON, Text/Event-Stream",
                             "weights": "application/json;q=1.0, text/event-stream;q=0.9"},
                SSE: {"reordered": SSE, "case": "Text/Event-Stream", "weights": "text/event-stream;q=1"},
                # an invoke asking for JSON may say so (RFC 9110 §12.5.1): as built it sends no Accept
                JSON_ACCEPT: {"case": "Application/JSON", "weights": "application/json;q=1"}}


@functools.cache
def drawn(dim: str) -> tuple[str, ...]:
    """The values a run draws of a free dimension (none the spec leaves open)."""
    return tuple(v for v in DIMENSIONS[dim].values if v not in OPEN_VALUES.get(dim, ()))


def _pick(seed: Any, scenario: str, dim: str, n: int) -> str:
    """The value of `dim` for request `n` of `scenario`: rotating through the values from an offset the seed and the
    scenario choose, each dimension at a pace of its own (so pairs of values meet across requests)."""
    values, h, step = _rotation(seed, scenario, dim)
    return values[(h + n * step + (n // len(values))) % len(values)]


@functools.lru_cache(maxsize=4096)     # asked for every free dimension of every request a run sends
def _rotation(seed: Any, scenario: str, dim: str) -> tuple[tuple[str, ...], int, int]:
    values = drawn(dim)
    h = int.from_bytes(hashlib.sha256(f"{seed}|{scenario}|{dim}".encode()).digest()[:8], "big")
    paces = [k for k in range(1, len(values)) if math.gcd(k, len(values)) == 1] or [1]
    step = paces[FREE.index(dim) % len(paces)]     # prime to the count: each block of that many requests has them all
    return values, h, step


AS_BUILT = {"header-name-case": "lower", "header-order": "as-built", "body-framing": "content-length",
            "json-writing": "compact", "content-type-form": "application/json", "auth-scheme-case": "Bearer",
            "accept-form": "as-built", "accept-encoding": "identity", "user-agent": "suite", "extra-header": "none",
            "jsonrpc-id": "integer", "mcp-elicitation": "cannot", "agui-fields": "absent", "other-field": "absent",
            "mcp-credential": "api-key", "stream-accept": "as-built"}
# What the spec leaves free in a body, as written when drawn: an AG-UI client's empty fields, or some set; an invoke
# field the service does not interpret (both reach the agent as `params`, which a reply read off its prompt ignores)
AGUI_FIELDS = {"client-defaults": {"tools": [], "context": [], "state": {}, "forwardedProps": {}},
               # two context entries of one description (a list, not a map by description) and a time stamp that
               # is a string (not a date to write back another way)
               "set": {"tools": [], "state": {}, "context": [{"description": "locale", "value": "en-GB"},
                                                             {"description": "locale", "value": "fr-CA"}],
                       "forwardedProps": {"client": "conformance/0.1 \u2713", "sentAt": "2024-05-01T10:00:00Z"}}}
OTHER_FIELD = ("clientTag", "conformance/0.1 \u2713")     # a `/` and a character beyond ASCII: what writings escape
# ...or, on a request drawn so, a long one (about 1.5 KB): bodies of a run then differ in size as clients' do, not
# only as its probes are built (a fault that shows only on larger bodies meets its probes too)
FIELD_LENGTHS = ("short", "long")
LONG_TEXT = " ".join([OTHER_FIELD[1]] * 80)
MCP_NOTES = "app.example/notes"     # on MCP, a `_meta` key of the client's own (MCP reserves only its prefixes)
ELICITATION = {"elicitation": {}}
# What a run of the conformance agent does beside its reply, added to a prompt that says it (docs/agent.md: `step` and
# `tool` add no text): a step and a tool call before the text, or after it in either order. So every rule of a
# run's events (their order, their fields, where the text falls around them) is judged on runs of every form the
# run sends, not on the few a scenario built for them. Invoke and AG-UI show them; an MCP result does not.
# The tools' names are an agent's own: a namespace's dot, a path's slash and colon are as much a name's as letters (a
# server that sanitizes names for a model's function calling changes them), and a run may end on a tool call.
TOOL_CALLS = ('tool lookup {"q":"x"}', 'tool web.search {"q":"x"}', 'tool fs/read:v2 {"q":"x"}')
AGENT_EVENTS = {"none": ((), ()),
                "before": (("step plan", TOOL_CALLS[1]), ()),
                "after": ((), ("step plan", TOOL_CALLS[2])),
                # a dozen: more than a page of ten, as a log or a list read with a default page size gives (on
                # invoke, whose JSON result lists them; AG-UI's runs take the pair after: a dozen there costs a run
                # forty frames more to read)
                "many": ((), tuple(line for i in range(6) for line in ("step plan", TOOL_CALLS[i % 3]))),
                # ...and a pair after the text ending on a step (drawn as any)
                "after-step": ((), (TOOL_CALLS[0], "step plan")),
                # ...or inside the reply (`INSIDE`): text before them and after, which no other value gives (drawn as
                # any, and in place of the dozen on AG-UI)
                "inside": ((), ())}
# A step and a tool call between two pieces of the reply: a prompt of several lines takes them after its first line,
# one `say` line is cut in two (`say confor` / `say mance`: the reply the same). On AG-UI the text is then two
# messages around the tool call, and RUN_FINISHED's result still the whole reply
INSIDE = ("step plan", TOOL_CALLS[0])
SHOWS_AGENT_EVENTS = ("invoke", "agui")
# ...and on a run that fails after its text, a tool call and a second's pause before the failure (on every protocol:
# MCP's result shows none, but a run failing after a tool call is still a failed run): every rule of a failed run is
# judged on runs whose agent called a tool on the way and took time, not only on a failure that follows text at once
FAILURE_EVENTS = ("none", "tool-before-failure")
# ...and on a streamed invoke run whose reply is plain text, now and then a pause after it (`sleep 2` before `done`):
# a stream must deliver text as it is produced (INV-STREAM-009), and a run whose agent says its text and then works
# on is what shows a stream held back; so that rule is judged on runs of every form the run sends, not only on the
# few a timing scenario built (a server that holds a stream back only for some requests meets it)
PAUSES = {"none": (), "after-text": ("sleep 2",)}
# ...and a failure the agent gives no message (`fail` alone: an empty one): a failed run all the same, whose message
# is a string like any (a server that takes an empty message for no failure reports success)
FAILURE_MESSAGES = ("said", "unsaid")
BEFORE_FAILURE = (TOOL_CALLS[0], "sleep 1")
# The conversation an AG-UI client holds around its prompt (the last user message): earlier turns before it, or a
# message after it (the assistant's, or a system message a client appends), or an earlier user message right before it
# (two user turns in a row, which a library may merge into one). The earlier prompt and the system
# message have a reply of their own and the assistant's turn a text of its own, so a run that took any of them for
# the prompt shows it (AGUI-PROMPT-001 reads every such run); an `echo params` run gets them too (what reaches the
# agent's params is read field by field, messages aside).
EARLIER_PROMPT, ASSISTANT_TURN, SYSTEM_TURN = "say earlier-turn", "assistant-turn", "say system-turn"
AGUI_HISTORIES = ("none", "earlier", "after", "system-after", "user-before")
_EARLIER = (agui_message(EARLIER_PROMPT), agui_message(ASSISTANT_TURN, "assistant"))
AROUND_PROMPT = {"earlier": (_EARLIER, ()), "after": ((), _EARLIER[1:]), "user-before": (_EARLIER[:1], ()),
                 "system-after": ((), (agui_message(SYSTEM_TURN, "system"),))}   # messages (before, after) it
# An AG-UI client's `runId`: optional, echoed on RUN_STARTED and RUN_FINISHED, generated when left out (the spec's
# table). A scenario that sends none leaves it to the run, which sends one on about half of such requests (a made
# value carrying the string kinds an echoed value carries, `Context.unique`): every rule of a sent run id (its echo
# on both events, whatever the run's form) is judged on the run's ordinary runs, not on the few built for it; a
# scenario whose subject is a generated run id sets `run-id` in its form.
RUN_IDS = ("absent", "sent")
RUN_ID_WRITINGS = ("made", "", "made")     # a run id the run makes, or the empty string
# ...and an AG-UI resume's conversation: RunAgentInput carries `messages` on every run (AG-UI's own client sends the
# conversation with its resume), and a request with `resume` on the thread continues the paused run whatever else it
# carries (the state table), so the resumed run's reply is the paused run's continuation, not a reply to the
# conversation's last user message
RESUME_HISTORIES = ("none", "conversation")
# ...and an MCP call's progress token (`_meta.progressToken`: "a progress token may be sent to get progress"): the
# call then gets a stream of progress notifications ending with the response, whose every rule (the stream's frames,
# the token given back on each notification, the response last) is judged on the run's ordinary calls
PROGRESS = ("none", "token")
# How an invoke that asks for one JSON result says so: leaving `stream` out, or writing `stream: false` (both the
# spec's words: `stream` is an optional boolean, `true` selects streaming). Drawn where the scenario set no `stream`
# and no Accept naming the event stream (with it, `stream: false` leaves the form open), so every rule of a JSON
# result meets both writings (INV-SEL-004 reads the second on every such exchange, not on the selection scenario's
# one). A scenario whose subject is how the mode is asked sets `stream-writing` in its form.
STREAM_WRITINGS = ("absent", "false")
# ...and an invoke caller's conversation (`messages`: "the conversation as the caller holds it"; its items' shape is
# not shown, so they go as the messages scenario sends them, `{role, content}`), on about half of the invoke requests
# that must run, whose prompt does not read them (`echo messages`): every rule of an invoke run is judged beside a
# conversation too, not only on the few requests built with one. A server may refuse the items (not judged: their
# shape is not shown); once it ran the call, the run is answered as its mode asks.
INVOKE_HISTORIES = ("none", "earlier")
INVOKE_EARLIER = ({"role": "user", "content": EARLIER_PROMPT}, {"role": "assistant", "content": ASSISTANT_TURN})
# A probe whose content no other request can carry (an `echo params` run) is sent this many times again, in other
# forms: a fault that shows only on some requests meets it on more than one (the rules over every exchange judge each)
AGAIN = 2
SHAPING_MARGIN = 64_000    # bytes: far more than all a form adds to a body (the fields above, an id written anew)
SHAPED_IDS = range(1, 10_000)       # an integer id the run chose (the id input classes send others on purpose)
# How an id the run chose is written beyond a scenario's first request, by the id's kind the form draws: the classes
# of the input model (`model.values`, jsonrpc-id) each a request may carry, so every rule that reads an answer's id
# (MCP-METH-005, and every rule matching a response to its request) meets them on the requests the run sends anyway,
# not on mcp.input_forms' one each. Each keeps the id distinct from every other the run chose. Escapes stay
# mcp.input_forms': a server writing its answer by hand breaks the whole answer on them, not the id alone, and the
# failure is then the rule's of whatever the request was (its id class is one deviation, read on one request kind).
LARGE_ID_BITS = 32      # a large id lies beyond what this many bits hold (and inside what a double holds exactly)
ID_WRITINGS: dict[str, dict[str, Any]] = {
    "integer": {"as-built": lambda rid: rid, "negative": lambda rid: -rid, "large": lambda rid: 2**LARGE_ID_BITS + rid},
    "string": {"as-built": lambda rid: f"id-{rid}", "numeric-string": str,
               **{kind: (lambda rid, kind=kind: f"id-{rid}-{''.join(STRING_KINDS[kind])}")
                  for kind in ("non-ascii", "astral")},
               "transformable": lambda rid: f"{TRANSFORMABLE}id-{rid}"}}


MEDIA_RANGE_LISTS = ("mcp",)    # the operations whose Accept lists two media ranges (one alone has no order)


def values_of(dim: str, ops: Iterable[str], http2: bool) -> tuple[str, ...]:
    """The values of `dim` a request of these operations may carry: HTTP/2 only when the target spoke it, no value
    the spec refuses whatever else a request carries (`REFUSED_VALUES`) nor one it leaves open (`OPEN_VALUES`), and
    the order of media ranges only where Accept lists two."""
    values = DIMENSIONS[dim].values if http2 or dim != "http-version" else ("HTTP/1.1",)
    if dim == "accept-form" and not set(ops) & set(MEDIA_RANGE_LISTS):
        values = tuple(v for v in values if v != "reordered")
    return tuple(v for v in values if v not in REFUSED_VALUES.get(dim, ()) + OPEN_VALUES.get(dim, ()))


COVERING_TRIES = 4      # candidate rows weighed for each row of a covering array (more: fewer rows, more time)
COVERING_STRENGTH = 3   # --thorough meets every three values of distinct free dimensions on one request
Tuple = tuple[tuple[str, str], ...]     # values of distinct dimensions, by dimension name


def free_values(operation: str) -> dict[str, tuple[str, ...]]:
    """The values of each free dimension a request of `operation` may carry (over HTTP/1.1), one mode's aside."""
    return {d: values_of(d, (operation,), False) for d in FREE if operation in DIMENSIONS[d].operations
            and d not in MODAL}


ESCAPING_WRITINGS = ("ascii-escaped", "slash-escaped")


def shaped_out(values: Tuple) -> bool:
    """Values no request of the run carries together: a writing that escapes characters is given some to escape
    where the body is free to carry them (`shape`: invoke's other field sent, AG-UI's fields set), and an MCP access
    token rides only on a request that describes the tool (`credential`), whose body has none."""
    got = dict(values)
    return got.get("json-writing") in ESCAPING_WRITINGS and (
        got.get("other-field") == "absent" or got.get("agui-fields") in ("absent", "client-defaults")
        or got.get("mcp-credential") == "access-token")


def possible_tuples(operation: str, strength: int) -> set[Tuple]:
    """Every `strength` values of distinct free dimensions a request of `operation` may carry together."""
    values = free_values(operation)
    return {t for combo in itertools.combinations(sorted(values), strength)
            for picked in itertools.product(*(values[d] for d in combo))
            if not shaped_out(t := tuple(zip(combo, picked)))}


def tuples_of(values: dict[str, str], strength: int) -> set[Tuple]:
    """The `strength` values of distinct free dimensions one request carries (`values`: dimension -> value)."""
    return set(itertools.combinations(sorted((d, v) for d, v in values.items() if d in FREE and d not in MODAL),
                                      strength))


def covering_rows(seed: Any, operation: str, met: set[Tuple] = frozenset(), strength: int = COVERING_STRENGTH
                  ) -> tuple[dict[str, str], ...]:
    """Free forms of requests of `operation` that together carry every `strength` values of distinct free
    dimensions a request of it may carry, but those `met` already (a covering array, built greedily, ties broken
    by the seed): what --thorough sends so that a fault showing only where three conditions meet is met."""
    values = free_values(operation)
    dims = sorted(values)
    rng = random.Random(f"{seed}/covering/{operation}/{strength}")
    uncovered = possible_tuples(operation, strength) - set(met)
    rows: list[dict[str, str]] = []
    while uncovered:
        best: tuple[int, dict[str, str]] = (-1, {})
        for _ in range(COVERING_TRIES):
            row = dict(rng.choice(sorted(uncovered)))
            rest = [d for d in dims if d not in row]
            rng.shuffle(rest)
            for d in rest:
                set_dims = sorted(row)

                def gain(v: str, d: str = d, set_dims: list[str] = set_dims) -> int:
                    return sum(tuple(sorted(((d, v), *((x, row[x]) for x in pair)))) in uncovered
                               for pair in itertools.combinations(set_dims, strength - 1))
                allowed = [v for v in values[d] if not shaped_out(tuple({**row, d: v}.items()))] or values[d]
                row[d] = max(allowed, key=lambda v: (gain(v), -values[d].index(v)))
            best = max(best, (len(tuples_of(row, strength) & uncovered), row), key=lambda pair: pair[0])
        uncovered -= tuples_of(best[1], strength)
        rows.append(best[1])
    return tuple(rows)


def offset(seed: Any, scenario: str, size: int) -> int:
    """Where a scenario's rotation through `size` things starts, by seed."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{scenario}|start".encode()).digest()[:4], "big") % max(1, size)


def covering(seed: Any, scenario: str, n: int, used: Any) -> dict[str, str]:
    """The free values of a scenario's request `n` chosen for what it will be judged on: for each dimension the
    value `used(dimension, value)` counts least (how often the request's rules were judged on it so far), ties
    broken in the rotation's order from its own pick (so the same seed still sends the same forms)."""
    out = {}
    for dim in FREE:
        values = list(drawn(dim))
        start = values.index(_pick(seed, scenario, dim, n))
        out[dim] = min(values[start:] + values[:start], key=lambda v: used(dim, v))
    return out


def draw(seed: Any, scenario: str, n: int) -> dict[str, str]:
    """The free values of a scenario's request `n`: its first goes as the scenario built it (the forms most clients
    send), every later one as the rotation draws."""
    if n == 0:
        return dict(AS_BUILT)
    return {dim: _pick(seed, scenario, dim, n - 1) for dim in FREE}


def carried(dim: str, value: str, base: str | None = None) -> str | None:
    """The input class (`vocab.inputs`) a free value carries (on `base`, the value the scenario built), if any."""
    if dim == "accept-form" and value != "as-built":
        return "accept:list-forms" if base == MCP_ACCEPT else {"case": "accept:case", "weights": "accept:weight"}.get(value)
    return {("content-type-form", "application/json; charset=utf-8"): "content-type:parameter",
            ("content-type-form", "application/json;charset=UTF-8"): "content-type:parameter",
            ("content-type-form", "Application/JSON"): "content-type:case",
            ("auth-scheme-case", "bearer"): "auth-scheme:case", ("auth-scheme-case", "BEARER"): "auth-scheme:case",
            }.get((dim, value)) or ("request-body:writings" if dim == "json-writing" and value != "compact" else None)


def classes(applied: dict[str, str], accept: str | None) -> list[str]:
    """The input classes (`vocab.inputs`) a request's applied forms carried (`accept`: the Accept the scenario
    wrote, whose forms the applied one is): a report names them on every requirement judged on the request."""
    out = [cls for dim, value in applied.items() if (cls := carried(dim, value, accept))]
    return out + ([f"jsonrpc-id:{applied['id-writing']}"] if applied.get("id-writing") else []) + (
        ["run-id:empty"] if applied.get("run-id-writing") == "empty" else [])


def apply(form: dict[str, str], headers: dict[str, Any], json_body: Any, *, writing_set: bool, request: str = "",
          operation: str | None = None) -> tuple[dict[str, Any], bytes | None, dict[str, str]]:
    """(headers, body bytes or None when the body stays the client's to write, the values actually applied) of a
    request written in `form`. Only what the scenario left to the run changes; a value whose input class a test
    withholds (`inputs.withheld`) goes as built. `request` names the request (a proxy's `X-Request-Id` is made of it:
    one per request, as a proxy gives, so a server that adopts it still tells requests apart)."""
    form = {dim: v if (cls := carried(dim, v)) is None or inputs.is_sent(cls) else AS_BUILT[dim]
            for dim, v in form.items()}
    applied: dict[str, str] = {}
    out = dict(headers)
    lower = {k.lower(): k for k in out}
    ct = lower.get("content-type")
    body = None
    if json_body is not None and not writing_set:
        writing = form["json-writing"]
        body = written(json_body, writing)
        if writing != "compact" and not _writing_kept(json_body, body, writing):
            body, writing = written(json_body, "compact"), "compact"
        applied["json-writing"] = writing
    if json_body is not None and (ct is None or out[ct] == "application/json"):
        out.pop(ct, None) if ct else None
        out["Content-Type"] = form["content-type-form"]
        applied["content-type-form"] = form["content-type-form"]
    auth = lower.get("authorization")
    if auth and isinstance(out[auth], str) and out[auth].startswith("Bearer "):
        out[auth] = form["auth-scheme-case"] + out[auth][len("Bearer"):]
        applied["auth-scheme-case"] = form["auth-scheme-case"]
    accept = lower.get("accept")
    if accept is None and asks_json(operation, json_body) and form["accept-form"] in ACCEPT_FORMS[JSON_ACCEPT]:
        out["Accept"] = ACCEPT_FORMS[JSON_ACCEPT][form["accept-form"]]
        applied["accept-form"] = form["accept-form"]
    elif accept and form["accept-form"] in ACCEPT_FORMS.get(out[accept], {}) and \
            inputs.is_sent(carried("accept-form", form["accept-form"], out[accept]) or "accept:case"):
        out[accept] = ACCEPT_FORMS[out[accept]][form["accept-form"]]
        applied["accept-form"] = form["accept-form"]
    if accept is None and form.get("stream-accept") == "json" and operation == "invoke" \
            and isinstance(json_body, dict) and json_body.get("stream") is True:
        out["Accept"] = JSON_ACCEPT      # the `stream` field decides, not Accept
        applied["stream-accept"] = "json"
    if "accept-encoding" not in lower and form["accept-encoding"] in ACCEPT_ENCODINGS:
        out["Accept-Encoding"] = ACCEPT_ENCODINGS[form["accept-encoding"]]     # None: the client's default left out
        applied["accept-encoding"] = form["accept-encoding"]
    made = hashlib.sha256(request.encode()).hexdigest()
    if "user-agent" not in lower:
        agent = USER_AGENTS[form["user-agent"]]
        out["User-Agent"] = agent[int(made[:8], 16) % len(agent)] if isinstance(agent, tuple) else agent
        applied["user-agent"] = form["user-agent"]
        out.update({k: v for k, v in SDK_HEADERS.get(out["User-Agent"], {}).items() if k.lower() not in lower})
    cached = operation == "metadata" and not request.endswith("|0")
    if cached and "if-none-match" not in lower and _rotated(request, "validator", VALIDATORS) != "none":
        out["If-None-Match"] = _made_per_request("If-None-Match", made)
        applied["validator"] = "stale-etag"
    if cached and not {"cache-control", "pragma"} & set(lower) and _rotated(request, "reload", RELOADS) != "none":
        out.update(RELOAD)
        applied["reload"] = "no-cache"
    added = extra_headers(form["extra-header"], operation)
    if added and not set(map(str.lower, added)) & set(lower):
        client = hashlib.sha256(request.split("|", 1)[0].encode()).hexdigest()
        out.update({k: v if v is not None else _made_per_request(k, client if k == "Mcp-Session-Id" else made)
                    for k, v in added.items()})
        applied["extra-header"] = form["extra-header"]
    return out, body, applied


def _writing_kept(json_body: Any, body: bytes, writing: str) -> bool:
    """Whether `body`, `json_body` written in `writing`, changed its compact writing without taking it across a limit
    (`requests.size_class`): a writing that changed nothing is none. Neither is read by writing the compact twin
    where the body's size class is known without it (`compact_size`; a size probe is a MB)."""
    lo, hi = compact_size(json_body)
    size = rq.size_class(len(body))
    if rq.size_class(lo) == rq.size_class(hi) == size:
        return changes(json_body, writing)
    plain = written(json_body, "compact")
    return body != plain and rq.size_class(len(plain)) == size


def extra_headers(value: str, operation: str | None) -> dict[str, str | None]:
    """The headers an `extra-header` value adds to a request of `operation`: on MCP, each value but `none` with the
    client's stale session id beside its own (an SDK that once held a session sends it on every request, through a
    proxy or not), so a server that reads it meets it on most MCP requests, not a fifth of them."""
    added = {k: v for k, v in EXTRA_HEADERS.get(value, {}).items() if operation not in NOT_SENT_ON.get(k, ())}
    return {**added, **EXTRA_HEADERS["stale-session"]} if operation == "mcp" and added else added


def _made_per_request(header: str, made: str) -> str:
    """A proxy's request id, or a W3C trace context (a trace id and a span id), made of the request's name; an MCP
    client's stale session id, of the run's (an SDK sends the one it holds on every request of its session)."""
    return f"00-{made[:32]}-{made[32:48]}-01" if header == "traceparent" else f'"conf-{made[:16]}"' \
        if header == "If-None-Match" else f"conf-{made[:16]}"


def asks_json(operation: str | None, body: Any) -> bool:
    """An invoke whose body asks for one JSON result (no `stream: true`): it may carry `Accept: application/json`."""
    return operation == "invoke" and isinstance(body, dict) and body.get("stream") is not True


def shape(form: dict[str, str], operation: str | None, body: Any, *, replies_read: bool, runs: bool = False,
          request: str | None = None, accept: str | None = None,
          made: Callable[[str], str] | None = None) -> tuple[Any, dict[str, str]]:
    """(the body, the values applied) of a JSON body in `form`'s values of what the spec leaves free in it: an MCP
    id the run chose written as a string; where the run's reply cannot read them (`replies_read`: the conformance
    agent, a prompt that says its reply, no resume; or `echo params`, whose fields are read one by one), a client
    that can elicit, an AG-UI client's fields, an invoke field the service does not interpret; and on a request
    named by `request` (not a scenario's first, which goes as built) a step and a tool call around the reply of a
    prompt that says it (`AGENT_EVENTS`), and where the scenario sent none an AG-UI `runId` (`RUN_IDS`) or an MCP
    call's progress token (`PROGRESS`), each a value the service only gives back (`made(stem)` makes it; on an AG-UI
    run that `runs`, now and then an empty runId), and a conversation (`INVOKE_HISTORIES`) on an invoke that `runs`
    (the caller's word: the API key, the target's agent, no header of its own to refuse, not a slow scenario; on
    invoke, a service that ran the preflight's conversation).
    What the scenario set stays; nothing moves a body across a limit."""
    if not isinstance(body, dict):
        return body, {}
    out, applied = dict(body), {}
    prompt = replies.prompt_in(operation, body)
    free = replies_read and operation in ("invoke", "agui", "mcp") and (
        replies.reply_of(prompt) is not None or replies.echoes_params(prompt)
        or operation == "mcp" and body.get("method") in MCP_DESCRIBING)
    long = _drawn(request, "field-length", FIELD_LENGTHS) == "long"
    if operation == "mcp":
        rid = out.get("id")
        kind = form.get("jsonrpc-id")
        if kind in ID_WRITINGS and type(rid) is int and rid in SHAPED_IDS:
            writings = [w for w in ID_WRITINGS[kind] if w == "as-built" or inputs.is_sent(f"jsonrpc-id:{w}")]
            writing = _rotated(request, "id-writing", tuple(writings))
            out["id"] = ID_WRITINGS[kind][writing](rid)
            applied.update({"jsonrpc-id": kind} if kind == "string" else {})
            applied.update({"id-writing": writing} if writing != "as-built" else {})
        params = out.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if free and form.get("mcp-elicitation") == "can-elicit" and isinstance(meta, dict) \
                and META_VERSION in meta and meta.get(META_CAPS) == {}:
            out = _with_meta(out, META_CAPS, dict(ELICITATION))
            applied["mcp-elicitation"] = "can-elicit"
        # on either version's call (a 2025-11-25 call's `_meta` made for it: the token is MCP's since before it)
        if free and made is not None and out.get("method") == "tools/call" and isinstance(params, dict) \
                and isinstance(meta, (dict, type(None))) and "progressToken" not in (meta or {}) \
                and form.get("mcp-progress", _drawn(request, "mcp-progress", PROGRESS)) == "token":
            out = _with_meta(out, "progressToken", made("progress"))
            applied["mcp-progress"] = "token"
        if free and long and isinstance(meta, dict) and META_VERSION in meta:
            out = _with_meta(out, MCP_NOTES, LONG_TEXT)
            applied["field-length"] = "long"
    # a writing that escapes characters gets some to escape where the body is free to carry them
    escapes = form.get("json-writing") in ESCAPING_WRITINGS
    fields = "set" if escapes else form.get("agui-fields")
    if operation == "agui" and free and fields in AGUI_FIELDS and not set(AGUI_FORWARDED) & set(out):
        out.update(copy.deepcopy(AGUI_FIELDS[fields]))
        applied["agui-fields"] = fields
        if long and fields == "set":
            out["context"] = [*out["context"], {"description": "notes", "value": LONG_TEXT}]
            applied["field-length"] = "long"
    elif operation == "invoke" and free and (form.get("other-field") == "sent" or escapes) \
            and OTHER_FIELD[0] not in out:
        out[OTHER_FIELD[0]] = LONG_TEXT if long else OTHER_FIELD[1]
        applied["other-field"] = "sent"
        applied.update({"field-length": "long"} if long else {})
    # a run id on a resume too (an AG-UI client sends one with every run): the resumed run echoes it, whatever the
    # paused run's was
    # on a run of the target's agent with the API key, now and then the empty string: sent, not left out, so echoed
    # (input class run-id:empty; a refusal of it is open, and the engine then sends the run id it makes)
    empty = operation == "agui" and free and runs and made is not None and "runId" not in out \
        and form.get("run-id") != "absent" and not fuzzing.agui_issues(out) and inputs.is_sent("run-id:empty") \
        and _rotated(request, "run-id-writing", RUN_ID_WRITINGS) == ""
    if empty or operation == "agui" and (free or "resume" in out) and made is not None and "runId" not in out \
            and form.get("run-id", _drawn(request, "run-id", RUN_IDS)) == "sent":
        out["runId"] = "" if empty else made("run")
        applied.update({"run-id": "sent", **({"run-id-writing": "empty"} if empty else {})})
    if operation == "agui" and "resume" in out and "messages" not in out \
            and form.get("resume-history", _drawn(request, "resume-history", RESUME_HISTORIES)) == "conversation":
        out["messages"] = [*map(dict, _EARLIER)]
        applied["resume-history"] = "conversation"
    plain = replies_read and plain_script(prompt)
    events = _drawn(request, "agent-events", tuple(AGENT_EVENTS))
    events = "inside" if events == "many" and operation != "invoke" else events
    inside = _inside(prompt) if operation in SHOWS_AGENT_EVENTS and events == "inside" and plain else None
    events = "none" if events == "inside" and inside is None else events
    pause = _drawn(request, "pause", ("none", "after-text")) if operation == "invoke" and plain and runs and (
        out.get("stream") is True or "event-stream" in (accept or "")) and inside is None else "none"
    if inside is not None:
        head, tail, cut = inside
        out = with_prompt(operation, out, "\n".join((*head, *INSIDE, *tail)))
        applied["agent-events"] = "inside-cut" if cut else "inside"
    elif operation in SHOWS_AGENT_EVENTS and (events != "none" or pause != "none") and plain:
        before, after = AGENT_EVENTS[events]
        out = with_prompt(operation, out, "\n".join((*before, prompt, *PAUSES[pause], *after)))
        applied.update({"agent-events": events} if events != "none" else {})
        applied.update({"pause": pause} if pause != "none" else {})
    if replies_read and _fails_after_text(prompt) \
            and _rotated(request, "failure-events", FAILURE_EVENTS) == "tool-before-failure":
        lines = replies.prompt_in(operation, out).split("\n")
        out = with_prompt(operation, out, "\n".join((*lines[:-1], *BEFORE_FAILURE, lines[-1])))
        applied["failure-events"] = "tool-before-failure"
    now = replies.prompt_in(operation, out)
    head, _, last = now.rpartition("\n") if isinstance(now, str) else ("", "", "")
    if replies_read and last.startswith("fail ") and parse(now).error is None \
            and _rotated(request, "failure-message", FAILURE_MESSAGES) == "unsaid":
        out = with_prompt(operation, out, f"{head}\nfail" if "\n" in now else "fail")
        applied.update({"failure-message": "unsaid", "failure-line": last})
    history = _drawn(request, "agui-history", AGUI_HISTORIES)
    messages = out.get("messages") if operation == "agui" else None
    if history != "none" and (plain or replies_read and replies.echoes_params(prompt)) \
            and isinstance(messages, list) and len(messages) == 1 and "resume" not in out:
        before, after = AROUND_PROMPT[history]
        out = {**out, "messages": [*map(dict, before), *messages, *map(dict, after)]}
        applied["agui-history"] = history
    if operation == "invoke" and runs and replies_read and _runs_as_built(body) \
            and form.get("invoke-history", _drawn(request, "invoke-history", INVOKE_HISTORIES)) == "earlier":
        out["messages"] = [dict(m) for m in INVOKE_EARLIER]
        applied["invoke-history"] = "earlier"
    if operation == "invoke" and "stream" not in out and "event-stream" not in (accept or "").lower() \
            and form.get("stream-writing", _drawn(request, "stream-writing", STREAM_WRITINGS)) == "false":
        out["stream"] = False
        applied["stream-writing"] = "false"
    if applied and _moves_across_a_limit(body, out):
        return body, {}
    return out, applied


def _inside(prompt: str) -> tuple[list[str], list[str], bool] | None:
    """(the lines before `INSIDE`, those after, whether one `say` line was cut in two) for a prompt whose reply can
    have the events inside it; None for one that cannot (one line that is not a `say` of two characters or more)."""
    lines = prompt.split("\n")
    if len(lines) > 1:
        return lines[:1], lines[1:], False
    said = lines[0][len("say "):] if lines[0].startswith("say ") else ""
    if len(said) < 2:
        return None
    half = len(said) // 2
    return [f"say {said[:half]}"], [f"say {said[half:]}"], True


def _fails_after_text(prompt: Any) -> bool:
    """A prompt of the conformance agent's directives that says text (`say`, `chunks`, `count`), then fails, on its
    last line."""
    if not isinstance(prompt, str) or not prompt.split("\n")[-1].startswith("fail"):
        return False
    script = parse(prompt)
    words = [d.word for d in script.directives]
    return script.error is None and script.echo is None and len(words) >= 2 and words[-1] == "fail" \
        and all(w in ("say", "chunks", "count") for w in words[:-1])


def _runs_as_built(body: dict[str, Any]) -> bool:
    """An invoke body with nothing of its own to refuse (`requests.invoke_field_problems`, and no field large enough
    to be the extra data's), no `messages`, and a prompt that does not read them."""
    prompt = body.get("prompt")
    return not rq.invoke_field_problems(body) and "messages" not in body and len(prompt) <= rq.EXTRA_INSIDE \
        and not replies.reads_messages(prompt) and compact_size(body)[0] <= rq.EXTRA_INSIDE \
        and len(json.dumps(body)) <= rq.EXTRA_INSIDE


def _with_meta(body: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """An MCP request with one more member in its `params._meta`."""
    params = body["params"]
    return {**body, "params": {**params, "_meta": {**(params.get("_meta") or {}), name: value}}}


def _drawn(request: str | None, what: str, values: tuple[str, ...]) -> str:
    """One of `values` (the first, "none", as built) for the request named `request`, by its name."""
    if request is None:
        return values[0]
    return values[int.from_bytes(hashlib.sha256(f"{request}|{what}".encode()).digest()[:4], "big") % len(values)]


def _rotated(request: str | None, what: str, values: tuple[str, ...]) -> str:
    """One of `values` for the request named `request` (`seed|scenario|n`): a scenario's requests take them in
    turn from where its name says, so a few requests of a scenario already carry several (the first, as built, for
    a scenario's first request)."""
    if request is None:
        return values[0]
    stem, _, n = request.rpartition("|")
    start = int.from_bytes(hashlib.sha256(f"{stem}|{what}".encode()).digest()[:4], "big")
    return values[(start + int(n)) % len(values)]


def plain_script(prompt: Any) -> bool:
    """A prompt of directives whose reply the prompt alone says, with no timing of its own and no event of its
    own: one a step and a tool call beside it leave the same reply (echo mode, a `sleep`, a scenario's own tool
    calls and steps are left as built)."""
    if replies.scripted_reply(prompt) is None:
        return False
    directives = parse(prompt).directives
    return bool(directives) and not any(d.word in ("sleep", "tool", "step") for d in directives)


def with_prompt(operation: str, body: dict[str, Any], prompt: str) -> dict[str, Any]:
    """The body with its prompt (`replies.prompt_in`) replaced."""
    if operation == "invoke":
        return {**body, "prompt": prompt}
    if operation == "mcp":
        params = body["params"]
        return {**body, "params": {**params, "arguments": {**params["arguments"], "prompt": prompt}}}
    messages = list(body.get("messages") or [])
    last = max(i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user")
    messages[last] = {**messages[last], "content": prompt}
    return {**body, "messages": messages}


def unshaped(operation: str | None, body: Any, applied: dict[str, str]) -> Any:
    """The body as the scenario built it, before the run's agent events and AG-UI history (`shape`, as `applied`
    records them) went around its prompt, its `stream: false`, `runId`, progress token or invoke conversation was
    written and its id in another class's form: what a page shows of the request (an id the form made a string stays
    one)."""
    if not isinstance(body, dict):
        return body
    if applied.get("stream-writing") == "false":
        body = {k: v for k, v in body.items() if k != "stream"}
    if applied.get("invoke-history") == "earlier":
        body = {k: v for k, v in body.items() if k != "messages"}
    if applied.get("run-id") == "sent":
        body = {k: v for k, v in body.items() if k != "runId"}
    if applied.get("resume-history") == "conversation":
        body = {k: v for k, v in body.items() if k != "messages"}
    if applied.get("mcp-progress") == "token":
        params = dict(body["params"])
        meta = {k: v for k, v in params.pop("_meta").items() if k != "progressToken"}
        body = {**body, "params": {**params, **({"_meta": meta} if meta else {})}}    # a legacy call had none
    body = with_id_as_built(body, applied)
    if applied.get("agui-history") in AROUND_PROMPT:
        before, after = AROUND_PROMPT[applied["agui-history"]]
        body = {**body, "messages": body["messages"][len(before):len(body["messages"]) - len(after)]}
    if applied.get("failure-message") == "unsaid":
        lines = replies.prompt_in(operation, body).split("\n")
        body = with_prompt(operation, body, "\n".join((*lines[:-1], applied["failure-line"])))
    if applied.get("failure-events") == "tool-before-failure":
        lines = replies.prompt_in(operation, body).split("\n")
        body = with_prompt(operation, body, "\n".join((*lines[:-1 - len(BEFORE_FAILURE)], lines[-1])))
    events = applied.get("agent-events", "none")
    prompt = replies.prompt_in(operation, body)
    if events.startswith("inside") and isinstance(prompt, str):
        lines = prompt.split("\n")
        head, tail = lines[:1], lines[1 + len(INSIDE):]
        if events == "inside-cut":      # `say confor` and `say mance`, one line again
            head, tail = [head[0] + tail[0][len("say "):]], tail[1:]
        return with_prompt(operation, body, "\n".join((*head, *tail)))
    before, after = AGENT_EVENTS.get(events, ((), ()))
    after = after + PAUSES[applied.get("pause", "none")]
    if (before or after) and isinstance(prompt, str):
        lines = prompt.split("\n")
        body = with_prompt(operation, body, "\n".join(lines[len(before):len(lines) - len(after)]))
    return body


def with_id_as_built(doc: Any, applied: dict[str, str]) -> Any:
    """A JSON-RPC request or its answer with the id the run chose in its kind's as-built writing, where the request
    wrote it in another class's form (`applied` records it)."""
    if not applied.get("id-writing") or not isinstance(doc, dict) or "id" not in doc:
        return doc
    return {**doc, "id": _as_built_id(doc["id"], applied.get("jsonrpc-id", "integer"), applied["id-writing"])}


def _as_built_id(written: Any, kind: str, writing: str) -> Any:
    """The id the run chose, in its kind's as-built writing (`ID_WRITINGS`), from the id as written."""
    if kind == "integer":
        return -written if writing == "negative" else written - 2**LARGE_ID_BITS
    rid = written if writing == "numeric-string" else written[len(TRANSFORMABLE) + 3:] \
        if writing == "transformable" else written.split("-")[1]
    return ID_WRITINGS["string"]["as-built"](int(rid))


def _moves_across_a_limit(body: dict[str, Any], out: dict[str, Any]) -> bool:
    """The shaped body is of another size class than the body (`requests.size_class`, of the compact writing that
    `apply` keeps to its class). What a form adds is a few hundred bytes: a body this far from every bound is not
    written out at all (a size probe is a MB)."""
    lo, hi = compact_size(body)
    if all(lo - bound > SHAPING_MARGIN or bound - hi > SHAPING_MARGIN for bound in (rq.BODY_INSIDE, rq.BODY_OUTSIDE)):
        return False
    return rq.size_class(len(written(out, "compact"))) != rq.size_class(len(written(body, "compact")))


# On invoke and AG-UI, now and then the access token in place of the API key, on a run of the target's agent that names
# no session (whether a session is the credential's too is not shown): whether those protocols take a token is not
# shown (AUTH-OPEN-001), so a refusal of it is open and the engine sends the run again with the key; a run the service
# took is a run like any, every rule of a run judged on it
RUN_CREDENTIALS = ("api-key", "access-token", "api-key")


def credential(form: dict[str, str], operation: str | None, body: Any, fact: str | None, target: Any,
               request: str | None = None) -> str | None:
    """The credential fact a request carries: the access token instead of the API key where the form draws it, on an
    MCP request no session reads (the tool's description: whether a session is the credential's too is not shown),
    or on an invoke or AG-UI run of the target's agent named by `request` (`RUN_CREDENTIALS`), when the target gives
    one."""
    if fact != "api_key" or not getattr(target, "access_token", None) or not isinstance(body, dict):
        return fact
    if operation in ("invoke", "agui") and request is not None \
            and not {"sessionId", "threadId", "resume"} & set(body) \
            and _rotated(request, "run-credential", RUN_CREDENTIALS) == "access-token":
        return "access_token"
    if operation != "mcp" or form.get("mcp-credential") != "access-token":
        return fact
    return "access_token" if body.get("method") in MCP_DESCRIBING else fact


# What a request says of its connection (HTTP/1.1), by its name: ending it one in four (`Connection: close`): a pooled
# client sends most requests on a connection an earlier one opened, so a request that opens one is rare (a tenth of a
# run's were); with these, a fault that shows only on a connection's first request, or only on a reused one, meets
# both. Of the others, some say `keep-alive` as most libraries do, some nothing, as curl and Go (`wire.Transport`)
CONNECTION_ENDS = ("keep-alive", "unsaid", "unsaid", "close")


def transport(form: dict[str, str], request: str | None = None) -> Transport:
    return Transport(form["header-name-case"], form["header-order"], form["body-framing"] == "chunked",
                     connection=_drawn(request, "connection", CONNECTION_ENDS))


# -- reading a recorded exchange ------------------------------------------------------------------------------
def read(ex: Any, target: Any = None) -> dict[str, str]:
    """Every dimension's value on this exchange, read from what it recorded (`Exchange.form` holds what only the
    sender knows: name case, order, framing); a dimension its operation does not carry is left out."""
    return ex.remembered("dimensions", lambda: _read(ex, target))


def _read(ex: Any, target: Any) -> dict[str, str]:
    op = rq.op(ex)
    if op is None:
        return {}
    sent = getattr(ex, "form", None) or {}
    out: dict[str, str] = {"operation": op, "credential": rq.credential(ex),
                           "http-version": ex.http_version or "HTTP/1.1"}
    if target is not None:
        out["agent"] = rq.addressed(ex, target)
    for dim in ("header-name-case", "header-order", "body-framing", "json-writing"):
        if dim in sent:
            out[dim] = sent[dim]
    if ex.http_version == "HTTP/2":
        out["header-name-case"] = "lower"
    if rq.header(ex, "transfer-encoding"):
        out["body-framing"] = "chunked"
    elif ex.request_body:
        out.setdefault("body-framing", "content-length")
    ct = rq.header(ex, "content-type")
    if ct is not None and ct in DIMENSIONS["content-type-form"].values:
        out["content-type-form"] = ct
    auth = rq.header(ex, "authorization")
    if auth and auth.split(" ", 1)[0] in DIMENSIONS["auth-scheme-case"].values:
        out["auth-scheme-case"] = auth.split(" ", 1)[0]
    accept = rq.header(ex, "accept")
    if accept is None and op == "invoke":
        out["accept-form"] = "as-built"
    for base, forms in ACCEPT_FORMS.items():
        if accept == base:
            out["accept-form"] = "as-built"
        out.update({"accept-form": name for name, value in forms.items() if accept == value and accept != base})
    coding = rq.header(ex, "accept-encoding")
    out["accept-encoding"] = "absent" if coding is None else "identity" if coding.strip().lower() == "identity" \
        else next((name for name, value in ACCEPT_ENCODINGS.items() if value == coding), "other")
    ua = rq.header(ex, "user-agent")
    out["user-agent"] = next((k for k, v in USER_AGENTS.items() if v == ua or isinstance(v, tuple) and ua in v),
                             "other")
    out["extra-header"] = next((name for name in EXTRA_HEADERS if (added := extra_headers(name, op)) and all(
        rq.header(ex, k) == v if v else rq.header(ex, k) for k, v in added.items())), "none")
    if ex.request_body and "json-writing" not in out:
        out["json-writing"] = _writing(ex.request_body)
    fields = rq.fields(ex)
    if op in ("invoke", "agui", "mcp"):
        key = rq.session_key(ex)
        out["session-key"] = "absent" if key is None else "sent"
        out["key-length"] = "none" if key is None else rq.key_length(key)
    if op in ("invoke", "agui"):
        out["body-size"] = "inside" if rq.body_size(ex) != "outside" else "outside"
        out["messages"] = "sent" if "messages" in fields else "absent"
    if op == "invoke":
        known = {*INVOKE_INTERPRETED, getattr(target, "extra_data_field", None)}
        out["other-field"] = "sent" if set(fields) - known else "absent"
        out["invoke-mode"] = rq.invoke_mode(ex)
        if out["invoke-mode"] == "stream-field":
            out["stream-accept"] = "json" if (accept or "").strip().lower() == JSON_ACCEPT else "as-built"
        size = rq.extra_size(ex, target) if target is not None else None
        out["extra-data"] = size if size in ("inside", "outside") else "absent"
    if op == "agui":
        out["agui-input"] = "resume" if "resume" in fields else "user-message" if rq.has_user_message(fields) \
            else "neither"
        out["run-id"] = "sent" if "runId" in fields else "absent"
        passed = [fields[k] for k in AGUI_FORWARDED if k in fields]
        out["agui-fields"] = "absent" if not passed else "client-defaults" if not any(passed) else "set"
    if op == "mcp":
        method = rq.rpc_method(ex)
        if method in DIMENSIONS["mcp-method"].values:
            out["mcp-method"] = method
        version = rq.declared_version(ex)
        out["mcp-version"] = version if version in rq.SUPPORTED_VERSIONS else "unsupported"
        out["mcp-progress"] = "token" if rq.sends_progress_token(ex) else "none"
        if out["credential"] in DIMENSIONS["mcp-credential"].values:
            out["mcp-credential"] = out["credential"]
        caps = rq.meta(ex).get("io.modelcontextprotocol/clientCapabilities")
        out["mcp-elicitation"] = "can-elicit" if isinstance(caps, dict) and "elicitation" in caps else "cannot"
        why = rq.headers_match(ex) or ""
        out["mcp-headers"] = ("method-differs" if why.startswith("Mcp-Method") else "name-differs"
                              if why.startswith("Mcp-Name") else "version-differs" if why else
                              "name-absent" if method == "tools/call" and rq.header(ex, "mcp-name") is None
                              else "match")
        rid = rq.rpc(ex).get("id", None) if "id" in rq.rpc(ex) else None
        out["jsonrpc-id"] = "absent" if "id" not in rq.rpc(ex) else "string" if isinstance(rid, str) else "integer"
    return out


def _writing(raw: bytes) -> str:
    """Which of the writings the body is (`other` for a body none of them writes: a capture's, a raw one)."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return "other"
    return next((w for w in JSON_WRITINGS if written(doc, w) == raw), "other")
