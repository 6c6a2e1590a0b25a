"""What a run covered of the request dimensions (`model.dimensions`): per requirement, the values of each dimension
it was judged on, against its scope (every dimension of the operations it applies to, less those the spec ties the
rule to, `NARROWED`), and the pairs of free values met on one exchange. report.json `dimensions`, the HTML report's
picture and `conformance list --format json` (`scope`) say the same.

A requirement is judged on the exchanges its checks read (`result.read`): those a check over every exchange judged,
those a scenario's check looked up by name or judged (`Recording.get`, `outcomes.on`); a scenario's check that looked
up none is taken to read every exchange of its recordings.
"""
from __future__ import annotations

import fnmatch
import functools
import itertools
import operator
from typing import Any, Iterable, Iterator

from conformance.model.dimensions import (DIMENSIONS, FREE, CLIENT_WRITTEN, MODAL, NARROWED, OPEN_VALUES,
                                          REFUSED_VALUES, TIED)
from conformance.vocab import forms

# the dimensions whose values are paired across requests (one mode's free dimension aside: `MODAL`)
PAIRED = (*(d for d in FREE if d not in MODAL), "http-version", "operation")
# a paired (dimension, value) -> its number: the pair of numbers m < n is the bit n(n-1)/2 + m of a set of pairs
_PAIRED_IDS: dict[tuple[str, str], int] = {}
_VALUE_IDS: dict[tuple[str, str], int] = {}    # a (dimension, value) -> its bit in a set of values


SCENARIO_ONLY = ("a requirement its scenarios alone judge reads the requests they build for it: what a request is "
                 "(its mode, method, key, input) is the rule's own; the free dimensions still vary over them")


def scope(operations: Iterable[str], http2: bool = True, every: bool = True,
          requirement: str = "") -> dict[str, tuple[str, ...]]:
    """The dimensions and values a rule over `operations` must hold on (`NARROWED` left out, with its reason; what a
    request is, for a rule no exchange rule reads: `SCENARIO_ONLY`; the values the spec ties `requirement` to,
    `TIED`; values it leaves open or refuses whatever else a request carries)."""
    ops = set(operations)
    tied = {dim: values for patterns, dim, values, _ in TIED if any(fnmatch.fnmatchcase(requirement, p) for p in patterns)}
    written = any(fnmatch.fnmatchcase(requirement, p) for p in CLIENT_WRITTEN)
    out = {}
    for d in DIMENSIONS.values():
        if d.name in NARROWED or d.name == "operation" or not ops & set(d.operations):
            continue
        if not every and not d.free and d.name != "http-version" and d.name not in tied or written and d.free:
            continue
        values = tied.get(d.name) or forms.values_of(d.name, ops, http2)
        out[d.name] = tuple(v for v in values if v not in OPEN_VALUES.get(d.name, ()))
    return out


def _pairs(values: dict[str, str]) -> int:
    """The pairs of paired values one exchange carries, one bit each (`_pair_bit`): a shift a value, not a lookup a
    pair (twenty values, 190 pairs)."""
    ids = sorted(_PAIRED_IDS.setdefault(pair, len(_PAIRED_IDS)) for pair in values.items() if pair[0] in PAIRED)
    bits = below = 0
    for n in ids:
        bits |= below << (n * (n - 1) // 2)
        below |= 1 << n
    return bits


def _pair_bit(a: tuple[str, str], b: tuple[str, str]) -> int | None:
    """The bit of the pair of paired values `a` and `b` in `_pairs`, or None when no exchange carried one of them."""
    m, n = _PAIRED_IDS.get(a), _PAIRED_IDS.get(b)
    if m is None or n is None:
        return None
    m, n = min(m, n), max(m, n)
    return n * (n - 1) // 2 + m


def exchange_values(ex: Any, target: Any) -> tuple[frozenset[tuple[str, str]], int, int]:
    """((dimension, value) of each dimension it carries, the pairs of free values it carries as bits (`_pairs`),
    the values as bits of `_VALUE_IDS`) of one exchange (read once: `judging.read_ahead` reads it while the slowest
    scenarios still record)."""
    def read() -> tuple[frozenset[tuple[str, str]], int, int]:
        values = forms.read(ex, target)
        bits = 0
        for pair in values.items():
            bits |= 1 << _VALUE_IDS.setdefault(pair, len(_VALUE_IDS))
        return frozenset(values.items()), _pairs(values), bits
    return ex.remembered("dimension pairs", read)


def judged(results: Iterable[Any], targets: dict[int, Any]) -> dict[str, dict[str, Any]]:
    """requirement -> {judged_on: {dimension: [values]}, pairs: n} over the exchanges its passed and failed checks
    read. `targets`: id(exchange) -> the target its recording names (the agent each path addresses)."""
    seen: dict[str, dict[int, Any]] = {}
    for r in results:
        if r.status not in ("passed", "failed"):
            continue
        for rid in r.requirements:
            seen.setdefault(rid, {}).update((id(ex), ex) for ex in r.read)
    out = {}
    for rid, exchanges in seen.items():
        read = [exchange_values(ex, targets.get(id(ex))) for ex in exchanges.values()]
        values = functools.reduce(operator.or_, (bits for _, _, bits in read), 0)
        pairs = functools.reduce(operator.or_, (bits for _, bits, _ in read), 0)
        on: dict[str, list[str]] = {}
        for d, v in sorted(pair for pair, i in _VALUE_IDS.items() if values >> i & 1):
            on.setdefault(d, []).append(v)
        out[rid] = {"judged_on": on, "pairs": pairs.bit_count(), "exchanges": len(exchanges)}
    return out


def pairwise(results: Iterable[Any], targets: dict[int, Any], http2: bool) -> dict[str, dict[str, Any]]:
    """Per operation: the pairs of values of two paired dimensions (`PAIRED`, the operation aside) that the requests
    judged met on one exchange, of all the pairs a request of that operation may carry (HTTP/2's only when the
    target spoke it): `{operation: {covered, possible, share}}`."""
    met: dict[str | None, int] = {}
    for values, bits, _ in _judged_exchanges(results, targets):
        op = dict(values).get("operation")
        met[op] = met.get(op, 0) | bits
    out = {}
    for op in DIMENSIONS["operation"].values:
        dims = sorted(d for d in PAIRED if d != "operation" and op in DIMENSIONS[d].operations)
        values = {d: forms.values_of(d, (op,), http2) for d in dims}
        possible = {(a, va, b, vb) for a, b in itertools.combinations(dims, 2) for va in values[a] for vb in values[b]}
        bits = met.get(op, 0)
        met_bits = (_pair_bit((a, va), (b, vb)) for a, va, b, vb in possible)
        out[op] = _share(sum(1 for bit in met_bits if bit is not None and bits >> bit & 1), len(possible))
    return out


def triples(results: Iterable[Any], targets: dict[int, Any]) -> dict[str, dict[str, Any]]:
    """Per operation: the triples of values of three distinct free dimensions that some judged exchange carried
    together, of all a request of that operation may carry (what --thorough's covering arrays complete,
    `forms.covering_rows`): `{operation: {covered, possible, share}}`."""
    met: dict[str | None, set[forms.Tuple]] = {}
    for values, _, _ in _judged_exchanges(results, targets):
        got = dict(values)
        met.setdefault(got.get("operation"), set()).update(forms.tuples_of(got, forms.COVERING_STRENGTH))
    out = {}
    for op in DIMENSIONS["operation"].values:
        possible = forms.possible_tuples(op, forms.COVERING_STRENGTH)
        out[op] = _share(len(possible & met.get(op, set())), len(possible))
    return out


def _judged_exchanges(results: Iterable[Any], targets: dict[int, Any]) -> Iterator[tuple[frozenset, int, int]]:
    """`exchange_values` of every exchange a passed or failed check read, once each."""
    seen: set[int] = set()
    for r in results:
        for ex in r.read if r.status in ("passed", "failed") else ():
            if id(ex) not in seen:
                seen.add(id(ex))
                yield exchange_values(ex, targets.get(id(ex)))


def _share(covered: int, possible: int) -> dict[str, Any]:
    return {"covered": covered, "possible": possible, "share": round(covered / possible, 4) if possible else None}


def summary(rows: dict[str, dict[str, Any]], scopes: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, Any]:
    """Per requirement judged: its scope, what of it was missed; and over the run the share of (requirement,
    dimension, value) in scope that was judged."""
    total = covered = 0
    out: dict[str, Any] = {}
    for rid, row in sorted(rows.items()):
        want = scopes.get(rid, {})
        seen = {d: set(v) for d, v in row["judged_on"].items()}
        missing = {d: [v for v in vals if v not in seen.get(d, ())] for d, vals in want.items()}
        missing = {d: v for d, v in missing.items() if v}
        n = sum(len(v) for v in want.values())
        total += n
        covered += n - sum(len(v) for v in missing.values())
        out[rid] = {**row, "scope": {d: list(v) for d, v in want.items()}, "missing": missing,
                    "covered": f"{n - sum(len(v) for v in missing.values())}/{n}"}
    return {"requirements": out, "values_covered": covered, "values_in_scope": total,
            "share": round(covered / total, 4) if total else None,
            "inventory": {d.name: {"values": list(d.values), "free": d.free, "source": d.source,
                                   "operations": list(d.operations)} for d in DIMENSIONS.values()},
            "narrowed": {**NARROWED, "(what a request is)": SCENARIO_ONLY,
                         "(the free forms)": f"{', '.join(CLIENT_WRITTEN)}: the official client writes its own"},
            "tied": [{"requirements": list(ids), "dimension": dim, "values": list(values), "why": why}
                     for ids, dim, values, why in TIED]}
