"""Cross-protocol checks: pass on the reference server; fail a server that mangles one character on one
protocol (AG-UI U+2028, a lone CR on invoke streaming) or drops generated params on one protocol; show the
replies side by side."""
from __future__ import annotations

import pytest

from conformance import registry
from conformance.api import certify
from conformance.checks.generated import first_difference, side_by_side
from conformance.server import ReferenceServer, ServerConfig
from conformance.target import from_server_facts
from tests.checks.support import agui_reply
from tests.selftest.zoo import load_zoo

CHECKS = ["generated.same_reply_on_every_protocol", "generated.same_params_on_every_protocol"]


def certify_server(config: ServerConfig) -> dict:
    registry.load_all()
    with ReferenceServer(config) as srv:
        return certify(from_server_facts(srv.facts), check_ids=CHECKS)


def row(report: dict, rid: str) -> dict:
    return next(r for r in report["requirements"] if r["id"] == rid)


def test_passes_on_the_reference_server():
    report = certify_server(ServerConfig())
    assert {c["id"]: c["status"] for c in report["checks"]} == dict.fromkeys(CHECKS, "passed"), report["checks"]
    assert row(report, "GEN-XPROTO-001")["status"] == "passed"
    assert row(report, "GEN-XPROTO-002")["status"] == "passed"


@pytest.mark.parametrize("name, shown", [
    ("GEN-XPROTO-001-agui-u2028-becomes-space", r"\u2028"),
    ("GEN-XPROTO-001-invoke-stream-drops-lone-cr", r"\r"),
])
def test_fails_a_server_that_mangles_one_character_on_one_protocol(name, shown):
    report = certify_server(load_zoo()[name].server_config())
    r = row(report, "GEN-XPROTO-001")
    assert r["status"] == "failed", r
    msg = r["message"]
    assert "first difference at code point" in msg and shown in msg
    for protocol in ("expected", "invoke-json", "invoke-sse", "agui", "mcp"):
        assert f"  {protocol} " in msg, (protocol, msg)


def test_fails_a_server_that_drops_params_on_one_protocol():
    report = certify_server(load_zoo()["GEN-XPROTO-002-agui-drops-non-ascii-fields"].server_config())
    r = row(report, "GEN-XPROTO-002")
    assert r["status"] == "failed", r
    assert "<absent>" in r["message"] and "sent" in r["message"]


def test_side_by_side_cuts_around_the_first_difference():
    long_prefix = "a" * 500
    replies = {"invoke-json": long_prefix + "x\u2028y", "agui": long_prefix + "x y", "mcp": None}
    text = side_by_side(replies, {"mcp": "status 500"}, expected=long_prefix + "x\u2028y")
    assert first_difference([long_prefix + "x\u2028y", long_prefix + "x y"]) == 501
    assert "first difference at code point 501" in text
    assert "'\\u2028y'" not in text and "\\u2028" in text        # repr-escaped, not raw
    assert "a" * 100 not in text                                   # cut around the difference
    assert "mcp" in text and "no reply: status 500" in text


def test_first_difference_of_a_prefix_is_the_shorter_length():
    assert first_difference(["abc", "ab"]) == 2
    assert first_difference(["same", "same"]) == 4


# -- without a server: a failure names the exchange that broke the rule, first ---------------------------------
def _invoke_json(label: str, reply: str):
    from conformance import canned
    return canned.exchange(200, {"content-type": "application/json"}, body={"status": "completed", "result": reply},
                           label=label)


_agui = agui_reply


def test_a_different_reply_names_the_protocol_that_broke_it():
    from conformance import canned
    from conformance.checks.generated import same_reply_on_every_protocol
    from conformance.outcomes import Deviation
    good, bad = _invoke_json("invoke-json-0", "a\u2028b"), _agui("agui-0", "a b")
    rec = canned.recording("generated.round_trip", [good, bad, _invoke_json("invoke-json-1", "x"), _agui("agui-1", "x")],
                           facts={"texts": ["a\u2028b", "x"]})
    with pytest.raises(Deviation) as caught:
        same_reply_on_every_protocol(rec)
    assert caught.value.exchanges == (bad,)
    assert caught.value.message.startswith("agui-0: run 0: the same prompt gave a different reply over agui")


def test_changed_params_name_the_protocol_that_changed_them_and_read_numbers_by_value():
    import json as _json

    from conformance import canned
    from conformance.checks.generated import same_params_on_every_protocol
    from conformance.outcomes import Deviation
    sent = [{"n": 1, "s": "é"}, {"n": 2}]
    ok = [_invoke_json("invoke-0", _json.dumps({"n": 1.0, "s": "é"})), _agui("agui-0", _json.dumps({"n": 1, "s": "é"}))]
    assert "1 generated field sets" in same_params_on_every_protocol(
        canned.recording("generated.params", ok, facts={"params": sent[:1]}))
    dropped = _agui("agui-1", _json.dumps({}))
    rec = canned.recording("generated.params", [*ok, _invoke_json("invoke-1", _json.dumps({"n": 2})), dropped],
                           facts={"params": sent})
    with pytest.raises(Deviation) as caught:
        same_params_on_every_protocol(rec)
    assert caught.value.exchanges == (dropped,)
    assert caught.value.message.startswith("agui-1: run 1, field 'n' reached the agent changed over agui")
