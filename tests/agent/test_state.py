"""A session's state as plain JSON, and agents of several workers continuing each other's sessions through a store."""
from __future__ import annotations

import json

import pytest

from conformance.agent import (
    Ask, ConformanceAgent, NotPaused, Paused, RunContext, Script, Session, Text, parse, resumed_steps, steps,
)
from conformance.agent.vectors import event_json

SCRIPT = 'say hi\ntool lookup {"q":"é"}\nask What is your name?\nstep plan\ncount\necho params\necho messages\nsay bye'
PARAMS = {"tone": "dry", "n": [1, 2.5, None]}
MESSAGES = [{"role": "user", "content": "line\nbreak"}]


class JsonTextStore:
    """Keeps JSON text only (as a database shared by workers would), and counts its reads and writes."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.reads = self.writes = 0

    def get(self, key):
        self.reads += 1
        return json.loads(self.texts[key]) if key in self.texts else None

    def __setitem__(self, key, state) -> None:
        self.writes += 1
        self.texts[key] = json.dumps(state, ensure_ascii=False, allow_nan=False)


def as_json(events) -> list[dict]:
    return [event_json(e) for e in events]


def paused_on(agent: ConformanceAgent, key: str = "s") -> list:
    events = list(agent.run(SCRIPT, session=key, params=PARAMS, messages=MESSAGES))
    assert isinstance(events[-1], Ask)
    return events


def test_the_state_of_a_session_is_plain_json():
    agent = ConformanceAgent()
    assert agent.session("s").to_state() == {"runs": 0, "paused": None}
    list(agent.run("count", session="s"))
    assert agent.session("s").to_state() == {"runs": 1, "paused": None}
    ask = paused_on(agent)[-1]
    state = agent.session("s").to_state()
    assert json.loads(json.dumps(state, allow_nan=False)) == state
    assert state == {"runs": 2, "paused": {
        "prompt": SCRIPT, "params": PARAMS, "messages": MESSAGES, "run_number": 2, "ask_id": ask.id,
        "question": "What is your name?", "resume_at": 3, "reply_so_far": "hi"}}
    assert agent.store["s"] == state  # the default store is a plain dict of these states


def test_a_session_from_its_state_resumes_exactly():
    one = ConformanceAgent()
    paused_on(one)
    state = json.loads(json.dumps(one.session("s").to_state()))
    again = Session.from_state(state, key="s")
    assert again.runs == 1 and again.waiting == one.session("s").waiting
    from_state = again.resume({"name": "Ada"})
    original = one.resume("s", {"name": "Ada"})
    assert as_json(from_state) == as_json(original)
    assert from_state.whole_reply == original.whole_reply == "hi" + original.reply
    assert Session.from_state(None).to_state() == {"runs": 0, "paused": None}


def test_paused_round_trips_through_its_state():
    script = parse(SCRIPT)
    ctx = RunContext(dict(PARAMS), list(MESSAGES), 4)
    ask = next(e for e in steps(script, ctx) if isinstance(e, Ask))
    paused = Paused(script, ctx, ask, reply_so_far="hi")
    back = Paused.from_state(json.loads(json.dumps(paused.to_state())))
    assert (back.script, back.context, back.ask, back.reply_so_far) == (script, ctx, ask, "hi")
    assert as_json(resumed_steps(back, 7))[:3] == as_json(resumed_steps(paused, 7))[:3]


def test_a_state_that_does_not_pause_where_it_says_is_refused():
    agent = ConformanceAgent()
    paused_on(agent)
    state = agent.session("s").to_state()["paused"]
    for wrong in ({"resume_at": 2}, {"resume_at": 0}, {"resume_at": 99}, {"question": "Another?"},
                  {"prompt": "say changed"}, {"prompt": "not a script"}):
        with pytest.raises(ValueError, match="paused state"):
            Paused.from_state({**state, **wrong})


def test_a_hand_built_script_has_no_state():
    paused = Paused(Script(directives=parse("ask q").directives), RunContext({}, [], 1), Ask("int_x", "q", 1))
    with pytest.raises(ValueError, match="parse"):
        paused.to_state()


def test_the_state_does_not_share_values_with_the_run():
    agent = ConformanceAgent()
    params = {"list": [1]}
    list(agent.run("ask q\necho params", session="s", params=params))
    agent.session("s").to_state()["paused"]["params"]["list"].append(2)  # a caller changing a state it read
    params["list"].append(3)
    assert [e.text for e in agent.resume("s", 1)] == ["answer: 1", '{"list":[1]}']


def test_two_workers_continue_each_others_sessions():
    store = JsonTextStore()
    worker_a, worker_b = ConformanceAgent(store), ConformanceAgent(store)
    counts = [next(iter(worker.run("count", session="k"))).text for worker in (worker_a, worker_b, worker_a, worker_b)]
    assert counts == ["1", "2", "3", "4"]
    assert next(iter(worker_b.run("count", session="other"))).text == "1"

    single = ConformanceAgent()
    paused_single = paused_on(single)
    paused_a = paused_on(worker_a, key="p")
    assert as_json(paused_a) == as_json(paused_single)
    assert worker_b.session("p").waiting == paused_a[-1]  # the same question, the same id
    resumed_b = worker_b.resume("p", {"name": "Ada"})
    resumed_single = single.resume("s", {"name": "Ada"})
    assert as_json(resumed_b) == as_json(resumed_single)
    assert (resumed_b.outcome, resumed_b.whole_reply) == (resumed_single.outcome, resumed_single.whole_reply)
    with pytest.raises(NotPaused):
        worker_a.resume("p", "twice")  # worker B took the answer: nothing waits any more


def test_a_session_object_sees_changes_made_by_another_worker():
    store = {}
    worker_a, worker_b = ConformanceAgent(store), ConformanceAgent(store)
    held = worker_a.session("k")  # a handle kept by worker A
    list(worker_b.run("ask q", session="k"))
    resumed = held.resume("a")  # read from the store at the resume, not when the handle was made
    assert [e.text for e in resumed] == ['answer: "a"']
    list(worker_b.run("count", session="k"))
    assert [e.text for e in held.start("count")] == ["3"]


def test_each_change_is_one_read_and_one_write():
    store = JsonTextStore()
    agent = ConformanceAgent(store)
    list(agent.run("say a\nask q\nsay b", session="k"))  # start: read+write; the ask: read+write
    assert (store.reads, store.writes) == (3, 2)  # plus the read that made the session handle
    list(agent.resume("k", 1))
    assert (store.reads, store.writes) == (5, 3)


def test_a_run_without_a_session_key_touches_no_store():
    store = JsonTextStore()
    agent = ConformanceAgent(store)
    assert [e.text for e in agent.run("count")] == ["1"] and not store.texts and store.reads == 0
    assert isinstance(next(iter(agent.run("say x"))), Text)


def test_the_shared_store_of_the_doc_serves_two_workers():
    """docs/agent.md's SharedStore example, run twice over one fake key-value database: two workers."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "agent.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "class SharedStore" in b)

    class KeyValueDb(dict):
        def set(self, name, text):
            assert isinstance(text, str)
            self[name] = text

    db = KeyValueDb()
    workers = []
    for _ in range(2):
        scope = {"db": db}
        exec(compile(example, "agent.md", "exec"), scope)
        workers.append(scope["agent"])
    paused_on(workers[0], key="thread")
    texts = [e.text for e in workers[1].resume("thread", "Ada") if isinstance(e, Text)]
    assert texts[:2] == ['answer: "Ada"', "1"]
    assert json.loads(db["agent-session:thread"]) == {"runs": 1, "paused": None}
