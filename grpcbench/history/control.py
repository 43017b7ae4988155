"""A control project (a canary): changes the host made, told from changes the code made.

On a shared CI runner the machine changes too: a neighbour starts, the runner moves,
a governor steps. Every figure measured there then moves at once, and a detector
rightly finds a change. A control project is the same benchmark run beside the
project's, in the same jobs, on code that does not change (MongoDB's performance CI
calls these canaries). A change point of the project whose series the control shows
moving the same way, over the same time, by at least ``SHARED`` of the change, is
the host's (kind ``host``): shown, never a regression ``--fail-on-regression``
counts.

Times, not run numbers, align the two: the control's runs that started before the
change's first run are its "before", those from then on until the next change of
that series its "after" (instants, whatever offset each run's time was written
with). Medians, so one odd control run cannot explain a change.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from grpcbench.history.change_points import ChangePoint, Point

SHARED = 0.5  # the control's relative shift, as a part of the project's, that explains it


def _relative_shift(before: Sequence[float], after: Sequence[float]) -> float | None:
    if not before or not after:
        return None
    first = statistics.median(before)
    return statistics.median(after) / first - 1 if first else None


def control_shift(
    change: ChangePoint,
    points: Sequence[Point],
    started: Mapping[int, datetime],
    control: Mapping[int, Point],
    control_started: Mapping[int, datetime],
    series_changes: Sequence[int],
) -> float | None:
    """The control series' relative shift over the change's time (None: the control
    has no runs on one side). ``points`` is the project's series, oldest first;
    ``series_changes`` the indexes of all this series' change points."""
    earlier = [i for i in series_changes if i < change.index]
    start = started[points[max(earlier, default=0)].run_id]
    middle = started[points[change.index].run_id]
    following = [i for i in series_changes if i > change.index]
    end = started[points[min(following)].run_id] if following else None
    before, after = [], []
    for run_id, point in control.items():
        at = control_started[run_id]
        if start <= at < middle:
            before.append(point.value)
        elif middle <= at and (end is None or at < end):
            after.append(point.value)
    return _relative_shift(before, after)


def mark_host_changes(
    changes: Sequence[ChangePoint],
    values: Mapping[str, Mapping[int, Point]],
    started: Mapping[int, datetime],
    control_values: Mapping[str, Mapping[int, Point]],
    control_started: Mapping[int, datetime],
) -> list[ChangePoint]:
    """``changes`` with each one the control shares marked as the host's, and every
    one given the control's shift (None where the control lacks that series)."""
    marked = []
    for change in changes:
        control = control_values.get(change.series)
        if control is None:
            marked.append(change)
            continue
        points = list(values[change.series].values())
        indexes = [c.index for c in changes if c.series == change.series]
        shift = control_shift(change, points, started, control, control_started, indexes)
        shared = (
            shift is not None
            and shift * change.change > 0
            and abs(shift) >= SHARED * abs(change.change)
        )
        marked.append(replace(change, host=shared, control_change=shift))
    return marked
