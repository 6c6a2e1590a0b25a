"""Readings of the agent, judged against its contract (docs/agent.md) before the service is blamed.

The suite sees what the service did through what the agent replies: `count` (the runs the session's instance
started), `echo params` / `echo messages` (the canonical JSON of what the agent received), the `answer: ` piece a
resumed run starts with. A reading can differ from what the contract makes it for two reasons: the service did
something else (the spec's business: a failure), or the deployed agent is off its contract (never the service's
fault). Every check that reads the agent decides between them here, on the evidence, by one table per reading:

| reading | what came back | the evidence says | so |
|---|---|---|---|
| `count` | the number the contract gives | | as contracted |
| `count` | 0 | no run counts 0 runs when it counts itself | the agent counts from 0: not assessed |
| `count` | one less, where a `count` of the recording replied 0 | the agent counts from 0 | not assessed |
| `count` | more by exactly the resumes on this key, each of which reached the agent with its answer | a resumed run counted again | not assessed |
| `count` | more by (some of) the resumes on this key that did not continue the paused run | they started runs | blocked by the resume's rule |
| `count` | less, otherwise | | the service: the call reached another instance |
| `count` | more, otherwise (by exactly the runs another key started: say so) | | the service: two keys reached one instance |
| echo | not JSON | the agent did not echo what it received (another prompt reached it) | the service |
| echo | JSON not in the canonical form, the value sent | the agent's writer (order, spacing, escapes, number layout) | noted, and read |
| echo | a number that differs as a double would read it | the agent's reader, or a service's | not assessed |
| echo | a field or item missing, extra or with another value | | the service |
| `count`, echo | no number; JSON of another type than the echo writes | the reply did not come through whole | blocked by the reply's rule |
| `answer: ` | the answer's canonical JSON, then the rest of the run | | as contracted |
| `answer: ` | the answer in another form (prefix, spacing, escapes), the same value, the rest right | the agent's writer | noted, and read |
| `answer: ` | another value, no answer at all, or another continuation | the conformance agent always writes it | the service |

Pieces (`chunks`) are never read one by one: the spec lets a service carry the reply in pieces of its own, so only
the joined text is judged, and a split other than the agent's contract is nobody's failure.

A reading blamed on the agent raises `OffContract` (a `NotAssessed`) when it hides what the check was to read, or
is only noted when the service's part can still be read through it. Either way it is a `Finding`, collected while a
check is judged (`collecting`) so the report names a deviating agent once, up front (`report.json` `agent`).
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from conformance.model.histories import REPLY
from conformance.outcomes import Deviation, NotAssessed, precondition
from conformance.vocab import protocols as p
from conformance.vocab.requests import op
from conformance.vocab.protocols import canonical
from conformance.vocab.readers import stream_events
from conformance.vocab.text import truncate
from conformance.vocab.values import differs, digits_only, same_json

# The sentences of docs/agent.md each way of differing departs from (tests/docs keeps them verbatim), and the case
# of the agent's test vectors (vectors.json) that shows the contract: what `python -m conformance.agent.vectors`
# names when played against such an agent.
CONTRACT = {
    "resumed": ("A resumed run is the same run: it does not count again and it keeps the params and messages it "
                "started with.", "count in a paused and resumed run"),
    "from-zero": ("a new session key starts a new instance at 0, so its first run says `1`.",
                  "count across runs and sessions"),
    "canonical": ("`tool`, `ask` and `echo` write JSON values in one form, the same in every language",
                  "echo params and messages"),
    "numbers": ("such an implementation must read numbers with their written form kept.", "echo params and messages"),
    "answer": ("When the run is resumed with an answer, it first adds the piece `answer: ` followed by the canonical "
               "JSON of the answer, then goes on with the next directive", "ask, then resume with an object"),
}
ANSWER_PREFIX = "answer: "


@dataclass(frozen=True)
class Finding:
    """One reading of the agent that departs from its contract in `way` (a key of CONTRACT)."""
    reading: str          # what was read: `count`, `echo params`, `echo messages`, the `answer: ` piece
    way: str
    said: str             # the way in words: "counts a resumed run again"
    expected: str
    got: str
    exchange: Any = None  # the exchange the reading was taken on
    hides: bool = True    # the service's part could not be read through it (the check is not assessed)

    @property
    def sentence(self) -> str:
        return CONTRACT[self.way][0]

    @property
    def vector(self) -> str:
        return CONTRACT[self.way][1]

    def words(self) -> str:
        where = f"{self.exchange.label}: " if getattr(self.exchange, "label", None) else ""
        return (f"{where}the agent is off its contract, not the service: {self.reading} {self.said} "
                f"({self.difference()}; docs/agent.md: \"{self.sentence}\")")

    def difference(self) -> str:
        """What it replied against what the contract makes it: both when short (`expected '2', got '3'`), else their
        smallest difference (JSON values compared as such when both are JSON: a number read as a double)."""
        if len(self.expected) + len(self.got) <= 40:
            return f"expected {truncate(self.expected, 40, quoted=True)}, got {truncate(self.got, 40, quoted=True)}"
        expected, got = self.expected, self.got
        if self.way == "numbers":
            try:
                expected, got = json.loads(expected), json.loads(got)
            except ValueError:
                pass
        return differs(expected, got, cause=False)


class OffContract(NotAssessed):
    """The reading shows the deployed agent off its contract, and what the check was to read of the service cannot be
    read through it: not assessed, never failed."""

    def __init__(self, finding: Finding):
        self.finding = finding
        super().__init__(finding.words() + ": what it was to show of the service is not assessed")


_FOUND: contextvars.ContextVar[list[Finding] | None] = contextvars.ContextVar("conformance_agent_findings",
                                                                             default=None)


@contextlib.contextmanager
def collecting(found: list[Finding] | None = None) -> Iterator[list[Finding]]:
    """Every Finding noted inside (by the readings of one check being judged), in `found`."""
    found = [] if found is None else found
    token = _FOUND.set(found)
    try:
        yield found
    finally:
        _FOUND.reset(token)


def note(finding: Finding) -> Finding:
    found = _FOUND.get()
    if found is not None and finding not in found:
        found.append(finding)
    return finding


def off_contract(finding: Finding) -> OffContract:
    return OffContract(note(finding))


T = TypeVar("T")
R = TypeVar("R")


def read_all(judge: Callable[[Callable[[T], Any]], R], rule: Callable[[T], Any]) -> R:
    """`judge(guarded)`, `guarded` being `rule` with the readings the agent explains set aside: every item is read, a
    deviation of the service in any of them is the outcome (whatever the agent did elsewhere), and only then does a
    reading the agent explains make the whole not assessed (its OffContract), never passed over. `judge` is the
    check's way of applying a rule to many items (`outcomes.judge_all`, a surface's `judge_every`)."""
    off: list[OffContract] = []

    def guarded(item: T) -> Any:
        try:
            return rule(item)
        except OffContract as exc:
            off.append(exc)
            return None

    out = judge(guarded)
    if off:
        raise off[0]
    return out


def reply_text(protocol: str, ex: Any) -> str | None:
    """The reply a call carried, read leniently (None when it carries none): what the agent said, to learn how it
    counts or whether a resume reached it, never to judge the service (each protocol's checks read replies their own
    strict way)."""
    try:
        if ex.status != 200:
            return None
        if protocol == "agui":
            return p.agui_text(stream_events(ex))
        if protocol == "invoke":
            if ex.stream is not None:
                return p.invoke_stream_text(ex)
            body = ex.json()
            return body["result"] if isinstance(body, dict) and isinstance(body.get("result"), str) else None
        result = p.mcp_response(ex).get("result")
        return p.mcp_text(result) if isinstance(result, dict) else None
    except (AssertionError, AttributeError, KeyError, TypeError, ValueError):
        return None


# -- count ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Count:
    """One `count` reply and what the evidence around it says.

    `expected`: what the contract makes it (one number, or the range runs sent together on one key span).
    `zero_based`: a `count` of the same recording replied 0 (`counts_from_zero`).
    `resumes`: the resumes of this key before this run that reached the agent as the answer to its question (their
    reply holds it, or they paused on the next question), surely and at most (a resume racing this run).
    `lost`: (requirement, exchange) of each resume of this key that did not continue the paused run: each may have
    started a run of its own, which is that rule's deviation.
    `others`: runs each other key of the recording started before this one (name -> runs)."""
    got: str
    expected: tuple[int, ...]
    zero_based: bool = False
    resumes: tuple[int, int] = (0, 0)
    lost: tuple[tuple[str, Any], ...] = ()
    others: tuple[tuple[str, int], ...] = ()


def counts_from_zero(readings: Iterable[tuple[str | None, Sequence[int]]]) -> bool:
    """Whether the agent counts from 0: some `count` reply is 0 where the contract wants at least 1. No service can
    make that happen, as a run counts itself on whatever instance it reaches."""
    return any(got is not None and got.strip() == "0" and min(want, default=0) >= 1 for got, want in readings)


def judge_count(c: Count, *, what: str = "", exchanges: Sequence[Any] = ()) -> None:
    """A `count` reply judged by the table of this module: as contracted (returns), resumes that started runs
    (Blocked by their rule), the agent off its contract (OffContract), or the service's deviation (Deviation naming
    `exchanges`, the call first)."""
    wanted = list(c.expected)
    shown = f"{wanted[0]}" if len(wanted) == 1 else f"one of {wanted[0]}..{wanted[-1]}"
    text = c.got.strip()
    if text in {str(n) for n in wanted}:
        return
    said = (f"{what}: " if what else "") + f"`count` replied {truncate(c.got, 60, quoted=True)}, expected {shown}"
    if not digits_only(text):
        raise not_its_form(f"{said}: not a number, as the agent writes it", exchanges)
    got = int(text)
    offset = 1 if c.zero_based or (got == 0 and min(wanted) >= 1) else 0
    base = [n - offset for n in wanted]
    started = next((k for k in range(1, len(c.lost) + 1) if got in {n + k for n in base}), None)
    if started:
        rule, ex = c.lost[0]
        raise precondition(rule, [*exchanges, *(ex for _, ex in c.lost)],
                           f"{said}: higher by {started}, and {', '.join(ex.label for _, ex in c.lost)} did not "
                           f"continue the paused run with its answer: a resume started a run")
    sure, most = c.resumes
    law = {n + r: r for n in base for r in range(sure, most + 1)}    # the agent counts resumes ...
    law.update({n: 0 for n in base})                                 # ... or not
    if got in law and (offset or law[got]):
        resumed = law[got]
        words = {(True, False): "counts from 0", (False, True): "counts a resumed run again",
                 (True, True): "counts from 0 and counts a resumed run again"}[bool(offset), bool(resumed)]
        raise off_contract(Finding("`count`", "resumed" if resumed else "from-zero", words, shown, c.got,
                                   exchanges[0] if exchanges else None))
    if got < min(base):
        raise Deviation(f"{said}: lower than the runs this key's instance started, so the call reached another "
                        f"instance", exchanges)
    extra = got - max(base)
    twins = [name for name, runs in c.others if runs == extra]
    twin = twins[0] if len(twins) == 1 else None      # one key alone explains it
    why = (f"higher by exactly the {extra} run(s) key {twin!r} started: two keys reached one instance" if twin else
           f"higher than the runs this key's instance started, by {extra}: runs of another key reached it")
    raise Deviation(f"{said}: {why}", exchanges)


def not_its_form(message: str, exchanges: Sequence[Any]) -> Deviation:
    """A reply that is not of the form the agent writes for its directive (a `count` that is no number, an echo of
    another JSON type): what the agent replied did not come through whole, the deviation of the rule that says the
    call carries the agent's reply (`histories.REPLY`, by the call's protocol and whether it streamed), which every
    reading of that reply rests on. A call of no such rule: the reading's own deviation."""
    call = exchanges[0] if exchanges else None
    rule = REPLY.get((op(call), call.stream is not None)) if call is not None else None
    return precondition(rule, exchanges, message) if rule else Deviation(message, exchanges)


# -- echo params, echo messages ---------------------------------------------------------------------------------
ECHOES = {"echo params": (dict, "an object"), "echo messages": (list, "an array")}   # docs/agent.md: what each writes


def echoed(text: str, reading: str, exchange: Any = None) -> Any:
    """The JSON value `echo params` / `echo messages` replied. JSON in another form than the canonical one: noted, and
    read. No JSON at all: the agent did not run the `echo` on what it received (the prompt or the run did not reach
    it as sent), the service's deviation. JSON of another type than the echo writes (a string holding the object):
    the reply did not come through whole (`not_its_form`)."""
    named = [exchange] if exchange is not None else []
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        raise Deviation(f"`{reading}` replied {truncate(text, 200, quoted=True)}, not JSON: the agent did not echo "
                        f"what it received", named) from None
    kind, words = ECHOES.get(reading, (object, ""))
    if not isinstance(value, kind):
        raise not_its_form(f"`{reading}` replied {truncate(text, 200, quoted=True)}, not {words}, as the agent "
                           f"writes it", named)
    written = canonical(value)
    if written != text:
        note(Finding(f"`{reading}`", "canonical", "writes JSON in another form than the canonical one", written,
                     text, exchange, hides=False))
    return value


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def as_double(sent: Any, got: Any) -> bool:
    """`got` is `sent` read with every number as a double (JavaScript's JSON.parse): equal but for numbers that a
    double holds otherwise, at least one of them."""
    if isinstance(sent, bool) or isinstance(got, bool):
        return False
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)):
        try:
            return got == float(sent) and got != sent
        except OverflowError:
            return False
    if isinstance(sent, list) and isinstance(got, list) and len(sent) == len(got):
        pairs = list(zip(sent, got))
    elif isinstance(sent, dict) and isinstance(got, dict) and sent.keys() == got.keys():
        pairs = [(sent[k], got[k]) for k in sent]
    else:
        return False
    return all(same_json(a, b) or as_double(a, b) for a, b in pairs) and any(as_double(a, b) for a, b in pairs)


def changed(reading: str, sent: Any, got: Any, exchange: Any = None) -> bool:
    """Whether the agent's echo shows `sent` changed (the service's deviation). A change that is only numbers read as
    doubles may be the agent's reader as well as the service's: neither is blamed (OffContract)."""
    if same_json(sent, got):
        return False
    if as_double(sent, got):
        raise off_contract(Finding(f"`{reading}`", "numbers", "holds numbers as a double reads them (the agent's "
                                   "JSON reader, or the service's)", canonical(sent), canonical(got), exchange))
    return True


MISSING = object()   # a field `fields_changed` found missing


def fields_changed(reading: str, sent: dict[str, Any], got: dict[str, Any], exchange: Any = None
                   ) -> list[tuple[str, Any, Any]]:
    """(name, value sent, value the agent holds or MISSING) of every field of `sent` the agent's echo lacks or holds
    changed: the service's deviation. A field changed only as numbers read as doubles is blamed on nobody: when such
    fields are all that differs, OffContract (`changed`)."""
    out, doubled = [], []
    for name, value in sent.items():
        if name not in got:
            out.append((name, value, MISSING))
        elif not same_json(got[name], value):
            (doubled if as_double(value, got[name]) else out).append((name, value, got[name]))
    if doubled and not out:
        changed(reading, {n: v for n, v, _ in doubled}, {n: g for n, _, g in doubled}, exchange)
    return out


# -- the answer a resumed run starts with ------------------------------------------------------------------------
_ANSWER = re.compile(r"\s*answer\s*[:=-]?\s*", re.IGNORECASE)


def resumed(got: str, answer: Any, rest: str, *, before: Iterable[str] = ("",), exchange: Any = None) -> bool:
    """Whether `got` is the reply of a run resumed with `answer`: one of `before` (what the run replied before the
    question: a result may hold the whole reply, or only what follows the question), the answer piece, then `rest`
    (`reads_as` with those parts)."""
    return any(reads_as(got, [("text", head), ("answer", answer), ("text", rest)], exchange) for head in before)


def reads_as(got: str, parts: Sequence[Sequence[Any]], exchange: Any = None) -> bool:
    """Whether `got` is the reply `parts` make: ("text", t) is the text t, ("answer", value) the piece a resume with
    `value` adds. An answer piece as the contract writes it (`answer: ` + canonical JSON): True. Written otherwise but
    holding the same answer (another prefix, spacing, escapes): True, noted. Anything else, no answer piece at all
    included (the conformance agent always writes it; an agent of the team's own that does not says so in its
    profile, `reply_after_resume`): False, the caller's deviation."""
    pieces = _split(got, 0, list(parts))
    if pieces is None:
        return False
    for piece, value in zip(pieces, [value for kind, value in parts if kind == "answer"]):
        if piece != ANSWER_PREFIX + canonical(value):
            note(Finding("the `answer: ` piece", "answer", "writes the answer of a resume in another form",
                         ANSWER_PREFIX + canonical(value), piece, exchange, hides=False))
    return True


def _split(got: str, at: int, parts: list[Sequence[Any]]) -> list[str] | None:
    """The answer pieces of `got` from `at` on, one per ("answer", value) part, when the parts make it; else None."""
    if not parts:
        return [] if at == len(got) else None
    (kind, value), rest = parts[0], parts[1:]
    if kind == "text":
        return _split(got, at + len(value), rest) if got.startswith(value, at) else None
    for end in range(at + 1, len(got) + 1):
        piece = got[at:end]
        if piece == ANSWER_PREFIX + canonical(value) or same_json(_answer_in(piece), value):
            tail = _split(got, end, rest)
            if tail is not None:
                return [piece, *tail]
    return None


_NONE = object()


def _answer_in(piece: str) -> Any:
    """The JSON value after an `answer`-like prefix (any case, `:`, `=` or `-`, any spacing), or _NONE."""
    m = _ANSWER.match(piece)
    if not m:
        return _NONE
    try:
        return json.loads(piece[m.end():], parse_constant=_not_json)
    except ValueError:
        return _NONE


def resumed_as_profiled(got: str, facts: dict[str, Any], answer: Any, *, before: Iterable[str] = ("",),
                        exchange: Any = None) -> bool:
    """`resumed` by what the profile's question_and_resume says of the reply after a resume (`protocols.resume_facts`,
    as a scenario noted them): its `reply_after_resume` exactly (an agent of the team's own, whose form the profile
    gives), else the conformance agent's form with `reply_after_resume_suffix` as the rest."""
    if facts.get("after_resume") is not None:
        return any(got == head + facts["after_resume"] for head in before)
    if facts.get("suffix") is None:
        return False
    return resumed(got, answer, facts["suffix"], before=before, exchange=exchange)


def holds_answer(got: str | None, answer: Any) -> bool:
    """Whether a resumed run's reply holds `answer` in an answer piece of any form: the resume reached the agent as the
    answer to its question (not as a new run)."""
    if got is None:
        return False
    if ANSWER_PREFIX + canonical(answer) in got:
        return True
    for m in re.finditer(r"answer", got, re.IGNORECASE):
        tail = got[m.start():]
        head = _ANSWER.match(tail)
        decoder = json.JSONDecoder(parse_constant=_not_json)
        try:
            value, _ = decoder.raw_decode(tail, head.end())
        except ValueError:
            continue
        if same_json(value, answer):
            return True
    return False


# -- what a run's findings come to ---------------------------------------------------------------------------------
def as_dicts(found: Iterable[Finding], scenario_of: dict[int, str]) -> tuple[dict[str, Any], ...]:
    """The findings as report.json holds them (`scenario_of`: id(exchange) -> its scenario)."""
    out = []
    for f in found:
        ex = f.exchange
        out.append({"reading": f.reading, "way": f.way, "said": f.said, "expected": f.expected, "got": f.got,
                    "hides": f.hides, "contract": f.sentence, "vector": f.vector,
                    "scenario": scenario_of.get(id(ex), "") if ex is not None else "",
                    "label": getattr(ex, "label", "") or ""})
    return tuple(out)
