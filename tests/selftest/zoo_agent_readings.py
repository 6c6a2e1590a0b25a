"""Broken services whose fault shows through the same readings of the agent that an agent off its contract changes
(`count`, `echo params`, `echo messages`, the answer of a resume: conformance/vocab/agent_readings.py): the suite
must still fail them on the service's rule, never take them for the agent. Their correct twins, a correct service
whose agent reads otherwise, are variant_agents.py.

- a resume that starts a new run instead of continuing the paused one (count one up per resume, as an agent
  counting resumes would show it, but the answer never reaches the agent), over AG-UI and over MCP;
- keys cut to 16 characters, so keys that share their first 16 reach one instance (a count higher by exactly the
  runs the other key started);
- a session forgotten after its second run (a count lower than the runs its key started);
- numbers of the params rounded (a value no JSON writer turns 2.5 into);
- messages reaching the agent in reverse order (no JSON writer reorders an array).
"""
from __future__ import annotations

from typing import Any

from tests.selftest import asgi_tools as t
from tests.selftest.session_tools import Store, TrackedInstance, rerouted, with_store
from tests.selftest.zoo import broken


def _last_user(body: dict[str, Any]) -> str | None:
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1].get("content") if users else None


@broken("AGUI-INT-002", name="AGUI-INT-002-resume-starts-a-new-run")
def agui_resume_new_run(app, facts):
    """A `resume` on a thread starts a new run of the thread's last prompt instead of continuing the paused run."""
    prompts: dict[str, str] = {}

    def rewrite(body, scope):
        if not isinstance(body, dict) or not isinstance(body.get("threadId"), str):
            return None
        thread = body["threadId"]
        if body.get("resume") is None:
            if _last_user(body) is not None:
                prompts[thread] = _last_user(body)
            return None
        if thread not in prompts:
            return None
        return {"threadId": thread, "messages": [{"id": "again", "role": "user", "content": prompts[thread]}]}

    return t.rewrite_request_json(app, rewrite, where="agui")


@broken("MCP-PAUSE-002", name="MCP-PAUSE-002-resume-starts-a-new-run")
def mcp_resume_new_run(app, facts):
    """A tools/call with the `resume` argument starts a new run of the session's last prompt instead of continuing
    the paused run."""
    prompts: dict[str, str] = {}

    def rewrite(body, scope):
        params = body.get("params") if isinstance(body, dict) else None
        args = params.get("arguments") if isinstance(params, dict) else None
        key = args.get("session_id") if isinstance(args, dict) else None
        if not isinstance(key, str):
            return None
        if "resume" not in args:
            if isinstance(args.get("prompt"), str):
                prompts[key] = args["prompt"]
            return None
        if key not in prompts:
            return None
        params["arguments"] = {"session_id": key, "prompt": prompts[key]}
        return body

    return t.rewrite_request_json(app, rewrite, where="mcp")


@broken("GEN-SESS-002", name="GEN-SESS-002-keys-cut-to-16-characters")
def keys_cut(app, facts):
    """Session keys are stored in 16 characters: keys that share their first 16 reach one instance (the result
    still names the key sent; a key over 256 characters is still refused)."""
    async def route(key, body, scope):
        return key[:16] if len(key) <= 256 else key
    return rerouted(app, route, resumes=True)


@broken("INV-SESS-002", name="INV-SESS-002-session-lost-after-two-runs")
def lost_after_two_runs(app, facts):
    """A session's instance is dropped once it has started two runs: the key's third run reaches a new instance."""
    return with_store(app, Store(TrackedInstance, forget=lambda inst: inst.runs >= 2 and inst.paused is None))


@broken("INV-PASS-001", name="INV-PASS-001-numbers-rounded")
def numbers_rounded(app, facts):
    """Numbers of the fields that reach `params` are rounded to integers (2.5 becomes 2)."""
    def rounded(value):
        return int(value) if isinstance(value, float) else value

    def rewrite(body, scope):
        if not isinstance(body, dict):
            return None
        return {k: v if k in ("prompt", "sessionId", "stream", "messages") else t.json_leaves(v, rounded)
                for k, v in body.items()}

    return t.rewrite_request_json(app, rewrite, where="invoke")


@broken("AGUI-PROMPT-002", name="AGUI-PROMPT-002-messages-reversed")
def messages_reversed(app, facts):
    """The agent receives the messages in reverse order (the prompt is still the last user message)."""
    def rewrite(body, scope):
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or len(messages) < 2:
            return None
        return {**body, "messages": messages[::-1]}

    return t.rewrite_request_json(app, rewrite, where="agui")
