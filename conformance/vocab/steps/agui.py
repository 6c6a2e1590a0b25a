"""Steps of the AG-UI scenarios."""
from conformance.registry import Step

# -- agui.plain: the plain reply with threadId and runId, then with neither and no Accept -------------------------
IDS = Step("ids")
BARE = Step("bare")
AGUI_PLAIN = (IDS, BARE)

# -- one run of one agent scenario each ---------------------------------------------------------------------------
STREAMED = Step("streamed")
AGUI_STREAMED = (STREAMED,)
TOOL = Step("tool")
AGUI_TOOL = (TOOL,)
STEP = Step("step")
AGUI_STEP = (STEP,)
FAIL_AFTER = Step("fail-after")
AGUI_FAIL_AFTER = (FAIL_AFTER,)
FAIL_BEFORE = Step("fail-before")
AGUI_FAIL_BEFORE = (FAIL_BEFORE,)

# -- agui.last_user -----------------------------------------------------------------------------------------------
USER_ASSISTANT_USER = Step("user-assistant-user")
USER_ASSISTANT = Step("user-assistant")
AGUI_LAST_USER = (USER_ASSISTANT_USER, USER_ASSISTANT)

# -- agui.messages, agui.params -----------------------------------------------------------------------------------
ECHO_MESSAGES = Step("echo-messages")
AGUI_MESSAGES = (ECHO_MESSAGES,)
ECHO_PARAMS = Step("echo-params")
ECHO_PARAMS_AGAIN = Step("echo-params-again-*")    # the same fields again, in other forms (the rules over every exchange)
AGUI_PARAMS = (ECHO_PARAMS, ECHO_PARAMS_AGAIN)

# -- agui.session: A and B on A's generated threadId, C with none, D and E on one fresh threadId ---------------------
GENERATED_1 = Step("generated-1")
GENERATED_2 = Step("generated-2")
GENERATED_OTHER = Step("generated-other")
FRESH_1 = Step("fresh-1")
FRESH_2 = Step("fresh-2")
AGUI_SESSION = (GENERATED_1, GENERATED_2, GENERATED_OTHER, FRESH_1, FRESH_2)

# -- agui.key_lengths, agui.big, agui.upstream_input -----------------------------------------------------------------
THREAD_1 = Step("thread-1")
THREAD_256 = Step("thread-256")
AGUI_KEY_LENGTHS = (THREAD_1, THREAD_256)
HALF_MB = Step("half-mb")
AGUI_BIG = (HALF_MB,)
UPSTREAM = Step("upstream")
AGUI_UPSTREAM_INPUT = (UPSTREAM,)

# -- agui.interrupt and agui.resume_open ----------------------------------------------------------------------------
ASK = Step("ask")
RESUME = Step("resume")
AGUI_INTERRUPT = (ASK, RESUME)
UNKNOWN_INTERRUPT = Step("unknown-interrupt")
EMPTY_RESUME = Step("empty-resume")
ANSWER = Step("answer")
STALE_ANSWER = Step("stale-answer")
AGUI_RESUME_OPEN = (ASK, UNKNOWN_INTERRUPT, EMPTY_RESUME, ANSWER, STALE_ANSWER)

# -- agui.refusals (each faulty AG-UI request, and invoke's answer to the same fault; the credential and addressing
# refusals of both protocols are access.agui's and access.invoke's) --------------------------------------------------
NO_MESSAGES = Step("no-messages")
EMPTY_MESSAGES = Step("empty-messages")
ASSISTANT_ONLY = Step("assistant-only")
THREAD_257 = Step("thread-257")
THREAD_EMPTY = Step("thread-empty")
HUGE_BODY = Step("body-over-1mb")
INVOKE_SESSION_257 = Step("invoke-session-257")
AGUI_REFUSED = (NO_MESSAGES, EMPTY_MESSAGES, ASSISTANT_ONLY, THREAD_257, THREAD_EMPTY, HUGE_BODY)
AGUI_REFUSALS = (*AGUI_REFUSED, INVOKE_SESSION_257)

# -- agui.silence, agui.silence_long --------------------------------------------------------------------------------
SILENCE = Step("silence")
AGUI_SILENCE = (SILENCE,)
SILENCE_LONG = Step("silence-long")
AGUI_SILENCE_LONG = (SILENCE_LONG,)

# -- agui.cross_session: one key over invoke, AG-UI and MCP ------------------------------------------------------------
VIA_INVOKE = Step("invoke")
VIA_AGUI = Step("agui")
VIA_MCP = Step("mcp")
AGUI_CROSS_SESSION = (VIA_INVOKE, VIA_AGUI, VIA_MCP)
