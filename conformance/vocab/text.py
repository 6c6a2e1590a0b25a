"""The one way a message, a report or a transcript shortens a value it quotes."""
from __future__ import annotations

import json
from typing import Any, Callable

#: longer than any secret: text this far past a cut is redacted before the cut, so a secret is never half shown
REDACT_MARGIN = 512


def truncate(value: Any, limit: int = 240, *, count: bool = False, quoted: bool = False, middle: bool = False,
             one_line: bool = False) -> str:
    """`value` as text (JSON for non-strings) cut to `limit` characters with "…" when longer.

    `count` appends the full length ("… (1,234 chars)"); `quoted` returns the repr of the result; `middle` keeps
    the head and the tail ("head … tail", for messages whose end says where); `one_line` folds whitespace first."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    if one_line:
        text = " ".join(text.split())
    if len(text) > limit:
        if middle:
            half = max(0, (limit - 3) // 2)
            text = text[:half] + " … " + text[len(text) - half:]
        else:
            text = text[:limit] + "…" + (f" ({len(text):,} chars)" if count else "")
    return repr(text) if quoted else text


def truncate_redacted(redact: Callable[[str], str], value: str | bytes, limit: int) -> str:
    """`truncate(redact(value), limit, count=True)` without decoding or redacting megabytes of which `limit`
    characters are shown: bytes are decoded as UTF-8 with replacement, and the count is of the whole value."""
    if isinstance(value, bytes):
        head = value[: 4 * (limit + REDACT_MARGIN)].decode("utf-8", "replace")
        whole = f" ({len(value):,} bytes)"
    else:
        head = value[: limit + REDACT_MARGIN]
        whole = f" ({len(value):,} chars)"
    shown = redact(head)
    if len(value) <= limit and len(shown) <= limit:
        return shown
    return shown[:limit] + "…" + (whole if len(value) > limit else "")
