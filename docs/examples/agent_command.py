"""The conformance agent as a command: what `python -m conformance.agent.vectors --agent COMMAND` plays the test
vectors against (docs/agent.md, "The agent in another language").

One JSON object a line in, one a line out, on standard input and output:

    {"prompt": …, "session": …, "params": {…}, "messages": […]}   a new run (session, params, messages optional)
    {"session": …, "resume": <answer>}                            resume the session's paused run
    {"canonical": "<JSON text>"}                                  write that JSON value canonically

answered with {"events": […], "outcome": …, "reply": …, "whole_reply": …} (events as the vectors write them, a
`sleep` as an event: nothing waits) or {"output": "<canonical JSON>"}. One process is one agent. This one wraps
the Python agent; yours wraps your agent the same way, in your language:

    python -m conformance.agent.vectors --agent "python docs/examples/agent_command.py"
"""
import json
import sys

from conformance.agent import ConformanceAgent, NotPaused, canonical_json
from conformance.agent.vectors import event_json


def answer(agent: ConformanceAgent, message: dict) -> dict:
    if "canonical" in message:
        return {"output": canonical_json(json.loads(message["canonical"]))}
    try:
        if "resume" in message:
            run = agent.resume(message["session"], message["resume"])
        else:
            run = agent.run(message["prompt"], session=message.get("session"), params=message.get("params"),
                            messages=message.get("messages"))
    except NotPaused:
        return {"events": [], "outcome": "not_paused", "reply": "", "whole_reply": ""}
    events = [event_json(event) for event in run.events(sleep=None)]
    return {"events": events, "outcome": run.outcome, "reply": run.reply, "whole_reply": run.whole_reply}


def main() -> None:
    agent = ConformanceAgent()
    for line in sys.stdin:
        print(json.dumps(answer(agent, json.loads(line)), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
