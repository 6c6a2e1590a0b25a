"""A failure proves itself: re-send the exchange a failed MUST names first, and judge the new answer by the same rule.

For each failed MUST of a report: its first evidence must be an exchange the check named as breaking the rule.
That request is sent again to the same server (the credential it carried put back in), the fresh exchange takes
the old one's place in its recording, and the checks that failed the requirement are judged again on it
(`judging.assess`, the run's own judging). The failure is reproduced when a check fails again naming that step.
"""
from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from conformance import registry
from conformance.engine import PREFLIGHT, Recording, ScenarioFailed
from conformance.judging import assess
from conformance.recording import Replay
from conformance.target import Target
from conformance.vocab.constants import BASIC_USER
from conformance.wire.exchange import Exchange
from conformance.wire.http import Client
from conformance.wire.redact import MASK

# headers the client computes for the request it sends, as curl would (reporting.repro leaves them out too)
_COMPUTED = {"host", "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding"}


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
    """The run's recordings, with one exchange of one scenario replaced by its re-sent twin."""

    def __init__(self, source: Replay, scenario: str, old: Exchange, fresh: Exchange):
        self.source, self.scenario, self.old, self.fresh = source, scenario, old, fresh
        self.preflight_error, self.redactor = source.preflight_error, source.redactor
        self.preflight = self._patched(source.preflight) if scenario == PREFLIGHT else source.preflight

    def _patched(self, got: Recording) -> Recording:
        return Recording(got.scenario, got.target, [self.fresh if ex is self.old else ex for ex in got.exchanges],
                         got.facts)

    def recording(self, name: str) -> Recording | BaseException:
        got = self.source.recording(name)
        return self._patched(got) if name == self.scenario and isinstance(got, Recording) else got


def _headers(ex: Exchange, target: Target) -> dict[str, str | None] | None:
    """The request's headers with the credential it carried put back; None when a masked value is unknown."""
    secret = getattr(target, ex.credential, None) if ex.credential else None
    out = {}
    for name, value in ex.request_headers.items():
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
    return out


async def _send(ex: Exchange, target: Target, headers: dict[str, str]) -> Exchange:
    """Sends `ex`'s request again; a credential masked in its query string or body is put back, as its curl line
    reads it from the environment."""
    secret = (getattr(target, ex.credential, None) or "") if ex.credential else ""
    client = Client(target.base_url, ca_bundle=target.ca_bundle, insecure=target.insecure, secrets=target.secrets)
    try:
        parts = urlsplit(ex.url.replace(MASK, secret))
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        body = ex.request_body.replace(MASK.encode(), secret.encode()) if ex.request_body else ex.request_body
        return await client.send(ex.method, path, headers=headers, content=body, label=ex.label,
                                 sse=ex.stream is not None, retry_429=False)
    finally:
        await client.aclose()


def resend_failures(report: dict[str, Any], document: dict[str, Any], target: Target) -> list[Resent]:
    """Every failed MUST of `report`, its first named exchange re-sent to `target` and judged again."""
    source = Replay(document)
    out = []
    for row in report["requirements"]:
        if row["level"] != "MUST" or row["status"] != "failed":
            continue
        first = (row.get("evidence") or [{}])[0]
        if not first.get("broke"):
            out.append(Resent(row["id"], str(first.get("label")), "not named",
                              "its first evidence is not an exchange a check named"))
            continue
        got = source.preflight if first["scenario"] == PREFLIGHT else source.recording(first["scenario"])
        rec = got.recording if isinstance(got, ScenarioFailed) else got
        old = next((ex for ex in getattr(rec, "exchanges", ()) if ex.label == first["label"]), None)
        headers = _headers(old, target) if old is not None else None
        if headers is None:
            out.append(Resent(row["id"], first["label"], "not re-sendable",
                              "not in the recording" if old is None else "its credential is unknown"))
            continue
        fresh = asyncio.run(_send(old, target, headers))
        patched = _WithFresh(source, first["scenario"], old, fresh)
        failing = [registry.CHECKS[c["id"]] for c in report["checks"]
                   if row["id"] in c["requirements"] and c["status"] == "failed"]
        again = [assess(patched, c) for c in failing]
        # a blocked check whose root did not fail on that exchange is a failure of the run (report.resolve_blocked)
        hit = next((r for r in again if r.status in ("failed", "blocked")
                    and (first["scenario"], first["label"]) in r.broke), None)
        out.append(Resent(row["id"], first["label"], "reproduced" if hit else "not reproduced",
                          (hit or (again[0] if again else None)).message[:300] if (hit or again) else ""))
    return out
