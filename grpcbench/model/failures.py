"""What counts as a failed call: a status the level (or its method, or its scenario)
did not expect. One definition, for the level's figures, its rows and thresholds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping

from grpcbench.model.load_result import LoadResult


def unexpected_calls(statuses: Mapping[str, int], expected: Collection[str]) -> int:
    """Calls that ended with a status not in ``expected`` (a level's failures)."""
    return sum(statuses.values()) - sum(statuses.get(status, 0) for status in expected)


def part_failures(statuses: Mapping[str, int], own: Collection[str], level: Collection[str]) -> int:
    """A part's (a mix's method, a scenario's) failed calls: against its own expected
    statuses where it declares them, else the level's ``--expect-status``."""
    return unexpected_calls(statuses, own or level)


def level_failures(measured: LoadResult, expected: Collection[str]) -> int:
    """A level's failed calls: each method of a mix (or scenario) against its own
    expected statuses if it has them; calls none recorded (ended by the level's
    watchdog) against the level's ``expected``."""
    parts = [(m.statuses, m.expected) for m in measured.methods] or [
        (s.load.statuses, s.expected) for s in measured.scenarios
    ]
    if not parts:
        return unexpected_calls(measured.statuses, expected)
    unattributed = Counter(measured.statuses)
    failed = 0
    for statuses, own in parts:
        failed += part_failures(statuses, own, expected)
        unattributed.subtract(statuses)
    return failed + unexpected_calls(+unattributed, expected)
