"""The curl line of an exchange: the same request, credentials as environment variables, shell-safe."""
import shlex

from conformance.reporting.repro import curl
from conformance.wire.exchange import Exchange
from conformance.wire.redact import MASK


def exchange(**kw):
    base = dict(label="main", method="POST", url="https://127.0.0.1:8443/v1/agents/agt_1/invoke",
                request_headers={"host": "127.0.0.1:8443", "content-length": "20", "Authorization": f"Bearer {MASK}",
                                 "Content-Type": "application/json", "Accept": "text/event-stream"},
                request_body=b'{"prompt":"it\'s $HOME `x`"}', status=200, headers=None, body=b"", stream=None,
                t_headers=None, t_end=None, error=None)
    base.update(kw)
    return Exchange(**base)


def test_the_credential_becomes_the_variable_of_its_option():
    ex = exchange()
    ex.credential = "access_token"
    line = curl(ex)
    assert '--oauth2-bearer "$CONFORMANCE_ACCESS_TOKEN"' in line
    assert MASK not in line


def test_an_unknown_credential_is_a_named_placeholder_never_a_secret():
    assert '--oauth2-bearer "$CONFORMANCE_CREDENTIAL"' in curl(exchange())


def test_the_line_parses_back_to_the_same_request():
    args = shlex.split(curl(exchange()))
    assert args[0] == "curl" and args[-1] == "https://127.0.0.1:8443/v1/agents/agt_1/invoke"
    assert args[args.index("-X") + 1] == "POST"
    assert args[args.index("--data-binary") + 1] == '{"prompt":"it\'s $HOME `x`"}'
    headers = [args[i + 1] for i, a in enumerate(args) if a == "-H"]
    assert headers == ["Content-Type: application/json", "Accept: text/event-stream"]


def test_a_get_without_body_has_no_method_flag():
    line = curl(exchange(method="GET", request_body=None, request_headers={}))
    assert line == "curl -sS -N -i https://127.0.0.1:8443/v1/agents/agt_1/invoke"


def test_binary_bodies_are_sent_byte_for_byte():
    line = curl(exchange(request_body=b"\xff\x00a"))
    assert "--data-binary $'\\xff\\x00\\x61'" in line
