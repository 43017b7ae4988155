"""Merging figures that only some processes measured."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def merge_optional(a: T | None, b: T | None, merge: Callable[[T, T], T]) -> T | None:
    """Figures only some processes have: merged where both do, else whichever exists."""
    if a is None or b is None:
        return a if b is None else b
    return merge(a, b)
