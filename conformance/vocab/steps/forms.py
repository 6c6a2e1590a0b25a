"""Steps of the sweep scenario `forms.refusals`: each refusal every protocol, mode and method must give, sent in the
forms the access scenarios do not send it in. A step is `<kind>@<form>` (`no-credential@tools/list`)."""
from conformance.registry import Step

REFUSAL = Step("refusal-*")       # refusal-<kind>@<form>

# what is refused, on invoke and AG-UI, and on MCP
KINDS = ("no-credential", "empty-bearer", "basic-scheme", "unknown-key", "revoked-key", "other-agent-token",
         "malformed-agent", "unknown-agent", "undeployed-agent")
MCP_KINDS = ("no-credential", "empty-bearer", "unknown-key", "revoked-key", "expired-token", "other-agent-token",
             "malformed-agent", "unknown-agent", "undeployed-agent")
# invalid requests every protocol refuses whatever form they come in, sent again here in another form than their
# scenario's (the refusal scenarios send each once)
# (`two-invalid-fields`: a number for `prompt` and a string for `stream` at once: several fields failing, one refusal;
# `extra-data-streamed`: extra data of 8 KB as an array, on a streamed invoke, when the field's name is known)
# `not-json` goes as `text/plain`; `json-string`: a body that is a JSON string, not an object (invoke.refusals sends an
# array)
INVALID = ("two-invalid-fields", "extra-data-streamed", "prompt-missing", "not-json", "json-string")
AGUI_INVALID = ("no-messages", "empty-messages", "assistant-only")
MCP_INVALID = ("unsupported-version", "initialize-unsupported")
# the forms each protocol's refusal is sent in here (the access scenarios send invoke as JSON, AG-UI with the
# event stream accepted, MCP as a 2026-07-28 tools/call)
INVOKE_FORMS = ("stream-field", "accept")
AGUI_FORMS = ("no-accept",)
MCP_FORMS = ("initialize", "server/discover", "tools/list", "tools/call+progress")

FORMS_REFUSALS = (REFUSAL,)

# -- forms.limits: lengths measured in every unit, bodies over the limit without a length, loose comparisons -----
KEY = Step("key-*")               # key-<class>@<protocol>
BIG = Step("big-chunked-*")       # big-chunked-<protocol>
HEADERS = Step("headers-*")       # headers-<what differs>
# session keys whose length is the same side of 1 to 256 by code points and UTF-16 units, but not by UTF-8 bytes,
# graphemes, or after a normalization: (class, inside?)
KEY_CLASSES = (("astral-inside", True), ("nfc-expands-inside", True), ("astral-outside", False),
               ("combining-outside", False))
FORMS_LIMITS = (KEY, BIG, HEADERS)
# the input classes (conformance.vocab.inputs) each length probe carries: withheld by a test, it is not sent
KEY_CLASS_INPUTS = {"astral-inside": ("session-key:256-multibyte", "session-key:astral"),
                    "nfc-expands-inside": ("session-key:256-multibyte", "session-key:composition"),
                    "astral-outside": ("session-key:257-multibyte", "session-key:astral"),
                    "combining-outside": ("session-key:257-multibyte", "session-key:composition")}

# -- forms.triples (--thorough): a covering array of triples of free values, one plain request per row --------------
TRIPLE = Step("triple-*")         # triple-<operation>-<row>
FORMS_TRIPLES = (TRIPLE,)
