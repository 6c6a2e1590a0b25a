"""The vocabulary scenarios and checks share, so neither imports the other.

- `protocols`: request builders and reply readers of invoke, AG-UI and MCP (`mcp_request`, `agui_input`, ...).
- `readers`: reading a recorded answer (`got`, `is_4xx`, `error_of` / `error_code`, `request_json`,
  `stream_events`, `step`).
- `refusals`: a credential or addressing step refused with a 4xx and its protocol's error body.
- `challenges`: RFC 9110 `WWW-Authenticate` challenges and RFC 3986 URL equivalence.
- `constants`: JSON-RPC codes, the scope, the invoke runs, the interpreted fields.
- `steps`: the step labels a scenario records and a check reads, as names (one module per surface).
- `fuzzing`: what the schemathesis scenarios and their checks share: operations, the defect rules, `Probe`, `Sent`.
- `sending`: sending through a scenario's Context (`rpc`, `call_tool`, the tool name, optional steps).
- `traffic`: which requirement a schema violation in recorded traffic breaks.
- `text`: `truncate`, the one way a message shortens what it quotes.
- `inputs`: the input model: the classes of legitimate values of every field and header a rule touches.
- `values` (re-exported here): JSON and media-type readings (`is_json_integer`, `is_json_media_type`, ...).
"""
from conformance.vocab.values import is_json_integer, is_json_media_type, media_type, same_integer

__all__ = ["is_json_integer", "is_json_media_type", "media_type", "same_integer"]
