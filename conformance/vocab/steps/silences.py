"""Steps of the silence scenarios (invoke.silences, agui.silences, mcp.silences): one run per position of a run where
the agent falls silent, `silent-<position>` (`silent-after-tool`), and for a silence after a resume the run that
paused first, `paused-<position>`. Which silence each run holds is in `facts["silences"]`
(`conformance.vocab.silences`)."""
from conformance.registry import Step

SILENT = Step("silent-*")     # the run that falls silent at a position (its stream is judged)
PAUSED = Step("paused-*")     # the run a silence after a resume resumes (it only pauses)
SILENCES = (SILENT, PAUSED)
