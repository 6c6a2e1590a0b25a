"""A HAR 1.2 capture made of a run's recording, as a browser or mitmproxy would have saved the same traffic (the
credentials put back in, as a capture holds them)."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from conformance.recording import Replay
from conformance.wire.redact import MASK


def entry(ex: Any, secrets: dict[str, str]) -> dict[str, Any]:
    secret = secrets.get(ex.credential or "", "")
    headers = [{"name": k, "value": v.replace(MASK, secret)} for k, v in ex.request_headers.items()]
    body = (ex.request_body or b"").replace(MASK.encode(), secret.encode())
    out = {"startedDateTime": "2026-12-04T10:00:00.000Z", "time": 12,
           "request": {"method": ex.method, "url": ex.url, "httpVersion": ex.http_version or "HTTP/1.1",
                       "headers": headers, "queryString": [], "cookies": [], "headersSize": -1,
                       "bodySize": len(body)},
           "response": {"status": ex.status or 0, "statusText": "", "httpVersion": ex.http_version or "HTTP/1.1",
                        "headers": [{"name": k, "value": v} for k, v in (ex.headers.multi_items() if ex.headers
                                                                          else [])],
                        "cookies": [], "redirectURL": "", "headersSize": -1, "bodySize": len(ex.body),
                        "content": {"size": len(ex.body), "mimeType": (ex.headers or {}).get("content-type", "")}},
           "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 2}}
    if body:
        out["request"]["postData"] = {"mimeType": "application/json", "text": body.decode("utf-8", "replace")}
    try:
        out["response"]["content"]["text"] = ex.body.decode("utf-8")
    except UnicodeDecodeError:
        out["response"]["content"].update(text=base64.b64encode(ex.body).decode(), encoding="base64")
    return out


def har_of(document: dict[str, Any], secrets: dict[str, str], path: Path) -> Path:
    replay = Replay(document)
    recs = [replay.preflight, *(r for n in replay.scenario_names() if hasattr(r := replay.recording(n), "exchanges"))]
    entries = [entry(ex, secrets) for rec in recs for ex in rec.exchanges if ex.status is not None]
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                                        "entries": entries}}))
    return path
