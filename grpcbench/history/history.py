"""A project's history of one figure: its runs, each series' values, the change points.

What ``grpcbench history`` prints (a table per scenario and level, servers side by
side) and writes (``--format json``: ``runs`` and ``change_points``), and what
``--fail-on-regression`` and the dashboard read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from grpcbench.base.errors import UsageError
from grpcbench.history.change_points import (
    DEFAULT_MAX_PVALUE,
    DEFAULT_MIN_EFFECT,
    ChangePoint,
    Point,
    change_points,
)
from grpcbench.history.series import HISTORY_FIGURES, SEPARATOR
from grpcbench.history.store import Store, StoredRun


@dataclass(frozen=True)
class History:
    project: str
    figure: str
    runs: list[StoredRun]
    values: dict[str, dict[int, Point]]  # series -> run id -> its point
    change_points: list[ChangePoint] = field(default_factory=list)

    @property
    def label(self) -> str:
        return HISTORY_FIGURES[self.figure][0]

    def newest_regressions(self) -> list[ChangePoint]:
        """Regressions of the server that fail CI (``--fail-on-regression``): the one the
        newest run starts (unconfirmed: it rests on that run alone) and the one it
        confirms (started by the run before, the newest on its far side too), so that
        re-running after a failure either clears it or fails again. Not those a
        control project shares (the host's)."""
        if not self.runs:
            return []
        newest = self.runs[-1].id
        found = []
        for change in self.change_points:
            if change.kind != "regression" or not change.of_server:
                continue
            runs = list(self.values.get(change.series, {}))
            to_newest = runs[-1:] == [newest] and change.index + change.runs_after == len(runs)
            if to_newest and change.runs_after <= 2:
                found.append(change)
        return found

    def groups(self) -> dict[str, list[str]]:
        """scenario · level -> the series (columns) measured there, in order."""
        grouped: dict[str, list[str]] = {}
        for series in self.values:
            head, _, column = series.rpartition(SEPARATOR)
            grouped.setdefault(head or series, []).append(series)
        return grouped

    def to_json(self) -> dict[str, object]:
        return {
            "project": self.project,
            "figure": self.figure,
            "runs": [
                {"id": run.id, "time": run.started_at, "commit": run.commit,
                 "branch": run.branch, "dirty": run.dirty, "host": run.host, "kind": run.kind,
                 "values": {s: points[run.id].value for s, points in self.values.items()
                            if run.id in points}}
                for run in self.runs
            ],
            "change_points": [c.to_json() for c in self.change_points],
        }  # fmt: skip


def check_figure(figure: str) -> str:
    if figure not in HISTORY_FIGURES:
        raise UsageError(f"bad --figure {figure!r}: one of {', '.join(HISTORY_FIGURES)}")
    return figure


# The figures whose change points are found as soon as a run is stored (``refresh``):
# a project's status on the dashboard, and what `history` is asked most.
STATUS_FIGURES = ("p50", "p99", "rps", "capacity")


def load_history(
    store: Store, project: str, figure: str, series_filter: str | None = None,
    max_pvalue: float = DEFAULT_MAX_PVALUE, min_effect: float = DEFAULT_MIN_EFFECT,
    control: str | None = None,
) -> History:  # fmt: skip
    """``figure`` over every complete run of ``project``, with its change points: those
    kept for the same runs and settings, else found now (and kept); those the
    ``control`` project shares marked as the host's (``history.control``)."""
    check_figure(figure)
    if not 0 < max_pvalue < 1:
        raise UsageError(f"bad --max-pvalue {max_pvalue:g}: between 0 and 1")
    if not min_effect >= 0:
        raise UsageError(f"bad --min-effect {min_effect:g}: 0 or more run-to-run deviations")
    runs = store.runs(project)
    order = {run.id: number for number, run in enumerate(runs)}
    raw = store.figure_values(project, list(order), figure)
    values = {
        series: {run_id: Point(run_id, *found) for run_id, found in sorted(
            by_run.items(), key=lambda item: order[item[0]])}
        for series, by_run in sorted(raw.items())
    }  # fmt: skip
    # runs_after: analyses kept before changes said how many runs they rest on are redone
    settings = f"max_pvalue={max_pvalue!r};min_effect={min_effect!r};runs_after"
    newest = max(order, default=0)  # run ids grow: any run added changes it
    kept = store.analysis(project, figure, settings)
    if kept is not None and kept[0] == newest:
        found = [ChangePoint.from_json(c) for c in json.loads(kept[1])]
    else:
        higher_is_better = HISTORY_FIGURES[figure][1]
        found = [
            change
            for series, points in values.items()
            for change in change_points(series, figure, list(points.values()),
                                        higher_is_better, max_pvalue, min_effect)
        ]  # fmt: skip
        found.sort(key=lambda c: (order[c.run_id], c.series))
        store.keep_analysis(project, figure, settings, newest,
                            json.dumps([c.to_json() for c in found]))  # fmt: skip
    if control is not None:
        found = _with_control(store, control, figure, runs, values, found)
    if series_filter is not None:
        values = {s: points for s, points in values.items() if series_filter in s}
        found = [c for c in found if series_filter in c.series]
    return History(project, figure, runs, values, found)


def _with_control(
    store: Store, control: str, figure: str, runs: list[StoredRun],
    values: dict[str, dict[int, Point]], found: list[ChangePoint],
) -> list[ChangePoint]:  # fmt: skip
    from grpcbench.history.control import mark_host_changes
    from grpcbench.history.times import instant

    control_runs = store.runs(control)
    raw = store.figure_values(control, [run.id for run in control_runs], figure)
    control_values = {
        series: {run_id: Point(run_id, *point) for run_id, point in by_run.items()}
        for series, by_run in raw.items()
    }
    return mark_host_changes(
        found, values, {run.id: instant(run.started_at) for run in runs}, control_values,
        {run.id: instant(run.started_at) for run in control_runs},
    )  # fmt: skip


def refresh(store: Store, project: str) -> None:
    """Find the change points of ``STATUS_FIGURES`` now that a run was added, so that
    `history` and the dashboard answer from what is kept."""
    for figure in STATUS_FIGURES:
        load_history(store, project, figure)
