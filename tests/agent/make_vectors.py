"""Writes conformance/agent/vectors.json: the cases below, with what the real agent gives for each.

The inputs are written here by hand; every expected value comes from running ``conformance.agent``
(``tests/agent/test_vectors.py`` checks that the committed file is what this script writes today):

    python -m tests.agent.make_vectors          # rewrite the file
    python -m tests.agent.make_vectors --check  # exit 1 if the file is stale
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conformance.agent import ConformanceAgent, parse
from conformance.agent.script import MAX_CHUNKS, MAX_SLEEP, canonical_json
from conformance.agent.vectors import FILE, FORMAT, play_run
from conformance.target import AGENT_SCENARIOS

TARGET = Path(__file__).resolve().parents[2] / "conformance" / "agent" / FILE

ID_FORMS = {"tool_call": "call_[0-9a-f]{16}", "ask": "int_[0-9a-f]{16}"}

ABOUT = [
    "Test vectors of the conformance agent (docs/agent.md, section 'Test vectors'). Generated from the "
    "Python agent by tests/agent/make_vectors.py; do not edit by hand.",
    "agent: each case starts with a fresh agent (no session has run) and gives it its runs in order. A run "
    "is {prompt, session?, params?, messages?} (a new run) or {resume, session} (resume the session's paused "
    "run with that answer, any JSON value). Without session the run gets an instance of its own. "
    "params default to {}, messages to [].",
    "Each run expects: events (in order), outcome (completed | paused | failed | not_paused: the session "
    "had no run waiting, nothing ran), reply (this run's text pieces joined) and whole_reply (for a resumed "
    "run, the text sent before the question too).",
    "Events: text {text}; tool_call {name, args, result} (result: canonical JSON of args, exact text); step "
    "{name}; sleep {seconds}; ask {question}; fail {message}. Ids are left out: a tool call's and an ask's id "
    "are free, the Python agent's have the forms in id_forms. A fail with bad_line is a bad script: its "
    "message starts with 'bad script line <bad_line>: '; the rest is the Python agent's wording.",
    "canonical_json: rules, then cases: parse input (JSON text) and write it canonically; the result must "
    "be output exactly.",
]

Run = dict[str, Any]


def prompt(text: str, **extra: Any) -> Run:
    return {"prompt": text, **extra}


def resume(session: str, answer: Any) -> Run:
    return {"session": session, "resume": answer}


def case(name: str, covers: str, *runs: Run) -> dict[str, Any]:
    return {"name": name, "covers": covers, "runs": list(runs)}


def single(name: str, covers: str, text: str, **extra: Any) -> dict[str, Any]:
    return case(name, covers, prompt(text, **extra))


LONG_BAD_LINE = "frobnicate " + "x" * 250

AGENT_CASES = [
    # say
    single("say", "say", "say conformance"),
    single("say alone adds an empty piece", "say", "say"),
    single("say and one space adds an empty piece", "say", "say "),
    single("say keeps every space after the first", "say; whitespace", "say   two  spaces  "),
    single("say several pieces, nothing between them", "say", "say a\nsay b\nsay  c"),
    single("say with quotes and backslashes", "say", 'say "quoted" \\ back\\slash'),
    single("say unicode as is", "say; unicode", "say héllo 😀 שלום e\u0301 \u2028 end"),
    # say-json
    single("say-json carries any character", "say-json",
           'say-json "line\\nbreak\\r\\ttab \\"q\\" \\\\ \\u2028 \\ud83d\\ude00 \\u0000"'),
    single("say-json of the empty string", "say-json", 'say-json ""'),
    single("say-json literal with raw unicode", "say-json; unicode", 'say-json "é😀"'),
    single("say-json bad: not a string literal", "say-json; bad lines", "say-json hello"),
    single("say-json bad: a number", "say-json; bad lines", "say-json 5"),
    single("say-json bad: nothing after the word", "say-json; bad lines", "say-json"),
    single("say-json bad: two literals", "say-json; bad lines", 'say-json "a" "b"'),
    # chunks
    single("chunks: near-equal pieces, longer first", "chunks", "chunks 5 hello, conformance"),
    single("chunks: fewer code points than N", "chunks", "chunks 4 ab"),
    single("chunks: N = 1", "chunks", "chunks 1 whole"),
    single("chunks: no text, N empty pieces", "chunks", "chunks 3"),
    single("chunks: a space then no text", "chunks", "chunks 2 "),
    single("chunks: text keeps its spaces", "chunks; whitespace", "chunks 2  a b "),
    single("chunks: counted in code points", "chunks; unicode", "chunks 3 😀e\u0301ü"),
    single("chunks: leading zeros in N", "chunks", "chunks 002 abcd"),
    single(f"chunks: N = {MAX_CHUNKS}", "chunks", f"chunks {MAX_CHUNKS} xy"),
    single("chunks bad: N = 0", "chunks; bad lines", "chunks 0 x"),
    single(f"chunks bad: N = {MAX_CHUNKS + 1}", "chunks; bad lines", f"chunks {MAX_CHUNKS + 1} x"),
    single("chunks bad: N not an integer", "chunks; bad lines", "chunks 1.5 x"),
    single("chunks bad: N signed", "chunks; bad lines", "chunks +2 x"),
    single("chunks bad: N missing", "chunks; bad lines", "chunks"),
    single("chunks bad: N not a number", "chunks; bad lines", "chunks x 2"),
    # chunks-json
    single("chunks-json", "chunks-json", 'chunks-json 2 "a\\nb"'),
    single("chunks-json: unicode escapes", "chunks-json; unicode", 'chunks-json 3 "\\ud83d\\ude00\\u2028x"'),
    single("chunks-json bad: literal missing", "chunks-json; bad lines", "chunks-json 2"),
    single("chunks-json bad: not a literal", "chunks-json; bad lines", "chunks-json 2 abc"),
    # tool
    single("tool then say", "tool", 'tool lookup {"q":"x"}\nsay done'),
    single("tool: result is the canonical JSON of ARGS", "tool; canonical JSON",
           'tool search {"z": [1, {"b": true, "a": null}], "é": "ü", "a": 2.50}'),
    single("tool: empty ARGS", "tool", "tool ping {}"),
    single("tool bad: ARGS missing", "tool; bad lines", "tool lookup"),
    single("tool bad: ARGS not an object", "tool; bad lines", "tool lookup [1]"),
    single("tool bad: ARGS not JSON", "tool; bad lines", "tool lookup {q:1}"),
    single("tool bad: NAME missing", "tool; bad lines", "tool"),
    single("tool bad: empty NAME (two spaces)", "tool; bad lines; whitespace", "tool  {}"),
    # step
    single("step then say", "step", "step plan\nsay done"),
    single("step: the name is the rest of the line", "step; whitespace", "step two words "),
    single("step bad: NAME missing", "step; bad lines", "step"),
    single("step bad: NAME empty", "step; bad lines", "step "),
    # sleep
    single("sleep then say", "sleep", "sleep 16\nsay awake"),
    single("sleep: decimal forms", "sleep", "sleep 0.5\nsleep .5\nsleep 1.\nsleep 007"),
    single(f"sleep: the longest, {MAX_SLEEP:g}", "sleep", f"sleep {MAX_SLEEP:g}"),
    single("sleep bad: zero", "sleep; bad lines", "sleep 0"),
    single("sleep bad: zero as a decimal", "sleep; bad lines", "sleep 0.0"),
    single("sleep bad: too long", "sleep; bad lines", f"sleep {MAX_SLEEP + 1:g}"),
    single("sleep bad: just over the longest", "sleep; bad lines", f"sleep {MAX_SLEEP:g}.001"),
    single("sleep bad: exponent", "sleep; bad lines", "sleep 1e1"),
    single("sleep bad: negative", "sleep; bad lines", "sleep -1"),
    single("sleep bad: a lone point", "sleep; bad lines", "sleep ."),
    single("sleep bad: missing", "sleep; bad lines", "sleep"),
    # ask and resume
    case("ask, then resume with an object", "ask; resume; count",
         prompt("say hi\nask What is your name?\nsay thanks\ncount", session="s"),
         resume("s", {"name": "Ada"}),
         resume("s", {"name": "again"})),
    case("resume with other JSON values", "ask; resume; canonical JSON",
         prompt("ask one\nask two\nask three\nask four", session="v"),
         resume("v", "yes"), resume("v", None), resume("v", [1, 2.0, "é", {"b": 1, "a": 2}]),
         resume("v", 0)),
    case("ask alone: an empty question", "ask",
         prompt("ask", session="e"), resume("e", True)),
    case("a resumed run keeps its params and messages", "ask; resume; echo",
         prompt("ask q\necho params\necho messages", session="p", params={"tone": "dry"},
                messages=[{"role": "user", "content": "hi"}]),
         resume("p", "a")),
    case("a new run abandons the question", "ask; resume",
         prompt("ask Q?\nsay never", session="n"),
         prompt("say other", session="n"),
         resume("n", "late")),
    case("resume on a session never seen", "resume", resume("unknown", "x")),
    case("ask on a run of its own cannot be resumed by key", "ask; resume",
         prompt("ask nobody?"), resume("nobody", "x")),
    # fail
    single("fail before output", "fail", "fail boom"),
    single("fail after output; what follows never runs", "fail", "say partial\nfail boom\nsay never"),
    single("fail alone: an empty message", "fail", "fail"),
    single("fail keeps spaces", "fail; whitespace", "fail  spaced out "),
    # echo
    case("echo params and messages", "echo params; echo messages; canonical JSON",
         prompt("echo params\necho messages",
                params={"zeta": [1, 2.5, None], "alpha": {"é": "ü", "b": False}, "n": 12345678901234567890},
                messages=[{"role": "user", "content": "line\nbreak \u2028"}, {"role": "assistant", "content": ""}])),
    single("echo without params or messages", "echo params; echo messages", "echo params\necho messages"),
    single("echo bad: another word", "echo; bad lines", "echo other"),
    single("echo bad: nothing after the word", "echo; bad lines", "echo"),
    single("echo bad: a trailing space", "echo; bad lines; whitespace", "echo params "),
    # count
    case("count across runs and sessions", "count",
         prompt("count", session="a"), prompt("count", session="a"), prompt("count", session="b"),
         prompt("say x\ncount", session="a"), prompt("count"), prompt("count")),
    case("count in a paused and resumed run", "count; ask; resume",
         prompt("count", session="c"), prompt("count\nask q\ncount", session="c"), resume("c", 1),
         prompt("count", session="c")),
    single("count bad: an argument", "count; bad lines", "count 2"),
    single("count bad: a trailing space", "count; bad lines; whitespace", "count "),
    # bad lines in general
    single("bad line 3", "bad lines", "say a\nsay b\nfrobnicate now"),
    single("bad lines are counted among non-empty lines", "bad lines; blank lines", "say a\n\n\nfrobnicate"),
    single("a script is checked whole before anything runs", "bad lines", "say first\nsleep 5\nchunks 0 x"),
    single("a directive word is case-sensitive after the first line", "bad lines", "say a\nSAY b"),
    single("a line of spaces in a script is bad", "bad lines; whitespace", "say a\n   \nsay b"),
    single("a long bad line is cut in the message", "bad lines", "say a\n" + LONG_BAD_LINE),
    # echo mode
    single("echo mode: a prompt that is not a script", "echo mode", "hello there"),
    single("echo mode: the whole prompt, unchanged", "echo mode", "hello\nsay not a script\r\n\n"),
    single("echo mode: directive words are case-sensitive", "echo mode", "SAY conformance"),
    single("echo mode: a word that only starts like a directive", "echo mode", "saying hello"),
    single("echo mode: a tab is not the space after the word", "echo mode; whitespace", "say\tx"),
    single("echo mode: a leading space", "echo mode; whitespace", " say x"),
    single("echo mode: first non-empty line is spaces", "echo mode; whitespace", "   \nsay x"),
    single("echo mode: the empty prompt", "echo mode", ""),
    single("echo mode: only line breaks", "echo mode; blank lines", "\n\r\n\r"),
    single("echo mode: unicode", "echo mode; unicode", "héllo 😀\u2028שלום"),
    # line breaks and blank lines
    single("line breaks: LF, CRLF and CR", "blank lines", "say a\r\nsay b\rsay c\nsay d"),
    single("blank lines are skipped", "blank lines", "\n\nsay a\n\n\r\n\rsay b\n\n"),
]



def default_prompt_cases() -> list[dict[str, Any]]:
    """The suite's default prompt of every profile key, run the way its scenario runs it."""
    extra_runs = {
        "question_and_resume": lambda text: [prompt(text, session="key"), resume("key", {"name": "Ada"})],
        "session_affinity": lambda text: [prompt(text, session="key"), prompt(text, session="key"),
                                          prompt(text, session="other key")],
        "params_passthrough": lambda text: [prompt(text, params={"tone": "dry", "n": [1, 2]})],
        "messages_passthrough": lambda text: [prompt(text, messages=[{"role": "user", "content": "hi"}])],
    }
    return [case(f"default prompt of {key}", f"profile key {key}",
                 *extra_runs.get(key, lambda text: [prompt(text)])(entry["prompt"]))
            for key, entry in AGENT_SCENARIOS.items() if "prompt" in entry]


CANONICAL_RULES = [
    "The value is written with no whitespace at all: ',' between members and elements, ':' after a key.",
    "Object members are sorted by key, keys compared as sequences of Unicode code points (the order of their "
    "UTF-8 bytes; not UTF-16 code units, which put U+10000 and above before U+E000..U+FFFF). Arrays keep "
    "their order. Nested objects and arrays follow the same rules.",
    "Strings: '\"' is written \\\" and '\\' is written \\\\; U+0008, U+000C, U+000A, U+000D, U+0009 as \\b, "
    "\\f, \\n, \\r, \\t; every other character below U+0020 as \\u followed by four lowercase hex digits. "
    "Every other character is written as itself, unescaped: '/', U+007F, U+2028, U+2029, non-ASCII, and "
    "characters above U+FFFF (one character, never a surrogate pair escape). The text is UTF-8.",
    "true, false and null are written as such.",
    "A number written without a fraction or an exponent is an integer of any size, written in decimal with "
    "'-' when negative (-0 is written 0).",
    "Any other number is an IEEE 754 double (binary64), written with the shortest digits that read back to "
    "the same double (the digits of Python's repr and of JavaScript's Number.prototype.toString; only the "
    "layout below differs from JavaScript). With those digits as d1.d2d3...dn x 10^e (d1 not 0; zero has "
    "e = 0): when -4 <= e < 16, plain decimal with at least one digit after the point (100.0, 0.0001, 2.5, "
    "0.0); otherwise d1, then '.' and d2...dn only when n > 1, then 'e', the sign of e ('+' or '-') and |e| "
    "with at least two digits (1e+16, 1e-05, 1.5e-07, 1e+100, 5e-324). -0.0 is written -0.0.",
    "Outside the contract (not JSON, or read differently by different JSON parsers): NaN, Infinity, numbers "
    "beyond the double range, lone surrogates, duplicate keys.",
]

CANONICAL_CASES = [
    ("keys sorted, no spaces", '{ "b" : 1, "a" : [ 1, 2 ] }'),
    ("nested objects sorted at every level", '{"b":{"d":[{"z":1,"y":2}],"c":{}},"a":[]}'),
    ("keys by code point: uppercase before lowercase", '{"b":1,"a":2,"B":3,"A":4,"_":5}'),
    ("keys by code point: a prefix first", '{"ab":1,"a":2,"a ":3,"":4}'),
    ("keys by code point, not by UTF-16 unit", '{"\\ud83d\\ude00":1,"\\uffff":2,"\\ue000":3,"z":4}'),
    ("keys by code point: accented after ASCII", '{"é":1,"z":2,"e":3}'),
    ("empty object", "{}"),
    ("empty array", "[ ]"),
    ("array order kept", '[3,1,2,{"b":0,"a":0}]'),
    ("literals", "[true,false,null]"),
    ("string escapes: quote and backslash", '"a\\"b\\\\c/d\\/e"'),
    ("string escapes: the short forms", '"\\b\\f\\n\\r\\t"'),
    ("string escapes: other control characters", '"\\u0000\\u0001\\u000b\\u001b\\u001f"'),
    ("not escaped: DEL, U+2028, U+2029", '"\\u007f\\u2028\\u2029"'),
    ("not escaped: non-ASCII", '"\\u00e9\\u00fc \\u05e9\\u05dc\\u05d5\\u05dd \\u4e2d"'),
    ("not escaped: above U+FFFF, from a surrogate pair escape", '"\\ud83d\\ude00"'),
    ("not escaped: above U+FFFF, written raw", '"😀"'),
    ("a key with escapes", '{"a\\nb":"\\t"}'),
    ("integers", "[0,1,-1,42]"),
    ("minus zero as an integer", "-0"),
    ("a large integer, exact", "123456789012345678901234567890"),
    ("a large negative integer, exact", "-98765432109876543210"),
    ("integers beyond 2^53, exact", "[9007199254740993,18446744073709551616]"),
    ("a fraction", "0.1"),
    ("a whole double keeps .0", "1.0"),
    ("minus zero as a double", "-0.0"),
    ("trailing zeros dropped", "2.50"),
    ("an exponent that is whole", "1e2"),
    ("an uppercase exponent", "1E2"),
    ("shortest digits", "3.141592653589793238"),
    ("the largest plain decimal", "1e15"),
    ("exponent form from 1e16", "1e16"),
    ("1e100", "1e100"),
    ("a whole double beyond 1e16", "12345678901234567890.0"),
    ("the smallest plain decimal", "0.0001"),
    ("exponent form below 1e-4", "0.00001"),
    ("a negative exponent", "-1.5e-7"),
    ("the largest double", "1.7976931348623157e308"),
    ("the smallest double", "5e-324"),
    ("numbers in a structure", '{"n":[1,1.0,-0.0,1e100,0.5]}'),
    ("deep nesting", '[[[[[{"b":[{"d":1,"c":2}],"a":[]}]]]]]'),
]


def _vector_run(agent: ConformanceAgent, run: Run) -> Run:
    played = play_run(agent, run, ID_FORMS)
    assert "bad_ids" not in played, played["bad_ids"]
    if "prompt" in run and parse(run["prompt"]).error is not None:
        (fail,) = played["events"]
        fail["bad_line"] = int(fail["message"].split(":")[0].removeprefix("bad script line "))
    return {**run, **played}


def build() -> dict[str, Any]:
    agent_cases = []
    for spec in AGENT_CASES + default_prompt_cases():
        agent = ConformanceAgent()
        agent_cases.append({**spec, "runs": [_vector_run(agent, run) for run in spec["runs"]]})
    canonical = [{"name": name, "input": text, "output": canonical_json(json.loads(text))}
                 for name, text in CANONICAL_CASES]
    return {"format": FORMAT, "about": ABOUT, "id_forms": ID_FORMS, "agent": agent_cases,
            "canonical_json": {"rules": CANONICAL_RULES, "cases": canonical}}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _pretty(value: Any, indent: str = "") -> str:
    """JSON with every object or array that fits on one line written on one line (events, runs' inputs)."""
    one_line = _compact(value)
    if not isinstance(value, (dict, list)) or len(indent) + len(one_line) <= WIDTH or not value:
        return one_line
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{_compact(k)}: {_pretty(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    return "[\n" + ",\n".join(inner + _pretty(v, inner) for v in value) + "\n" + indent + "]"


WIDTH = 110


def render(vectors: dict[str, Any]) -> str:
    return _pretty(vectors) + "\n"


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        stale = not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text
        print(f"{TARGET.name} is {'stale: run python -m tests.agent.make_vectors' if stale else 'up to date'}")
        return 1 if stale else 0
    TARGET.write_text(text, encoding="utf-8")
    cases = len(AGENT_CASES) + len(default_prompt_cases())
    print(f"wrote {TARGET} ({cases} agent cases, {len(CANONICAL_CASES)} canonical JSON cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
