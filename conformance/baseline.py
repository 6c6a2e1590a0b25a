"""A baseline: the requirement ids a server is known to fail, read from a file (`--baseline`).

Plain data and its reader, below the runner's core: `options` checks the file with it, `report` applies it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Baseline:
    """Known failures a server is burning down: they do not fail the run; ones that now pass are stale."""
    known: set[str] = field(default_factory=set)
    source: str = ""

    @classmethod
    def load(cls, path: str | None) -> "Baseline":
        if not path:
            return cls()
        text = Path(path).read_text()
        if path.endswith(".json"):
            data = json.loads(text)
            ids = data.get("known_failures", data) if isinstance(data, dict) else data
        else:  # one id per line, '#' comments
            ids = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
        return cls({i for i in ids if i}, path)
