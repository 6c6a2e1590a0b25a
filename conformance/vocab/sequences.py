"""Sequences over the spec's "States and transitions": chains of calls on session keys, and what each must answer.

One session key reaches one running instance of the agent, whichever protocol carries it (General facts). Through
the conformance agent's directives (docs/agent.md) the model keeps, per key of a chain, what the spec makes
observable:

- how many runs the instance started (`count` replies it; a resumed run is the same run continuing, so it does not
  count again);
- whether a run waits paused on a question, which path paused it (an AG-UI interrupt, an MCP question as text, an
  MCP form) and the directives left after the question;
- which protocols carried the key, and whether the service generated it.

A chain is a tuple of `Move`s; moves with the same non-zero `together` are sent at the same time (an overlap).
`Model.expect` says what the spec makes each move answer and under which requirement each reading is judged: a
`count` reply (exact, or for runs that overlap on one key one of a range, distinct across them), a pause with its
question, a resumed run's text and how it ends, a served MCP request. Where the spec leaves the answer open (a new
run on a paused session, a resume where no run waits, which of a resume and a run racing on one key comes first)
the model either never draws the move or expects nothing of its answer (`open`).

A default run sends the fixed chains below; `--depth N` adds chains drawn with hypothesis by walking this model
(`drawn_chains`), drawn once per seed and sent once, never replayed or shrunk against the server.
"""
from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.engine import Context
from conformance.outcomes import Deviation, NotAssessed, judge_all
from conformance.registry import Step
from conformance.vocab import protocols as p
from conformance.vocab.readers import outcome_interrupts, paused as agui_paused, request_json, stream_events
from conformance.vocab.text import truncate
from conformance.vocab.values import digits_only
from conformance.vocab.sending import call_tool, rpc, tool_name
from conformance.wire.exchange import Exchange

# -- what the agent is asked --------------------------------------------------------------------------------
FIRST_QUESTION, SECOND_QUESTION = "What is your name?", "Where do you live?"
SLOW_SECONDS = 1.0    # a `count` run of an overlap lasts this long, so runs sent together are in flight together
LONG_SECONDS = 6.0    # a long run: well past the 2 s of invoke.timing, well inside the 16 s silence of agui.silence
SCRIPTS: dict[str, tuple[str, ...]] = {
    "count": ("count",),
    "count-slow": ("count", f"sleep {SLOW_SECONDS:g}"),
    "ask": (f"ask {FIRST_QUESTION}", "say thanks"),
    "ask2": (f"ask {FIRST_QUESTION}", f"ask {SECOND_QUESTION}", "say done"),
    "long": ("say early", f"sleep {LONG_SECONDS:g}", "say late"),
}
PAUSING = ("ask", "ask2")
# The answers the resumes of a chain carry, in turn: each differs, so a continuation that took another one shows.
ANSWERS: tuple[Any, ...] = ({"name": "Ada"}, {"city": "Zürich"}, {"name": "Grace", "visits": 2})
HISTORY = ({"role": "user", "content": "say earlier"}, {"role": "assistant", "content": "earlier"})

# -- the requirements a move's readings are judged under ------------------------------------------------------
SAME_KEY = {"invoke": "INV-SESS-002", "agui": "AGUI-SESS-002", "mcp": "MCP-SESS-002"}
GENERATED_KEY = {"invoke": "INV-SESS-004", "agui": "AGUI-SESS-001", "mcp": "MCP-SESS-004"}
ACROSS_PROTOCOLS = "GEN-SESS-001"
FRESH_KEY = "GEN-SESS-002"
KEY_ECHOED = {"invoke": "INV-SESS-003", "mcp": "MCP-SESS-003"}   # AG-UI's threadId echo reads `facts["runs"]`
PAUSES = {"agui": "AGUI-INT-001", "mcp": "MCP-PAUSE-001", "mcp-elicit": "MCP-PAUSE-003"}
RESUMES = {"agui": "AGUI-INT-002", "mcp": "MCP-PAUSE-002", "mcp-elicit": "MCP-PAUSE-004"}
RESUMED_THREAD = "AGUI-INT-004"
REPLY = {("invoke", False): "INV-RES-003", ("invoke", True): "INV-STREAM-008", ("agui", True): "AGUI-ORDER-006",
         ("mcp", False): "MCP-TOOL-002", ("mcp", True): "MCP-PROG-008"}
DURATION = "INV-RES-013"       # durationMs: the duration of the run, in milliseconds
PROGRESS_ENDS = "MCP-PROG-003"  # a progress stream ends with the response, once, and nothing after it
HANDSHAKE, LEGACY_CALLS, STATELESS = "MCP-VER-005", "MCP-VER-006", "MCP-SESS-005"


@dataclass(frozen=True)
class Move:
    """One call of a chain.

    `verb`: "run" (a new run of `script`), "resume" (answers the question the key's paused run waits on: AG-UI
    `resume`, MCP `resume` argument, or an eliciting client's retry with the form answered), "list" (MCP
    tools/list) or "initialize" (the 2025-11-25 handshake). `key`: the chain's name of the session key, None to
    leave the key out (the service generates one, known as `binds` afterwards). `form`, how the call is spoken:
    invoke "" (JSON, no Accept), "stream" (`stream: true`), "accept" (`Accept: text/event-stream` alone), "history"
    (with `messages`); AG-UI "" (threadId), "bare" (no Accept), "run-id" (runId too), "history" (earlier user
    messages); MCP "" , "no-name" (no Mcp-Name), "progress" (a progress token), "elicit" (a client that can elicit),
    "legacy" (after the 2025-11-25 handshake)."""
    protocol: str
    verb: str = "run"
    key: str | None = None
    script: str = "count"
    form: str = ""
    binds: str | None = None
    together: int = 0

    def path(self) -> str:
        """How a pause taken by this move is answered: `agui`, `mcp` (the question as text) or `mcp-elicit`."""
        return "mcp-elicit" if self.form == "elicit" else self.protocol


@dataclass
class Instance:
    runs: int = 0
    carried: set[str] = field(default_factory=set)
    generated_by: str | None = None
    waiting: tuple[str, ...] | None = None   # the directives after the question a paused run waits on
    paused_path: str | None = None
    said: str = ""                           # the paused run's text so far (MCP may answer it whole at the end)
    slack: int = 0                           # runs a race may have added or not: later counts may be this far off


def walk(directives: tuple[str, ...], count: int) -> tuple[str, str | None, tuple[str, ...]]:
    """(text until the next question or the end, that question or None, the directives after it)."""
    text = ""
    for i, line in enumerate(directives):
        word, _, arg = line.partition(" ")
        if word == "count":
            text += str(count)
        elif word == "say":
            text += arg
        elif word == "ask":
            return text, arg, directives[i + 1:]
    return text, None, ()


class Model:
    """The sessions of one chain, and what the spec makes each move answer."""

    def __init__(self) -> None:
        self.keys: dict[str, Instance] = {}
        self.resumes = 0

    def instance(self, name: str) -> Instance:
        return self.keys.setdefault(name, Instance())

    # -- which moves the spec gives one answer for -------------------------------------------------------
    def allows(self, move: Move) -> bool:
        inst = self.keys.get(move.key) if move.key else None
        if move.verb in ("list", "initialize"):
            return move.protocol == "mcp"
        if move.verb == "resume":
            return inst is not None and inst.waiting is not None and inst.paused_path == move.path()
        if inst is not None and (inst.waiting is not None or (inst.slack and move.script in PAUSING)):
            return False           # a new run on a paused session: open
        if move.script in PAUSING and move.protocol == "invoke":
            return False           # what invoke does with a question: not shown
        if move.key is None and (move.binds is None or move.form in ("stream", "accept", "elicit")):
            return False           # a generated key is learnt from a JSON result, RUN_STARTED or a tool result
        return True

    # -- expectations ---------------------------------------------------------------------------------
    def expect(self, moves: list[Move], answers: list[Any]) -> list[dict[str, Any]]:
        """What each move of one group (sent together) must answer; the state moves on as if they all ran.

        Runs on one key sent together start in some order: each replies one `count` of the range they span, no two
        the same. A resume racing a new run on its key: whether the run came first (then what it does to the
        question is open) is up to the network, so the resume's answer is open, the run's `count` is judged only
        when it completed with one, and later counts on the key may be one off either way (`slack`)."""
        runs_on: dict[str, int] = {}
        for m in moves:
            if m.verb == "run" and m.key is not None:
                runs_on[m.key] = runs_on.get(m.key, 0) + 1
        raced = {m.key for m in moves if m.verb == "resume"} & set(runs_on)
        base = {key: self.instance(key).runs for key in runs_on}
        out = []
        for move, answer in zip(moves, answers):
            if move.verb == "run":
                out.append(self._run(move, runs_on.get(move.key, 1), base.get(move.key, 0), move.key in raced))
            elif move.key in raced:
                out.append(_expectation("open"))
            elif move.verb == "resume":
                out.append(self._resume(move, answer))
            else:
                out.append(self._served(move))
        for m in moves:
            if (m.key or m.binds) is not None:
                self.instance(m.key or m.binds).carried.add(m.protocol)
        for name in raced:
            inst = self.instance(name)
            inst.waiting, inst.paused_path, inst.slack = None, None, inst.slack + 1
        return out

    def _run(self, move: Move, together: int, base: int, raced: bool) -> dict[str, Any]:
        name = move.key if move.key is not None else move.binds
        inst = self.instance(name)
        if move.key is None:
            inst.generated_by = move.protocol
        before = inst.runs
        inst.runs += 1
        text, question, rest = walk(SCRIPTS[move.script], inst.runs)
        if question is not None:
            inst.waiting, inst.paused_path, inst.said = rest, move.path(), text
            expected = _expectation("pause", question=question, reply=text, judged=[["pause", PAUSES[move.path()]]])
        elif not move.script.startswith("count"):
            expected = _expectation("reply", reply=text, judged=[["reply", REPLY[move.protocol, _stream(move)]]])
        elif together > 1 and not raced:
            expected = _expectation("count", among=_span(base + 1, base + together, inst.slack), distinct=True,
                                    judged=[["count", SAME_KEY[move.protocol]]])
        else:
            expected = _expectation("count", judged=[["count", self._count_rule(move, inst, before)]])
            if inst.slack:
                expected["among"] = _span(inst.runs, inst.runs, inst.slack)
            else:
                expected.update(count=inst.runs, reply=text)
            if raced:
                expected["if_completed"] = True     # the racing run's own fate is open
        expected["slept"] = sum(float(line.split(" ", 1)[1]) for line in SCRIPTS[move.script]
                                if line.startswith("sleep "))
        self._common(move, expected)
        return expected

    def _count_rule(self, move: Move, inst: Instance, before: int) -> str:
        others = inst.carried - {move.protocol}
        if move.key is None or (inst.generated_by == move.protocol and not others):
            return GENERATED_KEY[move.protocol]
        if others:
            return ACROSS_PROTOCOLS
        return FRESH_KEY if before == 0 else SAME_KEY[move.protocol]

    def _resume(self, move: Move, answer: Any) -> dict[str, Any]:
        inst = self.instance(move.key)
        self.resumes += 1
        head = "answer: " + p.canonical(answer)
        text, question, rest = walk(inst.waiting or (), inst.runs)
        expected = _expectation("resumed", reply=head + text, whole=inst.said + head + text, answer=answer,
                                then="pause" if question is not None else "success", question=question)
        expected["judged"] = [["resume", RESUMES[move.path()]]] + ([["thread", RESUMED_THREAD]]
                                                                 if move.protocol == "agui" else [])
        inst.said += head + text
        inst.waiting = rest if question is not None else None
        if question is None:
            inst.paused_path = None
        self._common(move, expected)
        return expected

    def _served(self, move: Move) -> dict[str, Any]:
        rule = HANDSHAKE if move.verb == "initialize" else LEGACY_CALLS if move.form == "legacy" else STATELESS
        return _expectation("served", judged=[["served", rule]])

    @staticmethod
    def _common(move: Move, expected: dict[str, Any]) -> None:
        """The readings every call of a protocol carries: the key sent comes back (in a JSON result; an eliciting
        client's form request names no session), a legacy call is served."""
        if move.key is not None and move.protocol in KEY_ECHOED and move.form not in ("stream", "accept", "elicit"):
            expected["judged"].append(["echo", KEY_ECHOED[move.protocol]])
        if move.form == "legacy":
            expected["judged"].append(["served", LEGACY_CALLS])
        if move.protocol == "invoke" and not _stream(move):
            expected["judged"].append(["duration", DURATION])
        if move.protocol == "mcp" and move.form == "progress":
            expected["judged"].append(["stream", PROGRESS_ENDS])


def _stream(move: Move) -> bool:
    """The answer is an event stream (invoke asked for one, MCP sent a progress token; AG-UI always streams)."""
    return move.form in ("stream", "accept", "progress") or move.protocol == "agui"


def _span(low: int, high: int, slack: int) -> list[int]:
    return list(range(max(1, low - slack), high + slack + 1))


def _expectation(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "judged": fields.pop("judged", []), **fields}


def requirements(chains: list[tuple[Move, ...]], protocol: str) -> list[str]:
    """Every requirement the moves of `protocol` in these chains are judged under, in a stable order."""
    seen: dict[str, None] = {}
    for chain in chains:
        model = Model()
        for group in groups(chain):
            answers = [ANSWERS[0]] * len(group)
            for move, expected in zip(group, model.expect(group, answers)):
                if move.protocol == protocol:
                    seen.update({rule: None for _, rule in expected["judged"]})
    return list(seen)


def groups(chain: tuple[Move, ...]) -> list[list[Move]]:
    """The chain as groups of moves sent at the same time (a move with `together` 0 is a group of its own)."""
    out: list[list[Move]] = []
    for move in chain:
        if move.together and out and out[-1][0].together == move.together:
            out[-1].append(move)
        else:
            out.append([move])
    return out


# -- the chains a default run sends ----------------------------------------------------------------------
INVOKE_CHAIN = (
    Move("invoke", binds="k"),                            # no sessionId, no stream, no Accept: count 1
    Move("invoke", key="k", form="stream"),               # the generated key, streamed: 2
    Move("invoke", key="k", form="history"),              # with `messages`: 3
)
AGUI_CHAIN = (
    Move("agui", form="bare", binds="t"),                 # no threadId, runId or Accept: 1
    Move("agui", key="t", form="run-id"),                 # 2
    Move("agui", key="t", script="ask2", form="history"), # earlier user messages; pauses on the first question
    Move("agui", "resume", key="t"),                      # continues, pauses on the second
    Move("agui", "resume", key="t"),                      # a second resume in a row: the run completes
    Move("agui", key="t"),                                # 4: the resumed run counted once
)
MCP_CHAIN = (
    Move("mcp", "list"),
    Move("mcp", form="no-name", binds="s"),               # no session_id, no Mcp-Name: 1
    Move("mcp", key="s", form="progress"),                # a progress stream: 2
    Move("mcp", key="s", script="ask2"),                  # the question as text
    Move("mcp", "resume", key="s"),                       # continues, asks the second as text
    Move("mcp", "resume", key="s"),                       # completes
    Move("mcp", key="s"),                                 # 4
)
MCP_LEGACY_CHAIN = (
    Move("mcp", "initialize", form="legacy"),
    Move("mcp", "list", form="legacy"),
    Move("mcp", key="l", form="legacy"),
    Move("mcp", key="l", form="legacy"),
    Move("mcp", key="l", script="ask", form="legacy"),
    Move("mcp", "resume", key="l", form="legacy"),
)
MCP_ELICIT_CHAIN = (
    Move("mcp", key="e", script="ask2", form="elicit"),   # asked for a form
    Move("mcp", "resume", key="e", form="elicit"),        # retried with it answered: asked for a second form
    Move("mcp", "resume", key="e", form="elicit"),        # retried again: complete
)
CROSS_CHAIN = (                                           # one key over every protocol, with a pause on two of them
    Move("invoke", binds="x"),
    Move("mcp", key="x"),
    Move("agui", key="x", script="ask"),
    Move("agui", "resume", key="x"),
    Move("invoke", key="x", form="stream"),
    Move("mcp", key="x", script="ask"),
    Move("mcp", "resume", key="x"),
    Move("agui", key="x"),
)


def overlap(protocol: str, *, race: bool) -> tuple[Move, ...]:
    """Two slow `count` runs on one fresh key and one on another, all at once, then one more on the first key; with
    `race`, a paused run on a third key, then its resume and a new run on that key at once. (Each protocol's overlap
    scenario is recorded on a lane of its own, so calls sent together leave together whatever the suite's other
    work.)"""
    moves = (Move(protocol, key="a", script="count-slow", together=1),
             Move(protocol, key="a", script="count-slow", together=1),
             Move(protocol, key="b", script="count-slow", together=1),
             Move(protocol, key="a"))
    if race:
        moves += (Move(protocol, key="r", script="ask"),
                  Move(protocol, "resume", key="r", together=2),
                  Move(protocol, key="r", together=2))
    return moves


INVOKE_OVERLAP = overlap("invoke", race=False)
AGUI_OVERLAP = overlap("agui", race=True)
MCP_OVERLAP = overlap("mcp", race=True)


# Runs of several seconds, judged on what the spec says of time (durationMs, streams that stay open and end
# properly), and a session that must outlast them: a count after a long run on its key, a pause answered only after
# a long run (each protocol's long-run scenario is recorded on a lane of its own, inside the 16 s silence).
INVOKE_LONG = (Move("invoke", key="w", script="long", together=1),
               Move("invoke", key="v", script="long", form="stream", together=1),
               Move("invoke", key="w"))
AGUI_LONG = (Move("agui", key="q", script="ask"),
             Move("agui", key="w", script="long"),
             Move("agui", "resume", key="q"))
MCP_LONG = (Move("mcp", key="q", script="ask"),
            Move("mcp", key="w", script="long", form="progress"),
            Move("mcp", "resume", key="q"))


# The chains each scenario plays (scenario -> chains), and what its moves of a protocol are judged under.
CHAINS: dict[str, tuple[tuple[Move, ...], ...]] = {
    "invoke.chain": (INVOKE_CHAIN,), "invoke.together": (INVOKE_OVERLAP,), "invoke.slow_run": (INVOKE_LONG,),
    "agui.chain": (AGUI_CHAIN,), "agui.together": (AGUI_OVERLAP,), "agui.slow_run": (AGUI_LONG,),
    "mcp.chain": (MCP_CHAIN, MCP_LEGACY_CHAIN, MCP_ELICIT_CHAIN), "mcp.together": (MCP_OVERLAP,),
    "mcp.slow_run": (MCP_LONG,), "agui.cross_chain": (CROSS_CHAIN,),
}
CROSS = "agui.cross_chain"     # it also plays the chains drawn under --depth
# Everything a drawn move of a protocol can be judged under (tests/checks/test_sequences.py draws to prove it).
DRAWABLE = {
    "invoke": ("INV-SESS-002", "INV-SESS-003", "INV-SESS-004", "GEN-SESS-001", "GEN-SESS-002", "INV-RES-013"),
    "agui": ("AGUI-SESS-001", "AGUI-SESS-002", "GEN-SESS-001", "GEN-SESS-002", "AGUI-INT-001", "AGUI-INT-002",
             "AGUI-INT-004"),
    "mcp": ("MCP-SESS-002", "MCP-SESS-003", "MCP-SESS-004", "MCP-SESS-005", "GEN-SESS-001", "GEN-SESS-002",
            "MCP-PAUSE-001", "MCP-PAUSE-002", "MCP-PROG-003"),
}


def judged_under(scenarios: list[str], protocol: str) -> list[str]:
    """The requirements the moves of `protocol` in these scenarios are judged under (in the scenario that plays the
    drawn chains, everything a drawn move can be judged under too)."""
    fixed = requirements([chain for name in scenarios for chain in CHAINS[name]], protocol)
    drawn = [r for r in DRAWABLE[protocol] if r not in fixed] if CROSS in scenarios else []
    return fixed + drawn


# -- chains drawn under --depth ----------------------------------------------------------------------------
DRAWN_PER_DEPTH = 2      # chains drawn for each --depth step above 1
DRAWN_LENGTH = (4, 9)    # moves per drawn chain


def candidate_moves(model: Model, fresh: str) -> list[Move]:
    """Every move the model gives one answer for now (MCP over the 2026-07-28 path, as text; no overlaps)."""
    keys = list(model.keys) + [fresh]
    out = [Move("invoke", binds=fresh), Move("agui", form="bare", binds=fresh), Move("mcp", binds=fresh),
           Move("mcp", "list")]
    forms = {"invoke": ("", "stream", "accept", "history"), "agui": ("", "run-id", "history"),
             "mcp": ("", "no-name", "progress")}
    for key in keys:
        for protocol, kinds in forms.items():
            out += [Move(protocol, key=key, form=form) for form in kinds]
            out += [Move(protocol, key=key, script=s) for s in PAUSING]
            out.append(Move(protocol, "resume", key=key))
    return [m for m in out if model.allows(m)]


def drawn_chains(n: int, seed: int) -> list[tuple[Move, ...]]:
    """`n` chains drawn by walking the model (deterministic per seed). Nothing here reaches a server."""
    if n <= 0:
        return []
    from hypothesis import strategies as st
    from conformance import generate

    @st.composite
    def chain(draw) -> tuple[Move, ...]:
        model, moves = Model(), []
        for i in range(draw(st.integers(*DRAWN_LENGTH))):
            move = draw(st.sampled_from(candidate_moves(model, f"d{len(model.keys)}")))
            model.expect([move], [ANSWERS[model.resumes % len(ANSWERS)]])
            moves.append(move)
        return tuple(moves)

    return generate.guarded(generate.examples, chain(), n, seed)


# -- playing a chain against the server ----------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """What a resume sends (AG-UI `resume` entries, MCP `resume` argument, an eliciting client's retry params) and
    what the agent gets of it (the payload, the form's content)."""
    sent: Any
    agent_gets: Any


# (ctx, interrupts the paused run listed, payload) -> (resume value, how it was built) or (None, why not)
AguiResume = Callable[[Context, list[dict[str, Any]], Any], tuple[Any, str]]
# the answer that paused an eliciting client's call -> its retry's params and the form's content, or None
McpForm = Callable[[Exchange], "tuple[dict[str, Any], Any] | None"]
NO_ACCEPT = {"Accept": None}          # removes the client's default `Accept: */*`
SSE_ACCEPT = {"Accept": p.SSE}


class CannotAnswer(Exception):
    """The paused run showed nothing the suite can answer (the chain stops, saying why)."""


@dataclass
class Player:
    """Sends the moves of chains through a scenario's Context and notes what each must answer: `facts["moves"]`
    (label, the move, the key sent, its expectation) and, for AG-UI, `facts["runs"]` (what every AG-UI stream
    check reads). A chain that cannot go on (an answer it cannot continue from) stops; `facts["stopped"]` says
    where and why. Chains played at once by one Player number their moves apart."""
    ctx: Context
    family: Step
    agui_resume: AguiResume | None = None
    mcp_form: McpForm | None = None
    n: int = 0
    group: int = 0

    async def play(self, chain: tuple[Move, ...]) -> bool:
        model, keys, pauses = Model(), {}, {}
        for group in groups(chain):
            try:
                answers = [self._answer(model, m, pauses) for m in group]
            except CannotAnswer as exc:
                return self._stop(f"{self.family.of(self.n + 1)}: {exc}")
            expected = model.expect(group, [a.agent_gets if a else None for a in answers])
            self.group += 1
            labels = []
            for move in group:
                self.n += 1
                labels.append(self.family.of(f"{self.n}-{move.protocol}-{move.verb}"))
            sent = await asyncio.gather(*(self._send(m, label, keys, pauses, a, exp)
                                          for m, label, a, exp in zip(group, labels, answers, expected)))
            for move, exp, (ex, key) in zip(group, expected, sent):
                self._note(move, exp, ex, key)
                why = self._continue(move, exp, ex, keys, pauses)
                if why:
                    return self._stop(f"{ex.label}: {why}")
        return True

    def _stop(self, why: str) -> bool:
        self.ctx.recording.facts.setdefault("stopped", []).append(why)
        return False

    def _answer(self, model: Model, move: Move, pauses: dict[str, Exchange]) -> Answer | None:
        if move.verb != "resume":
            return None
        pause = pauses[move.key]
        if move.form == "elicit":
            made = self.mcp_form(pause) if self.mcp_form else None
            if made is None:
                raise CannotAnswer("the paused call asked for no form the suite can fill (upstream 2026-07-28 "
                                   "InputRequiredResult with an elicitation/create form)")
            return Answer(*made)
        payload = ANSWERS[model.resumes % len(ANSWERS)]
        if move.protocol == "mcp":
            return Answer(payload, payload)
        resume, how = self.agui_resume(self.ctx, outcome_interrupts(pause), payload)
        if resume is None:
            raise CannotAnswer(how)
        return Answer(resume, payload)

    def _note(self, move: Move, expected: dict[str, Any], ex: Exchange, key: str | None) -> None:
        facts = self.ctx.recording.facts
        noted = {"label": ex.label, "move": dataclasses.asdict(move), "key": key, "group": self.group,
                 "expect": expected}
        if move.key is None and move.binds is not None:
            noted["generated"] = generated_key(move.protocol, ex)
        facts.setdefault("moves", []).append(noted)
        if move.protocol != "agui":
            return
        kind = expected["kind"]
        finished = ex.status == 200 and any(e.get("type") == "RUN_FINISHED" for e in stream_events(ex))
        if kind == "open" or (expected.get("if_completed") and not finished):
            return                  # the spec leaves the answer open: it need not even be a run
        ends = "interrupt" if kind == "pause" or expected.get("then") == "pause" else "success"
        facts.setdefault("runs", {})[ex.label] = {"kind": ends, "reply": expected.get("reply"), "thread": key,
                                                  "run": _sent(ex).get("runId")}

    # -- sending -------------------------------------------------------------------------------------------
    async def _send(self, move: Move, label: str, keys: dict[str, str], pauses: dict[str, Exchange],
                    answer: Answer | None, expected: dict[str, Any]) -> tuple[Exchange, str | None]:
        key = keys.setdefault(move.key, self.ctx.unique(f"seq-{move.key}")) if move.key is not None else None
        if move.protocol == "invoke":
            return await self._invoke(move, label, key), key
        if move.protocol == "agui":
            return await self._agui(move, label, key, answer), key
        return await self._mcp(move, label, key, pauses.get(move.key), answer, expected["kind"] == "open"), key

    async def _invoke(self, move: Move, label: str, key: str | None) -> Exchange:
        extra: dict[str, Any] = {"stream": True} if move.form == "stream" else {}
        if move.form == "history":
            extra["messages"] = list(HISTORY)
        headers = SSE_ACCEPT if move.form == "accept" else NO_ACCEPT
        return await self.ctx.post(self.ctx.agent_path("invoke"), p.invoke_body(_prompt(move), key, **extra),
                                   headers=headers, label=label)

    async def _agui(self, move: Move, label: str, key: str | None, answer: Answer | None) -> Exchange:
        ctx = self.ctx
        if answer is not None:
            body: dict[str, Any] = {"threadId": key, "resume": answer.sent}
        else:
            earlier = [p.agui_message(m["content"], m["role"], f"h{i}") for i, m in enumerate(HISTORY)] \
                if move.form == "history" else []
            body = p.agui_input(thread=key, run=ctx.unique("run") if move.form == "run-id" else None,
                                messages=earlier + [p.agui_message(_prompt(move), "user", "u1")])
        headers = NO_ACCEPT if move.form == "bare" else SSE_ACCEPT
        return await ctx.post(ctx.agent_path("agui"), body, label=label, headers=headers)

    async def _mcp(self, move: Move, label: str, key: str | None, pause: Exchange | None, answer: Answer | None,
                   open_answer: bool) -> Exchange:
        ctx = self.ctx
        legacy = dict(version=p.MCP_LEGACY_VERSION, meta_version=None) if move.form == "legacy" else {}
        if move.verb == "initialize":
            init = {"protocolVersion": p.MCP_LEGACY_VERSION, "capabilities": {},
                    "clientInfo": {"name": "aisvc-conformance", "version": "0.1"}}
            return await rpc(ctx, "initialize", init, label=label, id=self.n, version=None)
        if move.verb == "list":
            return await rpc(ctx, "tools/list", label=label, id=f"list-{self.n}", **legacy)
        tool = await tool_name(ctx)
        if move.form == "elicit":
            caps = {"capabilities": {"elicitation": {"form": {}}}}
            if answer is None:
                return await call_tool(ctx, tool, _prompt(move), label=label, id=self.n, session=key, **caps)
            return await call_tool(ctx, tool, _prompt_of(pause), label=label, id=self.n, session=key,
                                   extra_params=answer.sent, **caps)
        if answer is not None:
            ex = await call_tool(ctx, tool, None, label=label, id=self.n, session=key, resume=answer.sent, **legacy)
            if _served(ex) or open_answer:
                return ex
            # The spec does not say whether `prompt` goes along with `resume`: a server that requires it gets it.
            ex.label = f"{label}-without-prompt"
            return await call_tool(ctx, tool, _prompt_of(pause), label=label, id=self.n, session=key,
                                   resume=answer.sent, **legacy)
        return await call_tool(ctx, tool, _prompt(move), label=label, id=self.n, session=key,
                               send_name=move.form != "no-name",
                               progress_token=f"seq-{self.n}" if move.form == "progress" else None, **legacy)

    # -- what the next move needs ------------------------------------------------------------------------
    def _continue(self, move: Move, expected: dict[str, Any], ex: Exchange, keys: dict[str, str],
                  pauses: dict[str, Exchange]) -> str | None:
        """Why the chain cannot go on after this answer (None: it can): a run that was not served, a generated
        key not returned, a pause that did not happen."""
        if expected["kind"] == "open" or expected.get("if_completed"):
            return None
        if ex.status != 200:
            return f"answered {ex.status if ex.status is not None else ex.error}, so the chain cannot go on"
        if move.key is None and move.binds is not None:
            generated = generated_key(move.protocol, ex)
            if generated is None:
                return "no generated session key came back to continue with"
            keys[move.binds] = generated
        if expected["kind"] == "pause" or expected.get("then") == "pause":
            pauses[move.key or move.binds] = ex
            if not paused(move, ex):
                return "the run did not pause as asked, so there is no question to answer"
        return None


def _prompt(move: Move) -> str:
    return "\n".join(SCRIPTS[move.script])


def _sent(ex: Exchange) -> dict[str, Any]:
    body = request_json(ex)
    return body if isinstance(body, dict) else {}


def _prompt_of(ex: Exchange) -> str | None:
    """The prompt of the MCP call that paused (sent again with a retry)."""
    args = (_sent(ex).get("params") or {}).get("arguments") or {}
    return args.get("prompt")


def _served(ex: Exchange) -> bool:
    try:
        return ex.status == 200 and "result" in p.mcp_response(ex)
    except AssertionError:
        return False


def generated_key(protocol: str, ex: Exchange) -> str | None:
    """The session key the service generated: invoke `sessionId`, AG-UI `RUN_STARTED.threadId`, MCP
    `structuredContent.sessionId`; None when the answer does not carry one of 1 to 256 characters."""
    try:
        if protocol == "invoke":
            value = ex.json().get("sessionId")
        elif protocol == "agui":
            value = next((e.get("threadId") for e in stream_events(ex) if e.get("type") == "RUN_STARTED"), None)
        else:
            value = p.mcp_response(ex)["result"]["structuredContent"]["sessionId"]
    except (AssertionError, AttributeError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) and 1 <= len(value) <= 256 else None


def paused(move: Move, ex: Exchange) -> bool:
    """Whether the answer paused the run: an AG-UI RUN_FINISHED with outcome `interrupt`; an MCP result (a question
    as text), or for an eliciting client an `input_required` result."""
    if move.protocol == "agui":
        return agui_paused(ex)
    if not _served(ex):
        return False
    result = p.mcp_response(ex)["result"]
    return result.get("resultType") == "input_required" if move.form == "elicit" else isinstance(result, dict)


async def play_all(ctx: Context, family: Step, chains: list[tuple[Move, ...]] | None = None, **how: Any) -> None:
    """Plays chains at once (each on keys of its own; by default the scenario's `CHAINS`) as one recording."""
    ctx.conformance_agent("the chains are scripted with its directives (`count`, `ask`, `sleep`)")
    if chains is None:
        chains = list(CHAINS[ctx.scenario.name])
    player = Player(ctx, family, **how)
    await asyncio.gather(*(player.play(chain) for chain in chains))


# -- judging what was played (the checks of each protocol give the readings) ----------------------------------
@dataclass(frozen=True)
class Played:
    """One noted move of a recording with its exchange, and the moves before it on the same session key."""
    rec: Any
    noted: dict[str, Any]
    ex: Exchange
    before: tuple[Exchange, ...]

    @property
    def expect(self) -> dict[str, Any]:
        return self.noted["expect"]

    @property
    def key(self) -> str | None:
        return self.noted["key"] or self.noted.get("generated")

    def what(self) -> str:
        """The move in words, for messages: what it sent and on which key after which moves."""
        move = self.noted["move"]
        sent = f"{move['verb']} `{move['script']}`" if move["verb"] == "run" else move["verb"]
        form = f" ({move['form']})" if move["form"] else ""
        key = f"on key {self.key!r}" if self.noted["key"] else "without a key" + (
            f" (generated {self.key!r})" if self.key else "")
        after = f" after {', '.join(ex.label for ex in self.before)}" if self.before else " (the key's first call)"
        return f"{move['protocol']} {sent}{form} {key}{after}"


def played(recs: tuple[Any, ...], protocol: str, requirement: str) -> list[tuple[str, Played]]:
    """(aspect, move) of every move of `protocol` the recordings played whose expectation names `requirement`."""
    out = []
    for rec in recs:
        moves = rec.facts.get("moves", [])
        for i, noted in enumerate(moves):
            if noted["move"]["protocol"] != protocol:
                continue
            for aspect, rule in noted["expect"]["judged"]:
                if rule == requirement:
                    key = noted["key"] or noted.get("generated")
                    before = tuple(rec.get(m["label"]) for m in moves[:i] if m["group"] != noted["group"]
                                   and key is not None and key in (m["key"], m.get("generated")))
                    out.append((aspect, Played(rec, noted, rec.get(noted["label"]), before)))
    return out


def rules_over_moves(protocol: str, groups: dict[str, list[str]], make: Callable[[str], Callable[..., Any]]
                     ) -> list[dict[str, Any]]:
    """The `registry.rule` arguments that judge the moves of `protocol` in each group of scenarios: one check per
    requirement they name (`make(requirement)`, defined in the check module, builds its function)."""
    return [dict(make=make, over=judged_under(scenarios, protocol), requirements=lambda req: req,
                 scenarios=scenarios, supplementary=True,
                 name=lambda req, g=group: f"{g}_{protocol}__{req.lower().replace('-', '_')}",
                 doc=lambda req, g=group: f"Every {protocol} call of {GROUP_WORDS[g]} judged under {req}, by what "
                                          f"the sessions model expects of it (`facts[\"moves\"]`).")
            for group, scenarios in groups.items()]


GROUP_WORDS = {"sequences": "the protocol's chains, overlaps and long runs",
               "cross": "the chain across protocols (and the chains drawn under --depth)"}


def judge_moves(recs: tuple[Any, ...], protocol: str, requirement: str,
                judges: dict[str, Callable[[Played], None]], read_count: Callable[[Played], str | None]) -> str | None:
    """Every move of `protocol` whose expectation names `requirement`, judged by the reading of its aspect
    (`judges[aspect]`; `count` by `read_count`, the reply of a run that completed with one, else None)."""
    replied: dict[tuple[str, int], list[tuple[int, Played]]] = {}

    def rule(item: tuple[str, Played]) -> None:
        aspect, move = item
        if aspect != "count":
            judges[aspect](move)
            return
        text = read_count(move)
        if text is None:
            raise NotAssessed(f"{move.ex.label}: the run raced a resume and did not complete with a count; what it "
                              f"does then is open")
        count_is(move, text, replied)

    return judge_all(played(recs, protocol, requirement), rule, exchange=lambda item: item[1].ex,
                     nothing=f"no {protocol} call of the chains played was judged under {requirement} (chains drawn "
                             f"from the sessions model come with --depth 2 or more)")


def count_is(move: Played, text: str, replied: dict[tuple[str, int], list[tuple[int, Played]]]) -> None:
    """The `count` reply `text` is the number the model expects, or one of the range runs sent together span, no two
    of them the same."""
    expect = move.expect
    wanted = expect.get("count")
    span = expect.get("among") or [wanted]
    if not digits_only(text) or int(text) not in span:
        shown = f"{wanted}" if wanted is not None else f"one of {span[0]}..{span[-1]}"
        raise Deviation(f"{move.what()}: `count` replied {truncate(text, 60, quoted=True)}, expected {shown} "
                        f"(the runs this key's instance started): the call reached another instance", (move.ex,
                                                                                                    *move.before))
    if expect.get("distinct"):
        group = replied.setdefault((move.rec.scenario, move.noted["group"]), [])
        twin = next((other for n, other in group if n == int(text) and other.key == move.key), None)
        group.append((int(text), move))
        if twin is not None:
            raise Deviation(f"{move.what()}: `count` replied {text!r}, as did {twin.ex.label}, sent at the same time "
                            f"on the same key: two runs of one instance cannot both be its run {text}; the calls "
                            f"reached two instances", (move.ex, twin.ex, *move.before))
