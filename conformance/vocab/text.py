"""The one way a message shortens a value it quotes."""
from __future__ import annotations

import json
from typing import Any


def truncate(value: Any, limit: int = 240, *, count: bool = False, quoted: bool = False) -> str:
    """`value` as text (JSON for non-strings) cut to `limit` characters with "…" when longer.

    `count` appends the full length ("… (1,234 chars)"); `quoted` returns the repr of the result."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) > limit:
        text = text[:limit] + "…" + (f" ({len(text):,} chars)" if count else "")
    return repr(text) if quoted else text
