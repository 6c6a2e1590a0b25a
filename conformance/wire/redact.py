"""Secret redaction for transcripts, errors and reports."""

from __future__ import annotations

import json
import re
from typing import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["Redactor", "MASK", "suite_made"]

MASK = "«redacted»"

# Credentials the suite made up (an unknown key of the right form): nobody's secret, so never masked, and a
# failure's curl line carries them as they were sent. Random per run; a set for the whole process.
_SUITE_MADE: set[str] = set()


def suite_made(credential: str) -> str:
    """Marks a credential the suite invented as public: reports show it, so its curl line can be re-sent."""
    _SUITE_MADE.add(credential)
    return credential


def is_suite_made(credential: str) -> bool:
    return credential in _SUITE_MADE

# "Bearer <token68>" / "Basic <token68>" anywhere.  The look-ahead keeps
# auth-params such as ``Bearer resource_metadata="…"`` (WWW-Authenticate)
# readable: a token68 is never followed by "=…" or a quote.
_SCHEME_TOKEN = re.compile(
    r"(?i)\b((?:bearer|basic)[ \t]+)(?!" + re.escape(MASK) + r")([A-Za-z0-9\-._~+/]+=*)(?![=A-Za-z0-9\-._~+/\"'])"
)
# header lines / key-value pairs such as "Authorization: <anything>" or
# '"authorization": "<anything>"'
_AUTH_VALUE = re.compile(
    r"(?im)((?>\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*"
    r"(?:(?:bearer|basic)[ \t]+)?))(?!" + re.escape(MASK) + r")([^\s\"',;]+)"
)


#: every match of the two patterns above holds one of these words, lower-cased
_CREDENTIAL_WORDS = ("bearer", "basic", "authorization")
#: the letters beyond ASCII that the patterns' IGNORECASE matches to letters of those words and `str.lower()` does
#: not lower to them (Python's `re` folds ı, İ and ſ to i and s; the Kelvin sign lowers to k by itself)
_REGEX_CASE_FOLDS_CHARS = "ıİſ"
_REGEX_CASE_FOLDS = str.maketrans({"ı": "i", "İ": "i", "ſ": "s"})


def _variants(secret: str) -> set[str]:
    out = {
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
    }
    for v in list(out):
        if "%" in v:  # lowercase percent-escapes
            out.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), v))
    return {v for v in out if v}


SHORT, SHORT_KEPT = 64, 50_000    # strings this short are remembered once redacted, up to this many


class Redactor:
    """Replaces known secrets (and their URL-encoded / JSON-escaped forms)
    with ``«redacted»`` and always masks credentials after ``Bearer``."""

    mask = MASK

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._short: dict[str, str] = {}     # short strings redacted before: a report repeats its keys and words
        for s in secrets:
            self.add(s)

    def add(self, secret: str | None) -> None:
        if not secret or not isinstance(secret, str) or secret in self._secrets:
            return
        self._secrets.add(secret)
        self._short = {}
        variants: set[str] = set()
        for s in self._secrets:
            variants |= _variants(s)
        self._variants = sorted(variants, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in self._variants))

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(self._secrets)

    def redact(self, text: str) -> str:
        if not text:
            return text
        if not isinstance(text, str):
            text = str(text)
        if len(text) > SHORT:
            return self._redacted(text)
        done = self._short.get(text)
        if done is None:
            done = self._redacted(text)
            if len(self._short) < SHORT_KEPT:
                self._short[text] = done
        return done

    def _redacted(self, text: str) -> str:
        # plain substring tests first (C speed): a body of many MB holding none of them is not scanned by the regexes
        if self._pattern is not None and any(v in text for v in self._variants):
            text = self._pattern.sub(MASK, text)
        folded = text.lower()
        if not text.isascii() and any(c in text for c in _REGEX_CASE_FOLDS_CHARS):
            folded = text.translate(_REGEX_CASE_FOLDS).lower()
        if any(w in folded for w in _CREDENTIAL_WORDS):
            mask = lambda m: m.group(0) if m.group(2) in _SUITE_MADE else m.group(1) + MASK
            text = _AUTH_VALUE.sub(mask, text)
            text = _SCHEME_TOKEN.sub(mask, text)
        return text

    __call__ = redact
