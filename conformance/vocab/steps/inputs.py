"""Steps of the input-form scenarios (`invoke.input_forms`, `agui.input_forms`, `mcp.input_forms`): one request per
value of a class of the input model (`conformance.vocab.inputs`), labelled `<what>-<kind>-<n>`."""
from conformance.registry import Step

CONTENT_TYPE_FORMS = Step("content-type-*")     # the plain prompt with Content-Type in another legitimate form
ACCEPT_FORMS = Step("accept-*")                 # invoke: Accept naming only the event stream, in another form
ID_FORMS = Step("id-*")                         # MCP tools/list with a JSON-RPC id of a class no other carries

INVOKE_INPUT_FORMS = (CONTENT_TYPE_FORMS, ACCEPT_FORMS)
AGUI_INPUT_FORMS = (CONTENT_TYPE_FORMS,)
MCP_INPUT_FORMS = (ID_FORMS, CONTENT_TYPE_FORMS)
