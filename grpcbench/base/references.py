"""``"module:attribute"`` references, the form every registry uses (drivers, exporters,
target types): the module is imported only when the entry is used."""

from __future__ import annotations

import importlib
from typing import Any


def load_reference(reference: str) -> Any:
    """The object ``reference`` names, e.g. ``"grpcbench.load.builtin:create"``."""
    module_name, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
