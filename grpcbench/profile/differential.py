"""Two server kinds' profiles at one level, side by side: the functions whose share
of the CPU differs most.

Shares are *self* shares (the sample's innermost function, library internals
folded into one name each): they add up to 100% per kind, so a difference in
points reads as "this kind spends that much more of its CPU here". Read from
the cells' collapsed-stack files; when a file is gone (a results file moved
without its ``.profiles`` folder), from the top functions saved in the JSON,
and the differential says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grpcbench.profile.model import Profile
from grpcbench.profile.stacks import function_shares


@dataclass(frozen=True)
class ShareDifference:
    function: str
    first: float  # self share in the first kind
    second: float

    @property
    def points(self) -> float:
        return self.first - self.second


@dataclass(frozen=True)
class Differential:
    first: str  # server kinds
    second: str
    rows: tuple[ShareDifference, ...]  # largest difference first
    complete: bool  # False: read from the saved top functions only
    headline: str  # where each spends most, e.g. "grpclib: 41% in [h2 internals]; ..."


def _shares(profile: dict[str, Any]) -> tuple[dict[str, float], bool]:
    saved = Profile.from_json(profile)
    path = Path(saved.file)
    if path.exists():
        _, shares = function_shares(path)
        return {s.function: s.self_share for s in shares}, True
    return {s.function: s.self_share for s in saved.top}, False


def differential(
    first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]], shown: int = 10
) -> Differential:
    (first_name, first_profile), (second_name, second_profile) = first, second
    a, a_complete = _shares(first_profile)
    b, b_complete = _shares(second_profile)
    rows = [ShareDifference(f, a.get(f, 0.0), b.get(f, 0.0)) for f in {*a, *b}]
    rows.sort(key=lambda r: r.function)  # ties below in a stable order, run after run
    rows.sort(key=lambda r: (abs(r.points), r.first + r.second), reverse=True)
    headline = "; ".join(
        f"{name}: {shares[top]:.0%} in {top}"
        for name, shares in ((first_name, a), (second_name, b))
        if (top := max(shares, key=shares.__getitem__, default=None)) is not None
    )
    return Differential(
        first_name, second_name, tuple(rows[:shown]), a_complete and b_complete, headline
    )
