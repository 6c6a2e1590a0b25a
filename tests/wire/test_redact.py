from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

from conformance.wire.redact import MASK, Redactor

SECRET = "svc_live_ab/cd+ef=gh&ij"


def test_plain_and_embedded_occurrences() -> None:
    r = Redactor([SECRET])
    assert r.redact(SECRET) == MASK
    assert r.redact(f"x{SECRET}y {SECRET}") == f"x{MASK}y {MASK}"


def test_encoded_forms() -> None:
    r = Redactor([SECRET, 'tok"with\\quote/ü'])
    for form in [
        quote(SECRET, safe=""),
        quote(SECRET, safe="").lower().replace("svc_live_ab", "svc_live_ab"),
        quote(SECRET),
        quote_plus(SECRET),
        json.dumps(SECRET)[1:-1],
        json.dumps('tok"with\\quote/ü')[1:-1],
        json.dumps('tok"with\\quote/ü', ensure_ascii=False)[1:-1],
        json.dumps('tok"with\\quote/ü')[1:-1].replace("/", "\\/"),
    ]:
        out = r.redact(f"before {form} after")
        assert out == f"before {MASK} after", form


def test_lowercase_percent_escapes() -> None:
    r = Redactor([SECRET])
    assert r.redact("k=svc_live_ab%2fcd%2bef%3dgh%26ij") == f"k={MASK}"


def test_bearer_always_masked_but_auth_params_kept() -> None:
    r = Redactor()
    assert r.redact("Authorization: Bearer abc.DEF_123-x==") == f"Authorization: Bearer {MASK}"
    assert r.redact('{"authorization": "Bearer zzz"}') == '{"authorization": "Bearer ' + MASK + '"}'
    assert r.redact("> authorization: weird-scheme-less-token") == f"> authorization: {MASK}"
    assert r.redact("curl -H 'Authorization: Basic dXNlcjpwYXNz'") == f"curl -H 'Authorization: Basic {MASK}'"
    www = 'WWW-Authenticate: Bearer resource_metadata="https://h/.well-known/x", scope="agent:invoke"'
    assert r.redact(www) == www
    assert r.redact('Bearer error="invalid_token"') == 'Bearer error="invalid_token"'
    assert r.redact("authorization_servers: https://auth") == "authorization_servers: https://auth"
    # idempotent
    once = r.redact("Authorization: Bearer abc")
    assert r.redact(once) == once


def test_longest_secret_wins_and_empty_ignored() -> None:
    r = Redactor(["", "abcdef", "abcdefghij"])
    assert r.redact("abcdefghij abcdef") == f"{MASK} {MASK}"
    assert r.redact("") == ""
    r.add(None)
    assert r.secrets == {"abcdef", "abcdefghij"}


def test_callable() -> None:
    assert Redactor(["s3cr3t-value"])("a s3cr3t-value") == f"a {MASK}"


def test_credentials_masked_when_their_words_are_written_with_letters_beyond_ascii() -> None:
    """The quick test before the patterns folds every letter the patterns' IGNORECASE matches to a letter of
    their words (checked over all of Unicode), so text beyond ASCII is passed over only when no match is in it."""
    import re

    from conformance.wire.redact import _REGEX_CASE_FOLDS
    beyond_ascii = "".join(map(chr, range(0x80, 0x110000))).encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    for letter in set("bearerbasicauthorization"):
        same = re.findall("(?i)" + letter, beyond_ascii)
        assert all(c.translate(_REGEX_CASE_FOLDS).lower() == letter for c in same), letter
    r = Redactor()
    assert r.redact("AUTHORİZATION: Bearer abcdef é") == f"AUTHORİZATION: Bearer {MASK} é"
    assert r.redact("Baſic dXNlcjpwYXNz ü") == f"Baſic {MASK} ü"
    assert r.redact("bearer ünicode-free 1") == "bearer ünicode-free 1"
