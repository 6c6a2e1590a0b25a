"""invoke checks: GEN-BASE: transport."""
from __future__ import annotations


from conformance.engine import Recording
from conformance.outcomes import NotAssessed, on, precondition
from conformance.registry import check
from conformance.vocab.steps import invoke as steps
from conformance.checks.invoke._common import runs_of, what
from conformance.vocab.values import refusal


@check("GEN-BASE-001", scenarios=["invoke.runs"])
def served_over_tls(rec: Recording) -> None:
    """Sends the plain reply to the https base URL; the TLS handshake succeeds against the CA in use and it answers 200."""
    base = rec.target.base_url
    _, ex = runs_of(rec, steps.RUN_JSON, ("plain_reply",))[0]
    with on(ex):
        assert base.lower().startswith("https://"), f"the base URL {base!r} is not https: the service is HTTPS only"
        assert ex.status == 200, f"the plain reply over https must answer 200, got {what(ex)}"


@check("GEN-BASE-002", scenarios=["invoke.cleartext"])
def cleartext_never_served(rec: Recording) -> str:
    """Sends the plain reply with a decoy credential over `http://` to the same host and port, and the same request
    over https; the cleartext one gets no 2xx and not the API's own answer to it (the https one's)."""
    ex = rec.get(steps.CLEARTEXT)
    if not rec.target.base_url.lower().startswith("https://"):   # the probe is then the service itself
        raise precondition("GEN-BASE-001", ex, f"the base URL {rec.target.base_url!r} is not https: the service is "
                                               f"offered over cleartext ({what(ex)})")
    with on(ex):
        assert not (ex.status is not None and 200 <= ex.status < 300), \
            f"a cleartext request to {rec.facts['url']} was answered {what(ex)}: the service is HTTPS only"
    twin = rec.get(steps.DECOY_OVER_HTTPS)
    api_answer = refusal(twin)
    if api_answer is None:
        raise NotAssessed(f"the decoy credential over https was answered {what(twin)}, not refused: the API's own "
                          "answer to it cannot be told from the cleartext one")
    with on(ex, twin):
        assert refusal(ex) != api_answer, (
            f"a cleartext request to {rec.facts['url']} got the API's own answer ({what(ex)}, the very refusal the "
            f"same request got over https): the service is offered over cleartext, and HTTPS only forbids that")
    return (f"{rec.facts['sent']}: over cleartext {what(ex) if ex.status is not None else ex.error}; "
            f"over https {what(twin)}")


@check("GEN-BASE-003", scenarios=["invoke.runs"])
def invoke_served_under_v1(rec: Recording) -> None:
    """Sends the plain reply to `/v1/agents/{agentId}/invoke`; that exact path answers 200 with the invoke result."""
    _, ex = runs_of(rec, steps.RUN_JSON, ("plain_reply",))[0]
    expected = f"/v1/agents/{rec.target.agent_id}/invoke"
    with on(ex):
        assert ex.url.split("://", 1)[-1].partition("/")[2].split("?")[0] == expected.lstrip("/"), \
            f"sent to {ex.url}, expected the path {expected}"
        assert ex.status == 200, f"the plain reply at {expected} must answer 200, got {what(ex)}"
