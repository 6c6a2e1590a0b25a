"""Sequences over the spec's "States and transitions": what each call of a chain must answer, how a chain is played
against the server, and how its calls are judged. The chains, their calls (`Move`), the scripts and the history are
the model's (`conformance.model.histories`).

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

A default run sends the model's fixed chains and its history; `--depth N` adds chains drawn with hypothesis by walking
this model (`drawn_chains`), drawn once per seed and sent once, never replayed or shrunk against the server.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from conformance.engine import Context
from conformance.model.histories import (  # noqa: F401 (the model's data, read through this module too)
    ACROSS_PROTOCOLS, AGUI_CHAIN, AGUI_LONG, AGUI_OVERLAP, ANSWERS, CHAINS, CROSS, CROSS_CHAIN, DRAWABLE, DURATION,
    EVENTS_IN_ORDER, FAILED, FAILING, FAILURE, FIRST_QUESTION, FRESH_KEY, GENERATED_KEY, HANDSHAKE, HISTORIES,
    HISTORY, HISTORY_KEY, HISTORY_MOVES, INVOKE_CHAIN, INVOKE_LONG, INVOKE_OVERLAP, KEPT_APART, KEY_ECHOED,
    KEY_FORMS, LEGACY_CALLS, LONG_SECONDS, MCP_CHAIN, MCP_ELICIT_CHAIN, MCP_LEGACY_CHAIN, MCP_LONG, MCP_OVERLAP,
    MESSAGES, MODERN_CALLS, Move, NAME_OPTIONAL, OTHER_AGENT, OTHER_AGENT_CLASS, PARTIAL, PATHS, PAUSES,
    PAUSING, PROGRESS_ENDS, REPLY, RESUMED_THREAD, RESUMES, SAME_KEY, SCRIPTS, SECOND_QUESTION, SLOW_SECONDS,
    STATELESS, TRANSITIONS, TWIN, done_in_order, history, is_stream, key_form_possible, overlap, possible,
    reads_count, script_of, transition_of, twin_class)
from conformance.outcomes import Blocked, Deviation, NotAssessed, judge_all, precondition, unread
from conformance.registry import Step
from conformance.vocab import agent_readings, forms, inputs, protocols as p
from conformance.vocab.readers import outcome_interrupts, paused as agui_paused, request_json, stream_events
from conformance.vocab.sending import call_tool, rpc, tool_name
from conformance.vocab.text import truncate
from conformance.vocab.values import digits_only
from conformance.wire.exchange import Exchange

@dataclass
class Instance:
    runs: int = 0
    carried: set[str] = field(default_factory=set)
    generated_by: str | None = None
    returned_read: bool = False              # a count was read on a call that sent the generated key back
    generated_paused: bool = False           # the run paused in the call that generated the key
    waiting: tuple[str, ...] | None = None   # the directives after the question a paused run waits on
    paused_path: str | None = None
    said: str = ""                           # the paused run's text so far (MCP may answer it whole at the end)
    said_parts: list = field(default_factory=list)   # the same as parts: ["text", t] and ["answer", value] (resumes)
    slack: int = 0                           # runs a race may have added or not: later counts may be this far off


def walk(directives: tuple[str, ...], count: int) -> tuple[str, str | None, tuple[str, ...]]:
    """(text until the next question, the failure or the end, that question or None, the directives after it: a
    failure leaves `(FAILURE,)`)."""
    text = ""
    for i, line in enumerate(directives):
        word, _, arg = line.partition(" ")
        if word == "count":
            text += str(count)
        elif word == "say":
            text += arg
        elif word == "ask":
            return text, arg, directives[i + 1:]
        elif word == "fail":
            return text, None, (line,)
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
        if move.key is None and (move.binds is None or move.has("stream", "accept", "elicit")):
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
                out.append(_expectation("open", answer=answer))
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
        if move.script == "echo-messages":
            text = p.canonical(sent_messages(move))
        if move.script == "echo-messages" and move.protocol in MESSAGES:
            expected = _expectation("reply", reply=text, judged=[["messages", MESSAGES[move.protocol]]])
        elif question is not None:
            inst.waiting, inst.paused_path, inst.said, inst.said_parts = rest, move.path(), text, [["text", text]]
            inst.generated_paused = move.key is None
            expected = _expectation("pause", question=question, reply=text, judged=[["pause", PAUSES[move.path()]]])
            self._counted(move, inst, before, text, expected)
        elif rest == (FAILURE,):
            expected = _expectation("failed", reply=text, judged=[["failed", FAILED[move.protocol, is_stream(move),
                                                                                    bool(text)]]])
            if move.protocol in PARTIAL and not is_stream(move):
                expected["judged"].append(["partial", PARTIAL[move.protocol]])
            self._counted(move, inst, before, text, expected)
        elif "count" not in SCRIPTS[move.script]:
            expected = _expectation("reply", reply=text, judged=[["reply", REPLY[move.protocol, is_stream(move)]]])
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
        if move.protocol == "invoke" and not is_stream(move) and len(done_in_order(move.script)) > 1:
            expected["judged"].append(["events", EVENTS_IN_ORDER])
            expected["order"] = list(done_in_order(move.script))
        self._common(move, expected)
        return expected

    def _counted(self, move: Move, inst: Instance, before: int, text: str, expected: dict[str, Any]) -> None:
        """A run that pauses or fails after `count`: its text before the pause or failure is the count and then
        `suffix`, and the count is judged as any other (not when a race left it a range)."""
        if not reads_count(move) or inst.slack:
            return
        suffix = text[len(str(inst.runs)):] if text.startswith(str(inst.runs)) else ""
        expected.update(count=inst.runs, suffix=suffix)
        expected["judged"].insert(0, ["count", self._count_rule(move, inst, before)])

    def _count_rule(self, move: Move, inst: Instance, before: int) -> str:
        """The rule a count is judged under: a generated key's, on the call that generated it and on the first that
        sent it back whose count is read (what that rule states: the key reaches the instance it was generated for);
        a key's on every later call (calls with the same value reach the same instance, however the value came)."""
        others = inst.carried - {move.protocol}
        if move.key is None:
            return GENERATED_KEY[move.protocol]
        if inst.generated_by == move.protocol and not others and not inst.returned_read:
            inst.returned_read = True
            return GENERATED_KEY[move.protocol]
        if others:
            return ACROSS_PROTOCOLS
        return FRESH_KEY if before == 0 else SAME_KEY[move.protocol]

    def _resume(self, move: Move, answer: Any) -> dict[str, Any]:
        inst = self.instance(move.key)
        self.resumes += 1
        head = "answer: " + p.canonical(answer)
        text, question, rest = walk(inst.waiting or (), inst.runs)
        inst.said_parts = inst.said_parts + [["answer", answer], ["text", text]]
        expected = _expectation("resumed", reply=head + text, whole=inst.said + head + text, answer=answer,
                                then="pause" if question is not None else "success", question=question,
                                parts=inst.said_parts[-2:], whole_parts=inst.said_parts)
        expected["judged"] = [["resume", RESUMES[move.path()]]] + ([["thread", RESUMED_THREAD]]
                                                                 if move.protocol == "agui" else [])
        if inst.generated_paused:      # the first call that sends the key back: does it name the paused run?
            expected["judged"].append(["returned", GENERATED_KEY[move.protocol]])
            inst.generated_paused = False
        inst.said += head + text
        inst.waiting = rest if question is not None else None
        if question is None:
            inst.paused_path = None
        self._common(move, expected)
        return expected

    def _served(self, move: Move) -> dict[str, Any]:
        rule = HANDSHAKE if move.verb == "initialize" else LEGACY_CALLS if move.has("legacy") else STATELESS
        return _expectation("served", judged=[["served", rule]])

    @staticmethod
    def _common(move: Move, expected: dict[str, Any]) -> None:
        """The readings every call of a protocol carries: the key sent comes back (in a JSON result; an eliciting
        client's form request names no session), an MCP call is served (a resume is read by its own rule)."""
        if move.key is not None and move.protocol in KEY_ECHOED and not move.has("stream", "accept", "elicit") \
                and expected["kind"] != "failed":
            expected["judged"].append(["echo", KEY_ECHOED[move.protocol]])
        if move.protocol == "mcp" and not move.has("elicit") and expected["kind"] != "resumed":
            # a resume refused is the resume's rule (MCP-PAUSE-002), on either handshake
            rule = LEGACY_CALLS if move.has("legacy") else NAME_OPTIONAL if move.has("no-name") else MODERN_CALLS
            expected["judged"].append(["served", rule])
        if move.protocol == "invoke" and not is_stream(move):
            expected["judged"].append(["duration", DURATION])
        if move.protocol == "mcp" and move.has("progress"):
            expected["judged"].append(["stream", PROGRESS_ENDS])


def _span(low: int, high: int, slack: int) -> list[int]:
    return list(range(max(1, low - slack), high + slack + 1))


def _expectation(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "judged": fields.pop("judged", []), **fields}


def requirements(chains: list[tuple[Move, ...]], protocol: str) -> list[str]:
    """Every requirement the moves of `protocol` in these chains are judged under, in a stable order."""
    return by_protocol(chains).get(protocol, [])


def by_protocol(chains: list[tuple[Move, ...]]) -> dict[str, list[str]]:
    """protocol -> every requirement its moves in these chains are judged under, in a stable order."""
    seen: dict[str, dict[str, None]] = {}
    for chain in chains:
        model = Model()
        for group in groups(chain):
            answers = [ANSWERS[0]] * len(group)
            for move, expected in zip(group, model.expect(group, answers)):
                seen.setdefault(move.protocol, {}).update({rule: None for _, rule in expected["judged"]})
    return {protocol: list(rules) for protocol, rules in seen.items()}


def groups(chain: tuple[Move, ...]) -> list[list[Move]]:
    """The chain as groups of moves sent at the same time (a move with `together` 0 is a group of its own)."""
    out: list[list[Move]] = []
    for move in chain:
        if move.together and out and out[-1][0].together == move.together:
            out[-1].append(move)
        else:
            out.append([move])
    return out


def path_of(move: dict[str, Any]) -> str | None:
    """The history path a noted move took (None: a move of no path, such as a resume or a list)."""
    return next((q for q, (protocol, forms) in PATHS.items()
                 if protocol == move["protocol"] and move["form"] in forms), None)


def judged_histories(requirements: Iterable[str], recordings: Iterable[Any]) -> tuple[str, ...]:
    """What the history played and the recordings hold, of the readings judged under any of `requirements`: each as
    `<transition> on <path> -> <path it was read on>` (the transition is the key's previous run), sorted."""
    wanted, out = set(requirements), set()
    for rec in recordings:
        if getattr(rec, "base_scenario", None) != HISTORIES:
            continue
        last = ("completes", "invoke")
        for noted in (rec.facts or {}).get("moves", []):
            move = noted["move"]
            if move["verb"] != "run" or path_of(move) is None:
                continue
            if wanted & {rule for _, rule in noted["expect"]["judged"]}:
                out.add(f"{last[0]} on {last[1]} -> {path_of(move)}")
            last = (transition_of(move["script"]), path_of(move))
    return tuple(sorted(out))


def histories_for(requirement: str) -> list[str]:
    """The dimensions of the history a requirement can be judged on (`conformance list`): its transitions and paths,
    when any move of the history can be judged under it."""
    if not any(requirement in _history_requirements(protocol) for protocol in ("invoke", "agui", "mcp")):
        return []
    return [f"transitions: {', '.join(TRANSITIONS)}", f"paths: {', '.join(PATHS)}",
            f"session keys: {', '.join(KEY_FORMS)}"]


def judged_under(scenarios: list[str], protocol: str) -> list[str]:
    """The requirements the moves of `protocol` in these scenarios are judged under (in the scenario that plays the
    drawn chains, everything a drawn move can be judged under too; in the histories, everything any seed's can)."""
    fixed = requirements([chain for name in scenarios for chain in CHAINS[name]], protocol)
    drawn = [r for r in DRAWABLE[protocol] if r not in fixed] if CROSS in scenarios else []
    if HISTORIES in scenarios:
        drawn += [r for r in _history_requirements(protocol) if r not in fixed + drawn]
    return fixed + drawn


def _history_requirements(protocol: str) -> tuple[str, ...]:
    """Every requirement a move of `protocol` the history can make is judged under."""
    return _history_requirements_by_protocol().get(protocol, ())


@functools.cache
def _history_requirements_by_protocol() -> dict[str, tuple[str, ...]]:
    """(read once per run, for every protocol at once: the moves are played once)"""
    return {protocol: tuple(rules) for protocol, rules in by_protocol(_every_history_move()).items()}


@functools.cache
def _every_history_move() -> list[tuple[Move, ...]]:
    """Each move a history can make (every transition on every path, in every form, its key had in every form),
    after a generated key, then read on every path."""
    out = []
    for t in TRANSITIONS:
        for q, (protocol, forms) in PATHS.items():
            for form in forms if possible(t, q) else ():
                for kf in KEY_FORMS:
                    if not key_form_possible(kf, t, q, form):
                        continue
                    key = HISTORY_KEY if kf == "earlier" else f"{HISTORY_KEY}1"
                    move = Move(protocol, key=None if kf == "this-call" else key,
                                binds=key if kf == "this-call" else None, script=script_of(t, protocol), form=form)
                    resume = (Move(protocol, "resume", key=key, form=form),) if move.script in PAUSING else ()
                    for r, (reader, reads) in PATHS.items():
                        out.append((Move("invoke", binds=HISTORY_KEY), move, *resume,
                                    Move(reader, key=key, form=reads[0])))
    return out


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
    """`n` chains drawn by walking the model (deterministic per seed, in the drawing process). Nothing here reaches a
    server."""
    if n <= 0:
        return []
    from conformance import generate
    return [tuple(Move(**move) for move in chain) for chain in generate.drawn(_draw_chains, n, seed)]


def _draw_chains(n: int, seed: int) -> list[list[dict[str, Any]]]:
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

    return [[dataclasses.asdict(move) for move in moves] for moves in generate.examples(chain(), n, seed)]


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
    check reads). A key the chain cannot go on with (an answer it cannot continue from) is given up for a new one
    (`facts["gave_up"]` says where and why); a chain with no key to give up stops (`facts["stopped"]`). One Player
    plays one chain: chains played at once (`play_all`) number their moves, groups and keys apart, so what each
    sends does not hang on the order the others' answers come back in."""
    ctx: Context
    family: Step
    agui_resume: AguiResume | None = None
    mcp_form: McpForm | None = None
    writings: bool = False      # each call's body written another legitimate way in turn (`p.JSON_WRITINGS`)
    n: int = 0                  # the number of the chain's last move: a chain played beside others starts apart
    group: int = 0
    stem: str = "seq"           # what its keys are made from (`ctx.unique`), its own beside other chains'
    # (rule, free dimension, value) -> the chain's calls judged under that rule sent in that form: each call's free
    # form is the one its rules met least (`forms.covering`), so a rule read on a handful of calls meets every value
    used: collections.Counter = field(default_factory=collections.Counter)

    async def play(self, chain: tuple[Move, ...]) -> bool:
        if not self.ctx.target.other_agent_id and any(OTHER_AGENT in (m.key or "") for m in chain):
            self.ctx.recording.facts.setdefault("skipped", {})["other agent"] = \
                "the calls with another agent's id need --other-agent-id, which was not given"
            chain = tuple(m for m in chain if OTHER_AGENT not in (m.key or ""))
        model, keys, pauses = Model(), {}, {}
        for group in groups(chain):
            group = [m for m in group if m.verb != "resume" or model.allows(m)]   # a given-up key's pause waits no more
            try:
                answers = [self._answer(model, m, pauses) for m in group]
            except CannotAnswer as exc:
                name = next(m.key for m in group if m.verb == "resume")
                if not self._give_up(model, name, keys, pauses, f"{self.family.of(self.n + 1)}: {exc}"):
                    return False
                continue
            if not group:
                continue
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
                if why and not self._give_up(model, move.key or move.binds, keys, pauses, f"{ex.label}: {why}"):
                    return False
        return True

    def _stop(self, why: str) -> bool:
        self.ctx.recording.facts.setdefault("stopped", []).append(why)
        return False

    def _give_up(self, model: Model, name: str | None, keys: dict[str, str], pauses: dict[str, Exchange],
                 why: str) -> bool:
        """A call the chain cannot continue from gives up its key, not the chain: the moves left on that key go on
        with a new key the client chooses (a new instance, as the model then expects), so one deviation does not
        hide what the rest of the chain would show."""
        if name is None:
            return self._stop(why)
        keys[name] = inputs.tagged(self.ctx, f"{self.stem}-{name.replace(TWIN, '-')}-again", "session-key")
        model.keys[name] = Instance()
        pauses.pop(name, None)
        self.ctx.recording.facts.setdefault("gave_up", []).append(f"{why}; its moves go on with a new key")
        return True

    def _answer(self, model: Model, move: Move, pauses: dict[str, Exchange]) -> Answer | None:
        if move.verb != "resume":
            return None
        pause = pauses[move.key]
        if move.has("elicit"):
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
        if move.key is not None:
            inputs.carry(self.ctx, ex.label, *inputs.string_kinds("session-key"),
                         *([twin_class(move.key.partition(TWIN)[2])] if TWIN in move.key else []),
                         *([OTHER_AGENT_CLASS] if OTHER_AGENT in move.key else []))
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
        ends = "interrupt" if kind == "pause" or expected.get("then") == "pause" else \
            "error" if kind == "failed" else "success"
        facts.setdefault("runs", {})[ex.label] = {"kind": ends, "reply": expected.get("reply"), "thread": key,
                                                  "run": _sent(ex).get("runId")}

    # -- sending -------------------------------------------------------------------------------------------
    def _key(self, name: str, keys: dict[str, str]) -> str:
        """The session key a chain calls `name`: a fresh one holding this run's session-key string kinds, or for
        `base~transform` the twin the transformation makes of `base`'s key (`inputs.TRANSFORMS`)."""
        if name not in keys and name.endswith(OTHER_AGENT):
            keys[name] = self._key(name.removesuffix(OTHER_AGENT), keys) if inputs.is_sent(OTHER_AGENT_CLASS) else \
                inputs.tagged(self.ctx, f"{self.stem}-other", "session-key")
        if name not in keys:
            base, _, transform = name.partition(TWIN)
            if transform and inputs.is_sent(twin_class(transform)):
                keys[name] = inputs.TRANSFORMS[transform].twin(self._key(base, keys))
            else:
                keys[name] = inputs.tagged(self.ctx, f"{self.stem}-{name.replace(TWIN, '-')}", "session-key")
        return keys[name]

    async def _send(self, move: Move, label: str, keys: dict[str, str], pauses: dict[str, Exchange],
                    answer: Answer | None, expected: dict[str, Any]) -> tuple[Exchange, str | None]:
        key = self._key(move.key, keys) if move.key is not None else None
        how: dict[str, Any] = {}
        if self.writings and inputs.is_sent("request-body:writings"):
            how["writing"] = p.JSON_WRITINGS[int(label[len(self.family) - 1:].split("-")[0]) % len(p.JSON_WRITINGS)]
            inputs.carry(self.ctx, label, "request-body:writings")
        rules = sorted({rule for _, rule in expected["judged"]})
        if rules:
            how["form"] = form = forms.covering(self.ctx.target.seed, self.ctx.scenario.name, self.n,
                                                lambda dim, value: sum(self.used[r, dim, value] for r in rules))
            self.used.update((r, dim, value) for r in rules for dim, value in form.items())
        if move.protocol == "invoke":
            return await self._invoke(move, label, key, **how), key
        if move.protocol == "agui":
            return await self._agui(move, label, key, answer, **how), key
        return await self._mcp(move, label, key, pauses.get(move.key), answer, expected["kind"] == "open",
                               **how), key

    async def _invoke(self, move: Move, label: str, key: str | None, **how: Any) -> Exchange:
        extra: dict[str, Any] = {"stream": True} if move.has("stream") else {}
        if move.has("history"):
            extra["messages"] = sent_messages(move)
        headers = SSE_ACCEPT if move.has("accept") else NO_ACCEPT
        return await self.ctx.post(self._path(move, "invoke"), p.invoke_body(_prompt(move), key, **extra),
                                   headers=headers, label=label, **how)

    def _path(self, move: Move, operation: str) -> str:
        """The operation's path, on the other agent for a key named `…@other` (invoke and AG-UI only)."""
        other = OTHER_AGENT in (move.key or "")
        return self.ctx.agent_path(operation, self.ctx.need("other_agent_id") if other else None)

    async def _agui(self, move: Move, label: str, key: str | None, answer: Answer | None, **how: Any) -> Exchange:
        ctx = self.ctx
        if answer is not None:
            body: dict[str, Any] = {"threadId": key, "resume": answer.sent}
        else:
            body = p.agui_input(thread=key, run=ctx.unique("run", echoed=True) if move.has("run-id") else None,
                                messages=sent_messages(move))
        headers = NO_ACCEPT if move.has("bare") else SSE_ACCEPT
        return await ctx.post(self._path(move, "agui"), body, label=label, headers=headers, **how)

    async def _mcp(self, move: Move, label: str, key: str | None, pause: Exchange | None, answer: Answer | None,
                   open_answer: bool, **how: Any) -> Exchange:
        ctx = self.ctx
        legacy: dict[str, Any] = dict(version=p.MCP_LEGACY_VERSION, meta_version=None) if move.has("legacy") else {}
        legacy.update(how)
        if move.has("no-accept"):
            legacy["headers"] = NO_ACCEPT
        if move.verb == "initialize":
            init = {"protocolVersion": p.MCP_LEGACY_VERSION, "capabilities": {},
                    "clientInfo": {"name": "aisvc-conformance", "version": "0.1"}}
            return await rpc(ctx, "initialize", init, label=label, id=self.n, version=None, **how)
        if move.verb == "list":
            return await rpc(ctx, "tools/list", label=label, id=f"list-{self.n}", **legacy)
        tool = await tool_name(ctx)
        if move.has("elicit"):
            # form elicitation declared as MCP writes it, as an empty object (which MCP reads as form support), or
            # beside URL mode (a client that takes both is still asked for a form)
            caps = {"capabilities": {"elicitation": ({"form": {}}, {}, {"form": {}, "url": {}})[self.n % 3]}}
            if answer is None:
                return await call_tool(ctx, tool, _prompt(move), label=label, id=self.n, session=key, **caps)
            return await call_tool(ctx, tool, _prompt_of(pause), label=label, id=self.n, session=key,
                                   extra_params=answer.sent, **caps)
        if move.has("progress"):
            legacy["progress_token"] = ctx.unique(f"{label}-progress", turn=self.n, echoed=True)    # kinds in turn
        if answer is not None:
            ex = await call_tool(ctx, tool, None, label=label, id=self.n, session=key, resume=answer.sent, **legacy)
            if _served(ex) or open_answer:
                return ex
            # The spec does not say whether `prompt` goes along with `resume`: a server that requires it gets it.
            ex.label = f"{label}-without-prompt"
            return await call_tool(ctx, tool, _prompt_of(pause), label=label, id=self.n, session=key,
                                   resume=answer.sent, **legacy)
        return await call_tool(ctx, tool, _prompt(move), label=label, id=self.n, session=key,
                               send_name=not move.has("no-name"), **legacy)

    # -- what the next move needs ------------------------------------------------------------------------
    def _continue(self, move: Move, expected: dict[str, Any], ex: Exchange, keys: dict[str, str],
                  pauses: dict[str, Exchange]) -> str | None:
        """Why the chain cannot go on after this answer (None: it can): a run that was not served, a generated
        key not returned, a pause that did not happen."""
        if expected["kind"] in ("open", "served") or expected.get("if_completed"):
            return None         # what it answered changes no session the chain goes on with
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


def sent_messages(move: Move) -> list[dict[str, Any]]:
    """The `messages` a run sends: invoke's field (the earlier messages, with the `history` form); AG-UI's list, the
    earlier messages and then the prompt as the last user message."""
    earlier = list(HISTORY) if move.has("history") else []
    if move.protocol == "invoke":
        return earlier
    return [*(p.agui_message(m["content"], m["role"], f"h{i}") for i, m in enumerate(earlier)),
            p.agui_message(_prompt(move), "user", "u1")]


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
    return result.get("resultType") == "input_required" if move.has("elicit") else isinstance(result, dict)


async def play_all(ctx: Context, family: Step, chains: list[tuple[Move, ...]] | None = None, **how: Any) -> None:
    """Plays chains at once (each on keys of its own; by default the scenario's `CHAINS`) as one recording."""
    ctx.conformance_agent("the chains are scripted with its directives (`count`, `ask`, `sleep`)")
    if chains is None:
        chains = list(CHAINS[ctx.scenario.name])
    if not chains:
        return
    await ctx.after_preflight()
    if not ctx.session.takes_conversation:      # the items' shape is not shown: a service may refuse the suite's
        chains = [tuple(_without_conversation(move) for move in chain) for chain in chains]
    firsts = itertools.accumulate((len(chain) for chain in chains[:-1]), initial=0)
    players = [Player(ctx, family, n=first, group=first, stem=f"seq{i}" if len(chains) > 1 else "seq", **how)
               for i, first in enumerate(firsts)]
    await asyncio.gather(*(player.play(chain) for player, chain in zip(players, chains, strict=True)))


def _without_conversation(move: Move) -> Move:
    """An invoke move spoken without its earlier messages (`history`), when the service did not run the preflight's
    conversation (`engine.PREFLIGHT_CONVERSATION`): its `echo messages` then reads the list as sent, none."""
    if move.protocol != "invoke" or not move.has("history"):
        return move
    return dataclasses.replace(move, form="+".join(f for f in move.form.split("+") if f != "history"))


# -- judging what was played (the checks of each protocol give the readings) ----------------------------------
@dataclass(frozen=True)
class Played:
    """One noted move of a recording with its exchange, and the moves before it on the same session key (`earlier`,
    noted as `facts["moves"]` holds them; `before`, their exchanges) and those sent with it on that key (`alongside`)."""
    rec: Any
    noted: dict[str, Any]
    ex: Exchange
    before: tuple[Exchange, ...]
    earlier: tuple[dict[str, Any], ...] = ()
    alongside: tuple[dict[str, Any], ...] = ()

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
        name = move["key"] or ""
        if TWIN in name:
            transform = inputs.TRANSFORMS[name.partition(TWIN)[2]]
            key += (f", a key equal to an earlier one of the chain only after a transformation (a server that "
                    f"{transform.what})")
        return f"{move['protocol']} {sent}{form} {key}{after}"


def _keys(noted: dict[str, Any]) -> set[str]:
    return {k for k in (noted["key"], noted.get("generated")) if k is not None}


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
                    keys = _keys(noted)
                    earlier = tuple(m for m in moves[:i] if m["group"] != noted["group"] and keys & _keys(m))
                    alongside = tuple(m for m in moves if m is not noted and m["group"] == noted["group"]
                                      and keys & _keys(m))
                    with unread():
                        before = tuple(rec.get(m["label"]) for m in earlier)
                    out.append((aspect, Played(rec, noted, rec.get(noted["label"]), before, earlier, alongside)))
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
               "cross": "the chain across protocols (and the chains drawn under --depth)",
               "histories": "the history (every transition, then a reading, on every path)"}


def judge_moves(recs: tuple[Any, ...], protocol: str, requirement: str,
                judges: dict[str, Callable[[Played], None]], read_count: Callable[[Played], str | None]) -> str | None:
    """Every move of `protocol` whose expectation names `requirement`, judged by the reading of its aspect
    (`judges[aspect]`; `count` by `read_count`, the reply of a run that completed with one, else None, and then by
    the agent's contract first: `agent_readings.judge_count`)."""
    replied: dict[tuple[str, int], list[tuple[int, Played]]] = {}
    zero_based = agent_readings.counts_from_zero(_counts_replied(recs))

    def rule(item: tuple[str, Played]) -> None:
        aspect, move = item
        if aspect != "count":
            judges[aspect](move)
            return
        text = read_count(move)
        if text is None:
            raise NotAssessed(f"{move.ex.label}: the run raced a resume and did not complete with a count; what it "
                              f"does then is open")
        count_is(move, text, replied, zero_based)

    return agent_readings.read_all(lambda guarded: judge_all(
        played(recs, protocol, requirement), guarded, exchange=lambda item: item[1].ex,
        nothing=f"no {protocol} call of the chains played was judged under {requirement} (chains drawn from the "
                f"sessions model come with --depth 2 or more)"), rule)


def _counted_wrong_before(move: Played, zero_based: bool) -> tuple[str, Exchange, str] | None:
    """(its count rule, its exchange, its label) of the first earlier call on the move's key that replied a count
    other than the one the model expects of it: the session went wrong there, and a later count follows from it."""
    for noted in move.earlier:
        expect, wanted = noted["expect"], noted["expect"].get("count")
        rules = [rule for aspect, rule in expect.get("judged", ()) if aspect == "count"]
        if wanted is None or not rules or expect.get("among"):
            continue
        ex = move.rec.get(noted["label"])
        text = agent_readings.reply_text(noted["move"]["protocol"], ex) if ex is not None else None
        head = _without_suffix(expect, text or "").strip()
        if digits_only(head) and int(head) != wanted - (1 if zero_based else 0):
            return rules[0], ex, noted["label"]
    return None


#: why a resume refused is read as a generated key's deviation (`given_resumes_continued`)
RETURNED_KEY = ("the key was the one the service generated in the call that paused, and resumes of keys the suite "
                "gave continued: the key it gave names no paused run")


def given_resumes_continued(move: Played) -> bool:
    """Whether a resume of a key the suite gave continued its paused run, on the move's path (`_resume_path`: a
    service may lose the pauses of one path only), in the move's recording: then a resume refused on a key the
    service generated in the call that paused (`Model._resume` judges it under the generated key's rule too) shows
    the service resumes runs, and the key it gave names none."""
    moves = move.rec.facts.get("moves", [])
    generated = {m.get("generated") for m in moves} - {None}
    return any(m["move"]["verb"] == "resume" and _resume_path(m) == _resume_path(move.noted)
               and m["expect"]["kind"] == "resumed" and m["key"] not in generated
               and _continued(m, move.rec.get(m["label"])) for m in moves)


def _resume_path(noted: dict[str, Any]) -> tuple[str, bool, bool]:
    """How a resume travels, as far as where its paused run is kept may differ: `Move.path` (the protocol, an
    eliciting client's retry), over a progress stream or not, on the 2025-11-25 path or not."""
    move = Move(**noted["move"])
    return move.path(), move.has("progress"), move.has("legacy")


def before_failure(move: Played, text: str) -> bool:
    """Whether `text`, sent before a failure, is what the script said: when it began with `count`, any whole number
    then what followed (the count is judged as a count, through the agent's readings), else the text exactly."""
    expect = move.expect
    if "count" not in expect:
        return text == expect["reply"]
    suffix = expect.get("suffix") or ""
    head = text[:len(text) - len(suffix)] if text.endswith(suffix) else None
    return head is not None and digits_only(head)


def messages_reached(move: Played, text: str) -> None:
    """`echo messages` replied the messages the move sent, as the agent's readings read a JSON echo."""
    sent = sent_messages(Move(**move.noted["move"]))
    got = agent_readings.echoed(text, "echo messages", move.ex)
    if agent_readings.changed("echo messages", sent, got, move.ex):
        raise Deviation(f"{move.what()}: `echo messages` replied {truncate(text, 200, quoted=True)}, the messages sent "
                        f"were {truncate(p.canonical(sent), 200, quoted=True)}: the list did not reach the agent "
                        f"whole", [move.ex])


def count_part(move: Played, text: str) -> str:
    """The `count` in the text a run sent before its pause or failure: the text without what the script said after
    the count (`suffix`); the whole text when it does not end so (then it is not the count, and `count_is` says so)."""
    return _without_suffix(move.expect, text)


def _without_suffix(expect: dict[str, Any], text: str) -> str:
    suffix = expect.get("suffix") or ""
    return text[:-len(suffix)] if suffix and text.endswith(suffix) else text


def resumed_as_expected(move: Played, text: str, *, whole: bool = False) -> bool:
    """A resumed move replied what the model expects (`reply`, what the run added after the question; with `whole`,
    its whole reply too), the answers written as the agent's contract lets them be (`agent_readings.reads_as`)."""
    expect = move.expect
    if text == expect["reply"] or (whole and text == expect["whole"]):
        return True
    tries = [expect.get("parts")] + ([expect.get("whole_parts")] if whole else [])
    return any(parts and agent_readings.reads_as(text, parts, move.ex) for parts in tries)


def _counts_replied(recs: tuple[Any, ...]) -> list[tuple[str | None, list[int]]]:
    """(reply, the counts the contract allows) of every `count` run the recordings noted."""
    out = []
    for rec in recs:
        for noted in rec.facts.get("moves", []):
            expect = noted["expect"]
            if expect["kind"] == "count":
                wanted = expect.get("among") or [expect.get("count")]
                text = agent_readings.reply_text(noted["move"]["protocol"], rec.get(noted["label"]))
                out.append((text.strip() if text is not None else None, [n for n in wanted if n is not None]))
    return out


def _resumes(move: Played) -> tuple[tuple[int, int], tuple[tuple[str, Exchange], ...]]:
    """The resumes of the move's key before it that reached the agent as the answer to its question, surely and at
    most (a resume sent with it may come first), and (rule, exchange) of those that did not continue the paused run
    (each may have started a run)."""
    reached, lost, raced = 0, [], 0
    for m in move.earlier + move.alongside:
        if m["move"]["verb"] != "resume":
            continue
        ex = move.rec.get(m["label"])
        if _continued(m, ex):
            reached, raced = (reached + 1, raced) if m["expect"]["kind"] != "open" else (reached, raced + 1)
        elif m["expect"]["kind"] != "open" or agent_readings.reply_text(m["move"]["protocol"], ex) is not None:
            # (a resume that raced this run may be refused when the run came first: only one that ran counts)
            lost.append((RESUMES["mcp-elicit" if m["move"]["form"] == "elicit" else m["move"]["protocol"]], ex))
    return (reached, reached + raced), tuple(lost)


def _continued(noted: dict[str, Any], ex: Exchange) -> bool:
    """Whether a resume reached the agent as the answer to its question: its reply holds the answer (in any form), or
    it paused again on the next question (an MCP result shows only the question then; an eliciting client gets a form
    and no text). A raced resume (`open`) is read the same way, by the answer the chain sent it."""
    expect = noted["expect"]
    text = agent_readings.reply_text(noted["move"]["protocol"], ex)
    if text is None:
        return False
    if agent_readings.holds_answer(text, expect.get("answer")):
        return True
    return expect.get("then") == "pause" and (noted["move"]["form"] == "elicit" or expect.get("question", "") in text)


def _others(move: Played) -> tuple[tuple[str, int], ...]:
    """Runs each other key of the recording started before the move (an overlap's runs sent with it included)."""
    runs: dict[str, int] = {}
    for m in move.rec.facts.get("moves", []):
        key = m["key"] or m.get("generated")
        if m["group"] <= move.noted["group"] and m["move"]["verb"] == "run" and key is not None and key != move.key:
            runs[key] = runs.get(key, 0) + 1
    return tuple(runs.items())


def count_is(move: Played, text: str, replied: dict[tuple[str, int], list[tuple[int, Played]]],
             zero_based: bool = False) -> None:
    """The `count` reply `text` is the number the model expects, or one of the range runs sent together span, no two
    of them the same; a reply that differs is the agent's or the service's by `agent_readings.judge_count`."""
    expect = move.expect
    wanted = expect.get("count")
    span = expect.get("among") or [wanted]
    resumes, lost = _resumes(move)
    try:
        agent_readings.judge_count(agent_readings.Count(text, tuple(span), zero_based, resumes, lost, _others(move)),
                                   what=move.what(), exchanges=(move.ex, *move.before))
    except Blocked:
        raise
    except Deviation as exc:
        wrong = _counted_wrong_before(move, zero_based)
        if wrong is None:
            raise
        rule, ex, label = wrong
        raise precondition(rule, (move.ex, ex, *move.before),
                           f"{exc}; an earlier call on this key already counted wrong ({label}, judged under "
                           f"{rule}): what this call counts follows from that one deviation") from None
    if expect.get("distinct"):
        group = replied.setdefault((move.rec.scenario, move.noted["group"]), [])
        twin = next((other for n, other in group if n == int(text) and other.key == move.key), None)
        group.append((int(text), move))
        if twin is not None:
            raise Deviation(f"{move.what()}: `count` replied {text!r}, as did {twin.ex.label}, sent at the same time "
                            f"on the same key: two runs of one instance cannot both be its run {text}; the calls "
                            f"reached two instances", (move.ex, twin.ex, *move.before))
