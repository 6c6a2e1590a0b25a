"""Every exchange judged by every rule that applies to it, whatever scenario sent it.

A scenario's checks judge the exchanges built for their requirement. An exchange rule judges one exchange on its own
(`judge(ex, target)`), on every exchange of the run it `applies` to: a 401 anywhere is read by the 401 rules, an
echoed session key anywhere by the echo rules, a stream anywhere by the framing rules. So a rule holds whatever else
the request carried (its form, its framing, the scenario that sent it), and the same rules read a capture of other
people's traffic (`conformance judge`).

Each requirement with exchange rules gets one check over every recording (`checks/every`, registered `every=...`):
failed on the first exchange that broke it, passed (supplementary: never alone) when some exchange held it, not
assessed when no exchange of the run was one it speaks of.

One deviation, one failure: an exchange's rules are read in their order (the *basic* ones first: the status and
form of the answer, without which nothing else can be read). After a basic rule failed on an exchange, every later
rule that fails on it is blocked by that requirement; and an exchange a scenario's own check already failed on is
read by no other requirement's rule over every exchange (`claiming`, set by `judging`): the check built for the
exchange names its failure. Across exchanges: a refusal the service also gave, word for word, to a request that must
be answered (`refused_alike`) is that one deviation (the server turned away the request's form, whatever it asked):
every rule it broke on other exchanges is blocked by the rule the valid request broke; so is a valid request refused
for what it carried (`refused_for_its_form`: a form the run chose freely, the kind of request, a header, the body's
first member; every valid request carrying it refused so, none carrying the others), of the rule the form's input
class names when it names one (`form_rule`). And a session key the
service gave back changed, or whose request it turned away for its form (`key_broken`), is that one deviation for
every other rule broken on an exchange that sent that key (what the session holds is then read under another key,
or lacks a run).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit

from conformance import catalog
from conformance.difference import DIAGNOSES
from conformance.model.dimensions import FREE
from conformance.model.values import CLASSES
from conformance.outcomes import Blocked, Deviation, NotAssessed, Observation, judging, read_on
from conformance.vocab import forms
from conformance.vocab.protocols import mcp_response
from conformance.vocab.requests import fields, key_length, problems, session_key
from conformance.vocab.traffic import operation_of
from conformance.vocab.values import refusal, same_json
from conformance.wire.exchange import Exchange
from conformance.wire.sdk import CLOSED_BY_CLIENT

Judge = Callable[[Exchange, Any], Any]
Applies = Callable[[Exchange, Any], bool]


@dataclass(frozen=True)
class ExchangeRule:
    requirement: str
    name: str
    operations: tuple[str, ...]     # invoke | agui | mcp | metadata: the exchanges it may read
    applies: Applies                # whether the exchange is one the rule speaks of (read from the exchange alone)
    judge: Judge                    # raises a Deviation (AssertionError) when the exchange broke the rule
    basic: bool = False             # when broken, nothing else of the exchange can be read
    doc: str = ""
    first: bool = False             # a basic rule read before every other (the credential: a call turned away for
                                    # it shows nothing of what it asked)
    refusals: bool = False          # judges the form of every refusal of its protocol, whatever it refuses


@dataclass(frozen=True)
class Outcome:
    status: str                     # passed | failed | blocked | not_assessed | info
    message: str = ""
    root: str | None = None         # blocked: the requirement the exchange broke first
    exchanges: tuple[Exchange, ...] = ()
    broke: bool = False             # the rule's judge failed (a failure after the exchange's root is blocked by it)


RULES: list[ExchangeRule] = []


def register(*rules: ExchangeRule) -> None:
    """Adds rules to the table: an exchange's basic rules are read first, then the others, each in the order they
    were registered."""
    known = {(r.requirement, r.name) for r in RULES}
    RULES.extend(r for r in rules if (r.requirement, r.name) not in known)
    RULES.sort(key=lambda r: (not r.first, not r.basic))     # stable: the basic rules first, each in its order
    BY_OPERATION.clear()


BY_OPERATION: dict[str, list[ExchangeRule]] = {}


def rules_for(operation: str) -> list[ExchangeRule]:
    """The rules that may read an exchange of this operation, in their order."""
    if operation not in BY_OPERATION:
        BY_OPERATION[operation] = [r for r in RULES if operation in r.operations]
    return BY_OPERATION[operation]


def requirements() -> list[str]:
    return sorted({r.requirement for r in RULES})


def basic_requirements() -> set[str]:
    """The requirements of the basic rules: the status and form of an answer, without which nothing else is read."""
    return {r.requirement for r in RULES if r.basic}


def rules_of(requirement: str) -> list[ExchangeRule]:
    return [r for r in RULES if r.requirement == requirement]


def judgeable(ex: Exchange) -> bool:
    """An answer the server gave whole: a status, no transport error or cut of ours, not a 429 (a 429 is evidence
    only for the rate-limit rules, which read it themselves). A stream a client the suite does not drive (the
    official SDK's) stopped reading once its JSON-RPC response came is whole up to that response, which is all it
    was for: the rules read it too (whether the body ended there is then not seen)."""
    return ex.status is not None and not ex.error and not ex.rate_limited and ex.status != 429 and \
        (ex.stream is None or ex.stream.end in ("eof", "eof_mid_block") or read_to_its_response(ex))


def read_to_its_response(ex: Exchange) -> bool:
    """A stream its client closed after the last frame it read, the JSON-RPC response to the request's id."""
    if ex.stream is None or ex.stream.end != CLOSED_BY_CLIENT:
        return False
    try:
        last = mcp_response(ex)
    except (AssertionError, ValueError):
        return False
    sent = fields(ex)
    return "id" in sent and same_json(last.get("id"), sent["id"])


def outcomes(ex: Exchange, target: Any) -> dict[str, Outcome]:
    """requirement -> its outcome on this exchange, for every rule that applies to it (read once per exchange)."""
    return ex.remembered("exchange rules", lambda: _read(ex, target))


def broke_first(ex: Exchange, target: Any) -> str | None:
    """The requirement of a first rule (`ExchangeRule.first`) the exchange broke, if any: a check that failed on
    such an exchange read an answer the server gave for that reason, whatever the check varied."""
    return _broke(ex, target, lambda r: r.first)


def broke_basic(ex: Exchange, target: Any) -> str | None:
    """The requirement of the basic rule the exchange broke first (the status or form of its answer), if any."""
    return _broke(ex, target, lambda r: r.basic)


def _broke(ex: Exchange, target: Any, kind: Callable[[ExchangeRule], bool]) -> str | None:
    got = outcomes(ex, target)
    return next((r.requirement for r in rules_for(operation(ex) or "") if kind(r)
                 and getattr(got.get(r.requirement), "status", "") == "failed"), None)


def operation(ex: Exchange) -> str | None:
    return ex.remembered("operation", lambda: operation_of(ex.url or ""))


def _read(ex: Exchange, target: Any) -> dict[str, Outcome]:
    op = operation(ex)
    out: dict[str, Outcome] = {}
    if op is None or not judgeable(ex) or not _at(ex, target):
        return out
    root: str | None = None
    for r in rules_for(op):
        if r.requirement in out and out[r.requirement].status != "passed":
            continue
        try:
            if not r.applies(ex, target):
                continue
        except Exception:    # a request the rule cannot read is not one it speaks of
            continue
        got = _judged(r, ex, target)
        if got.status == "failed" and root is not None and root != r.requirement:
            got = Outcome("blocked", got.message, root, got.exchanges, broke=True)
        elif got.status == "failed" and r.basic:
            root = r.requirement
        out[r.requirement] = got
    return out


def _judged(r: ExchangeRule, ex: Exchange, target: Any) -> Outcome:
    with judging((r.requirement,)):
        try:
            note = r.judge(ex, target)
        except NotAssessed as exc:
            return Outcome("not_assessed", str(exc))
        except Observation as exc:
            return Outcome("info", str(exc))
        except Blocked as exc:
            return Outcome("blocked", exc.message, exc.root, exc.exchanges or (ex,))
        except AssertionError as exc:
            named = getattr(exc, "exchanges", ()) or (ex,)
            return Outcome("failed", str(exc) or f"{r.requirement} broken", None, tuple(named), broke=True)
    return Outcome("passed", note if isinstance(note, str) else "")


# -- one refusal, one deviation, across exchanges -------------------------------------------------------------
#: the requirements of the protocols' basic calls (`judging.BASIC_CALLS`): the first to name a refusal of valid
#: requests, in this order
PREFERRED_ROOTS = ("INV-RES-001", "AGUI-FRAME-001", "MCP-SESS-005", "MCP-VER-001")


@dataclass
class _Refusals:
    """What the rules over the form of refusals read across a run, read once per set of recordings."""
    target_of: dict[int, Any]                           # id(exchange) -> the target its recording names
    valid: dict[tuple, tuple[str, Exchange, Any]]       # (operation, refusal) -> a valid request refused so
    broke: dict[str, set[tuple[str, ...]]]              # a refusal rule -> the problems of the requests it broke on
    forms: dict[str, list[tuple[dict[str, str], tuple | None, int]]]   # operation -> (`_traits`, refusal, status)
                                                        # of every valid request answered whole
    splits: dict[tuple, list[Split]] = field(default_factory=dict)     # (operation, refusal) -> `_splits`


_REFUSALS: dict[tuple[int, ...], _Refusals] = {}


def _refusals(recordings: list[Any]) -> _Refusals:
    """`valid`: how the service refused a request that must be answered (a request with no problem of its own on
    which a basic rule failed), named by the requirement that request broke first; of several such requests
    refused alike, the one whose requirement comes first (`PREFERRED_ROOTS`, then the rules' order). `broke`: the
    problems of the requests whose answers broke each rule over the form of every refusal (`ExchangeRule.refusals`).
    `forms`: what every valid request answered whole carried and got (`refused_for_its_form` reads it). Read off the
    recordings alone: the same run, the same roots."""
    key = tuple(id(rec) for rec in recordings)
    if key not in _REFUSALS:
        _REFUSALS.clear()
        rank: dict[str, int] = {}
        for i, rid in enumerate([*PREFERRED_ROOTS, *(r.requirement for r in RULES)]):
            rank.setdefault(rid, i)
        seen = _Refusals({}, {}, {}, {})
        for rec in recordings:
            for ex in rec.exchanges:
                seen.target_of[id(ex)] = rec.target
                got, found = outcomes(ex, rec.target), tuple(problems(ex, rec.target))
                for r in rules_for(operation(ex) or ""):
                    if r.refusals and getattr(got.get(r.requirement), "broke", False):
                        seen.broke.setdefault(r.requirement, set()).add(found)
                signature = refusal(ex) if judgeable(ex) else None
                if judgeable(ex) and operation(ex) and not found:
                    seen.forms.setdefault(operation(ex), []).append((_traits(ex, rec.target), signature, ex.status))
                root = broke_basic(ex, rec.target) if signature is not None and not found else None
                at = (operation(ex), signature)
                if root is not None and (at not in seen.valid or rank[root] < rank[seen.valid[at][0]]):
                    seen.valid[at] = (root, ex, rec)
        _REFUSALS[key] = seen
    return _REFUSALS[key]


def refused_alike(named: Iterable[Exchange], recordings: list[Any]) -> tuple[str, Exchange, Any] | None:
    """(requirement, exchange, recording) of the request that must be answered and was refused as every exchange in
    `named` was (`_refusals`), when each of them is a request with a problem of its own (one the service must
    refuse, for that problem): what they show is the service turning a form away, not what they asked. A request
    with no problem refused keeps its own failure (the check built for it names it)."""
    named, run = list(named), _refusals(recordings)
    if not named or not all(id(ex) in run.target_of and problems(ex, run.target_of[id(ex)]) for ex in named):
        return None
    alike = [run.valid.get((operation(ex), refusal(ex))) if judgeable(ex) else None for ex in named]
    root = alike[0]
    return None if root is None or any(other is not root for other in alike) else root


def refused_so(named: Iterable[Exchange], recordings: list[Any]) -> str | None:
    """The rule over the form of every refusal of its protocol (`ExchangeRule.refusals`) that the answer to each
    exchange in `named` broke, when it broke on the answer to a request refused for another problem too: the service
    answers its refusals so, whatever they refuse (every refusal under 200, say), one deviation of that rule."""
    run, roots = _refusals(recordings), set()
    for ex in named:
        if id(ex) not in run.target_of:
            return None
        got, mine = outcomes(ex, run.target_of[id(ex)]), tuple(problems(ex, run.target_of[id(ex)]))
        roots.add(next((r.requirement for r in rules_for(operation(ex) or "") if r.refusals
                        and getattr(got.get(r.requirement), "broke", False)
                        and run.broke.get(r.requirement, set()) - {mine}), None))
    return roots.pop() if len(roots) == 1 and None not in roots else None


#: the rule of each protocol that a session key comes back as it was sent
KEY_ECHOES = {"invoke": "INV-SESS-003", "agui": "AGUI-ID-001", "mcp": "MCP-SESS-003"}
_KEYS: dict[tuple[int, ...], dict[str, tuple[str, Exchange, Any, str]]] = {}


def sent_key(ex: Exchange) -> str | None:
    """The session key a request sent, when it is a string (`requests.session_key`)."""
    key = session_key(ex)
    return key if isinstance(key, str) else None


def _broken_keys(recordings: list[Any]) -> dict[str, tuple[str, Exchange, Any, str]]:
    """key -> (requirement, exchange, recording, what happened) of the first exchange that sent the key and either
    got it back changed (its protocol's echo rule failed there) or was turned away for a form the run chose
    (`refused_for_its_form`): what the session holds under that key is no longer what its requests made it."""
    key = tuple(id(rec) for rec in recordings)
    if key not in _KEYS:
        _KEYS.clear()
        found: dict[str, tuple[str, Exchange, Any, str]] = {}
        for rec in recordings:
            for ex in rec.exchanges:
                echo, sent = KEY_ECHOES.get(operation(ex) or ""), sent_key(ex)
                if sent is None or sent in found:
                    continue
                echoed = outcomes(ex, rec.target).get(echo) if echo else None
                if echoed is not None and echoed.status == "failed" and _transformed(echoed.message):
                    found[sent] = (echo, ex, rec, "came back changed")
                elif (turned := refused_for_its_form((ex,), recordings)) is not None:
                    found[sent] = (turned[0], ex, rec, f"was turned away for its form ({turned[3]})")
        _KEYS[key] = found
    return _KEYS[key]


def _transformed(message: str) -> bool:
    """The echo's failure says the key came back as a transformation of the one sent (`difference.explain` names a
    cause, or the kinds of characters it changed): a store keyed by the changed key, whose sessions are that one
    deviation. A key of another making (a new one per call) is not: what the session then holds is a rule's own."""
    return "; cause: " in message or "(model.values)" in message


def key_broken(named: Iterable[Exchange], recordings: list[Any]) -> tuple[str, Exchange, Any, str] | None:
    """(requirement, exchange, recording, what happened) of the exchange that broke the session every exchange in
    `named` sent its key to (`_broken_keys`: that exchange or another with the same key): what the service keeps
    under the key is then read under another, or lacks a run it turned away, one deviation of that exchange's rule
    whatever a later rule of the session reads; or that changed a key the way that puts every key `named` sent on
    the side of its bounds the service answered (`key_length_changed`)."""
    named, broken = list(named), _broken_keys(recordings)
    keys = [sent_key(ex) for ex in named]
    if not named or any(k is None or k not in broken for k in keys):
        return key_length_changed(named, recordings) if named else None
    return broken[keys[0]]


def _key_changes(recordings: list[Any]) -> list[tuple[Callable[[str], str], str, Exchange, Any]]:
    """(the change, its echo rule, the exchange, its recording) of each change the service made to a key it gave
    back, as its echo's failure names it (one function of the key: `difference.DIAGNOSES`), the first of each."""
    out, seen = [], set()
    for rule, ex, rec, what in _broken_keys(recordings).values():
        if what != "came back changed":
            continue
        message = outcomes(ex, rec.target)[rule].message
        for d in DIAGNOSES.values():
            if d.apply is not None and isinstance(d.words, str) and d.name not in seen \
                    and f"cause: the service {d.words}" in message:
                seen.add(d.name)
                out.append((d.apply, rule, ex, rec))
    return out


def key_length_changed(named: Iterable[Exchange], recordings: list[Any]) -> tuple[str, Exchange, Any, str] | None:
    """(echo rule, exchange, recording, what) when every exchange in `named` sent a key the service answered as if
    it lay on the other side of 1 to 256 (a key inside refused, one outside taken), and a change the service made to
    a key it gave back elsewhere in the run puts this key on that side: the length it judged is the changed key's,
    one deviation, of the rule the change broke (its own protocol's echo, where that showed it)."""
    changes, found = _key_changes(recordings), None
    if not changes:
        return None
    for ex in named:
        key, status = sent_key(ex), ex.status or 0
        side = key_length(key)
        if side not in ("inside", "outside") or (side == "inside") != (400 <= status < 500):
            return None
        own = KEY_ECHOES.get(operation(ex) or "")      # the change its own protocol's echo showed, first
        found = next((root for root in sorted(changes, key=lambda root: root[1] != own) if _moved(root[0], key, side)),
                     None)
        if found is None:
            return None
    change, rule, ex, rec = found
    return rule, ex, rec, (f"lies {'outside' if side == 'inside' else 'inside'} 1 to 256 once changed as the service "
                           f"changed a key it gave back")


def _moved(change: Callable[[str], str], key: str, side: str) -> bool:
    try:
        return key_length(change(key)) == ("outside" if side == "inside" else "inside")
    except (ValueError, UnicodeError):
        return False


def key_broken_words(root: tuple[str, Exchange, Any, str]) -> str:
    requirement, ex, rec, what = root
    return (f"the session key it sent {what} on {rec.scenario} {ex.label}, which broke {requirement}: what the "
            f"service keeps under that key is not what its requests made it")


def refused_for_its_form(named: Iterable[Exchange], recordings: list[Any]) -> tuple[str, Exchange, Any, str] | None:
    """(requirement, exchange, recording, the form) when every exchange in `named` is a request with no problem of
    its own refused, and what it was refused for is something it carried (`_traits`: a form the run chose freely,
    `model.dimensions.FREE`, first; then the kind of request, a header there or not, the body's first member): of its
    operation's valid requests, every one carrying some values of it was refused so and none carrying the others,
    some of which were served. The service turned those requests away, whatever each asked: one deviation, of the
    rule the first of them broke first (`refused_alike`'s roots: the basic rule of the protocol)."""
    named, run = list(named), _refusals(recordings)
    roots: dict[tuple[str, int], tuple[str, Exchange, Any, str]] = {}    # (root, its exchange)
    for ex in named:
        target = run.target_of.get(id(ex))
        signature = refusal(ex) if judgeable(ex) else None
        if target is None or signature is None or problems(ex, target):
            return None
        root = run.valid.get((operation(ex), signature))
        split = _refusing_form(_traits(ex, target), run, operation(ex) or "", signature)
        if root is None or split is None:
            return None
        within, name, value = split
        owner = form_rule(name, value, operation(ex))
        form = _trait_words(name, value) + (f" (among requests with {_trait_words(*within)})" if within else "")
        roots.setdefault((owner or root[0], id(root[1])), (owner or root[0], *root[1:], form))
    return next(iter(roots.values())) if len(roots) == 1 else None


@functools.cache
def _protocols() -> dict[str, str]:
    return {rid: req.protocol for rid, req in catalog.load().items()}


def form_rule(dim: str, value: str, op: str | None) -> str | None:
    """The requirement that says a request of `op` carrying `dim=value` is answered as its plain form would be: the
    one its input class names for that operation (`model.values.CLASSES`: a `bearer` scheme is AUTH-KEY-001's, a
    `Content-Type` with a parameter MCP-SESS-005's on MCP), when there is exactly one."""
    if dim == "accept-form":    # its class depends on the Accept the scenario wrote (JSON, the event stream, MCP's)
        return None
    name = forms.carried(dim, value)
    applies = CLASSES[name].applies if name in CLASSES else ()
    protocols = _protocols()
    mine = [r for r in applies if protocols.get(r) == op] or \
        [r for r in applies if protocols.get(r) in ("auth", "general")]
    return mine[0] if len(mine) == 1 else None


#: what a valid request may be turned away for besides the forms the run chose freely, read off the exchange: what
#: kind of request it is (the inventory's other dimensions), each header it carried or not, its body's first member
HEADER, FIRST_MEMBER = "header ", "first member"
NOT_SPLIT = ("operation", "credential", "agent")     # the same on every valid request of an operation


def _traits(ex: Exchange, target: Any) -> dict[str, str]:
    """What one request carried that a service might turn it away for (`_refusing_form` splits by them; read once
    per exchange, as `forms.read` is)."""
    return ex.remembered("refusal traits", lambda: _read_traits(ex, target))


def _read_traits(ex: Exchange, target: Any) -> dict[str, str]:
    out = {d: v for d, v in forms.read(ex, target).items() if d not in NOT_SPLIT}
    out.update({HEADER + name.lower(): "present" for name in ex.request_headers or {}})
    sent = fields(ex)
    if sent:
        out[FIRST_MEMBER] = next(iter(sent))
    return out


def _trait_words(name: str, value: str) -> str:
    if name.startswith(HEADER):
        return f"{'a' if value == 'present' else 'no'} `{name.removeprefix(HEADER)}` header"
    return f"`{value}` as the body's first member" if name == FIRST_MEMBER else f"{name}={value}"


def _trait(traits: dict[str, str], name: str) -> str | None:
    return traits.get(name, "absent" if name.startswith(HEADER) else None)


@dataclass(frozen=True)
class Split:
    """Valid requests of an operation refused alike, told apart by what they carried: among those carrying
    `within` (a trait and its value; None: all of them), every one whose `name` has a value of `refused` was refused
    so and none of the others, some of which were served (2xx)."""
    within: tuple[str, str] | None
    name: str
    refused: frozenset[str]


def _refusing_form(carried: dict[str, str], run: _Refusals, op: str, signature: tuple
                   ) -> tuple[tuple[str, str] | None, str, str] | None:
    """(within, trait, its value) of the first `Split` of the operation's valid requests refused with `signature`
    that the request `carried` falls in (its value refused so on two requests at least)."""
    if (op, signature) not in run.splits:
        run.splits[(op, signature)] = _splits(run.forms.get(op, []), signature)
    for split in run.splits[(op, signature)]:
        if split.within is not None and _trait(carried, split.within[0]) != split.within[1]:
            continue
        if _trait(carried, split.name) in split.refused:
            return split.within, split.name, _trait(carried, split.name)
    return None


def _splits(valid: list[tuple[dict[str, str], tuple | None, int]], signature: tuple) -> list[Split]:
    """Each way the traits split the valid requests refused with `signature` from the others (`Split`): one trait
    over them all first (the free dimensions, then the others `_traits` reads), then one trait among the requests
    carrying a value of another (a header, say, that served requests carry too). Read as bit sets of the requests:
    a hostile service may refuse in as many ways as it answers."""
    refused = sum(1 << i for i, (_, got, _) in enumerate(valid) if got == signature)
    if refused.bit_count() < 2:
        return []
    served = sum(1 << i for i, (_, _, status) in enumerate(valid) if 200 <= status < 300)
    names = sorted(set().union(*(traits for traits, _, _ in valid)), key=lambda n: (n not in FREE, FREE.index(n)
                                                                                   if n in FREE else 0, n))
    carrying: dict[str, dict[str, int]] = {name: {} for name in names}     # trait -> value -> the requests
    for i, (traits, _, _) in enumerate(valid):
        for name in names:
            if (value := _trait(traits, name)) is not None:
                carrying[name][value] = carrying[name].get(value, 0) | 1 << i
    everyone = (1 << len(valid)) - 1
    out = [Split(None, name, split) for name in names
           if (split := _split_by(carrying[name], everyone, refused, served))]
    within: list[tuple[int, Split]] = []        # (the refused requests it explains, the split)
    for name in names:
        for value, among in carrying[name].items():
            if among & refused and among != everyone:
                within += [(sum((carrying[other][v] & among).bit_count() for v in split),
                            Split((name, value), other, split))
                           for other in names if other != name
                           and (split := _split_by(carrying[other], among, refused, served))]
    return out + [split for _, split in sorted(within, key=lambda pair: -pair[0])]     # stable: the traits' order


def _split_by(values: dict[str, int], among: int, refused: int, served: int) -> frozenset[str]:
    """The values of a trait (`values`: each value's requests, as bits) whose requests in `among` were all refused
    (two at least each), when none of the others in `among` was refused and some of those were served; empty when
    the trait does not split them so."""
    always, never = [], 0
    for value, mask in values.items():
        mine = mask & among
        if not mine:
            continue
        if mine & refused == mine:
            always.append((value, mine))
        elif mine & refused:
            return frozenset()
        else:
            never |= mine
    if not always or not never & served:
        return frozenset()
    return frozenset(value for value, mine in always if mine.bit_count() >= 2)


def refused_unread(named: Iterable[Exchange], recordings: list[Any]) -> tuple[str, Exchange, Any, str] | None:
    """(requirement, exchange, recording, why) when every exchange in `named` was turned away before its request
    was read, as `refused_alike` (a request with a problem of its own refused as a valid one was) or
    `refused_for_its_form` (a valid one refused for what it carried) says, each naming the same requirement."""
    roots = []
    for ex in named:
        alike = refused_alike((ex,), recordings)
        turned = refused_for_its_form((ex,), recordings) if alike is None else None
        if alike is None and turned is None:
            return None
        roots.append((*alike, refused_alike_words(alike)) if alike
                     else (*turned[:3], refused_for_its_form_words(turned)))
    return roots[0] if roots and len({root[0] for root in roots}) == 1 else None


def refused_for_its_form_words(root: tuple[str, Exchange, Any, str]) -> str:
    requirement, ex, rec, form = root
    return (f"every valid request carrying {form} was refused so, and none carrying the other forms of it: the "
            f"service turned the form away before reading what the request asked, which broke {requirement} on "
            f"{rec.scenario} {ex.label}")


def refused_alike_words(root: tuple[str, Exchange, Any]) -> str:
    requirement, ex, rec = root
    return (f"the same refusal the service gave {rec.scenario} {ex.label}, a request that must be answered, which "
            f"broke {requirement}: the server turned the request's form away before reading what it asked")


def refused_so_words(requirement: str) -> str:
    return (f"its answer broke {requirement}, as the answers to requests refused for other problems did: the "
            f"service answers every refusal so")


def _at(ex: Exchange, target: Any) -> bool:
    """The exchange went to the service at its base URL (a cleartext probe on purpose, to http://, did not)."""
    base = getattr(target, "base_url", None)
    return not base or urlsplit(ex.url or "").scheme == urlsplit(base).scheme


# -- the check of one requirement over every exchange ----------------------------------------------------------
MAX_NAMED = 3
#: id(exchange) -> the requirement a scenario's check already failed on it (set by `judging` around the check)
CLAIMED: contextvars.ContextVar[dict[int, str]] = contextvars.ContextVar("conformance_claimed", default={})


@contextlib.contextmanager
def claiming(claims: dict[int, str]) -> Iterator[None]:
    token = CLAIMED.set(claims)
    try:
        yield
    finally:
        CLAIMED.reset(token)


def over_every_exchange(requirement: str) -> Callable[[list[Any]], str]:
    """The check function of `requirement` over every recording of a run (`registry.check(..., every=...)`)."""
    ops = tuple(sorted({op for r in rules_of(requirement) for op in r.operations}))

    def fn(recordings: list[Any]) -> str:
        read: dict[str, list[tuple[Any, Exchange, Outcome]]] = {}
        for rec, ex, got in _judged_by(recordings).get(requirement, ()):
            claimed = CLAIMED.get().get(id(ex))
            if got is not None and got.status == "failed" and claimed not in (None, requirement):
                got = Outcome("blocked", f"{got.message} (a check of {claimed} already failed on this "
                                         f"exchange)", claimed, got.exchanges)
            alike = refused_alike((ex,), recordings) if got is not None and got.status == "failed" else None
            if alike is not None and alike[0] != requirement:
                got = Outcome("blocked", f"{got.message} ({refused_alike_words(alike)})", alike[0],
                              (ex, alike[1]))
            general = refused_so((ex,), recordings) if got is not None and got.status == "failed" else None
            if general is not None and general != requirement:
                got = Outcome("blocked", f"{got.message} ({refused_so_words(general)})", general, got.exchanges)
            turned = refused_for_its_form((ex,), recordings) if got is not None and got.status == "failed" else None
            if turned is not None and turned[0] != requirement:
                got = Outcome("blocked", f"{got.message} ({refused_for_its_form_words(turned)})", turned[0],
                              (ex, turned[1]))
            broken = key_broken((ex,), recordings) if got is not None and got.status == "failed" \
                and requirement not in KEY_ECHOES.values() else None
            if broken is not None and broken[0] != requirement:
                got = Outcome("blocked", f"{got.message} ({key_broken_words(broken)})", broken[0], (ex, broken[1]))
            if got is not None:
                read.setdefault(got.status, []).append((rec, ex, got))
                if got.status in ("passed", "failed"):
                    read_on(ex)
        failed = read.get("failed", [])
        if failed:
            _, ex, got = failed[0]
            more = f" (and {len(failed) - 1} more exchange(s) of the run)" if len(failed) > 1 else ""
            exc = Deviation(f"{got.message}{more}{_version_words(ex)}",
                            [x for _, e, g in failed[:MAX_NAMED] for x in (g.exchanges or (e,))])
            exc.version_only = _one_version(failed, read.get("passed", []))
            raise exc
        passed, blocked = read.get("passed", []), read.get("blocked", [])
        if passed:
            scenarios = sorted({rec.scenario for rec, _, _ in passed})
            roots = sorted({got.root for _, _, got in blocked if got.root})
            return f"held on {len(passed)} exchange(s) of {len(scenarios)} scenario(s)" + (
                f"; {len(blocked)} more blocked by {', '.join(roots)}, whose deviation they show" if roots else "")
        if blocked:
            _, ex, got = blocked[0]
            raise Blocked(got.root or "", got.message, got.exchanges or (ex,))
        infos = read.get("info", [])
        if infos:
            raise Observation(infos[0][2].message)
        why = "; ".join(sorted({g.message for _, _, g in read.get("not_assessed", [])}))[:300]
        raise NotAssessed(f"no exchange of the run was one {requirement}'s exchange rules read"
                          + (f" ({why})" if why else ""))

    fn.__name__ = fn.__qualname__ = f"{requirement.lower().replace('-', '_')}_on_every_exchange"
    fn.__doc__ = (f"Every exchange of the run ({', '.join(ops)}) that {requirement} speaks of, whatever scenario "
                  f"sent it: " + " ".join(r.doc for r in rules_of(requirement) if r.doc))
    return fn


def protocols_of(requirement: str) -> tuple[str, ...]:
    return tuple(sorted({op for r in rules_of(requirement) for op in r.operations}))


_JUDGED_BY: dict[tuple[int, ...], dict[str, list[tuple[Any, Exchange, Outcome]]]] = {}


def _judged_by(recordings: list[Any]) -> dict[str, list[tuple[Any, Exchange, Outcome]]]:
    """requirement -> (recording, exchange, its outcome) of every exchange a rule of it read, in order (indexed
    once per set of recordings: every requirement's check reads the same ones)."""
    key = tuple(id(rec) for rec in recordings)
    if key not in _JUDGED_BY:
        _JUDGED_BY.clear()
        by_operation: dict[str, list[tuple[Any, Exchange]]] = {}
        for rec in recordings:
            for ex in rec.exchanges:
                by_operation.setdefault(operation(ex) or "", []).append((rec, ex))
        index: dict[str, list[tuple[Any, Exchange, Outcome]]] = {}
        for _, exchanges in sorted(by_operation.items()):     # a requirement of several operations: in their order
            for rec, ex in exchanges:
                for requirement, got in outcomes(ex, rec.target).items():
                    index.setdefault(requirement, []).append((rec, ex, got))
        _JUDGED_BY[key] = index
    return _JUDGED_BY[key]


def _one_version(failed: list, passed: list) -> tuple[str, ...]:
    """(the version, the operations) when the rule broke over one HTTP version alone and held over another: one
    fault of that version (`versions.one_root`); () otherwise."""
    broke = {e.http_version for _, e, _ in failed}
    held = {e.http_version for _, e, _ in passed}
    if len(broke) != 1 or not held - broke:
        return ()
    return (next(iter(broke)), *sorted({operation(e) for _, e, _ in failed if operation(e)}))


def _version_words(ex: Exchange) -> str:
    return f" (over {ex.http_version})" if ex.http_version and ex.http_version != "HTTP/1.1" else ""
