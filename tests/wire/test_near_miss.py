"""Unknown credentials made from a secret (`wire.near_miss`): each differs from the secret, the recipe makes it again
from the secret, its bash expression sends it again from the variable that holds the secret, and neither the recipe
nor the expression shows the secret."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conformance.reporting.repro import curl
from conformance.wire import near_miss
from conformance import canned

SECRETS = ("ais_live_0123456789abcdefABCDEF0123456789", "svc_oat_zzzzzzzzzzzzzzzzzzzz", "plain-token-without-form")


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("form", near_miss.FORMS)
def test_a_near_miss_is_another_credential_made_again_from_the_secret(secret, form):
    value = near_miss.make("api_key", secret, form)
    recipe = near_miss.recipe_of(value)
    assert value != secret and near_miss.remade(recipe, secret) == value
    assert near_miss.describe(recipe).startswith("the API key ")
    assert secret[near_miss.opaque_start(secret):][:6] not in recipe + near_miss.shell(recipe, "K")
    start = near_miss.opaque_start(secret)
    if form == "cut-short" and len(secret) - start > 8:
        assert secret.startswith(value)
    elif form == "case-flipped" and secret[start:].swapcase() != secret[start:]:
        assert value == secret.swapcase()
    elif form == "prefix-swapped" and start:     # the service's prefix another, the rest the secret's
        assert value.split("_", 1)[1] == secret.split("_", 1)[1] and value.split("_")[0] != secret.split("_")[0]
    else:     # one character changed, in the middle of the opaque part: its start and its end are the secret's
        assert len(value) == len(secret) and sum(a != b for a, b in zip(value, secret)) == 1
        assert value[-4:] == secret[-4:] and value[:near_miss.opaque_start(secret) + 4] == secret[
            :near_miss.opaque_start(secret) + 4]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("form", near_miss.FORMS)
def test_the_curl_line_sends_the_near_miss_from_the_secrets_variable(form):
    secret = SECRETS[0]
    value = near_miss.make("api_key", secret, form)
    ex = canned.exchange(401, {}, request_headers={"Authorization": "Bearer «redacted»"},
                         request_body={"prompt": "say conformance"})
    ex.credential = near_miss.PREFIX + near_miss.recipe_of(value)
    line = curl(ex)
    assert secret not in line and value not in line
    bearer = line.split("--oauth2-bearer ", 1)[1].split(" ", 1)[0]
    got = subprocess.run(["bash", "-c", f"printf %s {bearer}"], capture_output=True, text=True,
                         env={**os.environ, "CONFORMANCE_API_KEY": secret}).stdout
    assert got == value
