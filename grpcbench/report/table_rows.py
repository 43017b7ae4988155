"""The rows of a comparison table, in the seed's order: statuses, latencies, rates,
server and generator CPU and memory, the verdict; then the rows a level has when it
measured them (methods of a mix, stream figures, backing services, allocations, the
cool-down)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from grpcbench.base.units import (
    format_bytes,
    format_cpu_seconds,
    format_latency_us,
    format_percent,
    format_seconds,
)
from grpcbench.model.failures import part_failures
from grpcbench.model.level_parts import MethodFigures, StreamSummary
from grpcbench.model.results import LevelResult
from grpcbench.model.verdict import judge
from grpcbench.observe.monitor import ProcessUsage
from grpcbench.report.check_rows import check_rows
from grpcbench.report.figures import FIGURES, PERCENTILES
from grpcbench.report.figures import mean as _mean
from grpcbench.report.scenario_rows import scenario_rows
from grpcbench.report.table_base import WARNING, Column, Row, count_cell, micros
from grpcbench.stats.histogram import LatencySummary


def column_label(level: LevelResult, several_drivers: bool) -> str:
    return f"{level.server} [{level.driver}]" if several_drivers else level.server


def _status_rows(columns: list[Column]) -> list[Row]:
    """OK first, then every other status seen in any column (zeros shown elsewhere);
    a status named by --expect-status says so."""
    seen: list[str] = []
    expected: set[str] = set()
    for column in columns:
        for level in column:
            expected.update(level.expected)
            for status in sorted(level.measured.statuses):
                if status != "OK" and status not in seen:
                    seen.append(status)
    return [
        Row(f"{status} (expected)" if status in expected and status != "OK" else status,
            _status_count(status), count_cell)
        for status in ["OK", *seen]
    ]  # fmt: skip


TOP_ERRORS = 3


def top_errors(column: Column) -> str:
    """The most common messages of the column's unexpected statuses (all are in the JSON)."""
    counts: Counter[str] = Counter()
    for level in column:
        for key, calls in level.measured.errors.items():
            if key.split(":", 1)[0] not in level.expected:
                counts[key] += calls
    if not counts:
        return ""
    top = "; ".join(f"{key} ({calls})" for key, calls in counts.most_common(TOP_ERRORS))
    return f"; most common: {top}"


def _status_count(status: str) -> Callable[[LevelResult], float]:
    return lambda level: float(level.measured.statuses.get(status, 0))


def _server_cpu_suffix(column: Column) -> str:
    usages = [lv.server_usage for lv in column if lv.server_usage]
    if usages and (waiting := _mean(u.cpu_shares[1] for u in usages)) >= SHOWN_WAITING:
        return _shares_suffix(_mean(u.cpu_shares[0] for u in usages), waiting)
    return f" ({format_percent(_mean(u.cpu_fraction for u in usages))})" if usages else ""


# A side that waited this share of its budget for CPUs its neighbours held shows it: the
# verdict counts it as busy (cpu_share), so the row shows both shares the verdict used.
SHOWN_WAITING = 0.05


def _shares_suffix(used: float, waiting: float) -> str:
    return f" ({format_percent(used)} used, {format_percent(waiting)} waiting)"


def _server_rss_suffix(column: Column) -> str:
    processes = max((lv.server_usage.processes for lv in column if lv.server_usage), default=1)
    return f" ({processes} processes)" if processes > 1 else ""


def _client_cpu_suffix(column: Column) -> str:
    if (waiting := _mean(lv.measured.client_shares[1] for lv in column)) >= SHOWN_WAITING:
        return _shares_suffix(_mean(lv.measured.client_shares[0] for lv in column), waiting)
    return f" ({format_percent(_mean(lv.measured.client_cpu_fraction for lv in column))})"


class VerdictRow(Row):
    """Which side limited the column's figures (judged on the means over repeats)."""

    def cell(self, column: Column) -> str:
        verdict = judge(*column)
        return verdict if verdict == "server-bound" else f"{verdict} {WARNING}"


def _summary_row(
    name: str, pick: Callable[[LevelResult], LatencySummary | None], percentile: float | None
) -> Row:
    """A row from an optional latency summary: its mean (percentile None) or a percentile."""

    def value(level: LevelResult) -> float | None:
        summary = pick(level)
        if summary is None or not summary.count:
            return None
        return summary.mean_us if percentile is None else float(summary.percentile_us(percentile))

    return Row(name, value, format_latency_us)


def _optional_rows(columns: list[Column]) -> list[Row]:
    """Rows that exist only for some load models: per-request connects, open loops."""
    levels = [level for column in columns for level in column]
    rows: list[Row] = []
    if any(lv.measured.connect_latency for lv in levels):
        rows += [
            _summary_row("Connect avg", lambda lv: lv.measured.connect_latency, None),
            _summary_row("Connect p99", lambda lv: lv.measured.connect_latency, 99.0),
        ]
    streams = [lv.measured.stream for lv in levels if lv.measured.stream]
    if streams:
        timed = [name for name in PER_MESSAGE if any(getattr(s, name) for s in streams)]
        rows += _stream_rows(
            sent=any(s.sent for s in streams), items=any(s.items for s in streams), timed=timed
        )
    if any(lv.measured.rate for lv in levels):
        # Several scenarios at once: these are their open loops' (rate = R) together.
        of = " (rate scenarios)" if any(lv.plan.scenarios for lv in levels) else ""
        rows += [
            Row(
                "Target rate" + (" (mean)" if any(lv.plan.schedule for lv in levels) else "") + of,
                lambda lv: lv.offered_rate or None,
                lambda v: f"{v:.2f}",
            ),
            _summary_row("Service p50" + of, lambda lv: lv.measured.service_latency, 50.0),
            _summary_row("Service p99" + of, lambda lv: lv.measured.service_latency, 99.0),
            _summary_row("Send lag p99" + of, lambda lv: lv.measured.schedule_lag, 99.0),
            _summary_row("Send lag max" + of, lambda lv: lv.measured.schedule_lag, 100.0),
        ]
    return rows


def _method_rows(
    columns: list[Column], parts: Callable[[LevelResult], tuple[MethodFigures, ...]]
) -> list[Row]:
    """A mix's methods (or a flow's steps): a group of rows each (calls, failures,
    percentiles, rate), under the whole level's rows above."""
    names: dict[str, int] = {}  # name -> weight, in the order first seen
    for column in columns:
        for lv in column:
            for part in parts(lv):
                names.setdefault(part.name, part.weight)
    rows: list[Row] = []
    for name, weight in names.items():

        def figures(lv: LevelResult, name: str = name) -> MethodFigures | None:
            return next((m for m in parts(lv) if m.name == name), None)

        def calls(lv: LevelResult, name: str = name) -> float | None:
            found = figures(lv, name)
            return float(found.count) if found else None

        def failed(lv: LevelResult, name: str = name) -> float | None:
            """Its calls that ended other than expected (its own statuses, else the
            level's --expect-status), as the level counts its failures."""
            found = figures(lv, name)
            if found is None:
                return None
            return float(part_failures(found.statuses, found.expected, lv.expected))

        def rate(lv: LevelResult, name: str = name) -> float | None:
            found = figures(lv, name)
            return found.count / lv.measured.wall_s if found and lv.measured.wall_s else None

        def latency(lv: LevelResult, name: str = name) -> LatencySummary | None:
            found = figures(lv, name)
            return found.latency if found else None

        label = f"{name} ×{weight}" if weight else f"step {name}"
        rows += [
            Row(f"{label} · calls", calls, count_cell),
            Row(f"{label} · failed", failed, count_cell),
            _summary_row(f"{label} · p50", latency, 50.0),
            _summary_row(f"{label} · p99", latency, 99.0),
            Row(f"{label} · req/s", rate, lambda v: f"{v:.2f}"),
        ]
    return rows


# A stream's per-message histograms (StreamSummary's field, rows' label), each shown
# where some level measured it: gaps (not in results from before they were timed),
# round trips (--stream-round-trip), send lag (--stream-interval's pacer).
PER_MESSAGE = {"gap": "Message gap", "round_trip": "Round trip", "send_lag": "Message send lag"}


def _stream_rows(sent: bool, items: bool, timed: list[str]) -> list[Row]:
    """Streams (or multi-page fetches): what went out (client and bidi streams), what
    came back, how soon, how far apart and how fast; items only where a workload
    counts them; ``timed``: the PER_MESSAGE histograms some level has."""

    def per_second(pick: Callable[[StreamSummary], int]) -> Callable[[LevelResult], float | None]:
        def value(level: LevelResult) -> float | None:
            stream = level.measured.stream
            return (
                pick(stream) / level.measured.wall_s if stream and level.measured.wall_s else None
            )

        return value

    def total(pick: Callable[[StreamSummary], int]) -> Callable[[LevelResult], float | None]:
        return lambda lv: float(pick(lv.measured.stream)) if lv.measured.stream else None

    def first_message(lv: LevelResult) -> LatencySummary | None:
        return lv.measured.stream.first_message if lv.measured.stream else None

    def histogram(name: str) -> Callable[[LevelResult], LatencySummary | None]:
        return lambda lv: getattr(lv.measured.stream, name) if lv.measured.stream else None

    def per_call(pick: Callable[[StreamSummary], int]) -> Callable[[LevelResult], float | None]:
        return lambda lv: (
            pick(lv.measured.stream) / lv.measured.stream.calls if lv.measured.stream else None
        )

    rows = [Row("Sent messages/call", per_call(lambda s: s.sent), lambda v: f"{v:.1f}")]
    rows = rows if sent else []
    rows += [
        Row("Messages", total(lambda s: s.messages), count_cell),
        Row("Messages/call", per_call(lambda s: s.messages), lambda v: f"{v:.1f}"),
    ]
    rows += [Row("Items", total(lambda s: s.items), count_cell)] if items else []
    rows += [
        _summary_row("First message p50", first_message, 50.0),
        _summary_row("First message p99", first_message, 99.0),
    ]
    for name in timed:
        rows += [
            _summary_row(f"{PER_MESSAGE[name]} p{percentile:g}", histogram(name), percentile)
            for percentile in (50.0, 99.0)
        ]
    rows += [
        Row("Messages/sec", per_second(lambda s: s.messages), lambda v: f"{v:.2f}"),
    ]
    rows += [Row("Items/sec", per_second(lambda s: s.items), lambda v: f"{v:.2f}")] if items else []
    rows.append(
        Row("Bytes/sec", per_second(lambda s: s.bytes), lambda v: format_bytes(int(v)) + "/s")
    )
    return rows


def _figure_row(key: str) -> Row:
    figure = FIGURES[key]
    return Row(figure.label, figure.value, figure.format)


def _backing_rows(columns: list[Column]) -> list[Row]:
    """CPU and peak RSS of each backing service the run started (embedded S3, MongoDB)."""
    names = dict.fromkeys(name for column in columns for lv in column for name in lv.backing_usage)
    rows: list[Row] = []
    for name in names:

        def usage(lv: LevelResult, name: str = name) -> ProcessUsage | None:
            return lv.backing_usage.get(name)

        def cpu_suffix(column: Column, name: str = name) -> str:
            found = [u for u in (usage(lv, name) for lv in column) if u]
            return f" ({format_percent(_mean(u.cpu_fraction for u in found))})" if found else ""

        def cpu(lv: LevelResult, name: str = name) -> float | None:
            found = usage(lv, name)
            return found.cpu_s if found else None

        def rss(lv: LevelResult, name: str = name) -> float | None:
            found = usage(lv, name)
            return float(found.peak_rss_bytes) if found else None

        rows += [
            Row(f"{name} CPU", cpu, format_cpu_seconds, cpu_suffix),
            Row(f"{name} peak RSS", rss, lambda v: format_bytes(int(v))),
        ]
    return rows


def table_rows(columns: list[Column]) -> list[Row]:
    return [
        Row("Count", lambda lv: float(lv.measured.count), count_cell),
        *_status_rows(columns),
        Row("Total", lambda lv: lv.measured.wall_s, format_seconds),
        Row("Slowest", lambda lv: float(lv.measured.latency.max_us), format_latency_us),
        Row("Fastest", lambda lv: float(lv.measured.latency.min_us), format_latency_us),
        _figure_row("avg"),
        *(_figure_row(name) for name, _ in PERCENTILES),
        _figure_row("rps"),
        *scenario_rows(columns),
        *_method_rows(columns, lambda lv: lv.measured.methods),
        *_method_rows(columns, lambda lv: lv.measured.steps),
        *check_rows(columns),
        *_optional_rows(columns),
        Row(
            "Server CPU",
            lambda lv: lv.server_usage.cpu_s if lv.server_usage else None,
            format_cpu_seconds,
            _server_cpu_suffix,
        ),
        Row(
            "Server peak RSS",
            lambda lv: float(lv.server_usage.peak_rss_bytes) if lv.server_usage else None,
            lambda v: format_bytes(int(v)),
            _server_rss_suffix,
        ),
        *_cooldown_rows(columns),
        Row(
            "Generator CPU",
            lambda lv: lv.measured.client_cpu_s,
            format_cpu_seconds,
            _client_cpu_suffix,
        ),
        *_backing_rows(columns),
        Row(
            "Server CPU / call",
            lambda lv: lv.server_cpu_us_per_call,
            micros,
        ),
        Row("Generator CPU / call", lambda lv: lv.generator_cpu_us_per_call, micros),
        *_allocation_rows(columns),
        VerdictRow("Verdict", lambda lv: None, str),
    ]


def _allocation_rows(columns: list[Column]) -> list[Row]:
    """--client-allocations: the client's memory per call, from its untimed traced pass."""
    if not any(lv.client_allocations for column in columns for lv in column):
        return []
    return [
        Row(
            "Client bytes / call",
            lambda lv: lv.client_allocations.bytes_per_call if lv.client_allocations else None,
            lambda v: format_bytes(int(v)),
        ),
        Row(
            "Client allocs / call",
            lambda lv: (
                lv.client_allocations.allocations_per_call if lv.client_allocations else None
            ),
            lambda v: f"{v:,.0f}",
        ),
    ]


def _cooldown_rows(columns: list[Column]) -> list[Row]:
    """--cooldown: what the server holds and spends once the load has stopped."""
    levels = [level for column in columns for level in column]
    usages = [lv.server_usage for lv in levels if lv.server_usage and lv.server_usage.cooldown_s]
    if not usages:
        return []
    after = f"after {max(u.cooldown_s for u in usages):g} s idle"
    return [
        Row(
            f"Server RSS {after}",
            lambda lv: (
                float(lv.server_usage.rss_after_cooldown_bytes)
                if lv.server_usage and lv.server_usage.cooldown_s
                else None
            ),
            lambda v: format_bytes(int(v)),
        ),
        Row(
            f"Server CPU {after}",
            lambda lv: (
                lv.server_usage.cooldown_cpu_s
                if lv.server_usage and lv.server_usage.cooldown_s
                else None
            ),
            format_cpu_seconds,
        ),
    ]
