"""``--profile``'s tables: where each server's CPU went, at the run's heaviest level,
and where two kinds differ.

One table per server kind at the last level it ran (the highest load of a
sweep): its top functions by self share (the innermost frame), with their
total share (anywhere on the stack), library internals folded into one line
each (``profile.stacks``); the same for the built-in generator with
``--profile generator``. Then one differential: the kinds that spent the most
and the least server CPU per call at one level, function by function
(``profile.differential``). Read from each level's saved profile, so ``show``
prints them too. On every profiled cell: the rate it was sampled at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from grpcbench.model.results import LevelResult
from grpcbench.profile.differential import differential
from grpcbench.profile.model import Profile
from grpcbench.report.table import ComparisonTable

SHOWN = 8  # functions per table
PYTHON_ONLY = (
    "Python frames only: time in compiled code (grpcio's C core and Cython, uvloop) counts"
    " in the Python frame that called it; --profile-native samples C frames too."
)


def last_profiled(levels: Iterable[LevelResult], role: str = "profile") -> dict[str, LevelResult]:
    """Each server kind's last level with a profile (``role``: profile or
    generator_profile): the highest load of its sweep."""
    last: dict[str, LevelResult] = {}
    for level in levels:
        if getattr(level, role):
            last[level.server] = level
    return last


def _top_table(level: LevelResult, profile: Profile, whose: str) -> ComparisonTable:
    rows = tuple(
        (share.function, (f"{share.self_share:.1%}", f"{share.total_share:.1%}"))
        for share in profile.top[:SHOWN]
    )
    files = profile.file + (f" (speedscope: {profile.speedscope})" if profile.speedscope else "")
    return ComparisonTable(
        scenario=level.scenario,
        level=f"py-spy profile of {whose} at {level.describe()}",
        columns=("self", "total"),
        rows=rows,
        notes=(
            f"Profiled at {profile.rate_hz} Hz over the measured phase:"
            f" {profile.samples:,} samples; collapsed stacks in {files}.",
            *(() if profile.native else (PYTHON_ONLY,)),
        ),
    )


def differential_pair(levels: Sequence[LevelResult]) -> tuple[LevelResult, LevelResult] | None:
    """At the heaviest level profiled on two or more kinds: the kind with the most
    server CPU per call and the one with the least (first-run repeat of each)."""
    by_level: dict[str, dict[str, LevelResult]] = {}
    for level in levels:
        if level.profile:
            by_level.setdefault(level.describe(), {}).setdefault(level.server, level)
    shared = [kinds for kinds in by_level.values() if len(kinds) >= 2]
    if not shared:
        return None
    kinds = list(shared[-1].values())
    kinds.sort(key=lambda level: level.server_cpu_us_per_call or 0.0, reverse=True)
    return kinds[0], kinds[-1]


def differential_table(levels: Sequence[LevelResult]) -> ComparisonTable | None:
    pair = differential_pair(levels)
    if pair is None:
        return None
    first, second = pair
    assert first.profile is not None and second.profile is not None
    diff = differential((first.server, first.profile), (second.server, second.profile))
    cpu = [level.server_cpu_us_per_call for level in pair]
    notes = [
        f"Where each has most of its samples: {diff.headline}.",
        "Self shares of each kind's samples (each column adds up to 100%); the difference"
        " is in points.",
    ]
    if all(c is not None for c in cpu):
        notes.insert(
            0,
            f"Server CPU per call: {first.server} {cpu[0]:.0f} µs,"
            f" {second.server} {cpu[1]:.0f} µs.",
        )
    if not diff.complete:
        notes.append("A collapsed-stack file is gone: read from the saved top functions only.")
    return ComparisonTable(
        scenario=first.scenario,
        level=f"profiles compared: {first.server} vs {second.server} at {first.describe()}",
        columns=(first.server, second.server, "difference"),
        rows=tuple(
            (
                row.function,
                (f"{row.first:.1%}", f"{row.second:.1%}", f"{row.points * 100:+.1f} pts"),
            )
            for row in diff.rows
            if abs(row.points) >= 0.0005  # under 0.05 points: not a difference
        ),
        notes=tuple(notes),
    )


def profile_tables(levels: Iterable[LevelResult]) -> list[ComparisonTable]:
    levels = list(levels)
    tables = [
        _top_table(level, Profile.from_json(level.profile), server)
        for server, level in last_profiled(levels).items()
        if level.profile
    ]
    tables += [
        _top_table(level, Profile.from_json(level.generator_profile), f"the generator ({server})")
        for server, level in last_profiled(levels, "generator_profile").items()
        if level.generator_profile
    ]
    compared = differential_table(levels)
    return tables + ([compared] if compared else [])
