"""The model of the space the spec defines, from which a run's cases are generated: data, in one place.

| dimension | module | what it holds |
|---|---|---|
| requests | `dimensions.py` | every dimension along which a request may legitimately vary, from the spec and its standards (`DIMENSIONS`; the free ones a run varies over every request, `FREE`), what a rule's scope leaves out (`NARROWED`), the values the spec ties a rule to (`TIED`), leaves open (`OPEN_VALUES`) or refuses whatever else a request carries (`REFUSED_VALUES`), the rules of a client the suite does not write (`CLIENT_WRITTEN`), and every term of the spec that is none, with why (`SPEC_TERMS`) |
| values | `values.py` | per field and header a rule touches, the classes of legitimate values (`CLASSES`: judged, or left open with the reason) and the transformations a server may apply to a string (`TRANSFORMS`: trim, case fold, NFC, NFD, NFKC, accents) |
| histories | `histories.py` | the agent's scripts, the calls of a chain (`Move`), the chains a default run plays, and the history: every transition a run leaves on its session (`TRANSITIONS`) on every path (`PATHS`), each followed by a reading on every path, pairwise, drawn once per seed (`history`) |
| silences | `silences.py` | position in a run x stream x length (`SILENCES`), each judged under the rules of a silent stream; `LEFT_OUT` |
| versions | `versions.py` | the scenarios run again over HTTP/2 when the target offers it (`HTTP2_SCENARIOS`), the steps and scenarios that stay on HTTP/1.1 and why |

What each dimension leaves out is listed with its reason beside it (a class not judged, `silences.LEFT_OUT`,
`versions.HTTP1_ONLY`). How a run sends the model and what a report says of it: `conformance.vocab.inputs`,
`vocab.sequences`, `vocab.silences` and `conformance.versions`; `conformance list --format json` and report.json name,
per requirement, the values (`input_classes`), histories, silences and HTTP versions it was judged on.
"""
