"""Charts of a run (matplotlib, an optional extra imported only here).

One figure per question a reader asks: how does throughput grow with load,
how do latency percentiles grow, what does the latency distribution look like
at each level, what did each server cost in CPU and memory, and - for
streaming scenarios - how fast did messages flow. Failed calls are drawn as
red crosses with their count, so a run with errors never looks healthy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from grpcbench.base.errors import OneLineError
from grpcbench.capacity.record import CapacityRecord
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.model.verdict import judge
from grpcbench.report.capacity_chart import capacity_chart
from grpcbench.report.chart_kit import (
    Chart,
    finish_chart,
    legend_outside,
    log_scale,
    pyplot,
)
from grpcbench.report.figures import FIGURES, PERCENTILES
from grpcbench.report.figures import mean as _mean
from grpcbench.report.interval_chart import interval_charts, levels_over_time
from grpcbench.report.scalability import usl_fits
from grpcbench.stats.usl import UslFit


def _x(level: LevelResult) -> float:
    return level.rate or float(level.concurrency)


def _x_label(levels: list[LevelResult]) -> str:
    return "offered rate (calls/s)" if any(lv.rate for lv in levels) else "concurrency"


def _series_label(level: LevelResult, several_drivers: bool) -> str:
    label = level.server + (f" [{level.driver}]" if several_drivers else "")
    label += f" {level.variant}" if level.variant else ""
    return label + (f" ch={level.channels}" if level.channels else "")


def _series(levels: list[LevelResult]) -> dict[str, dict[float, list[LevelResult]]]:
    """Series label -> x -> the repeats measured there."""
    several_drivers = len({lv.driver for lv in levels}) > 1
    series: dict[str, dict[float, list[LevelResult]]] = {}
    for level in levels:
        points = series.setdefault(_series_label(level, several_drivers), {})
        points.setdefault(_x(level), []).append(level)
    return series


def _line_chart(
    plt: Any,
    levels: list[LevelResult],
    value: Callable[[LevelResult], float],
    name: str,
    title: str,
    y_label: str,
    log_y: bool = False,
    fits: dict[str, UslFit] | None = None,
) -> Chart:
    """``fits``: series label -> its USL fit, drawn dashed through the points."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for label, points in _series(levels).items():
        xs = sorted(points)
        (line,) = axes.plot(
            xs, [_mean(value(lv) for lv in points[x]) for x in xs], marker="o", label=label
        )
        fit = (fits or {}).get(label)
        if fit is not None:
            curve = [xs[0] + (xs[-1] - xs[0]) * i / 100 for i in range(101)]
            fitted = f"{label}: USL fit, R²={fit.r_squared:.2f}"
            axes.plot(curve, [fit.throughput(n) for n in curve], linestyle="--", linewidth=1,
                      color=line.get_color(), label=fitted)  # fmt: skip
        _mark_not_server_bound(axes, xs, points, value, line.get_color())
        _mark_errors(axes, xs, points, value)
    _legend_for_hollow(axes, levels)
    axes.set_xlabel(_x_label(levels))
    axes.set_ylabel(y_label)
    _level_ticks(axes, levels)
    if log_y:
        log_scale(axes)
    else:
        axes.set_ylim(bottom=0)  # a value axis starts at zero, so gaps are not magnified
    axes.grid(True, alpha=0.3)
    legend_outside(axes)
    return finish_chart(plt, figure, name, title)


def _mark_not_server_bound(
    axes: Any,
    xs: list[float],
    points: dict[float, list[LevelResult]],
    value: Callable[[LevelResult], float],
    color: str,
) -> None:
    """Hollow markers where the figure is not the server's (the Verdict row says why)."""
    for x in xs:
        if judge(*points[x]) != "server-bound":
            y = _mean(value(lv) for lv in points[x])
            # color= too: a plot without one would take the next colour of the cycle.
            axes.plot([x], [y], marker="o", markersize=9, markerfacecolor="white", color=color,
                      markeredgecolor=color, markeredgewidth=1.5, linestyle="none")  # fmt: skip


def _legend_for_hollow(axes: Any, levels: list[LevelResult]) -> None:
    """One legend entry explaining hollow markers, when a chart has any."""
    if any(lv.verdict != "server-bound" for lv in levels):
        axes.plot([], [], marker="o", markersize=9, markerfacecolor="white", color="grey",
                  markeredgecolor="grey", linestyle="none",
                  label="hollow: not server-bound (see Verdict)")  # fmt: skip


def _mark_errors(
    axes: Any,
    xs: list[float],
    points: dict[float, list[LevelResult]],
    value: Callable[[LevelResult], float],
) -> None:
    for x in xs:
        failed = sum(lv.unexpected for lv in points[x])  # as the tables count them
        if failed:
            y = _mean(value(lv) for lv in points[x])
            axes.plot([x], [y], marker="x", color="red", markersize=12, mew=2)
            axes.annotate(f"{failed} errors", (x, y), color="red", fontsize=7, xytext=(4, 4),
                          textcoords="offset points")  # fmt: skip


def _level_ticks(axes: Any, levels: list[LevelResult]) -> None:
    """Ticks at the measured levels only (2, 10, 25, 50), not at 2.25, 2.5, ..."""
    axes.set_xticks(sorted({_x(level) for level in levels}))


def _in_ms(value: Callable[[LevelResult], float]) -> Callable[[LevelResult], float]:
    return lambda level: value(level) / 1000


def _percentile_chart(plt: Any, levels: list[LevelResult]) -> Chart:
    figure, grid = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for axes, (key, _) in zip(grid.flat, PERCENTILES, strict=True):
        figure_of = FIGURES[key]
        for label, points in _series(levels).items():
            xs = sorted(points)
            ys = [_mean(figure_of.value(lv) for lv in points[x]) / 1000 for x in xs]
            (line,) = axes.plot(xs, ys, marker="o", label=label)
            _mark_not_server_bound(axes, xs, points, _in_ms(figure_of.value), line.get_color())
            _mark_errors(axes, xs, points, _in_ms(figure_of.value))
        axes.set_title(key)
        log_scale(axes)
        _level_ticks(axes, levels)
        axes.set_ylabel("ms")
        axes.grid(True, alpha=0.3)
    for axes in grid[-1]:
        axes.set_xlabel(_x_label(levels))
    _legend_for_hollow(grid.flat[1], levels)
    legend_outside(grid.flat[1])
    return finish_chart(plt, figure, "latency-percentiles", "Latency percentiles vs load")


# Percentiles marked on the spectrum's x axis, as HdrHistogram's plots do.
SPECTRUM_TICKS = (0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999)


def _distribution_charts(plt: Any, levels: list[LevelResult]) -> list[Chart]:
    """One HDR percentile spectrum per level: latency (y) at each percentile (x), with
    x on a log(1 / (1 - p)) scale so p99 to p99.99 get as much room as p0 to p90."""
    by_level: dict[str, list[LevelResult]] = {}
    for level in levels:
        by_level.setdefault(level.describe(), []).append(level)
    charts = []
    for index, (title, group) in enumerate(by_level.items()):
        figure, axes = plt.subplots(figsize=(8, 4))
        several_drivers = len({lv.driver for lv in group}) > 1
        highest = 0.0
        for level in group:
            points = [(v, share) for v, share in level.measured.latency.cumulative() if share < 1.0]
            if points:
                xs = [1 / (1 - share) for _, share in points]
                highest = max(highest, xs[-1])
                axes.step(xs, [v / 1000 for v, _ in points], where="post",
                          label=_series_label(level, several_drivers))  # fmt: skip
        axes.set_xscale("log")
        ticks = [p for p in SPECTRUM_TICKS if 1 / (1 - p) <= max(highest, 10.0) * 1.5]
        axes.set_xticks([1 / (1 - p) for p in ticks])
        axes.set_xticklabels([f"{100 * p:g}%" for p in ticks])
        axes.xaxis.set_minor_formatter(plt.NullFormatter())
        axes.set_ylim(bottom=0)
        axes.set_xlabel("percentile")
        axes.set_ylabel("latency (ms)")
        axes.grid(True, alpha=0.3)
        legend_outside(axes)
        charts.append(
            finish_chart(
                plt, figure, f"distribution-{index + 1}", f"Latency by percentile, {title}"
            )
        )
    return charts


def _resource_chart(plt: Any, levels: list[LevelResult]) -> Chart | None:
    measured = [lv for lv in levels if lv.server_usage]
    if not measured:
        return None
    labels = list(_series(measured))
    several_drivers = len({lv.driver for lv in measured}) > 1
    level_names = list(dict.fromkeys(lv.describe() for lv in measured))
    figure, (cpu_axes, rss_axes) = plt.subplots(1, 2, figsize=(11, 4.5))
    width = 0.8 / max(1, len(labels))
    for offset, label in enumerate(labels):
        cpu, rss, hatched = [], [], []
        for name in level_names:
            group = [
                lv for lv in measured
                if lv.describe() == name and _series_label(lv, several_drivers) == label
            ]  # fmt: skip
            cpu.append(_mean(lv.server_usage.cpu_s for lv in group if lv.server_usage))
            rss.append(
                _mean(lv.server_usage.peak_rss_bytes / 2**20 for lv in group if lv.server_usage)
            )
            hatched.append(bool(group) and judge(*group) != "server-bound")
        xs = [i + offset * width for i in range(len(level_names))]
        for axes, values in ((cpu_axes, cpu), (rss_axes, rss)):
            bars = axes.bar(xs, values, width, label=label)
            for bar, not_server_bound in zip(bars, hatched, strict=True):
                if not_server_bound:  # the chart's form of a hollow marker
                    bar.set_hatch("///")
                    bar.set_edgecolor("white")
    for axes, title in ((cpu_axes, "server CPU (s)"), (rss_axes, "server peak RSS (MiB)")):
        axes.set_xticks([i + 0.4 - width / 2 for i in range(len(level_names))])
        axes.set_xticklabels(level_names, rotation=30, ha="right", fontsize=7)
        axes.set_title(title)
        axes.grid(True, axis="y", alpha=0.3)
    if any(lv.verdict != "server-bound" for lv in measured):
        rss_axes.bar([0], [0], 0, color="lightgrey", hatch="///", edgecolor="white",
                     label="hatched: not server-bound (see Verdict)")  # fmt: skip
    legend_outside(rss_axes)  # the right-hand plot: outside it is outside both
    return finish_chart(plt, figure, "server-resources", "Server CPU and peak memory per level")


def _timeline_charts(plt: Any, levels: list[LevelResult]) -> list[Chart]:
    """Seed 004's Grafana panels: CPU % and RSS over each level's measured phase, a
    line per server (solid), its generator (dashed) and backing services (dotted)."""
    by_level = levels_over_time(
        levels, lambda level: bool(level.server_usage and level.server_usage.timeline)
    )
    charts = []
    for index, (title, group) in enumerate(by_level.items()):
        figure, (cpu_axes, rss_axes) = plt.subplots(1, 2, figsize=(11, 4))
        several_drivers = len({lv.driver for lv in group}) > 1
        for number, level in enumerate(group):
            color = f"C{number % 10}"
            label = _series_label(level, several_drivers)
            assert level.server_usage is not None and level.server_usage.timeline is not None
            lines = [(f"{label} server", "-", level.server_usage.timeline)]
            if level.measured.client_timeline:
                lines.append((f"{label} generator", "--", level.measured.client_timeline))
            for name, usage in level.backing_usage.items():
                if usage.timeline:
                    lines.append((f"{label} {name}", ":", usage.timeline))
            for line_label, style, timeline in lines:
                times = timeline.times_s
                cpu_axes.plot(times, timeline.cpu_percent, style, color=color, label=line_label)
                rss_axes.plot(times, [b / 2**20 for b in timeline.rss_bytes], style,
                              color=color, label=line_label)  # fmt: skip
        cooled = [lv.server_usage for lv in group if lv.server_usage and lv.server_usage.cooldown_s]
        if cooled:  # --cooldown: the timeline goes on past the load
            end = max(usage.wall_s for usage in cooled)
            for axes in (cpu_axes, rss_axes):
                axes.axvline(end, color="grey", linestyle="-.", linewidth=1,
                             label="load ends (--cooldown after)")  # fmt: skip
        for axes, ylabel in ((cpu_axes, "CPU % (100 = one core)"), (rss_axes, "RSS (MiB)")):
            axes.set_xlabel("seconds into the measured phase")
            axes.set_ylabel(ylabel)
            axes.set_xlim(left=0)
            axes.set_ylim(bottom=0)
            axes.grid(True, alpha=0.3)
        legend_outside(rss_axes)
        charts.append(
            finish_chart(plt, figure, f"timeline-{index + 1}", f"CPU and memory over time, {title}")
        )
    return charts


def render_charts(record: RunRecord) -> list[Chart]:
    levels = record.levels
    if not levels:
        return []
    plt = pyplot()
    capacity = CapacityRecord.of(record)
    if capacity is not None:  # a capacity run: its probes as one latency-rate curve
        return [capacity_chart(plt, record, capacity)]
    charts = [
        _line_chart(
            plt,
            levels,
            lambda lv: lv.measured.rps,
            "throughput",
            "Requests/sec vs load",
            "requests/sec",
            fits=_usl_fits(levels),
        ),  # fmt: skip
        _percentile_chart(plt, levels),
        *_distribution_charts(plt, levels),
    ]
    resources = _resource_chart(plt, levels)
    if resources:
        charts.append(resources)
    charts += interval_charts(plt, levels)
    charts += _timeline_charts(plt, levels)
    streaming = [lv for lv in levels if lv.measured.stream]
    if streaming:
        charts.append(
            _line_chart(
                plt,
                streaming,
                lambda lv: (
                    lv.measured.stream.messages / lv.measured.wall_s if lv.measured.stream else 0.0
                ),
                "stream-messages",
                "Stream messages/sec vs load",
                "messages/sec",
            )  # fmt: skip
        )
        charts.append(
            _line_chart(
                plt,
                streaming,
                lambda lv: (
                    lv.measured.stream.first_message.percentile_us(50) / 1000
                    if lv.measured.stream
                    else 0.0
                ),
                "first-message",
                "Time to first message (p50) vs load",
                "ms",
                log_y=True,
            )  # fmt: skip
        )
    return charts


def _usl_fits(levels: list[LevelResult]) -> dict[str, UslFit]:
    try:
        return usl_fits(levels)
    except OneLineError:  # no scipy: the summary says so; the chart shows the points alone
        return {}


def write_images(charts: list[Chart], directory: Path, formats: Iterable[str]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts:
        for fmt in formats:
            path = directory / f"{chart.name}.{fmt}"
            if fmt == "png":
                path.write_bytes(chart.png)
            else:
                path.write_text(chart.svg)
            written.append(path)
    return written
