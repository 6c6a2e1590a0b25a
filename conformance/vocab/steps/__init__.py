"""Step labels a scenario records and its checks read, as names both sides import: one module per protocol surface
(`steps.mcp`, `steps.metadata`, ...), imported as `from conformance.vocab.steps import mcp as steps`.

A scenario that declares its steps (`@scenario(..., steps=...)`) makes a typo a bug, not a verdict: a check
reading a `Step` none of its scenarios declares fails collection (`registry.validate`), and `Recording.get` of
an undeclared label raises `UnknownStep` (an error), while a declared step the server kept the scenario from
reaching stays NotAssessed. A family of labels (`sse-<name>`) is one `Step` pattern (`sse-*`) with `Step.of`.
"""
