"""The zoo: broken servers, each the reference server with exactly one deviation from one rule.

Register a broken server in a ``tests/selftest/zoo_<surface>.py`` module::

    from tests.selftest import asgi_tools as t
    from tests.selftest.zoo import broken

    @broken("INV-RES-003", name="INV-RES-003-no-versionNumber")
    def wrap(app, facts):
        \"\"\"The invoke result lacks versionNumber.\"\"\"
        def drop(obj, scope, status, headers):
            obj.pop("versionNumber", None) if isinstance(obj, dict) else None
            return obj
        return t.rewrite_json_response(app, drop, where="invoke")

    broken.config_only("AGUI-PING-001", ping_interval=30.0, name="AGUI-PING-001-ping-every-30s",
                       doc="The ping comes every 30 s instead of 15 s.")

``name`` defaults to ``<requirement>-<function name>`` and is prefixed with the
requirement id when it does not start with it. ``doc`` is the first docstring
line of the wrap function. ``test_zoo.py`` starts each one and asserts that
certifying it on its requirement fails (MUST) or warns (SHOULD).
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.server import ServerConfig

_CONFIG_FIELDS = {f.name for f in dataclasses.fields(ServerConfig)} - {"wrap_app", "host", "port", "cert_dir",
                                                                       "ca_path"}
_ID = re.compile(r"^[A-Z]+-[A-Z]+-\d{3}$")


@dataclass(frozen=True)
class Broken:
    name: str                 # unique, starts with the requirement id, e.g. "INV-RES-003-no-versionNumber"
    breaks: str               # the requirement id it breaks
    wrap: Callable | None     # wrap(app, facts) -> app, or None
    config: dict = field(default_factory=dict)   # ServerConfig overrides (e.g. {"ping_interval": 30.0})
    doc: str = ""             # the deviation in one line
    module: str = ""          # the zoo module that registered it

    def server_config(self, **base: Any) -> ServerConfig:
        """The ServerConfig of this broken server (``base``: shared settings such as cert_dir)."""
        return ServerConfig(**{**base, **self.config, "wrap_app": self.wrap})


ZOO: dict[str, Broken] = {}


class ZooError(ValueError):
    pass


def _register(requirement: str, name: str | None, wrap: Callable | None, config: dict, doc: str,
              module: str) -> Broken:
    if not _ID.match(requirement):
        raise ZooError(f"broken server: {requirement!r} is not a requirement id")
    unknown = set(config) - _CONFIG_FIELDS
    if unknown:
        raise ZooError(f"broken server {name or requirement}: unknown ServerConfig fields {sorted(unknown)}; "
                       f"known: {sorted(_CONFIG_FIELDS)}")
    if wrap is None and not config:
        raise ZooError(f"broken server {name or requirement}: neither a wrap function nor a config override")
    full = name or requirement
    if not full.startswith(requirement):
        full = f"{requirement}-{full}"
    entry = Broken(full, requirement, wrap, dict(config), (doc or "").strip(), module)
    old = ZOO.get(full)
    if old is not None and (old.module, old.breaks, old.doc) != (entry.module, entry.breaks, entry.doc):
        raise ZooError(f"broken server {full} registered twice ({old.module} and {module})")
    ZOO[full] = entry
    return entry


def _first_line(fn: Callable) -> str:
    doc = (fn.__doc__ or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def broken(requirement: str, *, name: str | None = None, config: dict | None = None):
    """Decorator: registers ``wrap(app, facts) -> app`` as a broken server for ``requirement``."""

    def register(fn: Callable) -> Callable:
        default = f"{requirement}-{fn.__name__.strip('_').replace('_', '-')}"
        _register(requirement, name or default, fn, config or {}, _first_line(fn), fn.__module__)
        return fn

    return register


def registered(requirement: str, name: str, doc: str, wrap: Callable) -> None:
    """Registers `wrap`, made by a factory shared by several broken servers, under `name` with its own doc."""
    wrap.__doc__ = doc
    broken(requirement, name=name)(wrap)


def _config_only(requirement: str, name: str | None = None, *, doc: str = "", **config: Any) -> Broken:
    """A broken server made by ServerConfig options alone (no middleware)."""
    import inspect

    caller = inspect.stack()[1].frame.f_globals.get("__name__", "")
    label = name or requirement + "-" + "-".join(f"{k}-{v}" for k, v in sorted(config.items()))
    default_doc = "ServerConfig(" + ", ".join(f"{k}={v!r}" for k, v in sorted(config.items())) + ")"
    return _register(requirement, label, None, config, doc or default_doc, caller)


broken.config_only = staticmethod(_config_only)


_loaded = False


def load_zoo() -> dict[str, Broken]:
    """Imports every ``tests/selftest/zoo_*.py`` module and returns the zoo."""
    global _loaded
    if not _loaded:
        import tests.selftest as pkg

        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if info.name.startswith("zoo_"):
                importlib.import_module(f"tests.selftest.{info.name}")
        _loaded = True
    return ZOO
