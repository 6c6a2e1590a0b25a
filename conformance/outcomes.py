"""What a check or scenario can say besides pass (return) and fail (AssertionError)."""


class NotAssessed(Exception):
    """The check cannot run here: a missing credential, no prompt, an excluded protocol.

    Never counted as passed; the reason names the option that would let it run.
    """


class Observation(Exception):
    """The spec leaves this open: the check reports what it saw, it does not judge."""


class SuiteFault(Exception):
    """The suite itself broke (a generator, the fuzz machinery, a missing resource, a crash in a scenario
    or check). Never the server's fault: the requirements it touches are `error`, and the run's verdict is
    `error` when a MUST is touched. The server saw nothing of it, or only the first observation counts."""
