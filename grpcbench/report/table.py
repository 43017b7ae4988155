"""The comparison table model shared by every exporter (console, markdown, CSV).

One table per scenario and concurrency level, servers (and drivers) side by
side, rows in the seed's order plus percentiles and resource use. Building the
model once keeps every format showing the same figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from grpcbench.load.model import SATURATION_THRESHOLD
from grpcbench.options import describe_level
from grpcbench.report.units import (
    format_bytes,
    format_cpu_seconds,
    format_latency_us,
    format_percent,
    format_seconds,
)
from grpcbench.results import LevelResult
from grpcbench.stats.histogram import LatencySummary

PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))
WARNING = "⚠"


@dataclass(frozen=True)
class ComparisonTable:
    scenario: str
    level: str  # "concurrency 10", "rate 500/s", "concurrency 10, channels 4"
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    notes: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{self.scenario} - {self.level}"


def column_label(level: LevelResult, several_drivers: bool) -> str:
    return f"{level.server} [{level.driver}]" if several_drivers else level.server


def _status_rows(levels: list[LevelResult]) -> list[tuple[str, Callable[[LevelResult], str]]]:
    """OK first, then every other status seen in any column (zeros shown elsewhere)."""
    seen: list[str] = []
    for level in levels:
        for status in sorted(level.load.statuses):
            if status != "OK" and status not in seen:
                seen.append(status)
    return [("OK", lambda lv: str(lv.load.ok))] + [
        (status, lambda lv, s=status: str(lv.load.statuses.get(s, 0))) for status in seen
    ]


def _server_cpu(level: LevelResult) -> str:
    usage = level.server_usage
    return (
        f"{format_cpu_seconds(usage.cpu_s)} ({format_percent(usage.cpu_fraction)})"
        if usage
        else "-"
    )


def _server_rss(level: LevelResult) -> str:
    usage = level.server_usage
    if usage is None:
        return "-"
    suffix = f" ({usage.processes} processes)" if usage.processes > 1 else ""
    return format_bytes(usage.peak_rss_bytes) + suffix


def _client_cpu(level: LevelResult) -> str:
    load = level.load
    text = f"{format_cpu_seconds(load.client_cpu_s)} ({format_percent(load.client_cpu_fraction)})"
    return f"{text} {WARNING}" if load.client_saturated else text


def _percentile_cell(percentile: float) -> Callable[[LevelResult], str]:
    return lambda lv: format_latency_us(lv.load.latency.percentile_us(percentile))


def _summary_cell(
    pick: Callable[[LevelResult], LatencySummary | None], percentile: float | None
) -> Callable[[LevelResult], str]:
    """A cell from an optional latency summary: its mean (percentile None) or a percentile."""

    def cell(level: LevelResult) -> str:
        summary = pick(level)
        if summary is None or not summary.count:
            return "-"
        value = summary.mean_us if percentile is None else summary.percentile_us(percentile)
        return format_latency_us(value)

    return cell


def _optional_rows(levels: list[LevelResult]) -> list[tuple[str, Callable[[LevelResult], str]]]:
    """Rows that exist only for some load models: per-request connects, open loops."""
    rows: list[tuple[str, Callable[[LevelResult], str]]] = []
    if any(lv.load.connect_latency for lv in levels):
        connect = lambda lv: lv.load.connect_latency  # noqa: E731
        rows += [("Connect avg", _summary_cell(connect, None))]
        rows += [("Connect p99", _summary_cell(connect, 99.0))]
    if any(lv.load.rate for lv in levels):
        service = lambda lv: lv.load.service_latency  # noqa: E731
        lag = lambda lv: lv.load.schedule_lag  # noqa: E731
        rows += [
            ("Target rate", lambda lv: f"{lv.load.rate:.2f}" if lv.load.rate else "-"),
            ("Service p50", _summary_cell(service, 50.0)),
            ("Service p99", _summary_cell(service, 99.0)),
            ("Send lag p99", _summary_cell(lag, 99.0)),
            ("Send lag max", _summary_cell(lag, 100.0)),
        ]
    return rows


def _rows(levels: list[LevelResult]) -> list[tuple[str, Callable[[LevelResult], str]]]:
    latency_rows: list[tuple[str, Callable[[LevelResult], str]]] = [
        ("Total", lambda lv: format_seconds(lv.load.wall_s)),
        ("Slowest", lambda lv: format_latency_us(lv.load.latency.max_us)),
        ("Fastest", lambda lv: format_latency_us(lv.load.latency.min_us)),
        ("Average", lambda lv: format_latency_us(lv.load.latency.mean_us)),
    ]
    latency_rows += [(name, _percentile_cell(p)) for name, p in PERCENTILES]
    return [
        ("Count", lambda lv: str(lv.load.count)),
        *_status_rows(levels),
        *latency_rows,
        ("Requests/sec", lambda lv: f"{lv.load.rps:.2f}"),
        *_optional_rows(levels),
        ("Server CPU", _server_cpu),
        ("Server peak RSS", _server_rss),
        ("Generator CPU", _client_cpu),
    ]


def _notes(levels: list[LevelResult], labels: list[str]) -> list[str]:
    notes: list[str] = []
    for level, label in zip(levels, labels, strict=True):
        load = level.load
        if load.client_saturated:
            remedy = "--client-processes 2 or more" if level.driver == "builtin" else "more"
            notes.append(
                f"{WARNING} {label}: the load generator used"
                f" {format_percent(load.client_cpu_fraction)} of its CPU"
                f" (>= {format_percent(SATURATION_THRESHOLD)}): it, not the server, was the"
                f" bottleneck; the server may be faster than shown (try {remedy} --client-cpus)."
            )
        if load.behind_schedule:
            lag = load.schedule_lag
            assert lag is not None
            notes.append(
                f"{WARNING} {label}: the generator fell behind its timetable (send lag"
                f" p99 {format_latency_us(lag.percentile_us(99))},"
                f" max {format_latency_us(lag.max_us)});"
                " latencies still count from the intended send times, but the offered load was"
                " lower than the target rate."
            )
        if load.latency_note:
            notes.append(f"{WARNING} {label}: {load.latency_note}.")
        if load.truncated:
            notes.append(
                f"{WARNING} {label}: the level hit its time limit (--max-level) and stopped early."
            )
        if level.driver == "fake":
            notes.append(f"{label}: synthetic figures from the fake driver, not measurements.")
        if load.count and load.ok < load.count:
            notes.append(f"{WARNING} {label}: {load.count - load.ok} of {load.count} calls failed.")
    notes += _driver_comparisons(levels)
    if any(level.driver == "ghz" for level in levels):
        notes.append(GHZ_RULES)
    return notes


GHZ_RULES = (
    "ghz columns: latencies of every call, failed ones included (grpcbench passes --count-errors"
    " and reads ghz's per-call records, like the built-in driver); neither driver corrects for"
    " coordinated omission (both are closed loops)."
)


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else "n/a"


def _driver_comparisons(levels: list[LevelResult]) -> list[str]:
    """Per server measured by several drivers: each driver against the first one."""
    by_server: dict[str, list[LevelResult]] = {}
    for level in levels:
        by_server.setdefault(level.server, []).append(level)
    notes = []
    for server, measured in by_server.items():
        reference = measured[0]
        for other in measured[1:]:
            a, b = other.load, reference.load
            notes.append(
                f"{server}: {other.driver} / {reference.driver} ="
                f" Requests/sec {_ratio(a.rps, b.rps)},"
                f" p50 {_ratio(a.latency.percentile_us(50), b.latency.percentile_us(50))},"
                f" p99 {_ratio(a.latency.percentile_us(99), b.latency.percentile_us(99))}"
            )
    return notes


def build_tables(levels: Iterable[LevelResult]) -> list[ComparisonTable]:
    """Group results by (scenario, concurrency), in the order they were measured."""
    groups: dict[tuple[str, float, int, int], list[LevelResult]] = {}
    for level in levels:
        key = (level.scenario, level.rate, level.concurrency, level.channels)
        groups.setdefault(key, []).append(level)
    tables = []
    for (scenario, rate, concurrency, channels), group in sorted(
        groups.items(), key=lambda kv: kv[0][1:]
    ):
        several_drivers = len({lv.driver for lv in group}) > 1
        labels = [column_label(lv, several_drivers) for lv in group]
        rows = tuple((name, tuple(cell(lv) for lv in group)) for name, cell in _rows(group))
        tables.append(
            ComparisonTable(
                scenario,
                describe_level(concurrency, channels, rate),
                tuple(labels),
                rows,
                tuple(_notes(group, labels)),
            )
        )
    return tables
