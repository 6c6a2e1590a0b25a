"""Recorded things as JSON and back: exchanges, streams, facts, the target. Every string and byte string is
redacted on the way out (`redact`); what comes back is what a check reads, as the run's checks read it.

Bytes are a JSON string when they are UTF-8, else `{"base64": …}`. Facts are JSON with a few tagged values, an
object of exactly one `$`-key: `{"$tuple": […]}`, `{"$set": […]}`, `{"$bytes": …}`, `{"$float": "nan"}`,
`{"$dict": [[key, value], …]}` (a mapping whose keys are not all strings, or one with a `$`-key), and
`{"$sent": …}` (a generated case as sent and answered, `conformance.vocab.fuzzing.Sent`).
"""
from __future__ import annotations

import base64
import dataclasses
import datetime
import math
import re
from typing import Any, Callable

import httpx

from conformance.profile import Profile, Timeouts
from conformance.target import SECRET_FACTS, Target
from conformance.wire.exchange import SENSITIVE_HEADERS, Exchange, decoded_headers
from conformance.wire.redact import MASK, Redactor
from conformance.wire.sse import SSEComment, SSEEvent, StreamRecord, parse_sse

Redact = Callable[[str], str]
#: the spec's credential forms: `<svc>_live_<opaque>` and `<svc>_oat_<opaque>`; the opaque part is the secret
CREDENTIAL_FORM = re.compile(r"^(.+?_(?:live|oat)_).", re.S)


class RecordingError(ValueError):
    """A recording that cannot be read back: one line saying where."""


# -- bytes and headers -----------------------------------------------------------------------------------
def encode_bytes(raw: bytes | None, redact: Redact) -> str | dict[str, str] | None:
    if raw is None:
        return None
    try:
        return redact(raw.decode("utf-8"))
    except UnicodeDecodeError:   # redacted all the same: undecodable bytes pass through unchanged
        text = redact(raw.decode("utf-8", "surrogateescape"))
        return {"base64": base64.b64encode(text.encode("utf-8", "surrogateescape")).decode("ascii")}


def decode_bytes(value: str | dict[str, str] | None) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    return base64.b64decode(value["base64"], validate=True)


def encode_headers(headers: httpx.Headers | None, redact: Redact) -> list[list[str]] | None:
    """The headers as a check reads them (`multi_items`), a credential's value masked as in every transcript."""
    if headers is None:
        return None
    return [[name, MASK if name.lower() in SENSITIVE_HEADERS else redact(value)]
            for name, value in headers.multi_items()]


def decode_headers(pairs: list[list[str]] | None) -> httpx.Headers | None:
    """httpx decodes header bytes as ASCII, else UTF-8: bytes chosen so, they read back as the same strings."""
    if pairs is None:
        return None
    encoding = "ascii" if all(n.isascii() and v.isascii() for n, v in pairs) else "utf-8"
    return httpx.Headers([(n.encode(encoding), v.encode(encoding)) for n, v in pairs])


#: the version of an answered exchange in a recording made before the suite spoke HTTP/2 (it spoke HTTP/1.1 only)
_BEFORE_HTTP2 = "HTTP/1.1"


# -- exchanges and streams ---------------------------------------------------------------------------------
def encode_exchange(ex: Exchange, redact: Redact) -> dict[str, Any]:
    return {
        "label": ex.label, "method": ex.method, "url": redact(ex.url),
        "request_headers": {k: redact(v) for k, v in ex.request_headers.items()},
        "request_body": encode_bytes(ex.request_body, redact), "credential": ex.credential,
        "status": ex.status, "http_version": ex.http_version,
        "headers": encode_headers(ex.headers, redact), "body": encode_bytes(ex.body, redact),
        "stream": encode_stream(ex.stream, redact) if ex.stream is not None else None,
        "started_at": ex.started_at, "t_headers": ex.t_headers, "t_end": ex.t_end,
        "error": redact(ex.error) if ex.error else ex.error,
        "waited_429": list(ex.waited_429), "waited_pace": ex.waited_pace, "rate_limited": ex.rate_limited,
        "retried_transport": redact(ex.retried_transport) if ex.retried_transport else ex.retried_transport,
        "form": dict(ex.form), "length_required": ex.length_required,
    }


def decode_exchange(d: dict[str, Any], redactor: Redactor) -> Exchange:
    return Exchange(
        label=d["label"], method=d["method"], url=d["url"], request_headers=dict(d["request_headers"]),
        request_body=decode_bytes(d["request_body"]), status=d["status"], headers=decode_headers(d["headers"]),
        body=decode_bytes(d["body"]) or b"", stream=decode_stream(d["stream"], redactor) if d["stream"] else None,
        t_headers=d["t_headers"], t_end=d["t_end"], error=d["error"], waited_429=list(d["waited_429"]),
        started_at=d["started_at"], rate_limited=d["rate_limited"], credential=d["credential"],
        retried_transport=d["retried_transport"], waited_pace=d["waited_pace"], _redactor=redactor,
        http_version=d.get("http_version", _BEFORE_HTTP2 if d["started_at"] is not None else None),
        form=dict(d.get("form") or {}), length_required=d.get("length_required"))


def encode_stream(st: StreamRecord, redact: Redact) -> dict[str, Any]:
    return {"items": [_encode_item(item, redact) for item in st.items], "line_endings": dict(st.line_endings),
            "bom": st.bom, "end": redact(st.end), "pending": encode_bytes(st.pending, redact),
            "findings": [redact(f) for f in st.findings], "total_bytes": st.total_bytes, "t_end": st.t_end,
            "items_dropped": st.items_dropped}


#: what a frame's block says, which the strict recorder reads again from its raw bytes (`frame_from_raw`)
PARSED = ("event", "data", "data_lines", "id", "retry", "fields", "dispatched")


def _encode_item(item: SSEEvent | SSEComment, redact: Redact) -> dict[str, Any]:
    if isinstance(item, SSEComment):
        return {"comment": redact(item.text), "raw": encode_bytes(item.raw, redact), "t": item.t}
    out = {"raw": encode_bytes(item.raw, redact), "t": item.t, "index": item.index,
           "last_event_id": redact(item.last_event_id)}
    again = _parsed(item.raw)
    if again is not None and all(getattr(again, k) == getattr(item, k) for k in PARSED):
        return out     # the fields are read again from the raw bytes: the recording holds the frame once
    return {**out, "event": redact(item.event) if item.event else item.event, "data": redact(item.data),
            "data_lines": item.data_lines, "id": redact(item.id) if item.id else item.id, "retry": item.retry,
            "fields": [[redact(n), redact(v)] for n, v in item.fields], "dispatched": item.dispatched}


def _parsed(raw: bytes) -> SSEEvent | None:
    """The one frame the strict recorder reads from a block's bytes alone, or None."""
    events = parse_sse(raw).events
    return events[0] if len(events) == 1 else None


def decode_stream(d: dict[str, Any], redactor: Redactor) -> StreamRecord:
    items: list[SSEEvent | SSEComment] = []
    for i in d["items"]:
        if "comment" in i:
            items.append(SSEComment(text=i["comment"], raw=decode_bytes(i["raw"]), t=i["t"]))
        else:
            items.append(_decode_frame(i, redactor))
    return StreamRecord(items=items, line_endings=dict(d["line_endings"]), bom=d["bom"], end=d["end"],
                        pending=decode_bytes(d["pending"]) or b"", findings=list(d["findings"]),
                        total_bytes=d["total_bytes"], t_end=d["t_end"], items_dropped=d["items_dropped"])


def _decode_frame(i: dict[str, Any], redactor: Redactor) -> SSEEvent:
    raw = decode_bytes(i["raw"])
    if "fields" in i:
        parsed = {k: i[k] for k in PARSED}
        parsed["fields"] = [(n, v) for n, v in i["fields"]]
    else:
        again = _parsed(raw)
        if again is None:
            raise RecordingError(f"frame {i['index']}: its raw bytes hold no frame and it names no fields")
        parsed = {k: getattr(again, k) for k in PARSED}
    return SSEEvent(**parsed, raw=raw, t=i["t"], index=i["index"], last_event_id=i["last_event_id"],
                    _redact=redactor.redact)


# -- facts -----------------------------------------------------------------------------------------------
def encode_value(value: Any, redact: Redact) -> Any:
    """A fact as JSON (tagged where JSON has no such value); a type the recording cannot hold is a TypeError."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": encode_bytes(bytes(value), redact)}
    if isinstance(value, list):
        return [encode_value(v, redact) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(v, redact) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted((encode_value(v, redact) for v in value), key=repr)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {redact(k): encode_value(v, redact) for k, v in value.items()}
        return {"$dict": [[encode_value(k, redact), encode_value(v, redact)] for k, v in value.items()]}
    from conformance.vocab.fuzzing import Sent
    if isinstance(value, Sent):
        return {"$sent": _encode_sent(value, redact)}
    raise TypeError(f"a {type(value).__module__}.{type(value).__qualname__} cannot be recorded")


def decode_value(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = next(iter(value), None) if len(value) == 1 else None
    if tag is None or not tag.startswith("$"):
        return {k: decode_value(v) for k, v in value.items()}
    inner = value[tag]
    if tag == "$tuple":
        return tuple(decode_value(v) for v in inner)
    if tag == "$set":
        return {decode_value(v) for v in inner}
    if tag == "$bytes":
        return decode_bytes(inner)
    if tag == "$float":
        return float(inner)
    if tag == "$dict":
        return {_hashable(decode_value(k)): decode_value(v) for k, v in inner}
    if tag == "$sent":
        return _decode_sent(inner)
    raise RecordingError(f"unknown tagged value {tag!r}")


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


# -- a generated case as sent and answered (the schemathesis scenarios' facts) -------------------------------
def _encode_sent(sent: Any, redact: Redact) -> dict[str, Any]:
    from conformance.vocab.fuzzing import NO_BODY

    p, case = sent.probe, sent.probe.case
    r = sent.response
    return {
        "op": p.op, "kind": p.kind, "defects": encode_value(p.defects, redact), "body": encode_value(p.body, redact),
        "other_broken": encode_value(set(p.other_broken), redact),
        "case": {"path_parameters": encode_value(dict(case.path_parameters or {}), redact),
                 "headers": encode_value(dict(case.headers or {}), redact),
                 "cookies": encode_value(dict(case.cookies or {}), redact),
                 "query": encode_value(dict(case.query or {}), redact),
                 **({} if case.body is NO_BODY else {"body": encode_value(case.body, redact)}),
                 "media_type": case.media_type},
        "response": None if r is None else {
            "status": r.status_code, "headers": encode_headers(r.headers, redact),
            "content": encode_bytes(r.content, redact), "elapsed": r.elapsed.total_seconds(),
            "request": {"method": r.request.method, "url": redact(str(r.request.url)),
                        "headers": encode_headers(r.request.headers, redact),
                        "content": encode_bytes(r.request.content, redact)}},
        "error": redact(sent.error) if sent.error else sent.error,
        "record": encode_value(sent.record, redact),
    }


def _decode_sent(d: dict[str, Any]) -> Any:
    """The case as the request it was, the answer as the httpx.Response the checks read."""
    from conformance.vocab.fuzzing import NO_BODY, Probe, Request, Sent

    c = d["case"]
    case = Request(d["op"], decode_value(c["path_parameters"]), decode_value(c["headers"]), decode_value(c["query"]),
                   decode_value(c["cookies"]), decode_value(c["body"]) if "body" in c else NO_BODY, c["media_type"])
    probe = Probe(d["op"], d["kind"], case, decode_value(d["defects"]), decode_value(d["body"]),
                  other_broken=decode_value(d["other_broken"]))
    response = None
    if d["response"] is not None:
        r = d["response"]
        q = r["request"]
        request = httpx.Request(q["method"], q["url"], headers=decode_headers(q["headers"]),
                                content=decode_bytes(q["content"]) or b"")
        headers = decode_headers(r["headers"]) or httpx.Headers()
        response = httpx.Response(r["status"], headers=decoded_headers(headers),
                                  content=decode_bytes(r["content"]) or b"", request=request)
        response.elapsed = datetime.timedelta(seconds=r["elapsed"])
    return Sent(probe, response, d["error"], decode_value(d["record"]))


# -- the target ------------------------------------------------------------------------------------------
def credential_placeholder(value: str | None) -> str | None:
    """A credential as the recording keeps it: its form (`<svc>_live_`, `<svc>_oat_`: the spec shows them, checks
    judge them) with the opaque part, the secret, masked; any other credential wholly masked."""
    if not value:
        return value
    form = CREDENTIAL_FORM.match(value)
    return (form.group(1) if form else "") + MASK


def encode_target(target: Target, redact: Redact) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Target):
        value = getattr(target, f.name)
        if f.name in SECRET_FACTS:
            value = credential_placeholder(value)
        elif f.name == "profile":
            value = {"agent": value.agent, "scenarios": encode_value(value.scenarios, redact),
                     "extra_data_field": value.extra_data_field, "timeouts": dataclasses.asdict(value.timeouts),
                     "source": value.source, "resume": encode_value(value.resume, redact)}
        elif isinstance(value, str):
            value = redact(value)
        out[f.name] = value
    return out


def decode_target(d: dict[str, Any]) -> Target:
    p = d["profile"]
    profile = Profile(agent=p["agent"], scenarios=decode_value(p["scenarios"]), extra_data_field=p["extra_data_field"],
                      timeouts=Timeouts(**p["timeouts"]), source=p["source"], resume=decode_value(p["resume"]))
    known = {f.name for f in dataclasses.fields(Target)}
    return Target(**{k: v for k, v in d.items() if k in known and k != "profile"}, profile=profile)
