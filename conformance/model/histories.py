"""The histories of the model: what the conformance agent is asked to do in a chain of calls on session keys (its
scripts), the calls themselves (`Move`), the chains a default run plays (a chain per scenario, the twins of a key kept
apart, overlaps, long runs), and the history: every transition a run can leave behind on its session (`TRANSITIONS`)
on every path a call can take (`PATHS`), each followed by a reading on every path, pairwise, drawn once per seed
(`history`). Also what each reading is judged under. What the spec makes each call answer, how a chain is played and
how its calls are judged: `conformance.vocab.sequences`.
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

from conformance.model.values import TRANSFORMS
from conformance.target import DEFAULT_SEED

# -- what the agent is asked --------------------------------------------------------------------------------
FIRST_QUESTION, SECOND_QUESTION = "What is your name?", "Where do you live?"
FAILURE = "fail boom"
TOOL, TOOL_ARGS, STEP, LAST_STEP = "lookup", '{"q":"x"}', "plan", "check"   # names no other value of a run holds
SLOW_SECONDS = 1.0    # a `count` run of an overlap lasts this long, so runs sent together are in flight together
LONG_SECONDS = 15.0   # a long run: well past the 2 s of invoke.timing; its session and a pause outlast a 15 s idle, inside
                      # the 16 s silence of agui.silence
SCRIPTS: dict[str, tuple[str, ...]] = {
    "count": ("count",),
    "count-slow": ("count", f"sleep {SLOW_SECONDS:g}"),
    "ask": (f"ask {FIRST_QUESTION}", "say thanks"),
    "ask2": (f"ask {FIRST_QUESTION}", f"ask {SECOND_QUESTION}", "say done"),
    "long": ("say early", f"sleep {LONG_SECONDS:g}", "say late"),
    # the transitions of the histories (below): each reads `count` first where its answer can show it
    "count-fail-late": ("count", "say ,", "say more", FAILURE),
    "fail": (FAILURE,),
    # steps and a tool call in one run, each kind after the other (a server that sorts them by kind shows)
    "mixed-count": (f"step {STEP}", f"tool {TOOL} {TOOL_ARGS}", f"step {LAST_STEP}", "count"),
    "count-ask": ("count", f"ask {FIRST_QUESTION}", "say thanks"),
    "echo-messages": ("echo messages",),
}
PAUSING = ("ask", "ask2", "count-ask")
# The answers the resumes of a chain carry, in turn: each differs, so a continuation that took another one shows.
ANSWERS: tuple[Any, ...] = ({"name": "Ada"}, {"city": "Zürich"}, {"name": "Grace", "visits": 2})
# Earlier messages of a conversation: a long one (a server keeping only the last few, or the last of each role,
# shows), with the roles AG-UI messages may carry besides user and assistant
HISTORY = ({"role": "system", "content": "you are the conformance agent"},
           {"role": "developer", "content": "keep every message"},
           *({"role": ("user", "assistant")[i % 2], "content": f"say earlier {i // 2}" if i % 2 == 0 else
              f"earlier {i // 2}"} for i in range(22)))

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
EVENTS_IN_ORDER = "INV-RES-005"   # a JSON result's `events`: tool calls, tool results and steps, in order
# a run that fails: (protocol, streamed, after output) -> the rule of how its failure arrives
FAILED = {("invoke", False, True): "INV-RES-014", ("invoke", False, False): "INV-RES-014",
          ("invoke", True, True): "INV-TERM-004", ("invoke", True, False): "INV-TERM-005",
          ("agui", True, True): "AGUI-FAIL-001", ("agui", True, False): "AGUI-FAIL-002",
          ("mcp", False, True): "MCP-TOOL-004", ("mcp", False, False): "MCP-TOOL-004",
          ("mcp", True, True): "MCP-TOOL-004", ("mcp", True, False): "MCP-TOOL-004"}
PARTIAL = {"invoke": "INV-RES-016"}   # a failed JSON result's `result` is the text sent before the failure
MESSAGES = {"invoke": "INV-PASS-004", "agui": "AGUI-PROMPT-002"}   # the messages sent reach the agent, whole
PROGRESS_ENDS = "MCP-PROG-003"  # a progress stream ends with the response, once, and nothing after it
HANDSHAKE, LEGACY_CALLS, STATELESS = "MCP-VER-005", "MCP-VER-006", "MCP-SESS-005"
# a 2026-07-28 call is served (HTTP 200, a JSON-RPC response): refused, it is this one failure, and the readings it
# carries (the count, the key echoed, how its stream ends) are blocked by it, not failed again
MODERN_CALLS, NAME_OPTIONAL = "MCP-VER-001", "MCP-HDR-004"    # the second: a call without Mcp-Name


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
        return "mcp-elicit" if self.has("elicit") else self.protocol

    def has(self, *flags: str) -> bool:
        """Whether the move is spoken in any of these forms (`form` joins several with `+`: `legacy+no-name`)."""
        return bool(set(self.form.split("+")) & set(flags))


def reads_count(move: Move) -> bool:
    """Whether the move's answer shows its `count` (the text before a pause or a failure: not over MCP, whose result
    of a failed or paused run is not the agent's text alone)."""
    lines = SCRIPTS[move.script]
    return "count" in lines and not (move.protocol == "mcp" and (FAILURE in lines or any(
        line.startswith("ask ") for line in lines)))


def is_stream(move: Move) -> bool:
    """The answer is an event stream (invoke asked for one, MCP sent a progress token; AG-UI always streams)."""
    return move.has("stream", "accept", "progress") or move.protocol == "agui"


# -- the chains a default run sends ----------------------------------------------------------------------
INVOKE_CHAIN = (
    Move("invoke", binds="k"),                            # no sessionId, no stream, no Accept: count 1
    Move("invoke", key="k", form="stream"),               # the generated key, streamed: 2
    Move("invoke", key="k", form="history"),              # with `messages`: 3
    Move("invoke", key="k", script="echo-messages", form="history"),   # a long history reaches the agent whole
)
AGUI_CHAIN = (
    Move("agui", form="bare", binds="t"),                 # no threadId, runId or Accept: 1
    Move("agui", key="t", script="ask2", form="history"), # earlier user messages; pauses on the first question
    Move("agui", "resume", key="t"),                      # continues, pauses on the second
    Move("agui", "resume", key="t"),                      # a second resume in a row: the run completes
    Move("agui", key="t"),                                # 3: the resumed run counted once (runId: the history's)
    Move("agui", key="t", script="echo-messages", form="history"),     # a long history reaches the agent whole
)
MCP_CHAIN = (
    Move("mcp", form="no-name", binds="s"),               # no session_id, no Mcp-Name: 1
    Move("mcp", key="s", script="ask2"),                  # the question as text
    Move("mcp", "resume", key="s"),                       # continues, asks the second as text
    Move("mcp", "resume", key="s"),                       # completes
    Move("mcp", key="s"),                                 # 2 (a progress stream on a session: the history's)
)
MCP_LEGACY_CHAIN = (      # a session of several calls after the handshake (a pause and a resume: the history's)
    Move("mcp", "initialize", form="legacy"),
    Move("mcp", key="l", form="legacy"),
    Move("mcp", key="l", form="legacy"),
    Move("mcp", key="l", form="legacy"),
)
MCP_ELICIT_CHAIN = (
    Move("mcp", key="e", script="ask2", form="elicit"),   # asked for a form
    Move("mcp", "resume", key="e", form="elicit"),        # retried with it answered: asked for a second form
    Move("mcp", "resume", key="e", form="elicit"),        # retried again: complete
)
# Keys equal only after a transformation a server may apply (`TRANSFORMS`): the first key, then each of its
# twins, every one on another protocol in turn. Each is a key of its own, so each starts a new instance (`count` 1).
TWIN = "~"


def twin_class(transform: str) -> str:
    return f"session-key:twin-{transform}"


# The same key with another agent (`--other-agent-id`) reaches that agent's instance, a new one: `a@other`.
OTHER_AGENT, OTHER_AGENT_CLASS = "@other", "session-key:other-agent"
KEPT_APART = (Move("invoke", key="a"), *(Move(("agui", "mcp", "invoke")[i % 3], key=f"a{TWIN}{name}")
                                         for i, name in enumerate(TRANSFORMS)),
              Move("agui", key=f"a{OTHER_AGENT}"))
# One key over every protocol, with a pause on two of them: played with --depth 2 or more, beside the drawn chains
# (a default run's history takes every transition across protocols).
CROSS_CHAIN = (
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


# -- histories: every kind of transition, then a reading, on every path ---------------------------------------
# What a run can leave behind on its session (a transition), by the script that makes it; and the paths a call can
# take, with the forms each path's calls rotate through (the optional fields of each left out in turn).
TRANSITIONS = {"completes": "count", "fails-after-pieces": "count-fail-late", "fails-before-output": "fail",
               "calls-a-tool": "mixed-count", "pauses-and-resumes": "count-ask"}
def done_in_order(script: str) -> tuple[str, ...]:
    """The names of the tool calls and steps a script makes, in the order it makes them."""
    return tuple(line.split(" ")[1] for line in SCRIPTS[script] if line.split(" ")[0] in ("tool", "step"))
PATHS = {"invoke": ("invoke", ("", "stream")), "agui": ("agui", ("", "run-id")),
         "mcp": ("mcp", ("", "progress", "no-name")),
         "mcp-2025-11-25": ("mcp", ("legacy", "legacy+no-name", "legacy+no-accept")),
         "mcp-elicit": ("mcp", ("elicit",))}
# How the session key of a transition's call is had: the key the chain goes on with (generated by an earlier call),
# none at all (the service generates one in this very call; the chain goes on with it), or a new one the client
# chooses. The readings after it send the key the transition left.
KEY_FORMS = ("earlier", "this-call", "sent")
HISTORY_KEY = "h"
HISTORY_MOVES = 64      # a bound: the covering takes about 55 (tests/checks/test_sequences.py holds it to it)


@functools.cache     # drawn once a seed: the table below and the run's scenario read the same
def history(seed: int) -> tuple[Move, ...]:
    """One chain that takes every transition on every path, follows each transition with a reading (`count`, the
    key echoed) on every path, and every path with every path: pairwise coverage of (transition, its path, the next
    path), built greedily with one move of lookahead, ties broken by the seed. Each transition's key is had in every
    form (`KEY_FORMS`), each form on every transition and every path it can take. Every form of a path is taken, and
    each transition in every form that changes how it is judged (`_judged_as`). A pause is resumed at once on its own path; a
    transition whose answer shows no count is read by the next call."""
    rng = random.Random(f"{seed}/histories")
    moves = [Move("invoke", binds=HISTORY_KEY)]     # (the 2025-11-25 calls need no handshake first: MCP is stateless)
    options = [(t, q, f) for t in TRANSITIONS for q, (_, forms) in PATHS.items() for f in forms if possible(t, q)]
    wanted, covered, last = set(), set(), ("completes", "invoke")
    for t, q, f in options:
        wanted |= {("taken", t, q), ("form", q, f)} | {("read-after", t, r) for r in PATHS} \
            | {("path-after", q, r) for r in PATHS} | ({("read-after-on", t, q)} if t == "pauses-and-resumes" else set())
        if len({_judged_as(t, q, g) for g in PATHS[q][1]}) > 1:
            wanted.add(("judged-as", t, q, f))
        wanted |= {w for kf in KEY_FORMS if key_form_possible(kf, t, q, f) for w in _key_pairs(kf, t, q)}

    own = {(t, q, f): {("taken", t, q), ("form", q, f), ("judged-as", t, q, f)} & wanted for t, q, f in options}
    reads = {(t, q): _reads(t, q) for t, q, _ in options}
    keyed = {o: [(kf, _key_pairs(kf, *o[:2])) for kf in KEY_FORMS if key_form_possible(kf, *o)] for o in options}

    def key_gain(option: tuple[str, str, str], done: set) -> set:
        return max((pairs - done for _, pairs in keyed[option]), key=len)

    def gains(option: tuple[str, str, str], after: tuple[str, str], done: set) -> set:
        t, q, _ = option
        made = own[option]
        if reads[t, q]:
            made = made | ({("read-after", after[0], q), ("path-after", after[1], q), ("read-after-on", *after)}
                           & wanted)
        return made - done

    def worth(option: tuple[str, str, str], ahead: dict[tuple[str, str], int]) -> tuple[int, int]:
        """What the move covers, then the most the move after it can (a transition whose reading is still wanted
        gains nothing itself: the next move reads it); the move after is weighed once per transition and path."""
        after = option[:2]
        if after not in ahead:
            ahead[after] = max(len(gains(o, after, covered)) for o in options)
        return len(gains(option, last, covered)), ahead[after]

    key, made = HISTORY_KEY, 0
    while wanted - covered and len(moves) < HISTORY_MOVES:
        ahead: dict[tuple[str, str], int] = {}
        scores = {option: worth(option, ahead) for option in options}
        if max(scores.values()) == (0, 0):     # only forms of the key are left: the moves that take one
            scores = {option: (len(key_gain(option, covered)), 0) for option in options}
        best = max(scores.values())
        if best == (0, 0):
            break
        option = rng.choice([o for o, score in scores.items() if score == best])
        most = len(key_gain(option, covered))
        forms = [kf for kf, pairs in keyed[option] if len(pairs - covered) == most]
        gained = gains(option, last, covered)
        # a session as long as the covering allows; a move that reads the transition before it keeps its key
        kf = "earlier" if "earlier" in forms or gained - own[option] else rng.choice(forms)
        covered |= (gained if kf == "earlier" else own[option]) | _key_pairs(kf, *option[:2])
        t, q, form = option
        protocol = PATHS[q][0]
        script = script_of(t, protocol)
        if kf != "earlier":
            made += 1
            key = f"{HISTORY_KEY}{made}"
        moves.append(Move(protocol, key=None if kf == "this-call" else key, binds=key if kf == "this-call" else None,
                          script=script, form=form))
        if t == "pauses-and-resumes":
            moves.append(Move(protocol, "resume", key=key, form=form))
        last = (t, q)
    return tuple(moves)


def _key_pairs(kf: str, t: str, q: str) -> set[tuple[str, ...]]:
    """What taking a transition on a path with its key in one form covers: the form with the transition, the form
    with the path, and for a pause on a key generated in that very call, the three (each path keeps its pauses)."""
    return {("key", kf, t), ("key-path", kf, q)} | ({("key-pause", q)} if (kf, t) == ("this-call", "pauses-and-resumes")
                                                   else set())


def key_form_possible(kf: str, t: str, q: str, form: str) -> bool:
    """A key generated by the call is learnt from its answer: a JSON result, RUN_STARTED, a tool result (not an
    eliciting client's form request, nor an invoke stream, whose frames name no session); whether an MCP tool result
    of a failed run names its session is not shown."""
    if kf != "this-call":
        return True
    protocol = PATHS[q][0]
    return not (form in ("stream", "accept", "elicit") or (protocol == "mcp" and TRANSITIONS[t] in FAILING))


FAILING = ("count-fail-late", "fail")


def _judged_as(t: str, q: str, form: str) -> str | None:
    """What a form of a path changes in how a transition is judged: how its failure arrives (FAILED), whether the
    order of its tool call and step is read (a JSON invoke result's `events`)."""
    protocol = PATHS[q][0]
    if TRANSITIONS[t] in FAILING:
        return FAILED[protocol, is_stream(Move(protocol, form=form)), True]
    if t == "calls-a-tool" and protocol == "invoke":
        return EVENTS_IN_ORDER if not is_stream(Move(protocol, form=form)) else None
    return None


def _script_move(t: str, q: str) -> Move:
    protocol, forms = PATHS[q]
    return Move(protocol, key=HISTORY_KEY, script=script_of(t, protocol), form=forms[0])


def script_of(transition: str, protocol: str) -> str:
    """The script that makes a transition: an MCP pause asks at once (its result may hold the text from before the
    question, so a count before it would be read twice)."""
    return "ask" if transition == "pauses-and-resumes" and protocol == "mcp" else TRANSITIONS[transition]


def transition_of(script: str) -> str:
    return "pauses-and-resumes" if script == "ask" else {s: t for t, s in TRANSITIONS.items()}.get(script, "completes")


def possible(t: str, q: str) -> bool:
    """What invoke does with a question is not shown; a progress token on a paused MCP run is not needed here."""
    return not (t == "pauses-and-resumes" and PATHS[q][0] == "invoke")


def _reads(t: str, q: str) -> bool:
    return reads_count(_script_move(t, q))


HISTORIES = "agui.histories"


# The chains each scenario plays (scenario -> chains), and what its moves of a protocol are judged under.
CHAINS: dict[str, tuple[tuple[Move, ...], ...]] = {
    "invoke.chain": (INVOKE_CHAIN,), "invoke.together": (INVOKE_OVERLAP,), "invoke.slow_run": (INVOKE_LONG,),
    "agui.chain": (AGUI_CHAIN,), "agui.together": (AGUI_OVERLAP,), "agui.slow_run": (AGUI_LONG,),
    "mcp.chain": (MCP_CHAIN, MCP_LEGACY_CHAIN, MCP_ELICIT_CHAIN), "mcp.together": (MCP_OVERLAP,),
    "mcp.slow_run": (MCP_LONG,), "agui.cross_chain": (KEPT_APART,),
    HISTORIES: (history(DEFAULT_SEED),),    # each run plays its own seed's (`played_histories`): the same rules
}
CROSS = "agui.cross_chain"     # it also plays the chains drawn under --depth
# Everything a drawn move of a protocol can be judged under (tests/checks/test_sequences.py draws to prove it).
DRAWABLE = {
    "invoke": ("INV-SESS-002", "INV-SESS-003", "INV-SESS-004", "GEN-SESS-001", "GEN-SESS-002", "INV-RES-013"),
    "agui": ("AGUI-SESS-001", "AGUI-SESS-002", "GEN-SESS-001", "GEN-SESS-002", "AGUI-INT-001", "AGUI-INT-002",
             "AGUI-INT-004"),
    "mcp": ("MCP-SESS-002", "MCP-SESS-003", "MCP-SESS-004", "MCP-SESS-005", "GEN-SESS-001", "GEN-SESS-002",
            "MCP-PAUSE-001", "MCP-PAUSE-002", "MCP-PROG-003", "MCP-VER-001", "MCP-HDR-004"),
}
