"""Hooks for the whole test tree.

Our own tests start the suite's scenarios in worker threads (conformance.api.certify), which import
modules lazily. pytest rewrites the modules of every plugin distribution (ours, schemathesis, hypothesis)
with `ast`, and CPython 3.11's ast bookkeeping is not thread-safe ("AST constructor recursion depth
mismatch"), so only test modules and conftests are rewritten here."""


from tests.selftest import tables


def pytest_configure(config):
    state = getattr(config, "_assertstate", None)
    hook = getattr(state, "hook", None)
    if hook is not None and hasattr(hook, "_must_rewrite"):
        hook._must_rewrite.clear()
    tables.configure(config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tables.terminal_summary(terminalreporter, config)


def pytest_unconfigure(config):
    tables.unconfigure(config)
