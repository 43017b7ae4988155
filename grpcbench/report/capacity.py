"""A capacity run as tables: per SLO the capacity of every server kind, then every probe.

Built as ``ComparisonTable``s, so the console, Markdown and HTML print them as
they print a run's tables. The figures "at capacity" come from the
confirmation runs (their means) when there are any, else from the search's
probe at that rate.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from grpcbench.base.units import format_bytes, format_cpu_seconds, format_latency_us
from grpcbench.capacity.probe import achieved_rate, error_rate
from grpcbench.capacity.record import STEP_DOWNS, CapacityRecord, Confirmed, Found
from grpcbench.capacity.slo import parse_slo
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.model.thresholds import parse_threshold
from grpcbench.report.profiles import profile_tables
from grpcbench.report.table import ComparisonTable, build_tables


def _at_capacity(run: RunRecord, record: CapacityRecord, found: Found) -> list[LevelResult]:
    confirmed = [level for level, _ in record.confirmations(run, found)]
    if confirmed:
        return confirmed
    return [
        run.levels[p.level]
        for p in record.search_probes(found.server)
        if p.phase == "search" and p.rate == found.reported
    ]


def _mean(levels: list[LevelResult], value: Callable[[LevelResult], float | None]) -> float | None:
    values = [v for v in map(value, levels) if v is not None]
    return statistics.fmean(values) if values else None


def _show(value: float | None, text: Callable[[float], str]) -> str:
    return "-" if value is None else text(value)


def _capacity_cell(found: Found, confirmed: Confirmed | None, confirmations: int) -> str:
    """The capacity to plan with, and how sure it is."""
    if found.capacity is None:
        return "none"
    floor = ">= " if found.generator_limited else ""
    if found.confirmed is not None:
        text = f"{floor}{found.confirmed:,.0f} req/s"
        if found.confirmed != found.capacity:
            text += f" (search: {found.capacity:,.0f}, not confirmed there)"
        return text
    text = f"{floor}{found.capacity:,.0f} req/s"
    if not confirmations:
        return text + " (not confirmed: --repeat 0)"
    passed = f": {confirmed.passed}/{confirmed.runs} passed" if confirmed else ""
    return text + f" (unconfirmed{passed}, nor {STEP_DOWNS} steps below)"


def _confirmed_cell(confirmed: Confirmed | None) -> str:
    """How many fresh servers passed, their achieved rate, and the spread of each
    objective's statistic across them (the SLO's headroom at that rate)."""
    if confirmed is None:
        return "-"
    spreads = "".join(
        f"; {name} {format_latency_us(mean)} ± {format_latency_us(sd)}"
        for name, mean, sd in confirmed.objectives
    )
    return (
        f"{confirmed.passed}/{confirmed.runs} passed, {confirmed.achieved_mean:,.0f} ±"
        f" {confirmed.achieved_sd:,.0f} req/s (cv {confirmed.cv:.1%}){spreads}"
    )


def capacity_table(run: RunRecord, record: CapacityRecord, slo: str) -> ComparisonTable:
    found = [f for f in record.found if f.slo == slo]
    rows: dict[str, list[str]] = {name: [] for name in (
        "Capacity", "Confirmed", "p50 at capacity", "p99 at capacity", "Server CPU",
        "Server CPU / call", "Server peak RSS", "Probes", "Search ended",
    )}  # fmt: skip
    for one in found:
        levels = _at_capacity(run, record, one) if one.capacity else []
        confirmed = Confirmed.of(
            record.confirmations(run, one), record.settings.probe_duration_s, parse_slo(slo)
        )
        rows["Capacity"].append(_capacity_cell(one, confirmed, record.settings.confirmations))
        rows["Confirmed"].append(_confirmed_cell(confirmed))
        rows["p50 at capacity"].append(
            _show(
                _mean(levels, lambda lv: lv.measured.latency.percentile_us(50)), format_latency_us
            )
        )
        rows["p99 at capacity"].append(
            _show(
                _mean(levels, lambda lv: lv.measured.latency.percentile_us(99)), format_latency_us
            )
        )
        rows["Server CPU"].append(
            _show(
                _mean(levels, lambda lv: lv.server_usage.cpu_s if lv.server_usage else None),
                format_cpu_seconds,
            )
        )
        rows["Server CPU / call"].append(
            _show(_mean(levels, lambda lv: lv.server_cpu_us_per_call), lambda v: f"{v:,.0f} µs")
        )
        rows["Server peak RSS"].append(
            _show(
                _mean(
                    levels, lambda lv: lv.server_usage.peak_rss_bytes if lv.server_usage else None
                ),
                lambda v: format_bytes(int(v)),
            )
        )
        searched = [p for p in record.search_probes(one.server) if slo in p.judgements]
        rows["Probes"].append(str(len(searched)))
        rows["Search ended"].append(one.end)
    settings = record.settings
    return ComparisonTable(
        scenario=run.options.scenario,
        level=f"capacity under {slo}, errors <= {settings.max_error_rate:.2%}",
        columns=tuple(f.server for f in found),
        rows=tuple((name, tuple(cells)) for name, cells in rows.items()),
        notes=(
            f"Each probe: {settings.probe_warmup_s:g} s warm-up, {settings.probe_duration_s:g} s"
            " measured, open loop; latency from the intended send time. A probe passes when"
            " the SLO holds, errors are within budget, at least 99% of the offered rate was"
            " achieved and the generator kept its pacer. Confirmed: the rate run again"
            f" {settings.confirmations} time(s), one at a time, each on a fresh server when"
            " grpcbench starts the servers (a --target is the same server); the first miss steps"
            f" down (at most {settings.precision:.0%}, to a rate already passed if one lies"
            f" between), at most {STEP_DOWNS} times; the SLOs share these runs, and each"
            " counts the highest rate whose runs all passed it; mean ± sd over those runs"
            " of the achieved rate and of each objective's statistic.",
        ),
    )


def probes_table(run: RunRecord, record: CapacityRecord, server: str) -> ComparisonTable:
    """Every probe of one server kind, in the order they ran."""
    slos = [slo.text for slo in record.settings.slos]
    columns = ("offered", "achieved", "p50", "p99", "errors", "verdict", *slos)
    rows = []
    duration = record.settings.probe_duration_s
    for number, probe in enumerate(record.server_probes(server), start=1):
        level = run.levels[probe.level]
        offered = "closed loop" if probe.phase == "ceiling" else f"{probe.rate:,.0f}/s"
        judged = [
            (j.outcome + (f": {j.reason}" if j.reason else ""))
            if (j := probe.judgements.get(slo)) else "-"
            for slo in slos
        ]  # fmt: skip
        rows.append((
            f"{number} {probe.phase}",
            (offered, f"{achieved_rate(level, duration):,.0f}/s",
             format_latency_us(level.measured.latency.percentile_us(50)),
             format_latency_us(level.measured.latency.percentile_us(99)),
             f"{error_rate(level):.2%}", level.verdict, *judged),
        ))  # fmt: skip
    return ComparisonTable(
        scenario=run.options.scenario,
        level=f"probes of {server}",
        columns=columns,
        rows=tuple(rows),
        notes=(),
    )


def capacity_tables(run: RunRecord) -> list[ComparisonTable]:
    """Every table of a capacity run (none for an ordinary run)."""
    record = CapacityRecord.of(run)
    if record is None:
        return []
    tables = [capacity_table(run, record, slo.text) for slo in record.settings.slos]
    servers = dict.fromkeys(p.server for p in record.probes)
    return tables + [probes_table(run, record, server) for server in servers]


def record_tables(run: RunRecord) -> list[ComparisonTable]:
    """The tables any exporter prints for a results file: a capacity run's own, else one
    per level (``build_tables``)."""
    tables = capacity_tables(run) or build_tables(
        run.levels, run.unavailable, [parse_threshold(t) for t in run.options.thresholds]
    )
    return tables + profile_tables(run.levels)
