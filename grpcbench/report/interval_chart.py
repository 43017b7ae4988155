"""``--interval``'s chart: each level over time, beside the CPU/RSS timelines.

Per level (every server kind on one chart): achieved req/s per interval on the
left (solid; the pacer's offered rate dashed for an open loop, so a ramp
shows where a server stopped keeping up), p50 and p99 on a log scale on the
right, with intervals that had non-OK calls marked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult
from grpcbench.report.chart_kit import Chart, finish_chart, log_scale


def _mid(figures: IntervalFigures) -> float:
    return (figures.start_s + figures.end_s) / 2


def levels_over_time(
    levels: list[LevelResult], has_series: Callable[[LevelResult], bool]
) -> dict[str, list[LevelResult]]:
    """A chart over time per level (its first repeat), every server kind on it."""
    by_level: dict[str, list[LevelResult]] = {}
    for level in levels:
        if level.repeat == 0 and has_series(level):
            by_level.setdefault(f"{level.scenario} - {level.describe()}", []).append(level)
    return by_level


def interval_charts(plt: Any, levels: list[LevelResult]) -> list[Chart]:
    charts = []
    for index, (title, group) in enumerate(
        levels_over_time(levels, lambda level: bool(level.measured.intervals)).items()
    ):
        figure, (rate_axes, latency_axes) = plt.subplots(1, 2, figsize=(11, 4))
        several_drivers = len({lv.driver for lv in group}) > 1
        for number, level in enumerate(group):
            color = f"C{number % 10}"
            label = level.server + (f" [{level.driver}]" if several_drivers else "")
            series = level.measured.intervals
            times = [_mid(f) for f in series]
            rate_axes.plot(times, [f.rate for f in series], "-o", color=color, markersize=3,
                           label=f"{label} achieved")  # fmt: skip
            if any(f.offered for f in series):
                rate_axes.plot(times, [f.offered for f in series], "--", color=color,
                               label=f"{label} offered")  # fmt: skip
            p50 = [f.latency.percentile_us(50) / 1000 for f in series]
            p99 = [f.latency.percentile_us(99) / 1000 for f in series]
            latency_axes.plot(times, p99, "-", color=color, label=f"{label} p99")
            latency_axes.plot(times, p50, ":", color=color, label=f"{label} p50")
            failing = [(t, v) for t, v, f in zip(times, p99, series, strict=True) if f.failed]
            if failing:
                latency_axes.plot(*zip(*failing, strict=True), "x", color="red", markersize=7,
                                  label=f"{label}: intervals with non-OK calls")  # fmt: skip
        rate_axes.set_ylabel("requests/sec")
        rate_axes.set_ylim(bottom=0)
        latency_axes.set_ylabel("latency (ms)")
        if any(f.latency.count for lv in group for f in lv.measured.intervals):
            log_scale(latency_axes)
        for axes in (rate_axes, latency_axes):
            axes.set_xlabel("seconds into the measured phase")
            axes.set_xlim(left=0)
            axes.grid(True, alpha=0.3)
        handles, labels = rate_axes.get_legend_handles_labels()
        more_handles, more_labels = latency_axes.get_legend_handles_labels()
        latency_axes.legend(
            handles + more_handles, labels + more_labels, fontsize=7, loc="upper left",
            bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
        )  # fmt: skip
        charts.append(
            finish_chart(
                plt, figure, f"intervals-{index + 1}", f"Rate and latency over time, {title}"
            )
        )
    return charts
