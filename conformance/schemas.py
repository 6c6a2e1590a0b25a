"""Shared JSON Schema validation for the conformance suite.

Every ``schemas/*.json`` document (JSON Schema 2020-12) is loaded once into one
``referencing.Registry``; validators are compiled once per schema name and cached.

    validator("invoke-result").is_valid(body)
    errors("invoke-event", event)      -> ["$.v: 1 was expected [const] (schema invoke-event)", ...]
    check("error-body", body, "POST /invoke 422")   # raises AssertionError listing the errors

``python -m conformance.schemas [NAME FILE...]`` validates JSON files from the command line.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.protocols
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.vocab.text import truncate

__all__ = ["SCHEMA_DIR", "resource", "BASE_URI", "names", "schema", "validator", "errors", "check", "is_valid"]

# Inside the package: conformance/_schemas is a link to the repository's top-level schemas/ (one copy of
# the files); a wheel holds a real directory there. Source tree, editable and wheel installs alike.
SCHEMA_DIR: Path = (Path(__file__).parent / "_schemas").resolve()
BASE_URI = "https://conformance.invalid/schemas/"
MAX_REPORTED = 20  # errors listed by check()


def resource(filename: str) -> Path:
    """A file shipped with the schemas, e.g. ``resource("openapi.yaml")``: every reader goes through here."""
    return SCHEMA_DIR / filename


@functools.cache
def _load() -> tuple[dict[str, dict], Registry, dict[int, str]]:
    """Load all schemas/*.json once: name -> schema, the registry, and id(subschema) -> name."""
    docs: dict[str, dict] = {}
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        docs[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    if not docs:
        raise FileNotFoundError(f"no JSON schemas found in {SCHEMA_DIR}")
    resources = []
    owner: dict[int, str] = {}
    for name, doc in docs.items():
        uri = doc.get("$id", BASE_URI + name + ".json")
        resources.append((uri, Resource.from_contents(doc, default_specification=DRAFT202012)))
        _index(doc, name, owner)
    return docs, Registry().with_resources(resources).crawl(), owner


def _index(node: Any, name: str, owner: dict[int, str]) -> None:
    if isinstance(node, dict):
        owner.setdefault(id(node), name)
        for value in node.values():
            _index(value, name, owner)
    elif isinstance(node, list):
        for value in node:
            _index(value, name, owner)


def names() -> list[str]:
    """Names (file stems) of all schemas."""
    return list(_load()[0])


def schema(name: str) -> dict:
    """The raw schema document ``schemas/<name>.json`` (do not mutate)."""
    docs = _load()[0]
    try:
        return docs[name]
    except KeyError:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(docs)}") from None


@functools.cache
def validator(name: str) -> jsonschema.protocols.Validator:
    """A cached Draft 2020-12 validator for ``schemas/<name>.json`` resolving $refs via the shared registry."""
    _, registry, _ = _load()
    return Draft202012Validator(schema(name), registry=registry)


def is_valid(name: str, instance: Any) -> bool:
    return surely_valid(name, instance) or validator(name).is_valid(instance)


@functools.cache
def _fast_registry() -> Any:
    """Every schema document, as jsonschema-rs resolves `$ref`s between them (built once)."""
    import jsonschema_rs
    return jsonschema_rs.Registry([(doc.get("$id", BASE_URI + n + ".json"), doc) for n, doc in _load()[0].items()])


@functools.cache
def _fast(name: str) -> Any:
    """jsonschema-rs's validator of the same schema over the same documents (it comes with schemathesis, which
    validates with it), or None when it cannot be built."""
    try:
        import jsonschema_rs
        return jsonschema_rs.validator_for(schema(name), registry=_fast_registry())
    except Exception:
        return None


def surely_valid(name: str, instance: Any) -> bool:
    """Whether jsonschema-rs finds `instance` valid: a reading many times faster than jsonschema's, taken only when it
    says valid. An instance it finds invalid, or cannot read (a lone surrogate, an integer beyond 64 bits), is left
    to jsonschema, whose errors are the ones reported (tests/schemas: it never calls valid what jsonschema does not)."""
    fast = _fast(name)
    try:
        return fast is not None and bool(fast.is_valid(instance))
    except Exception:
        return False


def _describe(err: jsonschema.ValidationError, root: str, owner: dict[int, str]) -> str:
    where = owner.get(id(err.schema), root) if isinstance(err.schema, dict) else root
    message = err.message
    if len(message) > 160:  # shorten the embedded repr of a big instance, keep the reason
        message = message.replace(repr(err.instance), _repr(err.instance))
    if err.validator == "not" and isinstance(err.validator_value, dict):
        rule = err.validator_value.get("description") or json.dumps(err.validator_value)
        message = f"{_repr(err.instance)} must not match: {rule}"
    text = f"{err.json_path}: {truncate(message, 240, middle=True)} [{err.validator}] (schema {where})"
    if err.context:  # anyOf / oneOf: list the reasons of each alternative (bounded)
        reasons = sorted(err.context, key=jsonschema.exceptions.relevance)[:4]
        text += "; alternatives failed: " + "; ".join(
            f"{c.json_path}: {truncate(c.message, 120, middle=True)} [{c.validator}]" for c in reasons
        )
    return text


def _repr(value: Any, limit: int = 80) -> str:
    return truncate(repr(value), limit)



def errors(name: str, instance: Any) -> list[str]:
    """Human-readable validation errors, each starting with the JSON path of the failing value.

    Example: ``"$.events[2].v: 1 was expected [const] (schema invoke-event)"``; the bracket holds the
    failing JSON Schema keyword, the parenthesis the schema document that holds it. Empty when valid.
    """
    if surely_valid(name, instance):
        return []
    owner = _load()[2]
    found = sorted(validator(name).iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    return [_describe(e, name, owner) for e in found]


def check(name: str, instance: Any, what: str = "") -> None:
    """Raise AssertionError listing (at most MAX_REPORTED) schema errors of ``instance`` against ``name``."""
    found = errors(name, instance)
    if not found:
        return
    label = f"{what}: " if what else ""
    shown = found[:MAX_REPORTED]
    more = f"\n  ... and {len(found) - len(shown)} more" if len(found) > len(shown) else ""
    raise AssertionError(
        f"{label}does not match schema {name} ({len(found)} error{'s' if len(found) != 1 else ''}):\n  "
        + "\n  ".join(shown) + more
    )


def _main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m conformance.schemas NAME FILE.json [FILE.json ...]", file=sys.stderr)
        print("schemas: " + ", ".join(names()), file=sys.stderr)
        return 2
    name, status = argv[0], 0
    for file in argv[1:]:
        found = errors(name, json.loads(Path(file).read_text(encoding="utf-8")))
        print(f"{file}: {'ok' if not found else 'INVALID'}")
        for line in found:
            print("  " + line)
        status |= bool(found)
    return status


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
