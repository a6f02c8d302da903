"""The resolution library's stable import path: ``pipelines.resolution`` is
``pipelines.core.resolution`` (the matchers moved into the core stage's package).

Scripts, notebooks and benchmark harnesses outside this repository import
``from pipelines.resolution import match_authors, match_papers``; this module keeps that path,
and every submodule under it (``pipelines.resolution.papers`` ...), working: each name is the
very module object of ``pipelines.core.resolution`` (no second copy, same classes)."""

from __future__ import annotations

import importlib
import pkgutil
import sys

from pipelines.core import resolution as _resolution

for _info in pkgutil.iter_modules(_resolution.__path__):
    sys.modules[f"{__name__}.{_info.name}"] = importlib.import_module(f"{_resolution.__name__}.{_info.name}")
sys.modules[__name__] = _resolution
