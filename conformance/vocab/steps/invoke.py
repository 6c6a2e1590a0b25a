"""Steps of the invoke scenarios."""
from conformance.registry import Step
from conformance.vocab.constants import RUNS

# -- families shared by several scenarios ----------------------------------------------------------
AFTER = Step("after-*")                    # `count` on the key a refused request carried: `AFTER.of(<its step>)`

# -- invoke.runs (each agent scenario once as JSON, `json-<name>`, once streamed, `sse-<name>`) ------
RUN_JSON = Step("json-*")
RUN_SSE = Step("sse-*")
# each member named too, in the order sent: a step's place among those its scenario names draws its form in turn
INVOKE_RUNS = (*(kind.of(name) for name in RUNS for kind in (RUN_JSON, RUN_SSE)), RUN_JSON, RUN_SSE)

# -- invoke.selection (each combination of `stream` and `Accept`) ----------------------------------
STREAM_TRUE_NO_ACCEPT = Step("stream-true-no-accept")
ACCEPT_SSE_NO_STREAM = Step("accept-sse-no-stream")
NO_STREAM_NO_ACCEPT = Step("no-stream-no-accept")
NO_STREAM_ACCEPT_JSON = Step("no-stream-accept-json")
STREAM_FALSE_NO_ACCEPT = Step("stream-false-no-accept")
STREAM_FALSE_ACCEPT_SSE = Step("stream-false-accept-sse")
INVOKE_SELECTION = (STREAM_TRUE_NO_ACCEPT, ACCEPT_SSE_NO_STREAM, NO_STREAM_NO_ACCEPT, NO_STREAM_ACCEPT_JSON,
                    STREAM_FALSE_NO_ACCEPT, STREAM_FALSE_ACCEPT_SSE)

# -- invoke.timing (the same timed prompt as JSON and streamed) --------------------------------------
TIMED_JSON = Step("json")
TIMED_SSE = Step("sse")
INVOKE_TIMING = (TIMED_JSON, TIMED_SSE)

# -- invoke.sessions ---------------------------------------------------------------------------------
COUNT_1 = Step("count-1")
COUNT_2 = Step("count-2")
COUNT_OTHER = Step("count-other")
GENERATED_1 = Step("generated-1")
GENERATED_2 = Step("generated-2")
INVOKE_SESSIONS = (COUNT_1, COUNT_2, COUNT_OTHER, GENERATED_1, GENERATED_2)

# -- invoke.key_lengths, invoke.params, invoke.messages, invoke.big_body -------------------------------
KEY_1 = Step("key-1")
KEY_256 = Step("key-256")
INVOKE_KEY_LENGTHS = (KEY_1, KEY_256)
PARAMS = Step("params")
PARAMS_AGAIN = Step("params-again-*")      # the same fields again, in other forms (judged by the rules over every exchange)
INVOKE_PARAMS = (PARAMS, PARAMS_AGAIN)
MESSAGES = Step("messages")
INVOKE_MESSAGES = (MESSAGES,)
HALF_MB = Step("half-mb")
INVOKE_BIG_BODY = (HALF_MB,)

# -- invoke.refusals (each request that must be refused; `count` after the four with a fresh key) -------
STREAM_NO_AGENT = Step("stream-no-agent")
PROMPT_NUMBER = Step("prompt-number")
STREAM_STRING = Step("stream-string")
PROMPT_MISSING = Step("prompt-missing")
NOT_JSON = Step("not-json")
JSON_ARRAY = Step("json-array")
HUGE_BODY = Step("body-over-1mb")
KEY_257 = Step("key-257")
KEY_EMPTY = Step("key-empty")
NO_CREDENTIAL = Step("no-credential")
REFUSALS_WITH_KEY = (PROMPT_NUMBER, STREAM_STRING, PROMPT_MISSING, HUGE_BODY)   # each followed by `count` on its key
INVOKE_REFUSALS = (STREAM_NO_AGENT, PROMPT_NUMBER, STREAM_STRING, PROMPT_MISSING, NOT_JSON, JSON_ARRAY, HUGE_BODY,
                   KEY_257, KEY_EMPTY, NO_CREDENTIAL) + tuple(AFTER.of(step) for step in REFUSALS_WITH_KEY)

# -- invoke.extra_data ----------------------------------------------------------------------------------
EXTRA_2KB = Step("extra-2kb")
EXTRA_8KB = Step("extra-8kb")
INVOKE_EXTRA_DATA = (EXTRA_2KB, EXTRA_8KB, AFTER.of(EXTRA_8KB))

# -- invoke.cleartext -----------------------------------------------------------------------------------
CLEARTEXT = Step("cleartext")
DECOY_OVER_HTTPS = Step("decoy-over-https")
INVOKE_CLEARTEXT = (CLEARTEXT, DECOY_OVER_HTTPS)
