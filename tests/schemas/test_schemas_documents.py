"""Every schemas/*.json is a well-formed, traceable, not-over-strict JSON Schema 2020-12 document."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from conformance import schemas

NAMES = sorted(p.stem for p in schemas.SCHEMA_DIR.glob("*.json"))

EXPECTED = {
    "invoke-request", "invoke-result", "invoke-event", "error-body", "agui-request", "agui-event",
    "mcp-request", "mcp-response", "mcp-tools-call-params", "mcp-tools-call-result",
    "mcp-progress-notification", "mcp-error", "mcp-error-32022", "protected-resource-metadata",
}


def _walk(node, path="#"):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}/{i}")


def test_schema_dir_located():
    assert schemas.SCHEMA_DIR.is_dir()
    assert schemas.SCHEMA_DIR.name == "schemas"
    assert set(NAMES) == EXPECTED
    assert set(schemas.names()) == EXPECTED


@pytest.mark.parametrize("name", NAMES)
def test_is_valid_2020_12_schema(name):
    doc = json.loads(schemas.resource(f"{name}.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"{schemas.BASE_URI}{name}.json"
    assert doc["title"]
    # traceability: the description names the spec section the object comes from
    assert "spec" in doc["description"].lower(), doc["description"]


@pytest.mark.parametrize("name", NAMES)
def test_refs_resolve(name):
    """Every $ref resolves through the shared registry (validating a throwaway instance walks them)."""
    v = schemas.validator(name)
    for path, node in _walk(schemas.schema(name)):
        if "$ref" in node:
            ref = node["$ref"]
            resolver = v._resolver  # noqa: SLF001 - test-only introspection
            resolver.lookup(ref if not ref.startswith("#") else f"{schemas.BASE_URI}{name}.json{ref}")


@pytest.mark.parametrize("name", NAMES)
def test_never_closed(name):
    """The spec never closes an object: no additionalProperties/unevaluatedProperties false anywhere."""
    for path, node in _walk(schemas.schema(name)):
        assert node.get("additionalProperties", True) is not False, f"{name} {path} closes an object"
        assert node.get("unevaluatedProperties", True) is not False, f"{name} {path} closes an object"


@pytest.mark.parametrize("name", NAMES)
def test_every_property_is_traceable(name):
    """Each top-level property carries a description quoting the spec (table row or sentence)."""
    doc = schemas.schema(name)
    for prop, sub in doc.get("properties", {}).items():
        if "$ref" in sub and len(sub) == 1:
            continue
        assert sub.get("description") or "properties" in sub, f"{name}.{prop} has no description"


def test_validator_is_cached_and_the_documents_load_once():
    assert schemas.validator("invoke-result") is schemas.validator("invoke-result")
    schemas.errors("invoke-event", {"v": 1, "type": "text", "delta": "x"})
    loads = schemas._load.cache_info().misses
    for _ in range(20):
        schemas.errors("invoke-event", {"v": 1, "type": "text", "delta": "x"})
    assert schemas._load.cache_info().misses == loads


def test_import_pulls_in_no_generator_or_client():
    """Importing the validator stays cheap: it loads neither the generators nor the HTTP stack."""
    code = ("import sys, conformance.schemas as s; s.validator('invoke-result'); "
            "print([m for m in ('schemathesis', 'hypothesis', 'httpx', 'starlette') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=schemas.SCHEMA_DIR.parent)
    assert out.stdout.strip() == "[]"


def test_unknown_name():
    with pytest.raises(KeyError, match="unknown schema"):
        schemas.validator("no-such-schema")


def test_check_raises_with_bounded_listing():
    schemas.check("invoke-event", {"v": 1, "type": "done"})  # valid: no exception
    with pytest.raises(AssertionError) as info:
        schemas.check("invoke-result", {"events": [{"v": 2}] * 40}, "POST /invoke 200")
    text = str(info.value)
    assert text.startswith("POST /invoke 200: does not match schema invoke-result")
    assert "$.events[0].v: 1 was expected [const] (schema invoke-event)" in text
    assert "more" in text
    assert text.count("\n  $") == schemas.MAX_REPORTED


def test_errors_format_names_path_keyword_and_document():
    found = schemas.errors("invoke-result", {
        "status": "completed", "result": "", "events": [{"v": 1, "type": "x"}, {"v": 1, "type": "x"}, {"v": 2, "type": "x"}],
        "sessionId": "s", "agentId": "agt_1", "versionNumber": 1, "requestId": "r", "durationMs": 0})
    assert found == ["$.events[2].v: 1 was expected [const] (schema invoke-event)"]


def test_cli(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"v": 1, "type": "done"}')
    bad = tmp_path / "bad.json"
    bad.write_text('{"v": 1, "type": "text"}')
    run = lambda *files: subprocess.run([sys.executable, "-m", "conformance.schemas", "invoke-event", *map(str, files)],
                                        capture_output=True, text=True, cwd=schemas.SCHEMA_DIR.parent)
    assert run(good).returncode == 0
    out = run(good, bad)
    assert out.returncode == 1 and "'delta' is a required property" in out.stdout
