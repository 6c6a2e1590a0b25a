"""A failure proves itself: re-send the exchange a failed MUST names first, and judge the new answer by the same rule.

For each failed MUST of a report: its first evidence must be an exchange the check named as breaking the rule.
That request is sent again to the same server (the credential it carried put back in), the fresh exchange takes
the old one's place in its recording, and the checks that failed the requirement are judged again on it
(`judging.assess`, the run's own judging). The failure is reproduced when a check fails again naming that step.

A request that carries a value an earlier answer of its scenario generated (a session key the server made) is
re-sent as its curl lines would be followed: the earlier request first, then every later one that carried the value
(its history), then this one, each with the fresh value.
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

from conformance import registry
from conformance.engine import PREFLIGHT, Recording, ScenarioFailed
from conformance.judging import assess
from conformance.recording import Replay
from conformance.report import FAIL_AS
from conformance.target import Target
from conformance.vocab.constants import BASIC_USER
from conformance.vocab import requests as rq
from conformance.vocab.readers import request_json, stream_events
from conformance.wire.exchange import Exchange
from conformance.wire.http import Client, Transport
from conformance.wire import near_miss
from conformance.wire.redact import MASK

# headers the client computes for the request it sends, as curl would (reporting.repro leaves them out too)
_COMPUTED = {"host", "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding"}
_SHORTEST_KEY = 6     # a generated value this long or longer is worth threading (not "1", "ok", "text")
_LIMITED_BATCH, _LIMITED_MAX = 10, 600   # a rate-limited answer is re-sent in batches until the server limits again


@dataclass
class Resent:
    requirement: str
    label: str
    outcome: str        # reproduced | not reproduced | not named | not re-sendable
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "reproduced"


class _WithFresh:
    """The run's recordings, with some exchanges of one scenario replaced by their re-sent twins."""

    def __init__(self, source: Replay, scenario: str, fresh: dict[int, Exchange]):
        self.source, self.scenario, self.fresh = source, scenario, fresh
        self.preflight_error, self.redactor = source.preflight_error, source.redactor
        self.preflight = self._patched(source.preflight) if scenario == PREFLIGHT else source.preflight

    def _patched(self, got: Recording) -> Recording:
        return Recording(got.scenario, got.target, [self.fresh.get(id(ex), ex) for ex in got.exchanges], got.facts)

    @property
    def results(self) -> dict[str, Any]:
        return {}

    def scenario_names(self) -> list[str]:
        return self.source.scenario_names()

    def recording(self, name: str) -> Recording | BaseException:
        got = self.source.recording(name)
        return self._patched(got) if name == self.scenario and isinstance(got, Recording) else got


def _secret(ex: Exchange, target: Target) -> str:
    """The credential the request carried: its fact's value, or the near miss of it the suite made
    (`wire.near_miss`), made again from the secret."""
    credential = ex.credential or ""
    if credential.startswith(near_miss.PREFIX):
        recipe = credential.removeprefix(near_miss.PREFIX)
        secret = getattr(target, near_miss.fact_of(recipe), None)
        return near_miss.remade(recipe, secret) if secret else ""
    return (getattr(target, credential, None) or "") if credential else ""


def _headers(ex: Exchange, target: Target) -> dict[str, str | None] | None:
    """The request's headers with the credential it carried put back; None when a masked value is unknown."""
    secret = _secret(ex, target) or None
    out: dict[str, str | None] = {}
    for name, value in ex.request_headers.items():
        if name.lower() == "transfer-encoding":
            continue        # the client frames the body as the exchange's form says (`_send`)
        if name.lower() == "user-agent" and ex.form.get("user-agent") not in (None, "suite"):
            out[name] = value
            continue
        if name.lower() in _COMPUTED:
            continue
        if MASK in value:
            if not secret:
                return None
            scheme = value.split(" ", 1)[0] if " " in value else ""
            if scheme.lower() == "basic":      # as reporting.repro's `curl -u BASIC_USER:$credential`
                secret = base64.b64encode(f"{BASIC_USER}:{secret}".encode()).decode()
            value = f"{scheme} {secret}" if scheme else secret
        out[name] = value
    if not any(name.lower() == "accept" for name in out):
        out["accept"] = None      # sent without one: the client would add its default
    if ex.form.get("user-agent") == "absent":
        out["user-agent"] = None
    return out


def _leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """(path, string) of every string of a JSON value."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _answered(ex: Exchange) -> dict[tuple, str]:
    """The strings of an answer by path: its JSON body, or the JSON events of its stream."""
    if ex.stream is not None:
        return dict(_leaves(stream_events(ex)))
    try:
        return dict(_leaves(json.loads(ex.body)))
    except ValueError:
        return {}


def _session_key(ex: Exchange) -> str | None:
    """The session key a request sent: invoke `sessionId`, AG-UI `threadId`, MCP `arguments.session_id`."""
    op = rq.op(ex)
    key = rq.fields(ex).get("sessionId" if op == "invoke" else "threadId") if op in ("invoke", "agui") else \
        rq.tool_arguments(ex).get("session_id") if op == "mcp" else None
    return key if isinstance(key, str) else None


def _prerequisites(rec: Recording, target: Exchange) -> list[Exchange]:
    """The earlier exchanges of `target`'s scenario whose answer generated a value `target`'s request carries, and
    those that carried such a value after it: the history on a generated key, which a fault may need (a third call);
    and those that sent the session key `target` sent (the history on a key the client chose)."""
    carried = {v for _, v in _leaves(request_json(target)) if len(v) >= _SHORTEST_KEY}
    key = _session_key(target)
    before = rec.exchanges[:next(i for i, ex in enumerate(rec.exchanges) if ex is target)]
    generated: set[str] = set()
    out = []
    for ex in before:
        sent = {v for _, v in _leaves(request_json(ex))}
        made = carried & (set(_answered(ex).values()) - sent)
        if made or generated & sent or (key is not None and key not in generated and _session_key(ex) == key):
            out.append(ex)
        generated |= made
    return out


def _renamed(rec: Recording, target: Exchange, tag: str) -> dict[str, str]:
    """A key the client chose for `target`'s history, renamed for the re-sent one: the key's instance already holds
    the first sending's runs. `~again` goes after a key short of 256 characters; a longer one (a key at a length
    edge, or one carrying many characters of a kind) keeps its length: the run's tag in it is written backwards."""
    key = _session_key(target)
    chosen = key is not None and any(_session_key(ex) == key for ex in _prerequisites(rec, target))
    if not chosen:
        return {}
    if len(key) <= 200:
        return {key: f"{key}~again"}
    return {key: key.replace(tag, tag[::-1])} if tag in key and tag != tag[::-1] else {}


async def _send(ex: Exchange, target: Target, headers: dict[str, str | None], values: dict[str, str]) -> Exchange:
    """Sends `ex`'s request again: a credential masked in its query string or body put back, as its curl line
    reads it from the environment, and each generated value an earlier answer gave replaced by the fresh one."""
    secret = _secret(ex, target)
    body = ex.request_body.replace(MASK.encode(), secret.encode()) if ex.request_body else ex.request_body
    for (old, new), escaped, slash in itertools.product(values.items(), (True, False), (False, True)):
        def text(value: str) -> bytes:     # as JSON_WRITINGS write strings
            written = json.dumps(value, ensure_ascii=escaped)
            return (written.replace("/", "\\/") if slash else written).encode()
        body = body.replace(text(old), text(new)) if body else body
    client = Client(target.base_url, ca_bundle=target.ca_bundle, insecure=target.insecure, secrets=target.secrets,
                    http2=ex.http_version == "HTTP/2")      # as its curl line: --http2 or --http1.1
    try:
        parts = urlsplit(ex.url.replace(MASK, secret))
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        form = ex.form
        transport = Transport(form.get("header-name-case", "lower"), form.get("header-order", "as-built"),
                              form.get("body-framing") == "chunked")      # as its curl line sends it
        twin = await client.send(ex.method, path, headers=headers, content=body, label=ex.label,
                                 sse=ex.stream is not None, retry_429=False, transport=transport)
        twin.credential, twin.form = ex.credential, ex.form    # the same credential and form as the request re-sent
        return twin
    finally:
        await client.aclose()


async def _send_until_limited(ex: Exchange, target: Target, headers: dict[str, str | None],
                               values: dict[str, str]) -> Exchange:
    """A request the server answered 429 is re-sent as its curl line says: again, until the server limits it."""
    twin = await _send(ex, target, headers, values)
    for _ in range(_LIMITED_MAX // _LIMITED_BATCH):
        if twin.status == 429:
            break
        got = await asyncio.gather(*(_send(ex, target, headers, values) for _ in range(_LIMITED_BATCH)))
        twin = next((t for t in got if t.status == 429), got[-1])
    return twin


async def _send_with_prerequisites(rec: Recording, old: Exchange, target: Target) -> dict[int, Exchange] | None:
    """The re-sent exchanges (id of the recorded one -> its twin), `old` last; None when one cannot be re-sent."""
    fresh: dict[int, Exchange] = {}
    values: dict[str, str] = _renamed(rec, old, target.run_tag)
    for ex in [*_prerequisites(rec, old), old]:
        headers = _headers(ex, target)
        if headers is None:
            return None
        twin = await (_send_until_limited if ex.status == 429 else _send)(ex, target, headers, values)
        before, after = _answered(ex), _answered(twin)
        values.update({before[path]: after[path] for path in before.keys() & after.keys()
                       if before[path] != after[path] and len(before[path]) >= _SHORTEST_KEY})
        fresh[id(ex)] = twin
    return fresh


def resend_failures(report: dict[str, Any], document: dict[str, Any], target: Target,
                    levels: tuple[str, ...] = ("MUST",)) -> list[Resent]:
    """Every failed MUST of `report` (or failure at `levels`: a SHOULD's warning), its first named exchange re-sent
    to `target` and judged again."""
    source = Replay(document)
    out = []
    for row in report["requirements"]:
        if row["level"] not in levels or row["status"] != FAIL_AS[row["level"]]:
            continue
        first = (row.get("evidence") or [{}])[0]
        if not first.get("broke"):
            out.append(Resent(row["id"], str(first.get("label")), "not named",
                              "its first evidence is not an exchange a check named"))
            continue
        got = source.preflight if first["scenario"] == PREFLIGHT else source.recording(first["scenario"])
        rec = got.recording if isinstance(got, ScenarioFailed) else got
        old = next((ex for ex in getattr(rec, "exchanges", ()) if ex.label == first["label"]), None)
        fresh = asyncio.run(_send_with_prerequisites(rec, old, target)) if old is not None else None
        if fresh is None:
            out.append(Resent(row["id"], first["label"], "not re-sendable",
                              "not in the recording" if old is None else "its credential is unknown"))
            continue
        patched = _WithFresh(source, first["scenario"], fresh)
        failing = [registry.CHECKS[c["id"]] for c in report["checks"]
                   if row["id"] in c["requirements"] and c["status"] == "failed"]
        again = [assess(patched, c) for c in failing]
        # a blocked check whose root did not fail on that exchange is a failure of the run (report.resolve_blocked)
        hit = next((r for r in again if r.status in ("failed", "blocked")
                    and (first["scenario"], first["label"]) in r.broke), None)
        out.append(Resent(row["id"], first["label"], "reproduced" if hit else "not reproduced",
                          (hit or (again[0] if again else None)).message[:300] if (hit or again) else ""))
    return out
