"""A correct server with a tight rate limit is certified without a failure: the client paces itself from
X-RateLimit-Remaining and waits out a 429's Retry-After, so no requirement is judged on a 429 (issue 12).
The time it takes is the bucket's business and is not asserted."""
from __future__ import annotations

import pytest

from conformance.api import certify
from conformance.server import ReferenceServer, ServerConfig
from conformance.server.config import rate_limit_fields
from conformance.target import from_server_facts

RATE_LIMIT = "30/5"   # 30 requests, refilled at 6 a second: a default run needs about 40 s of it


@pytest.mark.xdist_group("ratelimit-certify")
def test_suite_passes_a_rate_limited_reference_server() -> None:
    with ReferenceServer(ServerConfig(**rate_limit_fields(RATE_LIMIT))) as srv:
        report = certify(from_server_facts(srv.facts))
    failed = [f"{r['id']}: {r.get('message', '')[:400]}" for r in report["requirements"] if r["status"] == "failed"]
    assert not failed, f"a correct server limited to {RATE_LIMIT} failed:\n  " + "\n  ".join(failed)
    assert report["verdict"] in ("conformant", "conformant-partial"), report["verdict_reason"]
    cost = report["cost"]
    assert cost["paced_waits"] > 0   # the limit was reached, and paced
    assert cost["rate_limited"] == 0
