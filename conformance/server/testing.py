"""Helpers for tests that talk to the reference server: event-stream parsing and refusal-shape checks."""

from __future__ import annotations

import json
from typing import Any

import httpx


def sse_frames(text: str) -> list[dict[str, Any]]:
    """Parse an event stream into frames: {'event': name|None, 'data': parsed JSON|None, 'comments': [...]}."""
    frames = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block:
            continue
        frame: dict[str, Any] = {"event": None, "data": None, "comments": []}
        data_lines = []
        for line in block.split("\n"):
            if line.startswith(":"):
                frame["comments"].append(line[1:].strip())
            elif line.startswith("event:"):
                frame["event"] = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].lstrip(" ") if line.startswith("data: ") else line[5:])
        if data_lines:
            frame["data"] = json.loads("\n".join(data_lines))
        frames.append(frame)
    return frames


def error_body_ok(response: httpx.Response, status: int | None = None, code: str | None = None) -> dict[str, Any]:
    if status is not None:
        assert response.status_code == status, response.text
    assert 400 <= response.status_code < 500, response.text
    body = response.json()
    assert set(body) == {"error"}
    err = body["error"]
    assert isinstance(err["code"], str) and isinstance(err["message"], str)
    assert err["requestId"].startswith("req_") and len(err["requestId"]) > 4
    assert set(err) <= {"code", "message", "requestId", "details"}
    if code is not None:
        assert err["code"] == code
    if "details" in err:
        assert isinstance(err["details"], dict)
    return err


def jsonrpc_error_ok(response: httpx.Response, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert "id" in body and (body["id"] is None or isinstance(body["id"], (str, int)))
    assert isinstance(body["error"]["code"], int) and body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str)
    return body
