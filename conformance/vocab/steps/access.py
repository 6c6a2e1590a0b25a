"""Steps of the access scenarios (`access.invoke`, `access.agui`, `access.mcp`): a credential or addressing variant
each. A step that needs an option the user did not give is skipped, its reason left in `facts["skipped"][step]`
(`vocab.readers.step` reads it)."""
from conformance.registry import Step

# -- accepted ----------------------------------------------------------------------------------
ACCEPTED = Step("accepted")                # the API key (invoke, AG-UI)
ACCEPTED_TOKEN = Step("accepted-token")    # the access token on its own agent (MCP)

# -- credentials refused ------------------------------------------------------------------------
NO_CREDENTIAL = Step("no-credential")
EMPTY_BEARER = Step("empty-bearer")
BASIC_SCHEME = Step("basic-scheme")
UNKNOWN_KEY = Step("unknown-key")
UNKNOWN_TOKEN = Step("unknown-token")
REVOKED_KEY = Step("revoked-key")
EXPIRED_TOKEN = Step("expired-token")
QUERY_KEY = Step("query-key")              # a credential outside the Authorization header (MCP)
QUERY_TOKEN = Step("query-token")
BODY_KEY = Step("body-key")
OTHER_AGENT_TOKEN = Step("other-agent-token")

# -- agent addressing ---------------------------------------------------------------------------
MALFORMED_AGENT = Step("malformed-agent")
UNKNOWN_AGENT = Step("unknown-agent")
UNDEPLOYED_AGENT = Step("undeployed-agent")

# The credential variants each protocol sends, in order.
INVOKE_AGUI_CREDENTIALS = (NO_CREDENTIAL, EMPTY_BEARER, BASIC_SCHEME, UNKNOWN_KEY, REVOKED_KEY)
MCP_CREDENTIALS = (NO_CREDENTIAL, EMPTY_BEARER, UNKNOWN_KEY, UNKNOWN_TOKEN, REVOKED_KEY, EXPIRED_TOKEN)

ACCESS_INVOKE = (ACCEPTED, *INVOKE_AGUI_CREDENTIALS, OTHER_AGENT_TOKEN, MALFORMED_AGENT, UNKNOWN_AGENT,
                 UNDEPLOYED_AGENT)
ACCESS_AGUI = ACCESS_INVOKE
ACCESS_MCP = (ACCEPTED_TOKEN, *MCP_CREDENTIALS, QUERY_KEY, QUERY_TOKEN, BODY_KEY, OTHER_AGENT_TOKEN, MALFORMED_AGENT,
              UNDEPLOYED_AGENT)
