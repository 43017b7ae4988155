"""``--profile``'s tables: where each server's CPU went, at the run's heaviest level.

One table per server kind at the last level it ran (the highest load of a
sweep): its top functions by self share (the innermost frame), with their
total share (anywhere on the stack), library internals folded into one line
each (``profile.stacks``). Read from each level's saved profile, so ``show``
prints them too. On every profiled cell: the rate it was sampled at.
"""

from __future__ import annotations

from collections.abc import Iterable

from grpcbench.profile.model import Profile
from grpcbench.report.table import ComparisonTable
from grpcbench.results import LevelResult

SHOWN = 8  # functions per table


def profile_tables(levels: Iterable[LevelResult]) -> list[ComparisonTable]:
    last: dict[str, LevelResult] = {}
    for level in levels:
        if level.profile:
            last[level.server] = level
    tables = []
    for server, level in last.items():
        assert level.profile is not None
        profile = Profile.from_json(level.profile)
        rows = tuple(
            (share.function, (f"{share.self_share:.1%}", f"{share.total_share:.1%}"))
            for share in profile.top[:SHOWN]
        )
        tables.append(
            ComparisonTable(
                scenario=level.scenario,
                level=f"py-spy profile of {server} at {level.describe()}",
                columns=("self", "total"),
                rows=rows,
                notes=(
                    f"Profiled at {profile.rate_hz} Hz over the measured phase:"
                    f" {profile.samples:,} samples; collapsed stacks in {profile.file}.",
                ),
            )
        )
    return tables
