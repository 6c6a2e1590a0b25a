"""Judge the traffic people already have: a capture (HAR 1.2, as a browser's developer tools, Playwright's
`record_har_path` and mitmproxy's `hardump` write it) read into exchanges, and every exchange that addresses the
service judged by every rule that reads an exchange of its kind (`conformance.exchange_rules`).

What a capture cannot show is not assessed, with the reason: a rule a scenario of the suite proves (what the agent
was asked, a count across calls, the ping over a silence, timing between stream chunks) needs the suite's own run.
A capture is untrusted input: a file over `MAX_FILE` is refused with a clear error before it is read, a body over
`MAX_BODY` is cut (the exchange it belongs to is judged only where the cut leaves nothing to read), and anything
malformed is an error naming the entry, never a traceback.

Secrets: every `Authorization`, `Cookie` and `Set-Cookie` value of the capture, and each credential-shaped token in
its bodies, is a secret of the report (redacted like a run's own). Which credential a request carried is read from
the capture itself: a key of the spec's API-key form (`<svc>_live_…`) that some answer accepted is the API key, one of
the token form (`<svc>_oat_…`) so accepted the access token; one never accepted is unknown.
"""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from conformance.engine import PREFLIGHT, Recording
from conformance.target import Target
from conformance.vocab.traffic import operation_of
from conformance.wire.exchange import Exchange
from conformance.wire.redact import Redactor
from conformance.wire.sse import parse_sse

MAX_FILE = 256 * 2**20          # bytes of a capture read at all
MAX_BODY = 8 * 2**20            # bytes of one body kept (as a run's Limits.max_body)
MAX_ENTRIES = 20_000
SCENARIO = "capture"
CREDENTIAL = re.compile(r"\b[A-Za-z0-9]+_(?:live|oat)_[A-Za-z0-9._~+/=-]{4,}")


class CaptureError(ValueError):
    """The capture cannot be read: what is wrong with it, in one line."""


@dataclass
class Capture:
    exchanges: list[Exchange]
    entries: int                                  # entries in the file
    skipped: list[str] = field(default_factory=list)   # entries left out, and why
    secrets: set[str] = field(default_factory=set)


def read(path: str | Path) -> dict[str, Any]:
    """The capture's HAR document (a dict with `log.entries`); CaptureError when it is none."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CaptureError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if size > MAX_FILE:
        raise CaptureError(f"{path}: {size / 2**20:,.0f} MB is over the {MAX_FILE // 2**20} MB a capture may be: "
                           f"capture less (one page, one session) or split it")
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise CaptureError(f"{path}: not UTF-8 text (byte {exc.start}); a HAR file is JSON") from None
    except ValueError as exc:
        raise CaptureError(f"{path}: not a HAR file: the JSON breaks at line {getattr(exc, 'lineno', '?')}, "
                           f"column {getattr(exc, 'colno', '?')} ({getattr(exc, 'msg', exc)}); a file cut short "
                           f"while it was saved ends like this") from None
    entries = doc.get("log", {}).get("entries") if isinstance(doc, dict) and isinstance(doc.get("log"), dict) else None
    if not isinstance(entries, list):
        raise CaptureError(f"{path}: not a HAR file: no `log.entries` list (HAR 1.2, as browsers and mitmproxy's "
                           f"hardump write it)")
    return doc


def _text(content: Any, limit: int = MAX_BODY) -> bytes:
    """A HAR `postData`/`content` as bytes (base64 when it says so), cut at `limit`."""
    if not isinstance(content, dict):
        return b""
    text = content.get("text")
    if not isinstance(text, str):
        return b""
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text[: limit * 4 // 3 + 4], validate=False)[:limit]
        except (ValueError, TypeError):
            return b""
    return text.encode("utf-8", "surrogatepass")[:limit]


def _headers(items: Any) -> list[tuple[str, str]]:
    return [(str(h.get("name", "")), str(h.get("value", ""))) for h in items or [] if isinstance(h, dict)
            and h.get("name")] if isinstance(items, list) else []


def _version(value: Any) -> str:
    v = str(value or "").upper()
    return "HTTP/2" if v in ("HTTP/2", "HTTP/2.0", "H2") else "HTTP/3" if v.startswith(("HTTP/3", "H3")) else \
        "HTTP/1.1"


def exchanges(doc: dict[str, Any], only: str | None = None) -> Capture:
    """The entries of the capture that address the service's four operations (or `only` base URL), as exchanges."""
    entries = doc["log"]["entries"]
    out: list[Exchange] = []
    skipped: list[str] = []
    secrets: set[str] = set()
    for n, entry in enumerate(entries[:MAX_ENTRIES], 1):
        label = f"entry-{n}"
        try:
            request, response = entry["request"], entry["response"]
            method, url = str(request["method"]).upper(), str(request["url"])
        except (KeyError, TypeError):
            skipped.append(f"{label}: no request or response")
            continue
        if only and not url.startswith(only.rstrip("/")):
            continue
        if operation_of(urlsplit(url).path) is None:
            continue
        req_headers = _headers(request.get("headers"))
        resp_headers = _headers(response.get("headers"))
        for name, value in req_headers + resp_headers:
            if name.lower() in ("authorization", "cookie", "set-cookie", "proxy-authorization"):
                secret = value.split(" ", 1)[-1].strip() if name.lower().endswith("authorization") else value
                if len(secret) >= 8:
                    secrets.add(secret)
        body = _text(request.get("postData"))
        secrets.update(CREDENTIAL.findall(body.decode("utf-8", "replace")))
        status = response.get("status")
        status = status if isinstance(status, int) and 100 <= status <= 599 else None
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        answer = _text(content)
        mime = str(content.get("mimeType") or dict((k.lower(), v) for k, v in resp_headers).get("content-type", ""))
        stream = parse_sse(answer) if "text/event-stream" in mime.lower() and status == 200 else None
        error = None
        if status is None:
            error = f"the capture holds no answer ({response.get('_error') or 'status 0: aborted or blocked'})"
        elif len(answer) >= MAX_BODY:
            error = f"the body was cut at {MAX_BODY // 2**20} MB"
        ex = Exchange(label=label, method=method, url=url, request_headers=dict(req_headers),
                      request_body=body or None, status=status,
                      headers=httpx.Headers(resp_headers) if status is not None else None, body=answer, stream=stream,
                      t_headers=None, t_end=None, error=error, http_version=_version(response.get("httpVersion")))
        out.append(ex)
    if len(entries) > MAX_ENTRIES:
        skipped.append(f"entries beyond the first {MAX_ENTRIES:,} ({len(entries) - MAX_ENTRIES:,}) were not read")
    _credentials(out)
    return Capture(out, len(entries), skipped, secrets)


def _bearer(ex: Exchange) -> str | None:
    value = next((v for k, v in ex.request_headers.items() if k.lower() == "authorization"), None)
    if not value or not value.lower().startswith("bearer "):
        return None
    return value.split(" ", 1)[1].strip() or None


def _credentials(out: list[Exchange]) -> None:
    """Which credential each request carried, read from the capture: an API key or an access token of the spec's
    forms that some answer accepted (2xx)."""
    accepted = {c for ex in out if (c := _bearer(ex)) and ex.status is not None and 200 <= ex.status < 300}
    for ex in out:
        cred = _bearer(ex)
        if cred in accepted:
            ex.credential = "access_token" if "_oat_" in cred else "api_key"


def target_of(cap: Capture, base_url: str | None, agent_id: str | None) -> Target:
    """The target the capture shows: the base URL and agent given, or the ones its accepted calls address."""
    served = [ex for ex in cap.exchanges if ex.status is not None and 200 <= ex.status < 300]
    if base_url is None:
        hosts = sorted({f"{urlsplit(ex.url).scheme}://{urlsplit(ex.url).netloc}" for ex in served or cap.exchanges})
        base_url = hosts[0] if hosts else "https://unknown.invalid"
    agents = [p.split("/agents/", 1)[1].split("/", 1)[0] for ex in served
              if "/agents/" in (p := urlsplit(ex.url).path)]
    if agent_id is None:
        agent_id = max(set(agents), key=agents.count) if agents else None
    return CapturedTarget(base_url=base_url, agent_id=agent_id, served_agents=frozenset(agents))


@dataclass(frozen=True)
class CapturedTarget(Target):
    """The target of a capture: the agents some answer of it served exist (another agent is never `unknown`)."""
    served_agents: frozenset[str] = frozenset()


@dataclass
class CaptureSource:
    """A capture as judging reads recordings (`judging.RecordingSource`): one pseudo-scenario holding its
    exchanges, no preflight."""
    target: Target
    capture: Capture
    redactor: Redactor
    preflight_error: str | None = None
    results: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.preflight = Recording(PREFLIGHT, self.target)
        self.recorded = Recording(SCENARIO, self.target, list(self.capture.exchanges))
        for ex in self.recorded.exchanges:
            ex._redactor = self.redactor

    def scenario_names(self) -> list[str]:
        return [SCENARIO]

    def recording(self, name: str) -> Any:
        from conformance.outcomes import NotAssessed
        if name == SCENARIO:
            return self.recorded
        return NotAssessed("a capture holds no scenario of the suite: its rules need the suite's own run")


def judge(path: str | Path, *, base_url: str | None = None, agent_id: str | None = None) -> dict[str, Any]:
    """The report of a capture: every rule over every exchange judged on it, the verdict on captured traffic only."""
    from conformance import api, judging, registry, report
    from conformance.baseline import Baseline

    doc = read(path)
    cap = exchanges(doc, base_url)
    if not cap.exchanges:
        raise CaptureError(f"{path}: none of its {cap.entries:,} entries addresses the service's operations "
                           f"(/v1/agents/{{agentId}}/invoke, /agui, /mcp or the sign-in metadata)"
                           + (f" under {base_url}" if base_url else ""))
    target = target_of(cap, base_url, agent_id)
    source = CaptureSource(target, cap, Redactor(cap.secrets))
    registry.load_all()
    checks = [c for c in registry.CHECKS.values() if c.every]
    results = [judging.assess(source, c) for c in checks]
    not_run = {c.id: "not judged on a capture: it needs the suite's own scenario (what the agent was asked, a "
                     "history of calls, timing)" for c in registry.CHECKS.values() if not c.every}
    rep = report.build(target={**target.public(), "embedded": False}, results=results,
                       coverage=api.coverage_of(None), not_run=not_run, baseline=Baseline(),
                       stats={"requests": 0, "exchanges": len(cap.exchanges)}, error=None,
                       options={"capture": Path(path).name, "seed": None})
    rep["capture"] = {"file": Path(path).name, "format": "HAR 1.2", "entries": cap.entries,
                      "exchanges": len(cap.exchanges), "skipped": cap.skipped,
                      "judged_requirements": sorted({rid for r in results if r.status in ("passed", "failed", "info")
                                                     for rid in r.requirements}),
                      "stands_on": "captured traffic only: the rules that read one exchange (or a history on one "
                                   "key), judged on every exchange of the capture that addresses the service; "
                                   "every other requirement is not assessed"}
    rep["verdict_reason"] = f"{rep['verdict_reason']} (judged on captured traffic only: {len(cap.exchanges)} " \
                            f"exchange(s) of {Path(path).name})"
    return rep, source.redactor.redact
