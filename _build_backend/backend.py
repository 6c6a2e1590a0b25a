"""setuptools' build backend, building outside the checkout.

setuptools writes ``build/`` and ``conformance.egg-info/`` into the source directory, and pip 25+ builds
in place, so ``pip install .`` would leave both in the checkout (a fixed ``build_base`` elsewhere would
be shared by every checkout on the machine and mix their files). Every hook here runs with a
``build_base`` and an ``egg_base`` of its own in a temporary directory, removed afterwards; they are
given in a distutils config file named by DIST_EXTRA_CONFIG, unless the caller already names one.
"""
from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (hooks not wrapped below pass through unchanged)


@contextlib.contextmanager
def _scratch_dirs():
    if os.environ.get("DIST_EXTRA_CONFIG"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="conformance-build-") as tmp:
        config = Path(tmp, "dist-extra.cfg")
        escaped = tmp.replace("%", "%%")  # the file is read with configparser interpolation
        config.write_text(f"[build]\nbuild_base = {escaped}/build\n[egg_info]\negg_base = {escaped}\n",
                          encoding="utf-8")
        os.environ["DIST_EXTRA_CONFIG"] = str(config)
        try:
            yield
        finally:
            del os.environ["DIST_EXTRA_CONFIG"]


def _outside_checkout(hook):
    @functools.wraps(hook)
    def run(*args, **kwargs):
        with _scratch_dirs():
            return hook(*args, **kwargs)
    return run


get_requires_for_build_wheel = _outside_checkout(_setuptools.get_requires_for_build_wheel)
prepare_metadata_for_build_wheel = _outside_checkout(_setuptools.prepare_metadata_for_build_wheel)
build_wheel = _outside_checkout(_setuptools.build_wheel)
get_requires_for_build_editable = _outside_checkout(_setuptools.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _outside_checkout(_setuptools.prepare_metadata_for_build_editable)
build_editable = _outside_checkout(_setuptools.build_editable)
get_requires_for_build_sdist = _outside_checkout(_setuptools.get_requires_for_build_sdist)
build_sdist = _outside_checkout(_setuptools.build_sdist)
