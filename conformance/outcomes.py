"""What a check or scenario can say besides pass (return) and fail (AssertionError)."""


class NotAssessed(Exception):
    """The check cannot run here: a missing credential, no prompt, an excluded protocol.

    Never counted as passed; the reason names the option that would let it run.
    """


class Observation(Exception):
    """The spec leaves this open: the check reports what it saw, it does not judge."""


class SuiteFault(Exception):
    """The suite itself broke (a generator, a missing resource, a crash in a scenario or check).

    Never the server's fault: the requirements it touches are `error`, and the run's verdict is `error`
    when a MUST is touched."""
