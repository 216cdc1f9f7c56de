"""The old import paths of modules that moved into subpackages (issue 28): importing
``vdsim_gym.plant`` gives the module ``vdsim_gym.sim.plant`` itself (one module object
under both names, so ``monkeypatch``, ``isinstance`` and pickles agree), loaded on first
use. A meta-path finder installed by ``vdsim_gym/__init__.py`` answers for the old names
and their submodules (``vdsim_gym.validation.metrics``); ``__main__`` modules are left to
the ordinary finder so that ``python -m vdsim_gym.validation`` keeps running. Importing
this module installs it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

# old dotted name (under vdsim_gym.) -> new one
MOVED: dict[str, str] = {
    "config": "sim.config",
    "plant": "sim.plant",
    "timing": "sim.timing",
    "latency": "sim.latency",
    "randomization": "sim.randomization",
    "trace": "traces.trace",
    "trace_mcap": "traces.mcap",
    "_mcap_writer": "traces._mcap_writer",
    "trace_render": "traces.render",
    "recording": "traces.recording",
    "provenance": "traces.provenance",
    "handling": "analysis.handling",
    "validation": "analysis.validation",
}


def new_name(fullname: str) -> str | None:
    """The module's name now, for an old one (or a submodule of one); else None."""
    prefix = "vdsim_gym."
    if not fullname.startswith(prefix) or fullname.endswith(".__main__"):
        return None
    rest = fullname[len(prefix):]
    head, dot, tail = rest.partition(".")
    moved = MOVED.get(head)
    return None if moved is None else prefix + moved + dot + tail


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module of its new one (already run under that name)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the alias's spec on the module; it keeps its own (its
        # name, origin and loader), so reload() and introspection see the real module.
        module.__spec__ = self.spec


class MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        # a package stays one under its old name (runpy runs its __main__ then)
        return importlib.machinery.ModuleSpec(
            fullname, _Alias(new), is_package=real.submodule_search_locations is not None)


def install() -> None:
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())


install()  # on import: the front door imports this module first
