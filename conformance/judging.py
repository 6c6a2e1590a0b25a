"""Judging: from the recordings of a check's scenarios to its CheckResult.

The same code judges a live run (`engine.Session`) and a kept recording (`conformance.recording.Replay`), so
`conformance rejudge` runs the very code the run judged with. A check's outcome becomes a status (passed, failed,
blocked, not assessed, info, error) with its evidence: the exchanges it named as breaking the rule first.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol
from urllib.parse import urlsplit

from conformance import catalog, coverage, exchange_rules, options, plan, versions
from conformance.engine import PREFLIGHT, Recording, ScenarioFailed
from conformance.outcomes import Blocked, NotAssessed, Observation, judging, reading
from conformance.registry import CHECKS, Check
from conformance.reporting import repro
from conformance.reporting.transcript import transcript
from conformance.vocab import agent_readings, inputs, sequences, silences
from conformance.vocab.steps import mcp as mcp_steps
from conformance.vocab.traffic import operation_of
from conformance.vocab.values import refusal
from conformance.wire.exchange import Exchange
from conformance.wire.pace import parse_duration
from conformance.wire.redact import Redactor

#: the requirement a protocol's plain call broke, by its status, when another operation accepted the same key and
#: agent: every other check over that protocol is blocked by it (`gate`)
SERVED_AT_PATH, KEY_ACCEPTED = "GEN-BASE-003", "AUTH-KEY-001"
GATES = {404: SERVED_AT_PATH, 405: SERVED_AT_PATH, 401: KEY_ACCEPTED}
#: the basic call of each protocol (scenario, step) and the requirement its refusal breaks, in the order they are
#: tried: a step answered with that very refusal was turned away before the server read what the step varies
#: (`same_refusal`)
BASIC_CALLS = ((PREFLIGHT, "preflight-invoke", "INV-RES-001"), (PREFLIGHT, "preflight-agui", "AGUI-FRAME-001"),
               ("mcp.modern", mcp_steps.LIST, "MCP-SESS-005"), ("mcp.modern", mcp_steps.CALL, "MCP-VER-001"))
EVIDENCE_EXCHANGES = 4
EVIDENCE_CHARS = 3000
INDEXES_KEPT = 8        # sets of recordings indexed at once (every check over every exchange reads the same set)


@dataclass
class CheckResult:
    check: str
    requirements: tuple[str, ...]
    status: str            # passed | failed | not_assessed | info | error
    message: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    duration: float = 0.0
    supplementary: bool = False
    blocked_by: str | None = None   # status "blocked": the requirement whose failure kept this check from reading
    broke: tuple[tuple[str, str], ...] = ()   # (scenario, label) of every exchange it named, evidence or not
    input_classes: tuple[str, ...] = ()       # the input model's classes it was judged on (vocab.inputs)
    histories: tuple[str, ...] = ()           # the history's readings it was judged on (vocab.sequences)
    silences: tuple[str, ...] = ()            # the silence model's silences it was judged on (vocab.silences)
    http_versions: tuple[str, ...] = ()       # the HTTP versions it was judged on (`versions`)
    version_only: tuple[str, ...] = ()        # failed over one version alone, the other passed: (that version, the
                                              # operations of the exchanges it named) (`versions.one_root`)
    left_out: str = ""                        # what of it was not judged over HTTP/2 (the target spoke it), and why
    agent: tuple[dict[str, Any], ...] = ()    # readings of the agent that departed from its contract (agent_readings)
    precondition: bool = False                # blocked by a reader's `precondition`: its message is the root's
    read: tuple[Exchange, ...] = field(default=(), repr=False)   # the exchanges it read (its recordings' when it
                                                                 # did not say): the dimensions it was judged on




class RecordingSource(Protocol):
    """Where checks read what was recorded: the live `Session`, or a run's kept recording (`conformance.recording`).
    Whatever the source, a check is judged by `assess`, so a re-judged verdict is the run's verdict."""
    preflight: Recording
    preflight_error: str | None
    redactor: Redactor

    def recording(self, name: str) -> Recording | BaseException: ...

    def scenario_names(self) -> list[str]: ...


def assess(source: RecordingSource, check: Check) -> CheckResult:
    """One check judged on the recordings of its scenarios, its message redacted."""
    t0 = time.monotonic()
    if check.every:
        result = _judge(source, check)
        result.http_versions = tuple(sorted({ex.http_version for ex in result.read if ex.http_version}))
        every = index(every_recording(source))
        result.input_classes = inputs.judged_on(check.requirements, every.recordings, result.read, every.scenario_of)
        result.duration = time.monotonic() - t0
        result.message = source.redactor.redact(result.message)
        return result
    result = versions.judge_twin(source, check, _judge(source, check), _judge)
    if result.version_only:     # the operations it showed on, which `versions.one_root` groups by
        result.version_only = (result.version_only[0], *operations(source, result.broke))
    if result.status in ("passed", "failed", "info"):
        recs = [got for name in check.scenarios if isinstance(got := source.recording(name), Recording)]
        # a check that looked nothing up by name read its recordings as a whole
        result.read = result.read or tuple(ex for rec in recs for ex in rec.exchanges)
        result.input_classes = inputs.judged_on(check.requirements, recs)
        result.histories = sequences.judged_histories(check.requirements, recs)
        result.silences = silences.judged_on(check.requirements, recs)
    result.duration = time.monotonic() - t0
    result.message = source.redactor.redact(result.message)
    return result


def _judge(source: RecordingSource, check: Check) -> CheckResult:
    found: list[agent_readings.Finding] = []     # what the check's readings of the agent found off its contract
    read: list[Recording] = []                    # the recordings the check was judged on
    looked_up: list[Exchange] = []                # the exchanges a scenario's check looked up (`Recording.get`, ...)

    def mk(status: str, msg: str = "", recs: list[Recording] = (), named: Iterable[Exchange] = ()) -> CheckResult:
        named = list(named)
        result = CheckResult(check.id, check.requirements, status, msg, evidence(recs, named, source.redactor),
                             supplementary=check.supplementary, broke=identities(recs, named),
                             agent=agent_readings.as_dicts(found, index(read).scenario_of) if found else ())
        result.read = tuple({id(ex): ex for ex in looked_up}.values())
        return result

    if source.preflight_error:
        return mk("error", source.preflight_error)
    if check.every:
        return _judge_every(source, check, mk, read)
    recs = []
    for name in check.scenarios:
        got = source.recording(name)
        if isinstance(got, NotAssessed):
            return mk("not_assessed", str(got))
        if isinstance(got, ScenarioFailed):
            partial = [got.recording] if got.recording else []
            stopped = [got.exchange] if got.exchange else partial[0].exchanges[-1:] if partial else []
            if getattr(got, "detail", None):
                return mk("error", f"suite fault in scenario {name} (not the server's): {got}", partial, stopped)
            return mk("failed", str(got), partial, stopped)
        if isinstance(got, BaseException):
            return mk("error", f"suite fault in scenario {name} (not the server's): {type(got).__name__}: {got}")
        recs.append(got)
    gated = _gated(source, check, mk)
    if gated is not None:
        return gated
    gated_over_http2 = gate_over_http2(source, check)
    if gated_over_http2 is not None:
        plain, root, plain_rec = gated_over_http2
        result = mk("blocked", f"{plain.label}: the plain call of this protocol answered {plain.status} at "
                               f"{urlsplit(plain.url).path} over HTTP/2, while over HTTP/1.1 the same call was "
                               f"accepted", [plain_rec], [plain])
        result.blocked_by = root
        return result
    limited = rate_limited_exchange(recs)
    if limited is not None and not set(check.requirements) & rate_limit_requirements():
        asked = getattr(getattr(source, "target", None), "max_run_time", None)     # kept in the recording too
        cap = parse_duration(asked or options.DEFAULT_MAX_RUN_TIME)
        return mk("not_assessed", f"rate-limited: {limited.label} ({limited.method} {limited.url}) was still "
                                  f"answered 429 when {plan.cap_words(cap)} allowed no more resends")
    read.extend(recs)
    try:
        with judging(check.requirements), agent_readings.collecting(found), reading(looked_up):
            note = check.fn(*recs)
    except NotAssessed as exc:
        return mk("not_assessed", str(exc))
    except Observation as exc:
        return mk("info", str(exc), recs, getattr(exc, "exchanges", ()))
    except Blocked as exc:
        grouped = one_refusal(source, check, str(exc), recs, exc.exchanges, mk)
        if grouped is not None:
            return grouped
        basic = _broke_basic(recs, list(exc.exchanges))
        if basic is not None and basic != exc.root and basic not in check.requirements:
            result = mk("blocked", f"{exc} (the exchange already broke {basic}, the status or form of its answer)",
                        recs, exc.exchanges)
            result.blocked_by = basic
            return result
        changed = key_changed(source, check, str(exc), recs, exc.exchanges, mk) or \
            turned_away(source, check, str(exc), recs, exc.exchanges, mk)
        if changed is not None:
            return changed
        if exc.root in check.requirements:
            return mk("failed", str(exc), recs, exc.exchanges)
        result = mk("blocked", str(exc), recs, exc.exchanges)
        result.blocked_by = exc.root
        result.precondition = True
        return result
    except AssertionError as exc:
        message = str(exc) or f"{check.id} failed"
        named = getattr(exc, "exchanges", ()) or named_in(message, recs)
        first = _broke_first(recs, named)
        if first is not None and first not in check.requirements:
            result = mk("blocked", f"{message} (the exchange already broke {first}, read first on every exchange)",
                        recs, named)
            result.blocked_by = first
            return result
        changed = key_changed(source, check, message, recs, named, mk)
        if changed is not None:
            return changed
        refused = same_refusal(source, check, named)
        if refused is not None:
            basic, root, basic_rec = refused
            result = mk("blocked", f"{message} (the same refusal as the protocol's basic call {basic.label}: the "
                                   f"server turned the request away before reading what this step varies)",
                        recs + [basic_rec], [*named, basic])
            result.blocked_by = root
            return result
        grouped = one_refusal(source, check, message, recs, named, mk)
        if grouped is not None:
            return grouped
        turned = turned_away(source, check, message, recs, named, mk)
        if turned is not None:
            return turned
        return mk("failed", message, recs, named)
    except Exception as exc:  # a check that crashes is the suite's fault, never the server's
        return mk("error", f"suite fault in check {check.id} (not the server's): {type(exc).__name__}: {exc}",
                  recs)
    return mk("passed", note if isinstance(note, str) else "")


def key_changed(source: RecordingSource, check: Check, message: str, recs: list[Recording],
                named: Iterable[Exchange], mk: Callable[..., CheckResult]) -> CheckResult | None:
    """Blocked, when every exchange the check named sent a session key the service gave back changed, or whose
    request it turned away for its form (`exchange_rules.key_broken`): one deviation, of that exchange's rule. A
    check of an echo rule keeps its own failure (each protocol's echo is a rule of its own)."""
    if set(check.requirements) & set(exchange_rules.KEY_ECHOES.values()):
        return None
    named = list(named)
    broken = exchange_rules.key_broken(named, every_recording(source))
    return _blocked_across(check, message, exchange_rules.key_broken_words, broken, recs, named, mk)


def turned_away(source: RecordingSource, check: Check, message: str, recs: list[Recording],
                named: Iterable[Exchange], mk: Callable[..., CheckResult]) -> CheckResult | None:
    """Blocked, when every exchange the check named was turned away before its request was read, each for what it
    carried or as a valid request was (`exchange_rules.refused_unread`): one deviation, of the basic rule the first
    such refusal broke."""
    named = list(named)
    turned = exchange_rules.refused_unread(named, every_recording(source))
    return _blocked_across(check, message, lambda root: root[3], turned, recs, named, mk)


def _blocked_across(check: Check, message: str, words: Callable[[Any], str], root: tuple | None,
                    recs: list[Recording], named: list[Exchange], mk: Callable[..., CheckResult]
                    ) -> CheckResult | None:
    """Blocked by `root` (requirement, exchange, recording, ...: the deviation another exchange of the run showed),
    its exchange named beside the check's, unless the check judges that requirement itself."""
    if root is None or root[0] in check.requirements:
        return None
    requirement, ex, rec = root[:3]
    result = mk("blocked", f"{message} ({words(root)})", recs + [rec], [*named, ex])
    result.blocked_by = requirement
    return result


def one_refusal(source: RecordingSource, check: Check, message: str, recs: list[Recording],
                named: Iterable[Exchange], mk: Callable[..., CheckResult]) -> CheckResult | None:
    """Blocked, when the answers to the exchanges the check named are one deviation of the run's refusals: they
    broke the rule over the form of every refusal as refusals of other problems did (`exchange_rules.refused_so`),
    or were refused word for word as a request that must be answered was (`exchange_rules.refused_alike`)."""
    named = list(named)
    if not named:
        return None
    everything = every_recording(source)
    general = exchange_rules.refused_so(named, everything)
    if general is not None and general not in check.requirements:
        result = mk("blocked", f"{message} ({exchange_rules.refused_so_words(general)})", recs, named)
        result.blocked_by = general
        return result
    alike = exchange_rules.refused_alike(named, everything)
    if alike is None or alike[0] in check.requirements:
        return None
    root, valid, valid_rec = alike
    result = mk("blocked", f"{message} ({exchange_rules.refused_alike_words(alike)})", recs + [valid_rec],
                [*named, valid])
    result.blocked_by = root
    return result


def _broke_first(recs: list[Recording], named: list[Exchange],
                 broke: Callable[[Exchange, Any], str | None] = exchange_rules.broke_first) -> str | None:
    """The first rule every exchange a failing check named broke (`exchange_rules.broke_first`), if one did."""
    target_of = {id(ex): rec.target for rec in recs for ex in rec.exchanges}
    if not named or any(id(ex) not in target_of for ex in named):
        return None
    roots = {broke(ex, target_of[id(ex)]) for ex in named}
    return roots.pop() if len(roots) == 1 and None not in roots else None


def _broke_basic(recs: list[Recording], named: list[Exchange]) -> str | None:
    """The basic rule every exchange a reader could not read broke first (`exchange_rules.broke_basic`), if one
    did: a reading stopped by an answer whose status or form already broke a rule is blocked by that rule."""
    return _broke_first(recs, named, exchange_rules.broke_basic)


def _judge_every(source: RecordingSource, check: Check, mk: Callable[..., CheckResult],
                 read: list[Recording]) -> CheckResult:
    """A check over every exchange of the run (`exchange_rules`): judged on every recording there is, whatever
    became of the others (a scenario that failed or was not assessed says so on its own checks)."""
    gated = _gated(source, check, mk)
    if gated is not None:
        return gated
    recs = every_recording(source)
    read.extend(recs)
    exchanges: list[Exchange] = []
    try:
        with judging(check.requirements), reading(exchanges), exchange_rules.claiming(claims(source, recs)):
            note = check.fn(recs)
    except NotAssessed as exc:
        return mk("not_assessed", str(exc))
    except Observation as exc:
        return mk("info", str(exc), recs, getattr(exc, "exchanges", ()))
    except Blocked as exc:
        result = mk("blocked", str(exc), recs, exc.exchanges)
        result.blocked_by = exc.root
        result.read = tuple(exchanges)
        return result
    except AssertionError as exc:
        result = mk("failed", str(exc) or f"{check.id} failed", recs, getattr(exc, "exchanges", ()))
        result.read = tuple(exchanges)
        result.version_only = getattr(exc, "version_only", ())
        return result
    except Exception as exc:  # a check that crashes is the suite's fault, never the server's
        return mk("error", f"suite fault in check {check.id} (not the server's): {type(exc).__name__}: {exc}")
    result = mk("passed", note if isinstance(note, str) else "")
    result.read = tuple(exchanges)
    return result


def _gated(source: RecordingSource, check: Check, mk: Callable[..., CheckResult]) -> CheckResult | None:
    """Blocked by the protocol's plain call when `gate` says so, else None."""
    gated = gate(source.preflight, check)
    if gated is None:
        return None
    plain, root = gated
    result = mk("blocked", f"{plain.label}: the plain call of this protocol answered {plain.status} at "
                           f"{urlsplit(plain.url).path} while another operation accepted the same key and agent",
                [source.preflight], [plain])
    result.blocked_by = root
    return result


def read_ahead(source: Any) -> None:
    """Every exchange of the recordings already finished read by the rules over every exchange (kept on each
    exchange, `exchange_rules.outcomes`) and for the dimensions it carried (`coverage.exchange_values`), so the
    checks judged last, after the slowest scenario, and the report have little left."""
    finished = getattr(source, "finished", lambda: [])()
    start, end = source.__dict__.get("_read_ahead", 0), len(finished)
    source.__dict__["_read_ahead"] = end
    for name in finished[start:end]:
        got = source.recording(name)
        for ex in got.exchanges if isinstance(got, Recording) else ():
            exchange_rules.outcomes(ex, got.target)
            coverage.exchange_values(ex, got.target)


def every_recording(source: RecordingSource) -> list[Recording]:
    """The preflight and every scenario's recording the run has (scenarios that failed or were not assessed left
    none to read)."""
    names = getattr(source, "scenario_names", lambda: [])()
    got = [source.recording(name) for name in names]
    return [source.preflight, *(rec for rec in got if isinstance(rec, Recording))]


def claims(source: RecordingSource, recs: list[Recording]) -> dict[int, str]:
    """id(exchange) -> the requirement a scenario's check already failed on it (judged before every exchange rule):
    one deviation, one failure, the scenario's check built for it named first."""
    by_name = index(recs).by_name
    out: dict[int, str] = {}
    for result in getattr(source, "results", {}).values():
        if result.status == "failed" and result.requirements and not getattr(CHECKS.get(result.check), "every", ()):
            for named in result.broke:
                ex = by_name.get(tuple(named))
                if ex is not None:
                    out.setdefault(id(ex), result.requirements[0])
    return out


@dataclass(frozen=True)
class Index:
    """Where each exchange of a set of recordings is: its scenario by id, and the exchange by (scenario, label)."""
    recordings: tuple[Recording, ...]       # held, so the ids of the key stay theirs
    scenario_of: dict[int, str]
    by_name: dict[tuple[str, str], Exchange]


_INDEXES: dict[tuple[tuple[int, int], ...], Index] = {}


def index(recs: Iterable[Recording]) -> Index:
    """The `Index` of these recordings, built once for as long as none of them grows: every check over every
    exchange asks with the run's whole recording, hundreds of times."""
    recs = tuple(recs)
    key = tuple((id(rec), len(rec.exchanges)) for rec in recs)
    got = _INDEXES.get(key)
    if got is None:
        if len(_INDEXES) >= INDEXES_KEPT:
            _INDEXES.clear()
        got = _INDEXES[key] = Index(recs, {id(ex): rec.scenario for rec in recs for ex in rec.exchanges},
                                    {(rec.scenario, ex.label): ex for rec in recs for ex in rec.exchanges})
    return got


def operations(source: RecordingSource, named: Iterable[tuple[str, str]]) -> list[str]:
    """The operations (invoke, agui, mcp, metadata) of the exchanges named by (scenario, label)."""
    named = set(named)
    return sorted({op for scenario in {s for s, _ in named}
                   for ex in getattr(source.recording(scenario), "exchanges", ())
                   if (scenario, ex.label) in named and (op := operation_of(ex.url or ""))})


def identities(recs: list[Recording], exchanges: Iterable[Exchange]) -> tuple[tuple[str, str], ...]:
    """(scenario, label) of each exchange: how a report names an exchange across checks."""
    scenario_of = index(recs).scenario_of
    return tuple((scenario_of.get(id(ex), ""), ex.label) for ex in exchanges)


def evidence(recs: list[Recording], named: Iterable[Exchange], redactor: Redactor) -> list[dict[str, Any]]:
    """The exchanges that broke the rule (`named`), marked `broke`; when a check named none, the first
    exchanges of its recordings, unmarked."""
    scenario_of = index(recs).scenario_of
    named = list(named)[:EVIDENCE_EXCHANGES]
    shown = named or [ex for rec in recs for ex in rec.exchanges[:EVIDENCE_EXCHANGES]]
    return [{"scenario": scenario_of.get(id(ex), ""), "label": ex.label, "broke": bool(named),
             "transcript": redactor.redact(transcript(ex, EVIDENCE_CHARS)), "curl": repro.curl(ex)}
            for ex in shown]


def gate(preflight: Recording, check: Check) -> tuple[Exchange, str] | None:
    """(the preflight's plain call, the requirement it broke) for a protocol `check` sends over whose plain call
    was refused while another protocol's was accepted (2xx) with the same key and agent: 404 or 405, the operation
    is not served at its path (GEN-BASE-003); 401, the API key is refused there (AUTH-KEY-001). Nothing the check
    reads over that protocol can be judged; the checks of that requirement itself are never gated."""
    calls = {ex.label.removeprefix("preflight-"): ex for ex in preflight.exchanges if ex.label.startswith("preflight-")}
    if not any(ex.status is not None and 200 <= ex.status < 300 for ex in calls.values()):
        return None
    for protocol in sorted(check.protocols):
        ex = calls.get(protocol)
        root = GATES.get(ex.status) if ex is not None else None
        if root is not None and root not in check.requirements:
            return ex, root
    return None


def gate_over_http2(source: RecordingSource, check: Check) -> tuple[Exchange, str, Recording] | None:
    """`gate` for a check read over HTTP/2 (on twins): (the plain call of a protocol it sends over, sent over HTTP/2
    and refused 401, 404 or 405, the requirement that breaks, its recording) when the preflight's plain call of that
    protocol was accepted over HTTP/1.1 (`versions.PLAIN_CALLS_OVER_HTTP2`). Nothing the check reads over that
    protocol and version can be judged; the checks of that requirement itself are never gated."""
    if not check.scenarios or not all(versions.is_twin(s) for s in check.scenarios):
        return None
    over_http1 = {ex.label.removeprefix("preflight-"): ex for ex in source.preflight.exchanges}
    for protocol in sorted(check.protocols):
        accepted = over_http1.get(protocol)
        scenario, label = versions.PLAIN_CALLS_OVER_HTTP2.get(protocol, ("", ""))
        if not scenario or accepted is None or not 200 <= (accepted.status or 0) < 300:
            continue
        rec = source.recording(scenario)
        plain = next((ex for ex in getattr(rec, "exchanges", ()) if ex.label == label), None)
        root = GATES.get(plain.status) if plain is not None else None
        if root is not None and root not in check.requirements:
            return plain, root, rec
    return None


def same_refusal(source: RecordingSource, check: Check,
                 named: Iterable[Exchange]) -> tuple[Exchange, str, Recording] | None:
    """(the basic call, the requirement its refusal broke, its recording) when every exchange a failing check named got the very
    refusal (`refusal`) of its protocol's basic call (`BASIC_CALLS`): what that step varies cannot be read on an
    answer the server gives whatever is sent. A 401, 404 or 405 of the plain call is `gate`'s; the checks of the
    basic calls' own rules are never blocked by it (each judges its call)."""
    named = list(named)
    if not named or set(check.requirements) & {root for _, _, root in BASIC_CALLS}:
        return None
    over_http2 = bool(check.scenarios) and all(versions.is_twin(s) for s in check.scenarios)
    for scenario, label, root in BASIC_CALLS:
        if over_http2:    # a twin's basic call is the one sent over HTTP/2 too
            scenario, label = (versions.PLAIN_CALLS_OVER_HTTP2[label.removeprefix("preflight-")]
                               if scenario == PREFLIGHT else (versions.twin_name(scenario), label))
        rec = source.preflight if scenario == PREFLIGHT else source.recording(scenario)
        basic = next((ex for ex in getattr(rec, "exchanges", ()) if ex.label == label), None)
        if basic is None or basic.status in GATES:
            continue
        refused = refusal(basic)
        if refused is not None and all(ex is basic or (operation_of(ex.url) == operation_of(basic.url)
                                                       and refusal(ex) == refused) for ex in named):
            return basic, root, rec
    return None


def named_in(message: str, recs: list[Recording]) -> list[Exchange]:
    """The exchange a plain AssertionError's message starts with (its step label), if any: a check that did not
    name its exchange by a Deviation still gets its evidence right when it followed the message convention."""
    found = [ex for rec in recs for ex in rec.exchanges
             if ex.label and (message.startswith(f"{ex.label}:") or message.startswith(f"{ex.label} "))]
    return [max(found, key=lambda ex: len(ex.label))] if found else []


def rate_limited_exchange(recs: list[Recording]) -> Exchange | None:
    """An exchange the server still answered 429 when the client could resend it no more (the wire layer marks it)."""
    return next((ex for rec in recs for ex in rec.exchanges if getattr(ex, "rate_limited", False)), None)


@functools.cache
def rate_limit_requirements() -> frozenset[str]:
    """The requirements a 429 is evidence for: those whose sentence is about the rate limit."""
    words = ("429", "Retry-After", "X-RateLimit-Remaining", "rate limit")
    return frozenset(r.id for r in catalog.load().values() if any(w in r.quote for w in words))
