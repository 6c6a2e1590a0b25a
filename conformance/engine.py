"""Record once, check many.

A Session starts every scenario the selected checks need, concurrently, in a
background event loop (slow ones first), so a run costs about its longest
scenario. Checks are evaluated synchronously as their recordings arrive.

A Session is a `judging.RecordingSource`: `judging.assess(session, check)` judges a check on what it recorded.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import fnmatch
import hashlib
import importlib
import json
import threading
import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable
from urllib.parse import urlsplit

from conformance import catalog, options, plan, versions
from conformance.outcomes import NotAssessed, read_on
from conformance.registry import SCENARIOS, Check, Scenario, needed_scenarios, unknown_family, unknown_step
from conformance.target import SECRET_FACTS, Target
from conformance.wire.http import ACTIVITY, Activity, Client, Exchange, RecordingBudget, Limits
from conformance.wire.listening import listening_for
from conformance.wire.pace import Pacer, RunDeadline, parse_duration, parse_rate_limit
from conformance.wire import near_miss
from conformance.wire.redact import Redactor
from conformance.model.values import STRING_KINDS
from conformance.vocab import forms, inputs, protocols as vocab_protocols
from conformance.vocab.traffic import operation_of
from conformance.vocab.values import error_of

KEY_KINDS = STRING_KINDS
UUID_KEY = "uuid"        # a key in a UUID's form, among the kinds a key carries in turn
KEY_COMPANIONS = 2       # the kinds whose characters a key carries beside its own
# kinds a key carries only as its own: a server writing its answers by hand breaks the whole answer on escapes, not
# the key alone, and the failure is then the rule's of whatever the request was (one deviation on many requirements)
OWN_KIND_ONLY = ("json-escapes",)
PREFLIGHT = "preflight"          # the pseudo-scenario of the preflight exchanges (evidence, and kept for re-judging)
PREFLIGHT_METADATA = "preflight"   # its GET of the metadata document, without a credential
PLAIN_CALL_PROTOCOLS = ("invoke", "agui", "mcp")
# invoke.messages' call (`echo messages` with a conversation of the suite's items, whose shape is not shown), sent with
# the plain calls: when the service runs it, the run's invokes may carry a conversation (`forms.INVOKE_HISTORIES`)
PREFLIGHT_CONVERSATION = "preflight-conversation"
CLIENT_GRACE = 1.0     # the clients' own run deadline, after the scenarios' (a backstop if a cancel is not delivered)
REPORT_GRACE = 10.0    # after the run's deadline: scenarios cut off get this long to hand back their recording
PREFLIGHT_SLACK = 5.0  # the preflight's bound beyond its exchanges' own (the metadata, then the plain calls at once)
CLOSE_BUDGET = 5.0     # seconds close() may take for all lanes together
WATCH = 1.0            # how often a wait re-reads the run's deadline (it moves while the run waits for the rate limit)
PREFLIGHT_WAIT = 30.0  # how long a scenario started before the preflight's end waits for it to read its answers
# A scenario marked late (its requests are other forms of what the early ones send) starts this share of the way
# through the run's floor, when at least LATE_ROOM seconds are left of it to finish in: a server is then met both
# fresh and after seconds of work (a cache that expires, a key evicted, a counter that wraps), at no cost in time
LATE_SHARE = 0.5
LATE_ROOM = 6.0


@dataclass
class Recording:
    """What one scenario left behind: its exchanges in order and the facts it wants checks to know."""
    scenario: str
    target: Target
    exchanges: list[Exchange] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def base_scenario(self) -> str:
        """The scenario recorded, whatever HTTP version it went over: `access.mcp` for its HTTP/2 twin
        `access.mcp@h2` too (`versions`). A check that branches on its scenario reads this."""
        return self.scenario.removesuffix(versions.TWIN)

    @property
    def main(self) -> Exchange:
        if not self.exchanges:
            raise AssertionError(f"scenario {self.scenario} sent no request")
        read_on(self.exchanges[0])
        return self.exchanges[0]

    def get(self, label: str) -> Exchange:
        for ex in self.exchanges:
            if ex.label == label:
                read_on(ex)
                return ex
        unknown = unknown_step(self.scenario, label)
        if unknown is not None:
            raise unknown
        raise NotAssessed(self.left_out(label) or f"scenario {self.scenario} did not reach step {label!r} "
                                                  f"(it recorded {[e.label for e in self.exchanges]})")

    def left_out(self, label: str) -> str | None:
        """Why this scenario does not send step `label` (or the family `label`) over its HTTP version (a body over
        1 MB, over HTTP/2: `versions.HTTP1_ONLY_STEPS`), or None."""
        return versions.left_out(self.scenario, label)

    def labelled(self, family: str) -> list[Exchange]:
        """The exchanges of a label family: a `Step` pattern (`sse-*`) or a plain prefix."""
        unknown = unknown_family(self.scenario, family)
        if unknown is not None:
            raise unknown
        if family.endswith("*"):
            found = [e for e in self.exchanges if fnmatch.fnmatchcase(e.label, family)]
        else:
            found = [e for e in self.exchanges if e.label.startswith(family)]
        read_on(*found)
        return found


class ScenarioFailed(Exception):
    """A scenario could not complete (the server answered something it could not continue from)."""
    recording: "Recording | None" = None
    exchange: "Exchange | None" = None    # the exchange it could not continue from (default: the last recorded)


class Context:
    """What a scenario function works with: the target, the client, and unique keys per run."""

    def __init__(self, session: "Session", scenario: Scenario, client: Client):
        self.session = session
        self.scenario = scenario
        self.target = session.target
        self.client = client
        self.recording = Recording(scenario.name, session.target)
        self._sent: collections.Counter = collections.Counter()    # label -> requests sent under it so far
        self._n_of: dict[str, int] = {}                              # label -> the n of its first request's form
        self._stems: collections.Counter = collections.Counter()   # `unique` stem -> keys made from it so far
        self._made: collections.Counter = collections.Counter()    # `made` stem -> values made from it so far

    # -- facts and prompts -------------------------------------------------------------
    def need(self, fact: str) -> Any:
        value = getattr(self.target, fact)
        if value in (None, ""):
            raise NotAssessed(f"needs {self.target.option_for(fact)}, which was not given")
        return value

    def agent_scenario(self, name: str) -> dict[str, Any]:
        entry = self.target.profile.scenario(name)
        if entry is None:
            raise NotAssessed(f"the profile maps no prompt for the scenario {name!r}")
        return entry

    def prompt(self, name: str) -> str:
        entry = self.agent_scenario(name)
        if "prompt" not in entry:
            raise NotAssessed(f"the scenario {name!r} needs the conformance agent or a profile prompt")
        return entry["prompt"]

    def conformance_agent(self, why: str) -> None:
        if not self.target.profile.is_conformance_agent:
            raise NotAssessed(f"needs the conformance agent ({why}); the profile's agent is custom")

    def unique(self, label: str = "k", *, plain: bool = False, turn: int | None = None, echoed: bool = False) -> str:
        """A key no earlier run used: sessions, thread ids, run ids. Beyond a scenario's first, each is of one kind
        of string of the model (`model.values.STRING_KINDS`: characters beyond ASCII, escapes, whitespace at its
        ends, format characters, …) or a UUID's form, in turn for each stem, and carries the characters of two more
        kinds beside it, so every rule that reads a key meets every kind across the run's requests at no cost; the
        first goes plain, as most clients write a key (and every one asked `plain`: a key whose length is measured). A
        key is numbered within its scenario and stem, never by the order keys of requests sent at once were made: the
        same seed makes the same keys. `turn` picks the kind in turn by a number the caller gives (a move's), for keys
        of stems of their own that still rotate. An `echoed` value (a run id, a progress token: the service only gives
        it back) carries every kind's characters beside its own: a server that changes it breaks its echo's rule
        alone, where a changed session key breaks every rule of the session it names; so it also has whitespace at its
        ends."""
        first = not self._stems
        n, self._stems[label] = self._stems[label], self._stems[label] + 1
        base = f"conf-{self.target.run_tag}-{label}-{self.scenario.ordinal}-{n + 1}"
        if plain or first:
            return base
        kinds = [k for k in KEY_KINDS if all(inputs.is_sent(f"{field}:{k}") for field in ("session-key", "run-id")
                                             if f"{field}:{k}" in inputs.CLASSES)] + [UUID_KEY]
        stem, at = (label, n) if turn is None else ("turn", turn)
        kind = kinds[(at + forms.offset(self.target.seed, f"{self.scenario.name}|{stem}", len(kinds))) % len(kinds)]
        if kind == UUID_KEY:    # the form SDKs write (`crypto.randomUUID()`, `uuid4()`), made from the run's key
            digest = hashlib.sha256(base.encode()).hexdigest()
            made = f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"
            # or upper-case, as Swift's `UUID().uuidString` and SQL Server's NEWID() write it: one string, not the
            # lower-case one a server that parses keys as UUIDs gives back
            return made.upper() if int(digest[-1], 16) % 2 else made
        # Beside its kind, a key carries the characters of more (KEY_COMPANIONS), spread over the kinds: a fault that
        # shows only on keys with some characters (and only on some requests) is met on that many times the requests.
        chars = [k for k in kinds if k not in (UUID_KEY, "edge-whitespace")]
        beside = [k for k in chars if k not in OWN_KIND_ONLY]
        at = beside.index(kind) if kind in beside else at
        apart = len(beside) if echoed else 1 + KEY_COMPANIONS
        steps = range(1, apart) if kind in chars else range(apart)      # a whitespace key: three kinds inside it
        companions = [beside[(at + step * len(beside) // apart) % len(beside)] for step in steps] if beside else []
        carried = dict.fromkeys(([kind] if kind in chars else []) + companions)
        text = "".join("".join(KEY_KINDS[k]) for k in carried)
        # an echoed value also has whitespace at its ends, whatever its kind: trimming is the commonest change a
        # server makes to a string, and a value the service only gives back breaks its echo's rule alone
        if kind == "edge-whitespace" or (echoed and "edge-whitespace" in kinds):
            return f" \t{base}-{text}\t " if text else f" \t{base}\t "
        return f"{base}-{text}"

    def made(self, stem: str, size: int = 32) -> str:
        """`size` hex digits no other run makes (an unknown credential, an agent id nobody issued, a decoy): drawn
        from the run's tag, the scenario and the stem, so a run with the same tag and seed makes the same."""
        n, self._made[stem] = self._made[stem], self._made[stem] + 1
        text = f"{self.target.run_tag}|{self.scenario.name}|{stem}|{n}"
        return hashlib.sha256(text.encode()).hexdigest()[:size]

    def agent_path(self, operation: str, agent_id: str | None = None) -> str:
        agent = agent_id if agent_id is not None else self.need("agent_id")
        return f"/v1/agents/{agent}/{operation}"

    def metadata_path(self, agent_id: str | None = None) -> str:
        agent = agent_id if agent_id is not None else self.need("agent_id")
        return f"/.well-known/oauth-protected-resource/v1/agents/{agent}/mcp"

    def bearer(self, credential: str | None = "api_key") -> dict[str, str]:
        """Authorization header from a credential fact name; None: no header."""
        if credential is None:
            return {}
        return {"Authorization": f"Bearer {self.need(credential)}"}

    # -- talking ---------------------------------------------------------------------
    async def send(self, method: str, path: str, *, label: str, credential: str | None = "api_key",
                   headers: dict[str, str] | None = None, limits: Limits | None = None, record: bool = True,
                   form: dict[str, str] | None = None, shaped: bool = True, like: str | None = None,
                   **kw) -> Exchange:
        """Sends and records one exchange, in the free form the run draws for it (`vocab.forms`: header names,
        order, framing, the JSON writing, the forms of Content-Type, Accept and the scheme, the user agent, an
        unknown header, and in a JSON body what the spec leaves free there, `forms.shape`; `form` sets some of them;
        `shaped=False` sends a generated body as it was drawn; `like` draws the form of the request so labelled, sent
        before: the same body again, byte for byte, as a client's retry is); record=False leaves the keeping to the
        caller (a probe that keeps one of many)."""
        n = self._request_n(label) if like is None else self._n_of[like]
        self._n_of.setdefault(label, n)
        form = {**forms.draw(self.target.seed, self.scenario.name, n), **(form or {})}
        request = f"{self.target.seed}|{self.scenario.name}|{n}"
        given = credential
        if shaped and not any(k.lower() == "authorization" for k in headers or {}):
            operation = operation_of(path)
            ours = operation is not None and path == self.agent_path(operation) and not self.scenario.slow
            credential = forms.credential(form, operation, kw.get("json"), credential, self.target,
                                          request=request if n and ours else None)
        all_headers = {**self.bearer(credential), **(headers or {})}
        drawn = request if n else None      # what rides on a request is drawn by its name; a scenario's first: none
        accept = next((v for k, v in all_headers.items() if k.lower() == "accept" and isinstance(v, str)), None)
        carried = None if credential and all_headers.get("Authorization") else self._carried(path, all_headers, kw)
        shape: dict[str, str] = {}
        if shaped and "json" in kw:
            operation = operation_of(path)
            runs = operation in ("invoke", "agui") and credential == "api_key" \
                and (operation == "agui" or self.session.takes_conversation) and not self.scenario.slow \
                and path == self.agent_path(operation) \
                and not any(k.lower() in ("authorization", "content-type") for k in headers or {})
            kw["json"], shape = forms.shape(form, operation, kw["json"],
                                            replies_read=self.target.profile.is_conformance_agent, runs=runs,
                                            request=drawn, accept=accept,
                                            made=lambda stem: self.unique(f"f{stem}-{n}", echoed=True))
        shaped_json = kw.get("json")
        sent_headers, body, applied = forms.apply(form, all_headers, kw.get("json") if "json" in kw else None,
                                                  writing_set="content" in kw,
                                                  request=request,
                                                  operation=operation_of(path))
        if body is not None:
            kw.pop("json")
            kw["content"] = body
        def sending(headers: dict[str, Any]) -> Any:
            return self.client.send(method, path, headers=headers, label=label, limits=limits,
                                    transport=forms.transport(form, request=drawn), **kw)
        ex = await sending(sent_headers)
        if refused(ex) and credential != given and operation_of(path) in ("invoke", "agui"):
            # the access token on a run, which the spec neither grants nor refuses there (AUTH-OPEN-001): sent again
            # with the API key the scenario gave (the refusal is kept as a fact)
            self.recording.facts.setdefault("access_token_refused", []).append(label)
            credential = given
            all_headers = {**self.bearer(given), **(headers or {})}     # what a later re-send is built from
            auth = next(k for k in sent_headers if k.lower() == "authorization")
            scheme = sent_headers[auth].partition(" ")[0]      # in the form the request drew
            sent_headers = {**sent_headers, auth: f"{scheme} {self.need(given)}"}
            ex = await sending(sent_headers)
        if refused(ex) and shape.get("run-id-writing") == "empty" and isinstance(shaped_json, dict):
            # an empty runId, whose refusal the spec leaves open (no length given): sent again with a run id of the
            # run's own, as a 406 to a chosen Accept is (the refusal is kept as a fact)
            self.recording.facts.setdefault("empty_run_id_refused", []).append(label)
            del shape["run-id-writing"]
            again = {**shaped_json, "runId": self.unique(f"frun-{n}", echoed=True)}
            sent_headers, body, applied = forms.apply(form, all_headers, again, writing_set=False, request=request,
                                                      operation=operation_of(path))
            kw.pop("json", None)
            kw["content"] = body        # a JSON body the run writes: apply() gives its bytes
            ex = await sending(sent_headers)
        if ex.status == 406 and applied.get("stream-accept") == "json":
            # an Accept the run chose, which RFC 9110 §12.5.1 lets a server refuse: sent again as built, as a 411 to a
            # chunked body is (the 406 is kept as a fact: the request's own answer is the one judged)
            self.recording.facts.setdefault("not_acceptable", []).append(label)
            applied["stream-accept"] = "as-built"
            ex = await sending({k: v for k, v in sent_headers.items() if k != "Accept"})
        inputs.carry(self, label, *forms.classes({**applied, **shape}, accept))
        sent = {k.lower(): v for k, v in ex.request_headers.items()}
        ex.form = {**applied, **shape, "header-name-case": form["header-name-case"], "header-order": form["header-order"],
                   "body-framing": "chunked" if "transfer-encoding" in sent else "content-length",
                   **({"connection": "closed"} if sent.get("connection", "").lower() == "close" else {})}
        # for the curl reproduction and the re-sent proof: the fact whose secret the request carried
        ex.credential = credential if credential and all_headers.get("Authorization") else carried
        if ex.credential is None and (made := near_miss.recipe_of(
                str(all_headers.get("Authorization") or "").partition(" ")[2].strip())):
            ex.credential = near_miss.PREFIX + made
        if record:
            self.recording.exchanges.append(ex)
        return ex

    def _request_n(self, label: str) -> int:
        """The n of a request's free form (`forms.draw`): 0, as built, for a scenario's first request; then its
        label's place among the steps the scenario declares (so its steps take the rotation's values in turn), or
        for a label of a family (`sse-*`) a number drawn from the label; never the order requests left in: requests
        sent at once leave in the order earlier answers came back, and the same seed must send the same forms."""
        seen, self._sent[label] = self._sent[label], self._sent[label] + 1
        if len(self._sent) == 1 and not seen:
            return 0
        named = self.scenario.named_steps
        if label in named:
            return 1 + named.index(label) + seen * len(named)
        return 1 + len(named) + int.from_bytes(hashlib.sha256(f"{label}#{seen}".encode()).digest()[:4], "big")

    def _carried(self, path: str, headers: dict[str, Any], kw: dict[str, Any]) -> str | None:
        """The credential fact whose secret a request carries in a header it was given whole (a generated case's),
        the query string or the body."""
        content = kw.get("content")
        sent = path + json.dumps([headers, kw.get("json")], ensure_ascii=False, default=str) + (
            content.decode("utf-8", "replace") if isinstance(content, bytes) else "")
        return next((fact for fact in SECRET_FACTS if (value := getattr(self.target, fact)) and value in sent), None)

    async def post(self, path: str, body: Any = None, *, label: str, writing: str | None = None, **kw) -> Exchange:
        """POSTs `body` as JSON; `writing` (`vocab.protocols.JSON_WRITINGS`) writes it another legitimate way."""
        if writing is not None and body is not None:
            kw["content"] = vocab_protocols.written(body, writing)
            kw["headers"] = {"Content-Type": "application/json", **(kw.get("headers") or {})}
        elif body is not None and "content" not in kw:
            kw["json"] = body
        return await self.send("POST", path, label=label, **kw)

    def note(self, **facts: Any) -> None:
        self.recording.facts.update(facts)

    def sends(self, label: str) -> bool:
        """Whether the scenario sends step `label` (or the family `label`) over the HTTP version it records: a twin
        leaves out what HTTP/2 cannot carry for the suite (`versions.HTTP1_ONLY_STEPS`)."""
        return self.recording.left_out(label) is None

    # -- what the preflight already recorded (record once, check many) -------------------------------------------
    def preflight(self, label: str) -> Exchange | None:
        """The preflight's exchange `label` when it was answered over the version this scenario speaks: the same
        request a scenario would send again (the metadata document, the plain MCP `tools/list`). Only once the
        preflight is over (`after_preflight`)."""
        if self.client.http2 or not self.session.preflight_done.is_set():
            return None
        ex = next((e for e in self.session.preflight.exchanges if e.label == label), None)
        return ex if ex is not None and ex.status is not None and ex.status != 429 else None

    async def after_preflight(self) -> None:
        """Wait for the preflight to end (a slow scenario starts while it runs), at most PREFLIGHT_WAIT seconds."""
        end = time.monotonic() + PREFLIGHT_WAIT
        while not self.session.preflight_done.is_set() and time.monotonic() < end:
            await asyncio.sleep(0.05)

    def keep(self, ex: Exchange, label: str) -> Exchange:
        """Record an exchange made before this scenario under one of its own steps (`label`); `facts["kept"]` maps
        such steps to the label they were sent under."""
        mine = dataclasses.replace(ex, label=label)
        self.recording.exchanges.append(mine)
        self.recording.facts.setdefault("kept", {})[label] = ex.label
        return mine


@dataclass
class Lane:
    """An event loop in its own thread with its own client. Timing-sensitive scenarios get a lane of
    their own, so busy work on the shared lane (parsing other streams) cannot delay their timestamps."""
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    client: Client | None = None
    h2: Client | None = None      # the shared lane's client for the HTTP/2 twins (`versions`), when they run

    @property
    def clients(self) -> list[Client]:
        return [c for c in (self.client, self.h2) if c is not None]

    def call(self, coro, timeout: float):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


class Session:
    """One certification run: background lanes record scenarios; checks are judged on demand."""

    def __init__(self, target: Target, checks: list[Check], *, concurrency: int = 12):
        self.target = target
        self.checks = checks
        self.redactor = Redactor(target.secrets)
        t = target.profile.timeouts
        self.limits = Limits(connect=t.connect, headers=t.headers, idle=t.idle, total=t.request)
        self.concurrency = concurrency
        self._futures: dict[str, Future] = {}
        self._done: list[str] = []
        self._lanes: list[Lane] = []
        self.preflight_error: str | None = None
        self.preflight = Recording(PREFLIGHT, target)
        #: check id -> its judging.CheckResult, as the front end judged them (the recording lists them)
        self.results: dict[str, Any] = {}
        self.started_at = time.monotonic()
        rate_limit = getattr(target, "rate_limit", None)
        #: one pacer for every lane: they all spend the same bucket of the server's
        self.pacer = Pacer(parse_rate_limit(rate_limit) if rate_limit else None)
        #: the cap on the whole run (--max-run-time), in seconds
        self.max_run_time = parse_duration(getattr(target, "max_run_time", None) or options.DEFAULT_MAX_RUN_TIME)
        #: nothing is recorded after it: `profile [timeouts] run` seconds not spent waiting for the server's rate
        #: limit, never beyond the cap; every lane's client enforces it too
        self.deadline = RunDeadline(self.started_at, t.run, self.max_run_time, self.pacer.held_seconds,
                                    budget_words=f"the run's deadline of {t.run:g} s not spent waiting for the rate "
                                                 f"limit (profile [timeouts] run)",
                                    cap_words=f"the run's cap ({plan.cap_option(self.max_run_time)})")
        #: requests the run plans to send (set when it starts) and the length of its longest scenario
        self.planned = self.planned_free = 0
        self.floor = plan.floor_seconds(())
        #: when the late scenarios start (time.monotonic()); None: at once, with the rest
        self.late_at: float | None = None
        #: the estimates `estimate()` gave first (`start`), and first once the pace was learnt or not needed (`paced`)
        self.estimates: dict[str, plan.Estimate] = {}
        #: called (from the judging thread) while it waits for a recording: progress output
        self.on_wait = None
        #: set once the preflight is over (a slow scenario started before it may read its answers: `Context.preflight`)
        self.preflight_done = threading.Event()
        self.budget = RecordingBudget()
        self._tls: dict[bool, Any] = {}
        #: what `recording(name)` handed the checks, by scenario
        self.seen: dict[str, Recording | BaseException] = {}
        #: scenarios the run's deadline (or its cap) cut off
        self.cut: set[str] = set()
        #: when the run started (UTC), for the reports
        self.began = datetime.now(timezone.utc)

    @property
    def client(self) -> Client | None:
        return self._lanes[0].client if self._lanes else None

    @property
    def takes_conversation(self) -> bool:
        """The preflight's invoke with a conversation of the suite's items ran (`PREFLIGHT_CONVERSATION`): the run's
        invokes may carry one. A slow scenario, begun before the preflight's answer, sends none whatever it was."""
        return self.preflight_done.is_set() and any(
            ex.label == PREFLIGHT_CONVERSATION and ex.status == 200 for ex in self.preflight.exchanges)

    # -- lifecycle ------------------------------------------------------------------
    def _lane(self, name: str, http2: bool = False) -> Lane:
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_quiet_transport_errors)
        lane = Lane(loop, threading.Thread(target=loop.run_forever, name=name, daemon=True))
        lane.thread.start()
        self._lanes.append(lane)
        lane.client = lane.call(self._make_client(http2), timeout=10)
        return lane

    def start(self) -> None:
        try:
            shared = self._lane("conformance-recorder")
        except ValueError as exc:   # e.g. plain http:// to a remote host: the run cannot judge
            self.preflight_error = str(exc)
            return
        needed = needed_scenarios(self.checks)
        imports = sorted({module for s in needed for module in SCENARIOS[s].imports})
        if imports:     # begun now, off every loop, so the scenarios that need them seldom wait (`_run_scenario`)
            threading.Thread(target=_preload, args=(imports,), name="conformance-imports", daemon=True).start()
        sem = asyncio.Semaphore(self.concurrency)
        # the slow scenarios set the run's length: they start while the preflight runs (when it fails, the run
        # closes at once, cancelling them, and every check is judged on the preflight's error alone)
        slow = [name for name in _in_order(needed) if SCENARIOS[name].slow]
        for name in slow:
            self._schedule(name, shared, sem)
        preflight = asyncio.run_coroutine_threadsafe(self._bounded_preflight(shared.client), shared.loop)
        twins = self._offer_http2(shared, needed)
        for name in twins:     # the slow twins too begin before the preflight's answer: they set the run's length
            if SCENARIOS[name].slow:
                self._schedule(name, shared, sem)
        try:     # bounded on the loop (`_bounded_preflight`); here a loop that never came back, by the run's deadline
            self.preflight_error = preflight.result(max(0.0, self.run_deadline - time.monotonic()))
        except TimeoutError:
            preflight.cancel()
            self.preflight_error = self._no_whole_answer(self.target.profile.timeouts.run)
        finally:
            self.preflight_done.set()
        if self.preflight_error:
            return
        self._plan(needed | set(twins))
        self.estimate()
        if self.floor * (1 - LATE_SHARE) >= LATE_ROOM:
            self.late_at = self.started_at + self.floor * LATE_SHARE
        for name in _in_order(needed | set(twins)):
            if name not in self._futures:
                self._schedule(name, shared, sem)

    def _plan(self, scenarios: set[str]) -> None:
        state = self.pacer.state()
        how = dict(depth=self.target.depth, thorough=self.target.thorough, remaining=state.largest_remaining or None,
                   probe_max=self.target.rate_probe_max)
        sent = self.preflight.exchanges
        self.planned = plan.planned_requests(scenarios, **how, preflight=len(sent))
        self.planned_free = plan.planned_requests(scenarios, **how, free=True, preflight=sum(
            1 for ex in sent if ex.credential is None or ex.status in (None, 401, 429)))
        silence = float((self.target.profile.scenario("silence") or {}).get("silent_seconds") or 0.0)
        lengths = {"agui.silence": silence, "agui.silence_long": 2 * silence if self.target.thorough else 0.0}
        self.floor = plan.floor_seconds(
            lengths.get(name.removesuffix(versions.TWIN), plan.SLOWEST if SCENARIOS[name].isolated else plan.QUICK)
            for name in scenarios)

    def estimate(self) -> plan.Estimate:
        """How long the run has left, as far as the pacer knows now (the first, and the first with its pace known or
        not needed, are kept in `estimates`)."""
        got = plan.estimate(self.planned, self.floor, self.pacer.state(), self.started_at, self.planned_free)
        self.estimates.setdefault("start", got)
        if got.rate is None or got.rate_known or not got.limited:
            self.estimates.setdefault("paced", got)
        return got

    @property
    def run_deadline(self) -> float:
        """The run's deadline as it stands now (time.monotonic())."""
        return self.deadline.at()

    def _offer_http2(self, shared: Lane, needed: set[str]) -> list[str]:
        """The twins to record over HTTP/2 (`versions`): none unless the target picks h2 when offered it by ALPN,
        one TLS handshake, bounded by the connect time-out (its answer is a fact of the preflight)."""
        twins = list(versions.twins_of(needed))
        chosen, how = None, ""
        if self.target.http2 and twins:
            probe = asyncio.run_coroutine_threadsafe(shared.client.alpn_choice(self.limits.connect), shared.loop)
            try:
                chosen, how = probe.result(self.limits.connect + 1)
            except TimeoutError:
                probe.cancel()
                how = f"no TLS handshake within {self.limits.connect:g} s"
        self.preflight.facts[versions.FACT] = versions.decide(chosen, how, wanted=self.target.http2,
                                                              needed=bool(twins))
        if not self.speaks_http2:
            return []
        shared.h2 = shared.call(self._make_client(http2=True), timeout=10)
        return twins

    def _schedule(self, name: str, shared: Lane, sem: asyncio.Semaphore) -> None:
        scn = SCENARIOS[name]
        twin = versions.is_twin(name)
        lane = self._lane(f"conformance-{name}", http2=twin) if scn.isolated else shared
        client = shared.h2 if twin and not scn.isolated else lane.client
        before = [f for n, f in self._futures.items() if scn.last and not SCENARIOS[n].isolated]
        self._futures[name] = asyncio.run_coroutine_threadsafe(
            self._record(scn, client, None if scn.isolated else sem, after=before), lane.loop)
        self._futures[name].add_done_callback(lambda _, name=name: self._done.append(name))

    @property
    def speaks_http2(self) -> bool:
        """The core scenarios run over HTTP/2 too: the target picked h2 by ALPN in the preflight (`versions`)."""
        return bool((self.preflight.facts.get(versions.FACT) or {}).get("spoken"))

    async def _make_client(self, http2: bool = False) -> Client:
        if http2 not in self._tls:    # one context per HTTP version offered: httpx sets the ALPN offer on it
            self._tls[http2] = self.target.tls()
        return Client(self.target.base_url, tls=self._tls[http2], ca_bundle=self.target.ca_bundle,
                      insecure=self.target.insecure, system_cas=not self.target.embedded,
                      limits=self.limits, secrets=self.target.secrets, pacer=self.pacer,
                      run_deadline=self.deadline.later(CLIENT_GRACE), budget=self.budget, http2=http2)

    def close(self) -> None:
        """Stop every lane; idempotent, and bounded (CLOSE_BUDGET for all lanes together, whatever the server
        does: the lanes' threads are daemons). The clients' counters stay readable for the report."""
        for fut in self._futures.values():
            fut.cancel()
        running = [lane for lane in self._lanes if lane.loop.is_running()]
        closing = [asyncio.run_coroutine_threadsafe(c.aclose(), lane.loop) for lane in running for c in lane.clients]
        end = time.monotonic() + CLOSE_BUDGET
        for fut in closing:
            try:
                fut.result(max(0.0, end - time.monotonic()))
            except Exception:
                pass
        for lane in running:
            lane.loop.call_soon_threadsafe(lane.loop.stop)
        for lane in running:
            lane.thread.join(timeout=max(0.1, end - time.monotonic()))

    async def _bounded_preflight(self, client: Client) -> str | None:
        """The preflight, cut after `bound` seconds of the suite listening (`wire.listening`): a server that answers
        every call at a crawl (the hostile drip) makes the run's error, a machine too busy to run the suite's loop
        on time does not (a verdict of `error` for the suite's own load would be a wrong one)."""
        bound = 2 * (self.limits.connect + self.limits.headers) + PREFLIGHT_SLACK
        with listening_for(bound):
            return await self._preflight(client)
        return self._no_whole_answer(bound)

    def _no_whole_answer(self, seconds: float) -> str:
        answers = "; ".join(f"{ex.label}: {ex.error or ex.status}" for ex in self.preflight.exchanges)
        return (f"the preflight got no whole answer from {self.target.base_url} within {seconds:g} s "
                f"({answers or 'no answer'})")

    async def _preflight(self, client: Client) -> str | None:
        """Preconditions every scenario relies on. When one fails the verdict is `error` with one sentence
        naming it, not a wall of MUST failures: the target answers (over TLS), the API key is accepted on a
        plain call and the agent exists. The exchanges are kept (`self.preflight`): they are evidence too."""
        quick = Limits(connect=self.limits.connect, headers=self.limits.headers, idle=self.limits.idle,
                       total=self.limits.connect + self.limits.headers)
        path = f"/.well-known/oauth-protected-resource/v1/agents/{self.target.agent_id or 'agt_preflight'}/mcp"
        ex = await client.send("GET", path, label=PREFLIGHT_METADATA, limits=quick)
        self.preflight.exchanges.append(ex)
        if ex.status is None:
            return f"target unreachable at {self.target.base_url}: {ex.error}"
        return await self._credential_precondition(client, quick, agent_known=ex.status == 200)

    async def _credential_precondition(self, client: Client, limits: Limits, *, agent_known: bool) -> str | None:
        """A plain call with the API key on each selected protocol: 401 everywhere means the key was refused,
        404 everywhere (and no sign-in metadata either) that the agent is unknown. A key refused on one protocol
        and accepted on another, or an operation not served at its path, is the server's deviation, left to the
        checks (`judging.gate`)."""
        t = self.target
        if not (t.api_key and t.agent_id):
            return None
        protocols = [protocol for protocol in PLAIN_CALL_PROTOCOLS if self._selected(protocol)]
        calls = {plain_call(protocol): (protocol, self._plain_call(protocol)) for protocol in protocols}
        conversation = (t.profile.scenario("messages_passthrough") or {}).get("prompt")

        def conversation_call(parts: bool) -> dict[str, Any]:
            return {"headers": {"Authorization": f"Bearer {t.api_key}", "Accept": "application/json"},
                    "json": vocab_protocols.invoke_body(conversation, f"conf-{t.run_tag}-preflight-messages",
                                                        messages=inputs.pass_messages(t, parts=parts))}
        if "invoke" in protocols and t.profile.is_conformance_agent and conversation:
            calls[PREFLIGHT_CONVERSATION] = ("invoke", conversation_call(parts=True))
        sent = list(await asyncio.gather(*(   # at once: a preflight lasts as long as the slowest plain call
            client.send("POST", f"/v1/agents/{t.agent_id}/{protocol}", label=label, limits=limits, **call)
            for label, (protocol, call) in calls.items())))
        for i, ex in enumerate(sent):
            if ex.label == PREFLIGHT_CONVERSATION and refused(ex):
                # an item shape the spec does not show (content parts, a name): refusing it is open, so the
                # conversation goes again with items of `role` and `content` alone (the refusal is kept as a fact)
                self.preflight.facts["conversation_parts_refused"] = ex.status
                sent[i] = await client.send("POST", f"/v1/agents/{t.agent_id}/invoke", label=PREFLIGHT_CONVERSATION,
                                            limits=limits, **conversation_call(parts=False))
        for ex in sent:
            ex.credential = "api_key"
            self.preflight.exchanges.append(ex)
        answers = [ex for ex in sent if ex.label != PREFLIGHT_CONVERSATION]
        if not answers or any(ex.status not in (401, 404) for ex in answers):
            return None
        where = "; ".join(f"POST {urlsplit(ex.url).path} answered {ex.status} {_refusal_code(ex)}".rstrip()
                          for ex in answers)
        if all(ex.status == 401 for ex in answers):
            return f"the API key given in {t.option_env('api_key')} was refused: {where}"
        if agent_known:
            return None
        return f"the agent {t.agent_id} ({t.option_env('agent_id')}) was not found with the given API key: {where}"

    def _selected(self, protocol: str) -> bool:
        return any(protocol in SCENARIOS[s].protocols for c in self.checks for s in c.scenarios)

    def _plain_call(self, protocol: str) -> dict[str, Any]:
        """The simplest accepted request of a protocol: the plain prompt over invoke and AG-UI, MCP `tools/list`."""
        t = self.target
        auth = {"Authorization": f"Bearer {t.api_key}"}
        prompt = (t.profile.scenario("plain_reply") or {}).get("prompt", "say conformance")
        if protocol == "invoke":   # invoke.selection's request without `stream` and with Accept: application/json
            return {"headers": {**auth, "Accept": "application/json"}, "json": {"prompt": prompt}}
        if protocol == "agui":
            return {"headers": {**auth, "Accept": "text/event-stream"}, "sse": True,
                    "json": vocab_protocols.agui_input(prompt, thread=f"conf-{t.run_tag}-preflight-agui")}
        return {"headers": {**auth, **vocab_protocols.mcp_headers("tools/list")},
                "json": vocab_protocols.mcp_request("tools/list")}

    async def _record(self, scn: Scenario, client: Client, sem: asyncio.Semaphore | None,
                      after: list[Future] = ()) -> Recording | BaseException:
        ctx = Context(self, scn, client)
        activity = Activity()
        ACTIVITY.set(activity)   # this task's context: the client reports what it is doing for this scenario
        try:
            await self._until_run_deadline(self._run_scenario(scn, ctx, sem, after, activity))
            return ctx.recording
        except NotAssessed as exc:
            return exc
        except asyncio.TimeoutError:
            # The run's deadline is the suite's budget, not a rule of the spec (which shows no run time-outs): a
            # server that broke an exchange's own limits is judged on that exchange; a scenario the budget cut off
            # is not assessed, with what it was waiting for.
            self.cut.add(scn.name)
            capped = self.deadline.capped()
            unanswered = [ex for ex in ctx.recording.exchanges if ex.transport_failed and ex.started_at is not None]
            if unanswered and not capped:   # the server already broke an exchange's own limits: that is the evidence
                exc = ScenarioFailed(f"scenario {scn.name} was cut off by the run's "
                                     f"{self.target.profile.timeouts.run:g} s deadline after {unanswered[-1].label} "
                                     f"got no answer ({unanswered[-1].error})")
                exc.exchange = unanswered[-1]
                exc.recording = ctx.recording
                return exc
            held = activity.holding()
            why = ("its requests were waiting for the server's rate limit" if activity.held_back else
                   "it was still waiting for the server" if held else
                   "it was waiting for other scenarios to finish first" if after and not ctx.recording.exchanges
                   else "it had not started: other scenarios held every recording slot" if not ctx.recording.exchanges
                   else "")
            return NotAssessed(f"scenario {scn.name} was cut off by {self.cut_words()}" + (f"; {why}" if why else "")
                               + (f" ({held})" if held else ""))
        except ScenarioFailed as exc_:
            exc = exc_
        exc.recording = ctx.recording
        return exc

    async def _until_run_deadline(self, coro) -> None:
        """Await `coro` until the run's deadline, re-read every WATCH seconds since it moves while the run waits for the
        rate limit; past it, cancel and raise TimeoutError."""
        task = asyncio.ensure_future(coro)
        try:
            while not task.done():
                left = self.deadline.left(time.monotonic())
                if left <= 0:
                    task.cancel()
                    await asyncio.wait({task}, timeout=CLOSE_BUDGET)
                    raise asyncio.TimeoutError
                await asyncio.wait({task}, timeout=min(left, WATCH))
            return task.result()
        finally:
            if not task.done():
                task.cancel()

    def cut_words(self) -> str:
        """What cut a scenario off, in words that name the option or profile entry that lets it finish."""
        t = self.target.profile.timeouts.run
        if not self.deadline.capped():
            return (f"the run's {t:g} s deadline (profile [timeouts] run; time spent waiting for the server's rate "
                    f"limit does not count)")
        return plan.cap_words(self.max_run_time)

    def cut_advice(self) -> str | None:
        """One line saying what cut the run and which option finishes it; None when nothing was cut."""
        if not self.cut:
            return None
        n = len(self.cut)
        what = f"{n} scenario{'s' if n != 1 else ''} cut off"
        if not self.deadline.capped():
            return (f"{what} by the run's {self.target.profile.timeouts.run:g} s deadline, not by the rate limit: "
                    f"raise [timeouts] run in a profile (--profile) if the server is this slow")
        got = self.estimate()
        need = max(got.total, time.monotonic() - self.started_at)
        return (f"{what} at {plan.cap_words(self.max_run_time)}; "
                f"the server's rate limit needs about {plan.minutes_text(need)} for this run: "
                f"{plan.cap_option(plan.suggested_cap(need, self.max_run_time))} finishes it")

    async def _run_scenario(self, scn: Scenario, ctx: Context, sem: asyncio.Semaphore | None,
                            after: list[Future], activity: Activity | None = None) -> None:
        if scn.late and self.late_at is not None:
            await asyncio.sleep(max(0.0, self.late_at - time.monotonic()))
        if after:
            await asyncio.wait([asyncio.wrap_future(f) for f in after])
        async with sem or contextlib.nullcontext():
            try:
                if scn.imports:     # in a worker thread: the loop keeps reading the other scenarios' streams
                    await asyncio.to_thread(_import, scn.imports)
                await self._within_deadline(scn, ctx, activity or Activity())
            except (NotAssessed, ScenarioFailed):
                raise
            except asyncio.TimeoutError:
                held = activity.holding() if activity else ""
                raise ScenarioFailed(f"scenario {scn.name} did not finish within its {scn.deadline:g} s deadline"
                                     + (f" (still waiting on {held})" if held else ""))
            except AssertionError as exc:
                raise ScenarioFailed(f"scenario {scn.name} could not continue: {exc}") from None
            except Exception as exc:  # a server answer the scenario could not use; never a traceback to the user
                failed = ScenarioFailed(f"scenario {scn.name} could not continue: {type(exc).__name__}: {exc}")
                failed.detail = traceback.format_exc(limit=3)
                raise failed from None

    @staticmethod
    async def _within_deadline(scn: Scenario, ctx: Context, activity: Activity) -> None:
        """The scenario's own deadline; time its requests spent held back by the server's rate limit (pacing,
        Retry-After), and time the suite spent drawing its inputs, is added to it: a rate-limited server does not
        make a scenario time out, nor does a busy machine slowing the suite's own work."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(scn.fn(ctx))
        start = loop.time()
        try:
            while not task.done():
                left = start + scn.deadline + activity.waited + activity.suite_seconds - loop.time()
                if left <= 0:
                    task.cancel()
                    await asyncio.wait({task}, timeout=CLOSE_BUDGET)
                    raise asyncio.TimeoutError
                await asyncio.wait({task}, timeout=left)
            return task.result()
        finally:
            if not task.done():
                task.cancel()

    # -- judging --------------------------------------------------------------------
    def scenario_names(self) -> list[str]:
        """Every scenario the run started, in order."""
        return sorted(self._futures)

    def recorded(self) -> list[Recording]:
        """The recordings a scenario started last has waited for: every scenario's not on a lane of its own that is
        over (read without waiting; those on their own lanes end when their timing says, so they are left out and
        the same seed reads the same)."""
        done = [f for n, f in list(self._futures.items())
                if not SCENARIOS[n].isolated and f.done() and not f.cancelled() and f.exception() is None]
        return [got for f in done if isinstance(got := f.result(), Recording)]

    def finished(self) -> list[str]:
        """The scenarios whose recording is over, in the order they ended (read without waiting: a list only
        appended to, so a reader may go on from the length it read last)."""
        return self._done

    def recording(self, name: str, timeout: float | None = None) -> Recording | BaseException:
        """The scenario's recording, or why there is none; waits at most until shortly after the run's deadline.
        What it hands out is kept (`seen`): the recording file holds exactly what the checks were judged on."""
        if name in self.seen:
            return self.seen[name]
        if name not in self._futures:     # asked for by judging beyond the checks run (a basic call's scenario)
            return NotAssessed(f"scenario {name} was not run")
        fut = self._futures[name]
        try:
            got = self._wait_for(fut, timeout)
        except TimeoutError:
            got = ScenarioFailed(f"scenario {name} never reported back within {REPORT_GRACE:g} s of the run's "
                                 f"deadline (the recorder is stuck)")
        self.seen[name] = got
        return got

    def _wait_for(self, fut: Future, timeout: float | None) -> Any:
        """A recorder's result, waiting at most `timeout` seconds, or (None) until REPORT_GRACE after the run's
        deadline as it moves; `on_wait` is called now and then meanwhile (progress)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            now = time.monotonic()
            limit = end if end is not None else self.run_deadline + REPORT_GRACE
            if fut.done() or now >= limit:
                return fut.result(0 if fut.done() else max(0.0, limit - now))
            self.estimate()       # what the run knows of its pace, kept as it is learnt (`estimates`)
            if self.on_wait is not None:
                self.on_wait()
            try:
                return fut.result(min(WATCH / 2, max(0.0, limit - now)))
            except TimeoutError:
                continue

    def outcomes(self) -> dict[str, Recording | BaseException | None]:
        """Every scenario's outcome: as the checks were handed it, or as it ended when no check asked for it (a
        recorder that crashed: its exception); None when it had not ended when the run did (interrupted)."""
        out: dict[str, Recording | BaseException | None] = {}
        for name, fut in self._futures.items():
            if name in self.seen:
                out[name] = self.seen[name]
            elif fut.done() and not fut.cancelled():
                out[name] = fut.exception() or fut.result()
            else:
                out[name] = None
        return out

    def stats(self) -> dict[str, Any]:
        total = lambda field: sum(getattr(c.stats, field, 0) for lane in self._lanes for c in lane.clients)
        first = self.estimates.get("paced") or self.estimates.get("start")
        start = self.estimates.get("start")
        return {"wall_seconds": round(time.monotonic() - self.started_at, 3),
                **{f: total(f) for f in ("requests", "agent_runs", "bytes_received", "waits_429", "rate_limited",
                                         "paced_waits", "transport_retries")},
                **{f: round(total(f), 1) for f in ("waits_429_seconds", "paced_seconds")},
                "frames_recorded": self.budget.used, "body_bytes_recorded": self.budget.used_bytes,
                # what the run's deadline cut: scenarios (recorded in part or not at all) and exchanges
                "cut_by_run_deadline": len(self.cut), "exchanges_cut_by_run_deadline": total("cut_by_run_deadline"),
                "cut_by": None if not self.cut else "max_run_time" if self.deadline.capped() else "run_deadline",
                # the pace: time the run waited for the server's rate limit, and the plan against what happened
                "rate_limit_wait_seconds": round(self.pacer.held_seconds(), 1),
                "planned_requests": self.planned,
                "estimated_seconds_at_start": round(start.total, 1) if start is not None else None,
                "estimated_seconds": round(first.total, 1) if first is not None else None,
                "estimate_basis": first.basis() if first is not None else None,
                "max_run_time_seconds": self.max_run_time, "cut_advice": self.cut_advice()}


def refused(ex: Exchange) -> bool:
    """A refusal, not a rate limit: what a server may answer to a form whose refusal the spec leaves open (the request
    then goes again in the form the spec shows)."""
    return ex.status is not None and 400 <= ex.status < 500 and ex.status != 429


def plain_call(protocol: str) -> str:
    """The label of the preflight's plain call of a protocol (MCP's is `tools/list` with the API key)."""
    return f"preflight-{protocol}"


def _in_order(names: set[str]) -> list[str]:
    """Scenarios in the order they start: isolated lanes (the slow ones among them) first, `last` ones last."""
    return sorted(names, key=lambda s: (SCENARIOS[s].last, not SCENARIOS[s].isolated, s))


def _quiet_transport_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A connection the server reset or closed, surfacing in a future nobody awaits any more (the exchange already
    recorded it): the server's doing, not a fault of the suite to print. Anything else is reported as usual."""
    if isinstance(context.get("exception"), (ConnectionError, TimeoutError)):
        return
    loop.default_exception_handler(context)


_IMPORTING = threading.Lock()


def _import(modules: tuple[str, ...] | list[str]) -> None:
    """Import the modules a scenario declares (`Scenario.imports`), one thread at a time: two threads importing
    one package at once can each find it half made."""
    with _IMPORTING:
        for module in modules:
            importlib.import_module(module)


def _preload(modules: list[str]) -> None:
    with contextlib.suppress(Exception):     # a missing SDK is reported by the scenario that needs it
        _import(modules)


def _refusal_code(ex: Exchange) -> str:
    err = error_of(ex)
    return str(err.get("code", "")) if err else ""


def select(checks: dict[str, Check], *, level: str = "may", protocols: set[str] | None = None,
           requirements: Iterable[str] | None = None, check_ids: Iterable[str] | None = None,
           ) -> tuple[list[Check], dict[str, str]]:
    """The checks to run, and for the others the reason they are not assessed. `requirements` and `check_ids`
    narrow the run to the checks covering one of those requirements, or to those checks (not given: no narrowing);
    a check they leave out is not run at all, so it gets no reason."""
    reqs = catalog.load()
    allowed = {"must": {"MUST"}, "should": {"MUST", "SHOULD"}, "may": {"MUST", "SHOULD", "MAY"}}[level]
    wanted_reqs = set(requirements) if requirements is not None else None
    wanted_ids = set(check_ids) if check_ids is not None else None
    chosen, skipped = [], {}
    for c in checks.values():
        if protocols is not None and not c.protocols <= protocols:
            skipped[c.id] = f"protocol excluded by --protocols ({', '.join(sorted(c.protocols - protocols))})"
        elif not any(reqs[r].level in allowed for r in c.requirements):
            skipped[c.id] = f"below --level {level}"
        elif (wanted_reqs is None or wanted_reqs & set(c.requirements)) and (wanted_ids is None or c.id in wanted_ids):
            chosen.append(c)
    return chosen, skipped
