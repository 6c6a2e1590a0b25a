"""How a run sends the values of the model (`conformance.model.values`: fields, classes, transformations) and what a
report says of them.

- `values(target, name, baseline)`: the values of a class this run sends: `sent` of its representatives (times
  `--depth`), in an order fixed by the seed, so a run is reproducible and `--depth N` adds values within the class.
- `carry(ctx, step, *names)`: the scenario notes which classes a step carried (`facts["input_classes"]`), and
  `judged_on` reads them back from the recordings a check was judged on (live or re-judged alike), so a report
  names the classes each requirement was judged on.
- `withheld(*names)`: a test sends the baseline instead of a class, to prove that a broken server is caught because
  of that class (tests/selftest/test_zoo_inputs.py).

Field bounds and types come from `schemas/` (`session_key_bounds`, `jsonrpc_id_types`); a test holds the model to
them.
"""
from __future__ import annotations

import contextlib
import random
import re
from typing import Any, Iterable, Iterator

from conformance.model.values import (  # noqa: F401 (the model's data, read through this module too)
    FIELDS, NON_ASCII, ASTRAL, JSON_ESCAPES, PUNCTUATION, FOLDING, COMPOSITION, COMPATIBILITY, EDGE_WHITESPACE,
    EDGE_CHARACTERS, PARAM_TWINS, TRANSFORMABLE, STRING_KINDS, MULTIBYTE, THREE_BYTE, HISTORY_REQUIREMENTS,
    Transform, TRANSFORMS, COVERED_ELSEWHERE, InputClass, CLASSES, SESSION_ECHO)


# -- what a run sends -----------------------------------------------------------------------------------------------
_WITHHELD: frozenset[str] = frozenset()


@contextlib.contextmanager
def withheld(*names: str) -> Iterator[None]:
    """While inside, the classes named send their baseline instead (a test of the zoo: is the catch this class's?)."""
    global _WITHHELD
    unknown = [n for n in names if n not in CLASSES]
    if unknown:
        raise KeyError(f"no input class {unknown}; known: {sorted(CLASSES)}")
    before, _WITHHELD = _WITHHELD, _WITHHELD | set(names)
    try:
        yield
    finally:
        _WITHHELD = before


def is_sent(name: str) -> bool:
    return CLASSES[name].judged and name not in _WITHHELD


def values(target: Any, name: str, baseline: Any = None) -> list[Any]:
    """The values of class `name` this run sends: `sent` × `--depth` of its representatives (all of them in their
    order, or a run of them starting where the seed says: deterministic per seed). When the class is withheld, as
    many baselines (`baseline(i)` when callable): the carrier still sends its requests, with plain values."""
    cls = CLASSES[name]
    depth = max(1, int(getattr(target, "depth", 1) or 1))
    reps = list(cls.values)
    count = max(1, min(len(reps), cls.sent * depth))
    if not is_sent(name):
        return [baseline(i) if callable(baseline) else baseline for i in range(count)]
    if count < len(reps):
        start = random.Random(f"{target.seed}/{name}").randrange(len(reps))
        reps = reps[start:] + reps[:start]
    return reps[:count]


def value(target: Any, name: str, baseline: Any = None) -> Any:
    """The first value of `values`: what a request that carries one value of the class sends."""
    return values(target, name, baseline)[0]


def fragment(target: Any, field: str) -> str:
    """The string kinds of `field` this run puts into one value (`東あ€/ ?#%2f😀"\\…`), every representative of each
    in the seed's order; whitespace goes at both ends (`edge-whitespace`), where trimming would remove it. Empty when
    all are withheld."""
    edges = f"{field}:edge-whitespace"
    inside = "".join("".join(values(target, name, "")) for name in string_kinds(field) if name != edges)
    if edges not in CLASSES:
        return inside
    ends = "".join(values(target, edges, ""))
    return f"{ends}{inside}{ends[::-1]}" if inside or ends else ""


def string_kinds(field: str) -> tuple[str, ...]:
    """The classes of `field` that are string kinds (non-ascii, astral, json-escapes, punctuation, and the kinds a
    transformation changes), in that order."""
    return tuple(name for kind in STRING_KINDS if (name := f"{field}:{kind}") in CLASSES)


def carry(ctx: Any, step: str, *names: str) -> None:
    """Note that `step` carried the classes named (those withheld carry nothing)."""
    carried = ctx.recording.facts.setdefault("input_classes", {}).setdefault(step, [])
    carried += [n for n in names if is_sent(n) and n not in carried]


def tagged(ctx: Any, stem: str, field: str, *steps: str) -> str:
    """A fresh value (`ctx.unique(stem)`) holding this run's string kinds of `field`, carried on `steps`; the
    value's whitespace, if any, is at its ends."""
    for step in steps:
        carry(ctx, step, *string_kinds(field))
    extra = fragment(ctx.target, field)
    if not extra:
        return ctx.unique(stem)
    core = extra.strip(EDGE_CHARACTERS)
    lead = extra[:len(extra) - len(extra.lstrip(EDGE_CHARACTERS))]
    trail = extra[len(extra.rstrip(EDGE_CHARACTERS)):]
    base = ctx.unique(stem, plain=True)     # the fragment carries the kinds: a kind of the key's own would mix in
    return f"{lead}{base}-{core}-k{trail}" if core else f"{lead}{base}{trail}"


def keyed(ctx: Any, stem: str, *steps: str) -> str:
    """A fresh session key holding this run's session-key string kinds, carried on `steps`."""
    return tagged(ctx, stem, "session-key", *steps)


def padded(ctx: Any, stem: str, length: int, name: str, step: str, baseline: str) -> str:
    """A session key of `length` characters: `ctx.unique(stem)` padded with a character of class `name` (two or
    three UTF-8 bytes), or with `baseline` when the class is withheld; carried on `step`."""
    carry(ctx, step, name)
    key = ctx.unique(stem, plain=True) + "-"
    return (key + value(ctx.target, name, baseline) * length)[:length]


def snake_case(name: str) -> str:
    """`threadId` -> `thread_id`: the name a snake_case binder maps to the camelCase field."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def extra_fields(ctx: Any, step: str, interpreted: tuple[str, ...] = ()) -> dict[str, Any]:
    """Unknown fields of classes params:falsy (0, [], {}, a field named ""), params:json-escapes (in a name and
    a value), params:twins (names a transformation would merge), params:binder-syntax (names a binder reads as
    paths), params:formatted-strings (strings that read as a date or a number) and params:interpreted-in-another-case (the `interpreted` names of the protocol, capitalized and in upper
    case), carried on `step`: what every pass-through request adds to its own fields."""
    carry(ctx, step, "params:falsy", "params:json-escapes", "params:twins", "params:binder-syntax",
          "params:formatted-strings", *(["params:interpreted-in-another-case"] if interpreted else []))
    escapes = value(ctx.target, "params:json-escapes", "")
    twins = value(ctx.target, "params:twins", {})
    cased = {other: f"not the {name} field" for name in interpreted for other in (name[:1].upper() + name[1:],
                                                                                 name.upper(), snake_case(name))
             if other != name} if is_sent("params:interpreted-in-another-case") else {}
    return {**value(ctx.target, "params:falsy", {}), **value(ctx.target, "params:binder-syntax", {}),
            **value(ctx.target, "params:formatted-strings", {}),
            **({f"conf{escapes}Name": f"v{escapes}"} if escapes else {}),
            **twins, **({"confText": TRANSFORMABLE} if twins else {}), **cased}


# invoke's conversation as the pass-through sends it (`{role, content}` items: their shape is not shown)
PASS_MESSAGES = ({"role": "user", "content": "first \u2713"}, {"role": "assistant", "content": "second\nline"})


def pass_messages(target: Any, *, parts: bool = False) -> list[dict[str, Any]]:
    """The invoke `messages` list whose reaching the agent INV-PASS-004 reads: two turns, then an earlier text of
    class messages:transformable (`history_text`). With `parts`, its first turn as clients of chat APIs write one:
    the content a list of typed parts, the speaker's name beside it (the spec shows no item shape: INV-OPEN-003)."""
    first, *rest = map(dict, PASS_MESSAGES)
    if parts:
        first = {"role": first["role"], "content": [{"type": "text", "text": first["content"]}], "name": "ada"}
    return [first, *rest, {"role": "assistant", "content": value(target, "messages:transformable", "earlier text")}]


def history_text(ctx: Any, step: str) -> str:
    """The content of an earlier message in a pass-through `messages` list: text holding every string kind a
    transformation changes, whitespace at its ends (class messages:transformable), carried on `step`."""
    carry(ctx, step, "messages:transformable")
    return value(ctx.target, "messages:transformable", "earlier text")


# -- what a report says ---------------------------------------------------------------------------------------------
def judged_on(requirements: Iterable[str], recordings: Iterable[Any], read: Iterable[Any] | None = None,
              scenario_of: dict[int, str] | None = None) -> tuple[str, ...]:
    """The classes the recordings carried that apply to any of `requirements` (a check's), sorted; with `read`, only
    those of the exchanges read (a rule over every exchange is judged on the classes of the exchanges it read,
    whatever scenario sent them). `scenario_of`: id(exchange) -> the scenario of its recording, when known."""
    wanted = set(requirements)
    recordings = list(recordings)
    steps_of = [(getattr(rec, "facts", None) or {}).get("input_classes") or {} for rec in recordings]
    carried: set[str] = set()
    if read is None:
        carried.update(name for steps in steps_of for names in steps.values() for name in names)
    else:
        if scenario_of is None:
            scenario_of = {id(ex): rec.scenario for rec in recordings for ex in rec.exchanges}
        by_scenario = {getattr(rec, "scenario", None): steps for rec, steps in zip(recordings, steps_of)}
        for ex in read:
            carried.update(by_scenario.get(scenario_of.get(id(ex)), {}).get(ex.label, ()))
    return tuple(sorted(n for n in carried if n in CLASSES and wanted & set(CLASSES[n].applies)))


def applies_to(requirement: str) -> list[str]:
    """The classes the model sends to a requirement (`conformance list`)."""
    return sorted(c.name for c in CLASSES.values() if c.judged and requirement in c.applies)


def open_classes() -> list[InputClass]:
    return [c for c in CLASSES.values() if not c.judged]
