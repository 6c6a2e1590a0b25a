"""Steps of the metadata scenarios."""
from conformance.registry import Step

# -- metadata.document and metadata.challenge ------------------------------------------------------
DOC = Step("doc")
DOC_KEY = Step("doc-key")
DOC_UNKNOWN_BEARER = Step("doc-unknown-bearer")
MALFORMED_AGENT = Step("malformed-agent")
UNDEPLOYED_AGENT = Step("undeployed-agent")
POST = Step("post")
UNKNOWN_AGENT = Step("unknown-agent")
# the document, the undeployed agent's GET and the POST again, in other forms (the rules over every exchange judge them)
AGAIN = Step("again-*")
METADATA_DOCUMENT = (DOC, DOC_KEY, DOC_UNKNOWN_BEARER, UNKNOWN_AGENT, MALFORMED_AGENT, UNDEPLOYED_AGENT, POST, AGAIN)
CHALLENGE = Step("challenge")
FOLLOWED = Step("followed")
METADATA_CHALLENGE = (CHALLENGE, FOLLOWED)
