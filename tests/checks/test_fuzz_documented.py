"""The generated cases' answers are held to schemas/openapi.yaml as schemathesis' own response checks hold them
(not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance), read without
schemathesis (conformance/checks/fuzz.py: `documented`): on every form of answer below, ours finds exactly what
schemathesis finds. schemathesis is the reference here, in the test only; a run does not import it."""
from __future__ import annotations

import datetime

import httpx
import pytest

from conformance import generate
from conformance.checks import fuzz as judging

STATUSES = [200, 201, 202, 204, 302, 400, 401, 403, 404, 406, 413, 415, 422, 429, 500, 503]
CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-8", "Application/JSON",
                 "application/problem+json", "application/vnd.x+json", "text/event-stream", "text/plain", "text/html",
                 "json", ""]
HEADERS = [{}, {"retry-after": "2"}, {"retry-after": "0"}, {"retry-after": "-1"}, {"retry-after": "2.5"},
           {"retry-after": " 3"}, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, {"x-ratelimit-remaining": "5"},
           {"x-ratelimit-remaining": "-3"}, {"x-ratelimit-remaining": "many"}, {"www-authenticate": "Bearer realm=\"x\""},
           {"www-authenticate": "bearer"}, {"www-authenticate": "Basic realm=\"x\""}, {"www-authenticate": ""}]


def _answer(status: int, content_type: str | None, headers: dict[str, str]) -> httpx.Response:
    sent = {**headers, **({} if content_type is None else {"content-type": content_type})}
    r = httpx.Response(status, headers=sent, content=b"{}", request=httpx.Request("POST", "https://server.test/"))
    r.elapsed = datetime.timedelta(seconds=0.01)
    return r


def _schemathesis_finds(op: str, response: httpx.Response) -> set[tuple[str, str | None]]:
    from schemathesis import checks as st_checks
    from schemathesis.specs.openapi import checks as oa_checks
    from schemathesis.openapi.checks import UndefinedContentType

    operation = generate.schemathesis_operations()[2][op]
    case = operation.schema.make_case(operation=operation, path_parameters={"agentId": "agt_x"})
    given = next(iter(response.headers.keys() - {"content-type", "content-length"}), None)
    found: set[tuple[str, str | None]] = set()
    for kind, check in (("server", st_checks.not_a_server_error), ("status", oa_checks.status_code_conformance),
                        ("content", oa_checks.content_type_conformance),
                        ("header", oa_checks.response_headers_conformance)):
        try:
            case.validate_response(response, checks=[check])
        except BaseException as group:                    # a Failure, or a FailureGroup of them
            for failure in getattr(group, "exceptions", [group]):
                if isinstance(failure, UndefinedContentType) and judging.is_json_media_type(failure.content_type) \
                        and any(judging.is_json_media_type(t) for t in failure.defined_content_types):
                    continue                              # RFC 6839: the suite reads any JSON type as JSON
                names = getattr(failure, "missing_headers", None)
                if kind == "header":
                    found |= {(kind, n.lower()) for n in names} if names else {(kind, given)}
                else:
                    found.add((kind, None))
    return found


def _ours(op: str, response: httpx.Response) -> set[tuple[str, str | None]]:
    kinds = {"Server error": "server", "Undocumented HTTP status code": "status"}
    return {(kinds.get(d.title, "header" if d.header else "content"), d.header.lower() if d.header else None)
            for d in judging.documented(op, response)}


def _answers():
    """Every status with every content type, and with every header (under a JSON content type)."""
    for status in STATUSES:
        yield from (_answer(status, content_type, {}) for content_type in CONTENT_TYPES)
        yield from (_answer(status, "application/json", headers) for headers in HEADERS[1:])


@pytest.mark.parametrize("op", ["invoke", "agui", "mcp", "metadata"])
def test_the_document_is_read_as_schemathesis_reads_it(op):
    differ, seen = [], set()
    for response in _answers():
        theirs, ours = _schemathesis_finds(op, response), _ours(op, response)
        seen |= {kind for kind, _ in theirs}
        if theirs != ours:
            differ.append((response.status_code, dict(response.headers), sorted(theirs, key=str),
                           sorted(ours, key=str)))
    assert not differ, differ[:10]
    has_headers = any(r.get("headers") for r in judging._responses(op).values())
    assert seen == {"server", "status", "content"} | ({"header"} if has_headers else set())   # each one was tested
